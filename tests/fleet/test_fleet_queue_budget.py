"""The fleet's approval queue and budget on the real CLI (2.1.332) against the scripted model."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from kandev_nb.agent.session import SessionConfig
from kandev_nb.fleet import build_fleet
from kandev_nb.testing import RecordedRequest, Reply, ScriptedModelServer, Usage, text, tool_use
from tests.fleet.conftest import answer_per_row

pytestmark = pytest.mark.timeout(240)


def touch_then_answer(number: int, request: RecordedRequest) -> Reply:
    """First step: ``touch out-N.txt`` (the CLI asks); after its tool_result: a text answer."""
    if request.last_user_text():
        return Reply(tool_use("Bash", {"command": f"touch out-{number}.txt", "description": "make a file"}))
    return Reply(text(f"made out-{number}.txt"))


async def _until(condition: Callable[[], Any], what: str) -> None:
    for _ in range(1200):
        if condition():
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"never happened: {what}")


async def test_one_queue_names_rows_and_allow_for_all_rows_answers_the_rest(
    base_config: SessionConfig, claude_workdir: Path, feed: Callable[..., None]
) -> None:
    feed(answer_per_row(touch_then_answer), 20)
    frame = pd.DataFrame({"id": [1, 2, 3, 4]}, index=[10, 20, 30, 40])
    fleet = build_fleet(frame, "Handle ticket {id}.", concurrency=2, config=base_config, ledger=None)
    run = asyncio.create_task(fleet.run())
    await _until(lambda: fleet.queue.head is not None, "a first queued approval")
    first = fleet.queue.head
    assert first is not None
    assert first.label == f"row {first.position} of 4 · Bash · touch out-{first.position}.txt"
    assert first.approval.allow()  # this row only, as the card's "Allow" does
    await _until(lambda: fleet.queue.head is not None and fleet.queue.head is not first, "a second approval")
    second = fleet.queue.head
    assert second is not None and second.key != first.key
    assert fleet.queue.allow_all(second) == "Bash(touch:*)"
    result = await asyncio.wait_for(run, 180)
    assert list(result["status"]) == ["done"] * 4, result["error"].tolist()
    assert sorted(p.name for p in claude_workdir.glob("out-*.txt")) == [f"out-{i}.txt" for i in range(1, 5)]
    # Two rows were answered by a person; the other two by the fleet-wide rule, never queued.
    decided = {}
    for key, state in fleet.rows.items():
        assert state.result is not None and state.result.turn is not None
        records = list(state.result.turn.tools.values())
        assert len(records) == 1 and records[0].decision is not None
        decided[key] = (records[0].decision.decided_by, records[0].decision.rule)
    by_person = {first.key, second.key}
    assert all(decided[k][0] == "person" for k in by_person)
    assert all(decided[k] == ("policy", "Bash(touch:*)") for k in decided if k not in by_person), decided
    assert [r.rule for r in fleet.queue.rules] == ["Bash(touch:*)"] and fleet.queue.pending == []


def costly(number: int, request: RecordedRequest) -> Reply:
    """Row 1 answers at once; row 2 streams for a long time; every answer costs."""
    usage = Usage(input_tokens=200_000, output_tokens=2_000)
    if number == 2:
        return Reply(text("slow " * 100, chunk_size=5, delay=0.2), usage=usage)
    return Reply(text(f"answer {number}"), usage=usage)


async def test_the_budget_interrupts_running_rows_and_skips_the_rest(
    base_config: SessionConfig, scripted_model: ScriptedModelServer, feed: Callable[..., None]
) -> None:
    feed(answer_per_row(costly), 20)
    frame = pd.DataFrame({"id": range(1, 7)})
    fleet = build_fleet(frame, "Handle ticket {id}.", concurrency=2, budget_usd=0.01, config=base_config, ledger=None)
    result = await asyncio.wait_for(fleet.run(), 180)
    assert list(result["status"]) == ["done", "stopped", "skipped", "skipped", "skipped", "skipped"], result
    assert result.loc[0, "cost_usd"] > 0.01
    assert "the fleet's budget of $0.01 was spent" in result.loc[1, "error"]
    assert all("never started: the fleet's budget of $0.01 was spent" in e for e in result["error"][2:])
    # Rows 3-6 sent nothing (row 2 may have been stopped before its CLI sent its request).
    sent = {n for r in scripted_model.main_requests if (n := _number(r)) is not None}
    assert 1 in sent and sent <= {1, 2}


def _number(request: RecordedRequest) -> int | None:
    from tests.fleet.conftest import row_of

    return row_of(request)
