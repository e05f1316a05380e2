"""Load (issue 15, 4): 8 kernel processes write 50 turns each at once into one ledger, on
PostgreSQL and on SQLite: no row lost, none duplicated, each writer's order kept."""

from __future__ import annotations

import multiprocessing
from typing import Any

import pytest

from kandev_nb.ledger import RunLedger
from tests.ledger.conftest import make_turn

WRITERS, TURNS = 8, 50

pytestmark = pytest.mark.timeout(600)


def _kernel(location: str, writer: int, start: Any) -> None:
    """One kernel process: open the ledger, wait for the others, record TURNS turns as %%claude does."""
    with RunLedger(location) as ledger:
        start.wait(120)
        for i in range(TURNS):
            turn = make_turn(
                f"k{writer}-{i}",
                session_id=f"kernel-{writer}",
                cost_usd=0.001 * (writer + 1),
                tools=(("Bash", "allow"), ("Read", None)),
            )
            ledger.record(turn, notebook=f"/home/u{writer}/nb.ipynb", execution_count=i + 1)


@pytest.mark.slow
def test_eight_kernels_writing_fifty_turns_each_at_once(ledger_url: str) -> None:
    RunLedger(ledger_url).close()
    ctx = multiprocessing.get_context("spawn")
    start = ctx.Barrier(WRITERS)
    kernels = [ctx.Process(target=_kernel, args=(ledger_url, w, start)) for w in range(WRITERS)]
    for process in kernels:
        process.start()
    for process in kernels:
        process.join(500)
    assert [p.exitcode for p in kernels] == [0] * WRITERS
    with RunLedger(ledger_url) as ledger:
        runs, calls, usage = ledger.runs(), ledger.tool_calls(), ledger.model_usage()
        totals = ledger.totals()
    expected = {f"k{w}-{i}" for w in range(WRITERS) for i in range(TURNS)}
    assert len(runs) == WRITERS * TURNS and set(runs["prompt"]) == expected  # none lost, none twice
    assert runs["id"].is_unique and runs["turn_uid"].is_unique
    for w in range(WRITERS):
        mine = runs[runs["session_id"] == f"kernel-{w}"]
        assert list(mine["execution_count"]) == list(range(1, TURNS + 1))  # in each kernel's order
    assert len(calls) == 2 * WRITERS * TURNS and sorted(set(calls["turn_id"])) == sorted(runs["id"])
    assert len(usage) == WRITERS * TURNS
    assert totals["cost_usd"] == pytest.approx(sum(0.001 * (w + 1) * TURNS for w in range(WRITERS)))
