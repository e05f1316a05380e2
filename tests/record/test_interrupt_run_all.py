"""Issue 28.9: the kernel's interrupt during Run All stops Claude *and* the queued cells;
the card's own Stop button ends only the turn."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from kandev_nb.testing import Reply, ScriptedModelServer, text
from tests.kernel.conftest import setup_code
from tests.kernel.kernel_harness import KernelHarness

pytestmark = pytest.mark.timeout(240)


def _stream_then(kernel: KernelHarness) -> None:
    end = time.monotonic() + 60
    while "zzz" not in kernel.widget_texts() and time.monotonic() < end:
        kernel.pump_for(0.1)


def test_the_kernel_interrupt_records_the_partial_turn_and_drops_the_queued_cells(
    kernel: KernelHarness, scripted_model: ScriptedModelServer, claude_env: dict[str, str], claude_workdir: Path
) -> None:
    scripted_model.push(Reply(text("z" * 300, chunk_size=1, delay=0.2)), Reply(text("Never asked.")))
    kernel.execute(setup_code(claude_env, claude_workdir))
    first = kernel.start("%%claude\nWrite a long answer")  # Run All: three cells queued at once
    second = kernel.start("%%claude\nUse the partial answer")
    third = kernel.start("queued_cell_ran = True")
    kernel.wait_for_button("Stop")
    _stream_then(kernel)
    kernel.km.interrupt_kernel()
    for run in (first, second, third):
        kernel.wait(run, timeout=60)
    assert first.status == "error" and first.reply["ename"] == "KeyboardInterrupt"
    assert [second.status, third.status] == ["aborted", "aborted"]
    assert kernel.eval("'queued_cell_ran' in globals()") is False
    assert len(scripted_model.main_requests) == 1  # the queued %%claude cell never ran
    recorded = kernel.eval(
        "[len(kandev_nb.runs()), bool(kandev_nb.runs()['interrupted'].iloc[-1]), kandev_nb.last_turn().interrupted]"
    )
    assert recorded == [1, True, True]
    shown = "".join(map(str, first.data("text/html")))
    assert "zzz" in shown  # the partial turn's rendering stays in the cell


def test_the_cards_stop_button_ends_only_the_turn(
    kernel: KernelHarness, scripted_model: ScriptedModelServer, claude_env: dict[str, str], claude_workdir: Path
) -> None:
    scripted_model.push(Reply(text("z" * 300, chunk_size=1, delay=0.2)), Reply(text("Next one ran.")))
    kernel.execute(setup_code(claude_env, claude_workdir))
    first = kernel.start("%%claude\nWrite a long answer")
    second = kernel.start("%%claude\nNext")
    stop = kernel.wait_for_button("Stop")
    _stream_then(kernel)
    kernel.click(stop)
    for run in (first, second):
        kernel.wait(run, timeout=60)
    assert [first.status, second.status] == ["ok", "ok"]
    assert kernel.eval("kandev_nb.last_turn().text") == "Next one ran."
