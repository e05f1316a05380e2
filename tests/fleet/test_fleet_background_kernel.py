"""Issue 33, point 3 (background): ``%%claude --over FRAME --background`` and
``kandev_nb.fleet(..., background=True)`` in a real kernel with the real CLI and the scripted
model; the test plays the frontend (it says hello to the notebook bridge as a tab does).

The cell returns while its rows still run and wait for a person; another cell runs
meanwhile; the rows' approvals are answered through ``kandev_nb.pending()``; ``await
kandev_nb.wait()`` gives the result frame, ``-o VAR`` is assigned at the end and the cell
keeps the board. Without a frontend (nbclient, papermill) it blocks as a background turn
does, and ``wait()`` still gives the frame."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from kandev_nb.testing import ScriptedModelServer
from tests.fleet.conftest import answer_per_row, triage_answer
from tests.fleet.test_fleet_queue_budget import touch_then_answer
from tests.kernel.conftest import kernel, ledger_path, setup_code  # noqa: F401 - fixtures
from tests.kernel.kernel_harness import KernelHarness
from tests.kernel.test_background_turns import attach_frontend

pytestmark = pytest.mark.timeout(300)

ROWS = "import pandas as pd\nfrom kandev_nb.notebook import background_turns as bt\n"


def test_a_background_fleet_returns_while_its_rows_run_and_wait_gives_the_frame(
    kernel: KernelHarness,  # noqa: F811 - the fixture
    scripted_model: ScriptedModelServer,
    claude_env: dict[str, str],
    claude_workdir: Path,
    feed: Callable[..., None],
) -> None:
    feed(answer_per_row(touch_then_answer), 12)
    kernel.execute(setup_code(claude_env, claude_workdir))
    kernel.execute(ROWS + "rows = pd.DataFrame({'id': [1, 2, 3]}, index=['a', 'b', 'c'])")
    attach_frontend(kernel)

    # the old code ignored --background with --over: the cell blocked until every row had
    # been answered (here: denied at the approval timeout), so `out` existed when it returned
    cell = kernel.execute(
        "%%claude --over rows -o out --background --approval-timeout 90 --fleet bg\nHandle ticket {id}.", timeout=60
    )
    assert kernel.eval("'out' in globals()") is False  # it returned at once
    assert kernel.eval("[type(j).__name__ for j in bt.jobs()]") == ["BackgroundFleet"]
    assert kernel.execute("x = 41 + 1").status == "ok"  # the kernel takes other cells meanwhile
    assert kernel.eval("bt.jobs()[0].done") is False

    answered, deadline = 0, time.monotonic() + 120
    while answered < 3:  # every row asks to touch its file; answered through pending(), not the board
        assert time.monotonic() < deadline, f"only {answered} approvals came"
        n = kernel.eval("len([p.allow() for p in kandev_nb.pending() if getattr(p, 'fleet', '') == 'bg'])")
        if n == 0:
            assert kernel.eval("bt.jobs()[0].done") is False  # still running, waiting for a person
            kernel.pump_for(0.2)
        answered += n

    kernel.execute("result = await kandev_nb.wait()")
    assert kernel.eval("[list(result.index), list(result['status']), result is out]") == [
        ["a", "b", "c"],
        ["done"] * 3,
        True,
    ]
    assert kernel.eval("x") == 42
    assert all((claude_workdir / f"out-{n}.txt").exists() for n in (1, 2, 3))
    assert kernel.eval("[p for p in kandev_nb.pending()]") == []
    kernel.pump_for(0.5)
    shown = json.dumps(cell.outputs, default=str, ensure_ascii=False)
    assert "kandev-fleet-board" in shown and "3 done of 3" in shown  # the board ended in its own cell
    assert "→ out: DataFrame 3 ×" in shown  # and the cell says when -o got the frame


def test_without_a_frontend_a_background_fleet_blocks_and_wait_gives_its_frame(
    kernel: KernelHarness,  # noqa: F811 - the fixture
    claude_env: dict[str, str],
    claude_workdir: Path,
    feed: Callable[..., None],
) -> None:
    """nbclient, papermill: no tab says hello to the bridge, so the fleet runs in its cell (the
    next cells see its frame) and the value fleet(..., background=True) returns has ended."""
    feed(answer_per_row(triage_answer), 4)
    kernel.execute(setup_code(claude_env, claude_workdir))
    kernel.execute(ROWS + "rows = pd.DataFrame({'id': [1, 2]}, index=[10, 20])")
    kernel.execute("job = await kandev_nb.fleet(rows, 'Classify ticket {id}.', background=True)", timeout=200)
    assert kernel.eval("[type(job).__name__, job.done, list(job.frame['status'])]") == [
        "BackgroundFleet",
        True,
        ["done", "done"],
    ]
    assert kernel.eval("(await kandev_nb.wait()) is job.frame") is True
    assert kernel.eval("list((await job).index)") == [10, 20]
