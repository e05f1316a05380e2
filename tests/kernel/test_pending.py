"""Approvals you cannot miss, in a real kernel with the real CLI (issue 27, point 2).

The test plays the frontend over the widget comms: it reads the notifier's `items`, says hello
to the notebook bridge as a tab would (then the session is interactive: wait and remind), and
answers through the notifier's message as the toast's Allow does. ``kandev_nb.pending()`` is
called from other cells while the turn runs as a task of the kernel's loop (as a turn started
in the background does).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from kandev_nb.testing import Reply, ScriptedModelServer, text, tool_use
from tests.kernel.conftest import setup_code
from tests.kernel.kernel_harness import KernelHarness, WidgetModel

BRIDGE = "kandev_nb.notebook.bridge.NotebookBridge"  # the bridge widget's _anywidget_id

pytestmark = pytest.mark.timeout(300)

BACKGROUND = (
    "import asyncio, kandev_nb.notebook.magic as _m\n"
    "task = asyncio.ensure_future(_m.run_cell({line!r}, 'Create hello.txt'))"  # the turn as a task
)
WAIT_PENDING = (
    "import asyncio, kandev_nb\n"
    "for _ in range(600):\n"
    "    if kandev_nb.pending():\n"
    "        break\n"
    "    await asyncio.sleep(0.1)\n"
    "print(repr(kandev_nb.pending()))"
)


def notifier(kernel: KernelHarness) -> WidgetModel:
    found = [w for w in kernel.widgets.values() if "items" in w.state and not w.closed]
    assert found, "no approval notifier widget"
    return found[-1]


def bridge(kernel: KernelHarness) -> WidgetModel:
    found = [w for w in kernel.widgets.values() if w.state.get("_anywidget_id") == BRIDGE]
    assert found, "no notebook bridge widget"
    return found[-1]


def items(kernel: KernelHarness, until: object = bool, timeout: float = 60) -> list[dict[str, object]]:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        found = [w for w in kernel.widgets.values() if "items" in w.state and not w.closed]
        value = json.loads(found[-1].state["items"]) if found else []
        if until(value):  # type: ignore[operator]
            return value  # type: ignore[no-any-return]
        kernel.pump_for(0.1)
    raise TimeoutError("the notifier's items did not reach the expected state")


def push_write(model: ScriptedModelServer, target: Path) -> None:
    model.push(
        Reply(text("I will create hello.txt."), tool_use("Write", {"file_path": str(target), "content": "hi\n"})),
        Reply(text("Done.")),
    )


def push_bash(model: ScriptedModelServer, target: Path) -> None:
    """A short command: the toast's line is the whole payload, so the toast may allow it (a
    Write's line does not show the content; issue 32, point 3)."""
    model.push(
        Reply(text("I will create hello.txt."), tool_use("Bash", {"command": f"printf 'hi\\n' > {target.name}"})),
        Reply(text("Done.")),
    )


def test_pending_from_another_cell_lists_and_allows(
    kernel: KernelHarness, scripted_model: ScriptedModelServer, claude_env: dict[str, str], claude_workdir: Path
) -> None:
    target = claude_workdir / "hello.txt"
    push_write(scripted_model, target)
    kernel.execute(setup_code(claude_env, claude_workdir))
    assert kernel.eval("repr(kandev_nb.pending())") == "No approval is waiting."
    kernel.execute(BACKGROUND.format(line=""))
    listed = kernel.execute(WAIT_PENDING).stdout()
    assert "1 approval(s) waiting" in listed and "Write" in listed and str(target)[-40:] in listed, listed
    row = kernel.eval("kandev_nb.pending()[0].row()")
    assert row["tool"] == "Write" and row["left"] != "waits", row  # headless: the timeout still denies
    assert kernel.eval("kandev_nb.pending()[0].bound.input['file_path']") == str(target)
    line = kernel.eval("kandev_nb.pending()[0].summary")  # the whole path, or (deep tmp dir) its end after "…"
    assert line.endswith("/hello.txt") and str(target).endswith(line.lstrip("…"))
    # headless (no tab said hello): no notifier widget, whose page code a headless run would only save
    assert not [w for w in kernel.widgets.values() if "items" in w.state]
    assert kernel.eval("kandev_nb.pending()[0].complete") is False  # the line names the file, not the content
    # a Write's line is a summary: show() shows it whole, then that same item may allow it (issue 32, point 3)
    kernel.execute("item = kandev_nb.pending()[0]")
    whole = kernel.eval("item.show()")
    assert "tool: Write" in whole and f"file_path: {target}" in whole and "content:\nhi\n" in whole, whole
    assert kernel.eval("item.allow()") is True
    kernel.execute("turn = await task")
    assert target.read_text() == "hi\n"
    assert kernel.eval("[r.decision.decided_by for r in turn.tools.values()]") == ["person"]
    assert kernel.eval("repr(kandev_nb.pending())") == "No approval is waiting."
    run = kernel.wait(kernel.start("kandev_nb.pending()[0].allow()"))
    assert run.status == "error" and "IndexError" in str(run.error)


