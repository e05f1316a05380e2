"""Issue 33.5-6 on the real CLI (2.1.332) against the scripted model: costs that add up after
Stop all and a rerun, the progress line by status, and a missing value refused.

The money is checked against the scripted model server's own record (the usage it answered
each request with, priced as the CLI prices that model), never against our own figures.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from kandev_nb.agent.session import SessionConfig
from kandev_nb.fleet import FleetError, build_fleet
from kandev_nb.ledger import RunLedger
from kandev_nb.notebook.fleet_board import board_html, progress_text
from kandev_nb.testing import RecordedRequest, Reply, ScriptedModelServer, Usage, text, tool_use
from tests.fleet.conftest import answer_per_row
from tests.fleet.test_fleet_queue_budget import _until
from tests.ledger.test_clear import PRICES

pytestmark = pytest.mark.timeout(300)


def server_cost(server: ScriptedModelServer, since: int = 0) -> float:
    """USD of every request the model server answered (its own record) from request number
    `since` on, at the model's price."""
    cost = 0.0
    for request, usage in zip(server.requests[since:], server.answered_usage[since:], strict=True):
        if usage is None:
            continue
        price_in, price_out = PRICES[request.body["model"].split("[")[0]]
        cost += (usage.input_tokens * price_in + usage.output_tokens * price_out) / 1e6
    return cost


async def test_costs_add_up_after_stop_all_and_a_rerun(
    base_config: SessionConfig,
    scripted_model: ScriptedModelServer,
    feed: Callable[..., None],
    ledger: RunLedger,
    claude_workdir: Path,
) -> None:
    """12 rows at concurrency 4. First run: rows 1-4 answer; rows 5-6 ask to run a command
    and wait in the queue (their first request answered and paid); rows 7-8's requests are
    held by the model before its first byte; then Stop all: 4 done, 4 stopped, 4 skipped.
    The rerun finishes rows 5-12. The result frame's cost is every attempt of each row:
    its sum is the ledger's and the model server's."""
    phase = {"run": 1}
    held = threading.Event()
    holding: list[int] = []

    def answer(number: int, request: RecordedRequest) -> Reply:
        usage = Usage(input_tokens=1000 + number, output_tokens=50 + number)
        if phase["run"] == 1 and number in (5, 6) and request.last_user_text():
            return Reply(tool_use("Bash", {"command": f"touch out-{number}.txt", "description": "a file"}), usage=usage)
        if phase["run"] == 1 and number in (7, 8):
            holding.append(number)
            held.wait(60)  # the CLI gives up first (Stop all): nothing of it is ever answered
        return Reply(text(f"answer {number}"), usage=usage)

    feed(answer_per_row(answer), 40)
    frame = pd.DataFrame({"id": range(1, 13)}, index=[f"f{i:02d}" for i in range(1, 13)])
    options = {"concurrency": 4, "name": "costs", "config": base_config, "ledger": ledger}
    fleet = build_fleet(frame, "Handle ticket {id}.", **options)
    run = asyncio.create_task(fleet.run())
    try:
        await _until(lambda: len(fleet.queue.pending) == 2 and len(holding) == 2, "2 rows waiting, 2 held")
        fleet.stop(reason="stopped by you (Stop all)")
        first = await asyncio.wait_for(run, 120)
    finally:
        held.set()
    assert first["status"].value_counts().to_dict() == {"done": 4, "stopped": 4, "skipped": 4, "error": 0}
    # the progress line counts by status (old code: "12 of 12 rows")
    assert progress_text(fleet).startswith("4 done · 4 stopped · 4 skipped of 12 · $")
    assert "4 done · 4 stopped · 4 skipped of 12" in board_html(fleet, first)
    await _until(lambda: scripted_model.in_flight == 0, "the held requests end")
    assert first["cost_usd"].sum() == pytest.approx(server_cost(scripted_model), abs=1e-9)
    paid = first.loc[["f05", "f06"], "cost_usd"].tolist()
    assert all(c > 0 for c in paid) and first.loc[["f07", "f08"], "cost_usd"].tolist() == [0, 0]

    phase["run"] = 2
    rerun = build_fleet(frame, "Handle ticket {id}.", **options)
    second = await asyncio.wait_for(rerun.run(), 180)
    assert second["status"].tolist() == ["done"] * 12
    assert [rerun.rows[k].result.from_ledger for k in frame.index] == [True] * 4 + [False] * 8  # type: ignore[union-attr]
    assert second["attempts"].tolist() == [1] * 4 + [2] * 4 + [1] * 4  # stopped once, then done
    assert second.loc[["f05", "f06"], "cost_usd"].tolist() == pytest.approx(
        [p + (1000 + n) * 4e-6 + (50 + n) * 20e-6 for p, n in zip(paid, (5, 6), strict=True)]
    )
    ledger_sum = ledger.runs(fleet="costs")["cost_usd"].sum()
    model_sum = server_cost(scripted_model)
    # old code: the frame left out row 5-6's stopped attempts, the server counted rows 7-8's held requests
    assert second["cost_usd"].sum() == pytest.approx(ledger_sum, abs=1e-9)
    assert ledger_sum == pytest.approx(model_sum, abs=1e-9)
    assert rerun.spent_usd == pytest.approx(model_sum - first["cost_usd"].sum(), abs=1e-9)  # this run's own
    assert progress_text(rerun).startswith("12 done of 12 · $")


async def test_a_missing_value_in_a_column_of_the_prompt_is_refused_with_the_row_named(
    base_config: SessionConfig, scripted_model: ScriptedModelServer, feed: Callable[..., None]
) -> None:
    frame = pd.DataFrame(
        {"id": [1, 2, 3], "subject": ["printer", np.nan, None], "unused": [np.nan] * 3}, index=["a", "b", "c"]
    )
    with pytest.raises(FleetError) as refused:  # old code: sent "Ticket 2 about nan."
        build_fleet(frame, "Handle ticket {id} about {subject}.", config=base_config, ledger=None)
    message = str(refused.value)
    assert "row 'b' (row 2 of 3): {subject}" in message and "row 'c' (row 3 of 3): {subject}" in message
    assert "fill_missing" in message and "'a'" not in message
    assert scripted_model.requests == []

    feed(answer_per_row(lambda number, _request: Reply(text(f"ok {number}"))), 6)
    fleet = build_fleet(
        frame, "Handle ticket {id} about {subject}.", config=base_config, ledger=None, fill_missing="(no subject)"
    )
    assert fleet.rows["b"].prompt == "Handle ticket 2 about (no subject)."
    result = await asyncio.wait_for(fleet.run(), 120)
    assert result["status"].tolist() == ["done"] * 3
    sent = sorted(r.last_user_text() for r in scripted_model.main_requests)
    assert sent == [
        "Handle ticket 1 about printer.",
        "Handle ticket 2 about (no subject).",
        "Handle ticket 3 about (no subject).",
    ]


def test_the_magic_takes_fill_missing() -> None:
    from kandev_nb.notebook.fleet_magic import _unquoted
    from kandev_nb.notebook.magic import parse_options

    args = parse_options('--over tickets --fill-missing "no subject"')
    assert _unquoted(args.fill_missing) == "no subject"
    assert parse_options("--over tickets").fill_missing is None
