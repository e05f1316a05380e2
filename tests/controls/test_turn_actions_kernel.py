"""Issue 27 point 5 in a real kernel with the real CLI: turn numbers, ``--cell``, the footer's Undo."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from kandev_nb.testing import Reply, ScriptedModelServer, http_error, text, tool_use
from tests.kernel.conftest import setup_code
from tests.kernel.kernel_harness import KernelHarness, WidgetModel

BRIDGE = "kandev_nb.notebook.bridge.NotebookBridge"  # the bridge widget's _anywidget_id

pytestmark = pytest.mark.timeout(240)


def actions(kernel: KernelHarness) -> list[WidgetModel]:
    return [w for w in kernel.widgets.values() if "kandev-turn-actions" in w.state.get("_dom_classes", ())]


def say_hello(kernel: KernelHarness) -> None:
    """What an open notebook tab does: its bridge view says hello (``src/widgets/bridge.ts``)."""
    end = time.monotonic() + 30
    while time.monotonic() < end:
        found = [w for w in kernel.widgets.values() if w.state.get("_anywidget_id") == BRIDGE]
        if found:
            kernel.send_custom(found[0], {"kind": "hello", "view": "test-tab", "ok": True, "path": "t.ipynb"})
            kernel.pump_for(0.2)
            return
        kernel.pump_for(0.1)
    raise AssertionError("no notebook bridge widget")


def wait_message(kernel: KernelHarness, widget: WidgetModel, timeout: float = 60) -> str:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if widget.state.get("message"):
            return str(widget.state["message"])
        kernel.pump_for(0.1)
    raise AssertionError("the turn's buttons never said what happened")


def test_turns_are_numbered_from_one_and_undone_by_number_cell_or_the_footer_button(
    kernel: KernelHarness, scripted_model: ScriptedModelServer, claude_env: dict[str, str], claude_workdir: Path
) -> None:
    keep, new = claude_workdir / "keep.txt", claude_workdir / "new.txt"
    keep.write_text("v1\n")
    scripted_model.push(
        Reply(tool_use("Edit", {"file_path": str(keep), "old_string": "v1", "new_string": "v2"})),
        Reply(text("1")),
        Reply(tool_use("Write", {"file_path": str(new), "content": "x\n"})),
        Reply(text("2")),
    )
    kernel.execute(setup_code(claude_env, claude_workdir))
    say_hello(kernel)
    first = kernel.execute("%%claude --mode acceptEdits\nedit keep")
    second = kernel.execute("%%claude --mode acceptEdits\nwrite new")
    cells = [first.reply["execution_count"], second.reply["execution_count"]]
    assert "turn 2" in kernel.eval("kandev_nb.last_turn()._repr_html_()")  # old main: no number anywhere
    bars = actions(kernel)
    assert [b.state["info"] for b in bars] == [f"Turn {n} of session default · In [{c}]" for n, c in zip((1, 2), cells)]
    assert all(b.state["can_undo"] and not b.state["failed"] for b in bars)
    assert f"Turn 1 of session default · In [{cells[0]}]" in first.data("text/plain")  # saved without widgets

    run = kernel.wait(kernel.start("%claude_undo --turn 0"))
    assert run.status == "error" and "turns count from 1" in repr(run.error) + run.stdout()
    assert new.exists() and keep.read_text() == "v2\n"

    kernel.send_custom(bars[1], {"action": "undo"})  # the second turn's footer button
    said = wait_message(kernel, bars[1])
    assert "Undid the file changes of turn 2" in said and str(new) in said, said
    assert not new.exists() and keep.read_text() == "v2\n"
    assert bars[1].state["undone"] is True
    assert "undone" in kernel.eval("kandev_nb.last_turn()._repr_html_()")  # its Write card says so

    run = kernel.wait(kernel.start(f"%claude_undo --cell {cells[0]}"))
    assert run.status == "ok", repr(run.error)
    assert keep.read_text() == "v1\n"
    assert f"turn 1 (In [{cells[0]}])" in repr(run.outputs)
    run = kernel.wait(kernel.start("%claude_undo --cell 999"))
    assert run.status == "error" and "no turn of this session ran in cell In [999]" in repr(run.error) + run.stdout()


def test_a_failed_turn_offers_retry_and_without_a_tab_the_buttons_say_so(
    kernel: KernelHarness, scripted_model: ScriptedModelServer, claude_env: dict[str, str], claude_workdir: Path
) -> None:
    kernel.execute(setup_code(claude_env, claude_workdir))
    say_hello(kernel)  # a tab that then never answers (closed)
    scripted_model.push(Reply(text("Fine.")), http_error(529, "Overloaded", headers={"x-should-retry": "false"}))
    kernel.execute("%%claude\nFirst")
    kernel.wait(kernel.start("%%claude\nSecond"))
    ok, failed = actions(kernel)
    assert ok.state["failed"] is False and failed.state["failed"] is True  # Retry only on the failed turn
    assert ok.state["can_undo"] is False  # no file changed: no Undo button
    kernel.send_custom(failed, {"action": "retry"})
    said = wait_message(kernel, failed)
    assert "did not answer 'insert'" in said, said  # the tab is gone: a clear word, nothing changed
    assert kernel.eval("1 + 1") == 2


def test_a_headless_run_saves_no_buttons(
    kernel: KernelHarness, scripted_model: ScriptedModelServer, claude_env: dict[str, str], claude_workdir: Path
) -> None:
    kernel.execute(setup_code(claude_env, claude_workdir))
    scripted_model.push(Reply(text("Fine.")))
    run = kernel.execute("%%claude\nFirst")  # no tab said hello: nbclient, papermill
    assert run.error is None and actions(kernel) == []
    assert "turn 1" in kernel.eval("kandev_nb.last_turn()._repr_html_()")
