"""Stop means stop in the kernel (issue 33, point 4): Stop on a row and Stop all end that
row's CLI process within 10 s, checked by PID, whatever the row was doing: streaming an
answer, running a long tool, or a CLI that no longer answers the protocol's interrupt."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from collections.abc import Callable

import pandas as pd
import psutil
import pytest

from kandev_nb.agent.session import SessionConfig
from kandev_nb.fleet import build_fleet
from kandev_nb.testing import RecordedRequest, Reply, ScriptedModelServer, text, tool_use
from tests.fleet.conftest import answer_per_row
from tests.fleet.test_fleet_queue_budget import _until

pytestmark = [pytest.mark.timeout(240), pytest.mark.slow]

STOP_S = 10.0
"""The issue's bound: seconds from a stop to the last of the row's CLI processes gone."""


def gone(pid: int) -> bool:
    """True once `pid` is no longer a running process (a zombie counts as gone)."""
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


async def seconds_until_gone(pids: list[int], limit: float = 60) -> float:
    """Seconds until every one of `pids` is gone (at most `limit`, then `limit`)."""
    start = time.monotonic()
    while time.monotonic() - start < limit:
        if all(gone(pid) for pid in pids):
            return time.monotonic() - start
        await asyncio.sleep(0.05)
    return limit


def with_tools(pids: list[int]) -> list[int]:
    """`pids` and every process they started (a Bash call's shell and what it runs)."""
    found = list(pids)
    for pid in pids:
        try:
            found += [child.pid for child in psutil.Process(pid).children(recursive=True)]
        except psutil.NoSuchProcess:
            continue
    return found


def kill_left(pids: list[int]) -> None:
    """SIGKILL what a failed test left running (a SIGSTOPped CLI stays stopped forever)."""
    for pid in pids:
        if not gone(pid):
            os.kill(pid, signal.SIGKILL)


def slow(number: int, request: RecordedRequest) -> Reply:
    """A long streamed answer (about 60 s): the row is still streaming when it is stopped."""
    return Reply(text(f"row {number} " + "slow " * 300, chunk_size=5, delay=0.2))


def sleeper(number: int, request: RecordedRequest) -> Reply:
    """A Bash call that runs for two minutes, then a text answer."""
    if request.last_user_text():
        return Reply(
            tool_use(
                "Bash", {"command": f"python3 -c 'import time; time.sleep(120)' row-{number}", "description": "wait"}
            )
        )
    return Reply(text(f"slept {number}"))


def allow_all(tool: str, tool_input: dict[str, object]) -> str:
    return "allow"


@pytest.mark.parametrize("doing", ["streaming", "running a tool", "deaf to the interrupt"])
async def test_stop_on_a_row_and_stop_all_end_each_rows_cli_within_10_s(
    doing: str, base_config: SessionConfig, scripted_model: ScriptedModelServer, feed: Callable[..., None]
) -> None:
    feed(answer_per_row(sleeper if doing == "running a tool" else slow), 10)
    fleet = build_fleet(
        pd.DataFrame({"id": [1, 2, 3]}),
        "Handle ticket {id}.",
        concurrency=2,
        approve=allow_all,
        config=base_config,
        ledger=None,
    )
    run = asyncio.create_task(fleet.run())
    first, second = fleet.rows[0], fleet.rows[1]
    if doing == "running a tool":
        await _until(lambda: "Bash" in first.activity and "Bash" in second.activity, "two rows in their Bash call")
        await asyncio.sleep(1)  # the sleep runs
    else:
        await _until(lambda: scripted_model.in_flight == 2, "two rows streaming")
    assert first.session is not None and second.session is not None
    pids = [first.session.pid, second.session.pid]
    assert None not in pids
    if doing == "deaf to the interrupt":  # a CLI that can no longer answer (stopped, swapping, hung)
        for pid in pids:
            os.kill(pid, signal.SIGSTOP)
    if doing == "running a tool":
        assert len(with_tools(pids)) >= 4, "each CLI runs its Bash call's shell"
    first_family = with_tools([pids[0]])
    fleet.stop(0)  # the row's Stop button
    took_row = await seconds_until_gone(first_family)
    assert not gone(pids[1]), "Stop on row 1 ended row 2's CLI"
    third = fleet.rows[2].session  # row 1's place went to row 3, which may have started
    if third is not None and third.pid is not None:
        pids.append(third.pid)
    family = with_tools(pids[1:])
    fleet.stop(reason="stopped by you (Stop all)")
    took_all = await seconds_until_gone(family)
    kill_left(first_family + family)
    result = await asyncio.wait_for(run, 60)
    print(f"{doing}: Stop on a row {took_row:.1f} s, Stop all {took_all:.1f} s")
    assert took_row < STOP_S, f"row 1's CLI lived {took_row:.1f} s after its Stop"
    assert took_all < STOP_S, f"a CLI lived {took_all:.1f} s after Stop all"
    assert list(result["status"])[:2] == ["stopped", "stopped"], result["error"].tolist()
    assert result["status"].iloc[2] in ("stopped", "skipped"), result["error"].tolist()
    assert list(result["error"])[:2] == ["stopped by you", "stopped by you (Stop all)"]
