"""Stopping a fleet: one row, all rows, and the kernel's interrupt (a cancelled await)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pandas as pd
import pytest

from kandev_nb.agent.session import SessionConfig
from kandev_nb.fleet import build_fleet
from kandev_nb.testing import RecordedRequest, Reply, ScriptedModelServer, text
from tests.fleet.conftest import answer_per_row
from tests.fleet.test_fleet_queue_budget import _until

pytestmark = pytest.mark.timeout(240)


def slow(number: int, request: RecordedRequest) -> Reply:
    """A long streamed answer (about 30 s): the row is still running when it is stopped."""
    return Reply(text(f"row {number} " + "slow " * 150, chunk_size=5, delay=0.2))


async def test_stop_one_row_then_all_the_rest_and_rows_not_started_are_skipped(
    base_config: SessionConfig, scripted_model: ScriptedModelServer, feed: Callable[..., None]
) -> None:
    feed(answer_per_row(slow), 10)
    fleet = build_fleet(
        pd.DataFrame({"id": [1, 2, 3]}), "Handle ticket {id}.", concurrency=2, config=base_config, ledger=None
    )
    run = asyncio.create_task(fleet.run())
    await _until(lambda: scripted_model.in_flight == 2, "two rows streaming")
    fleet.stop(1)  # its Stop button
    assert fleet.rows[1].stop_reason == "stopped by you" and fleet.rows[0].stop_reason is None
    fleet.stop(reason="stopped by you (Stop all)")  # before row 1 ended: row 3 never starts
    result = await asyncio.wait_for(run, 60)
    assert list(result["status"]) == ["stopped", "stopped", "skipped"]
    assert list(result["error"]) == [
        "stopped by you (Stop all)",
        "stopped by you",
        "never started: stopped by you (Stop all)",
    ]
    assert result.loc[0, "session_id"] is not pd.NA and fleet.stopped_reason == "stopped by you (Stop all)"


async def test_the_kernels_interrupt_stops_every_row_and_returns_the_frame_so_far(
    base_config: SessionConfig, scripted_model: ScriptedModelServer, feed: Callable[..., None]
) -> None:
    def mixed(number: int, request: RecordedRequest) -> Reply:
        return Reply(text(f"quick {number}")) if number == 1 else slow(number, request)

    feed(answer_per_row(mixed), 10)
    fleet = build_fleet(
        pd.DataFrame({"id": [1, 2, 3, 4]}), "Handle ticket {id}.", concurrency=2, config=base_config, ledger=None
    )
    run = asyncio.create_task(fleet.run())
    await _until(lambda: fleet.rows[0].status == "done" and scripted_model.in_flight == 2, "row 1 done, 2 streaming")
    run.cancel()  # what the kernel's interrupt does to the cell's await
    result = await asyncio.wait_for(run, 60)
    assert list(result["status"]) == ["done", "stopped", "stopped", "skipped"]
    assert result.loc[0, "answer"] == "quick 1"
    assert result.loc[3, "error"] == "never started: stopped by the kernel's interrupt"