def test_pending_deny_sends_the_reason(
    kernel: KernelHarness, scripted_model: ScriptedModelServer, claude_env: dict[str, str], claude_workdir: Path
) -> None:
    target = claude_workdir / "hello.txt"
    push_write(scripted_model, target)
    kernel.execute(setup_code(claude_env, claude_workdir))
    kernel.execute(BACKGROUND.format(line=""))
    kernel.execute(WAIT_PENDING)
    item = "kandev_nb.pending()[0]"
    run = kernel.wait(kernel.start(f"{item}.deny(42)"))
    assert run.status == "error" and "reason must be a string" in str(run.error)
    assert kernel.eval(f"{item}.deny('write it to /tmp instead')") is True
    kernel.execute("turn = await task")
    assert not target.exists()
    call = kernel.eval("[[r.decision.behavior, r.decision.message] for r in turn.tools.values()]")
    assert call == [["deny", "write it to /tmp instead"]], call


def test_with_a_tab_an_unanswered_card_waits_reminds_and_the_toast_allows(
    kernel: KernelHarness, scripted_model: ScriptedModelServer, claude_env: dict[str, str], claude_workdir: Path
) -> None:
    target = claude_workdir / "hello.txt"
    push_bash(scripted_model, target)
    kernel.execute(setup_code(claude_env, claude_workdir, approval_timeout=2.0))
    kernel.send_custom(bridge(kernel), {"kind": "hello", "view": "v-test", "ok": True, "path": "work/demo.ipynb"})
    kernel.pump_for(0.5)
    kernel.execute(BACKGROUND.format(line=""))
    first = items(kernel)
    assert first[0]["notebook"] == "work/demo.ipynb" and first[0]["left_s"] is None, first  # no deny deadline
    reminded = items(kernel, until=lambda v: bool(v) and v[0]["reminded"], timeout=30)  # after 1 s (half of 2)
    kernel.pump_for(2.5)  # past the 2 s approval timeout: headless this would have been denied
    assert kernel.eval("len(kandev_nb.pending())") == 1
    assert not target.exists()
    item = reminded[0]
    assert item["tool"] == "Bash" and item["summary"] == "printf 'hi\\n' > hello.txt" and item["complete"], item
    answer = {"kind": "answer", "id": item["id"], "action": "allow", "digest": item["digest"]}  # as the toast's Allow
    kernel.send_custom(notifier(kernel), answer)
    kernel.execute("turn = await task")
    assert target.read_text() == "hi\n"
    assert kernel.eval("[r.decision.decided_by for r in turn.tools.values()]") == ["person"]
    items(kernel, until=lambda v: v == [])


def test_an_explicit_cell_timeout_still_denies_with_a_tab(
    kernel: KernelHarness, scripted_model: ScriptedModelServer, claude_env: dict[str, str], claude_workdir: Path
) -> None:
    target = claude_workdir / "hello.txt"
    push_write(scripted_model, target)
    kernel.execute(setup_code(claude_env, claude_workdir))
    kernel.send_custom(bridge(kernel), {"kind": "hello", "view": "v-test", "ok": True, "path": "demo.ipynb"})
    kernel.pump_for(0.5)
    kernel.execute(BACKGROUND.format(line="--approval-timeout 1"))
    kernel.execute("turn = await task")
    assert not target.exists()
    assert kernel.eval("[r.decision.decided_by for r in turn.tools.values()]") == ["timeout"]
