"""``kandev_nb.fleet`` on the real CLI (2.1.332) against the scripted model answering per row."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, Literal

import pandas as pd
import pytest
from pydantic import BaseModel

import kandev_nb
from kandev_nb.agent.session import SessionConfig
from kandev_nb.fleet import build_fleet
from kandev_nb.ledger import RunLedger
from kandev_nb.testing import ScriptedModelServer
from tests.fleet.conftest import answer_per_row, row_of, triage_answer

pytestmark = pytest.mark.timeout(240)


class Triage(BaseModel):
    ticket: int
    priority: Literal["low", "high"]


def tickets(n: int) -> pd.DataFrame:
    return pd.DataFrame(
        {"id": range(1, n + 1), "subject": [f"s{i}" for i in range(1, n + 1)]},
        index=pd.Index([f"T{i}" for i in range(1, n + 1)], name="key"),
    )


async def test_twelve_rows_typed_at_most_three_in_flight_and_a_rerun_sends_nothing(
    base_config: SessionConfig, ledger: RunLedger, scripted_model: ScriptedModelServer, feed: Callable[..., None]
) -> None:
    feed(answer_per_row(triage_answer), 12)
    frame = tickets(12)
    result = await build_fleet(
        frame,
        "Classify ticket {id} ({subject}).",
        schema=Triage,
        concurrency=3,
        name="triage",
        config=base_config,
        ledger=ledger,
    ).run()
    assert list(result.index) == list(frame.index)
    assert list(result["status"]) == ["done"] * 12, result["error"].tolist()
    assert result["ticket"].dtype == "Int64" and list(result["ticket"]) == list(range(1, 13))
    assert result["priority"].dtype == "category"
    assert list(result.columns[:2]) == ["ticket", "priority"]
    assert list(result.columns[2:]) == list(kandev_nb.fleet.STAT_COLUMNS)
    assert result["cost_usd"].dtype == "Float64" and result["session_id"].nunique() == 12
    assert 1 < scripted_model.max_in_flight <= 3
    assert sorted(row_of(r) for r in scripted_model.main_requests) == list(range(1, 13))
    # The ledger has one row per finished row, readable by fleet name.
    runs = ledger.runs(fleet="triage")
    assert len(runs) == 12 and set(runs["fleet_key"]) == {f"T{i}" for i in range(1, 13)}
    # A rerun of the same fleet sends no request: every row comes back from the ledger.
    before = len(scripted_model.main_requests)
    again = await build_fleet(
        frame,
        "Classify ticket {id} ({subject}).",
        schema=Triage,
        concurrency=3,
        name="triage",
        config=base_config,
        ledger=ledger,
    ).run()
    assert len(scripted_model.main_requests) == before
    pd.testing.assert_frame_equal(
        again[["ticket", "priority", "status", "session_id"]], result[["ticket", "priority", "status", "session_id"]]
    )
    rebuilt = kandev_nb.fleet_results("triage", schema=Triage, ledger=ledger)
    assert list(rebuilt.index) == list(frame.index)  # in the input frame's order, whatever order rows finished in
    assert list(rebuilt.loc[frame.index, "ticket"]) == list(range(1, 13))
    assert rebuilt["ticket"].dtype == "Int64" and set(rebuilt["status"]) == {"done"}


async def test_a_row_whose_answer_does_not_validate_is_an_error_and_the_others_are_done(
    base_config: SessionConfig, scripted_model: ScriptedModelServer, feed: Callable[..., None]
) -> None:
    def answer(number: int, request: Any) -> Any:
        from kandev_nb.testing import Reply, tool_use

        priority = "urgent" if number == 2 else "low"  # the CLI checks the enum and retries, then gives up
        return Reply(tool_use("StructuredOutput", {"ticket": number, "priority": priority}))

    feed(answer_per_row(answer), 12)
    fleet = build_fleet(
        tickets(3), "Classify ticket {id}.", schema=Triage, concurrency=3, config=base_config, ledger=None
    )
    run = asyncio.create_task(fleet.run())
    finished = [(r.key, r.status) async for r in fleet.as_completed()]  # like dask's as_completed
    result = await run
    assert sorted(finished) == [("T1", "done"), ("T2", "error"), ("T3", "done")]
    assert list(result["status"]) == ["done", "error", "done"]
    assert "structured output" in result.loc["T2", "error"] and "priority" in result.loc["T2", "error"]
    assert pd.isna(result.loc["T2", "ticket"]) and result.loc["T3", "ticket"] == 3


@pytest.mark.parametrize(
    ("frame", "template", "message"),
    [
        (pd.DataFrame({"id": []}), "ticket {id}", "no rows"),
        (pd.DataFrame({"id": [1]}), "ticket {nope}", "{nope}, which is not a column"),
        (pd.DataFrame({"id": [1, 2]}, index=["a", "a"]), "ticket {id}", "duplicate values ['a']"),
        (pd.DataFrame({"id": [1]}), "ticket {id", "not valid"),
        ([1, 2], "ticket {id}", "over a pandas DataFrame"),
    ],
)
async def test_bad_input_is_a_clear_error_before_anything_starts(
    frame: Any, template: str, message: str, scripted_model: ScriptedModelServer
) -> None:
    with pytest.raises(kandev_nb.fleet.FleetError, match=None) as caught:
        await kandev_nb.fleet(frame, template, ledger=None)
    assert message in str(caught.value)
    assert scripted_model.requests == []
