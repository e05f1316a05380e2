"""A page that shows up while a headless-looking turn waits for an approval (issue 37 point 8).

The real kernel and the real CLI against the scripted model; the test plays the page. The turn
starts with no page (the bridge is older than QUIET_AFTER_S and nothing said "present"), so it
gets the static view; the CLI asks for a Write; only then does a page say "present" (a busy tab
that ran the bridge's first page code late). The turn becomes live at once, without waiting for
another event: the approval's card is there (with the countdown its request carried), its Allow
runs the Write; once the tab says hello, the turn's next approval waits as a tab's do (no
timeout); the turn's static rendering lands in the cell's own output.
"""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path

import psutil
import pytest

from kandev_nb.notebook.bridge import QUIET_AFTER_S
from kandev_nb.testing import Reply, ScriptedModelServer, text, tool_use
from tests.kernel.conftest import setup_code
from tests.kernel.kernel_harness import KernelHarness, WidgetModel

pytestmark = pytest.mark.timeout(240)


def test_a_page_that_says_present_while_an_approval_waits_gets_its_card(
    scripted_model: ScriptedModelServer, claude_env: dict[str, str], claude_workdir: Path, ledger_path: Path
) -> None:
    target, second = claude_workdir / "late.txt", claude_workdir / "second.txt"
    scripted_model.push(
        Reply(tool_use("Write", {"file_path": str(target), "content": "written after all\n"})),
        Reply(tool_use("Write", {"file_path": str(second), "content": "and this\n"})),
        Reply(text("Written.")),
    )
    env = {**os.environ, "KANDEV_NB_LEDGER": str(ledger_path), "KANDEV_NB_SPOOL": str(ledger_path.parent / "spool")}
    kernel = KernelHarness(env=env, cwd=str(claude_workdir), page=False)
    try:
        kernel.execute(setup_code(claude_env, claude_workdir, approval_timeout=90))
        time.sleep(QUIET_AFTER_S + 0.5)  # an old bridge, and no page: the turn starts headless
        run = kernel.start("%%claude\nWrite late.txt")
        deadline = time.monotonic() + 60
        while not scripted_model.main_requests and time.monotonic() < deadline:
            kernel.pump_for(0.2)
        kernel.pump_for(3.0)  # the CLI's can_use_tool is in: the approval waits, with no card
        assert not any(w.state.get("description") == "Allow once" for w in kernel.widgets.values())
        assert not run.done and not target.exists()

        bridge = next(w for w in kernel.widgets.values() if kernel.is_bridge(w))
        kernel.page = True  # a page's widget manager runs from now on (it loads the whole bridge)
        kernel.send_custom(bridge, {"kind": "present"})
        controls = kernel.wait_for_approval(timeout=30)  # no other event came: "present" alone did it
        # asked while headless, it keeps the timeout its request carried (its card says so) ...
        kernel.pump_for(1.5)  # the card's countdown ticks
        assert "left to answer" in kernel.widget_texts()
        assert "No approval timeout" not in kernel.widget_texts()
        # ... the whole bridge loads in a notebook tab, which says hello
        kernel.send_custom(bridge, {"kind": "hello", "view": "tab-1", "ok": True, "path": "late.ipynb"})
        kernel.pump_for(1.0)
        kernel.answer(controls, "allow")
        later = _next_approval(kernel, controls)  # ... and the turn's next one waits as a tab's do
        kernel.pump_for(1.5)
        assert "No approval timeout: the cell waits until you answer." in kernel.widget_texts()
        kernel.answer(later, "allow")
        kernel.wait(run)
        assert run.status == "ok", run.error
        assert target.read_text() == "written after all\n" and second.read_text() == "and this\n"
        html = "\n".join(run.data("text/html"))  # the static rendering, in this cell's output
        assert "Written." in html and "allowed" in html.lower()
        decided = kernel.eval("[r.decision.decided_by for r in kandev_nb.last_turn().tools.values()]")
        assert decided == ["person", "person"]
    finally:
        kernel.close()


def _next_approval(kernel: KernelHarness, answered: WidgetModel, timeout: float = 60) -> WidgetModel:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        fresh = [w for w in kernel.pending_approvals() if w is not answered]
        if fresh:
            return fresh[-1]
        kernel.pump_for(0.1)
    raise TimeoutError("no second approval card")


def test_a_page_that_says_present_while_the_cli_starts_gives_the_turn_a_tabs_timeout(
    scripted_model: ScriptedModelServer, claude_env: dict[str, str], claude_workdir: Path, ledger_path: Path
) -> None:
    """ "present" and the tab's hello come while the CLI still starts, before the turn has begun
    (Session.run's begin_turn would have overwritten a timeout set then): the turn's approval
    still waits as a tab's do."""
    target = claude_workdir / "early.txt"
    scripted_model.push(Reply(tool_use("Write", {"file_path": str(target), "content": "x\n"})), Reply(text("Done.")))
    env = {**os.environ, "KANDEV_NB_LEDGER": str(ledger_path), "KANDEV_NB_SPOOL": str(ledger_path.parent / "spool")}
    kernel = KernelHarness(env=env, cwd=str(claude_workdir), page=False)
    try:
        kernel.execute(setup_code(claude_env, claude_workdir, approval_timeout=90))
        kernel_pid = kernel.eval("__import__('os').getpid()")
        time.sleep(QUIET_AFTER_S + 0.5)
        run = kernel.start("%%claude\nWrite early.txt")
        _wait_for_cli(kernel_pid)  # the turn went headless and its CLI starts: the turn has not begun
        assert not scripted_model.main_requests
        bridge = next(w for w in kernel.widgets.values() if kernel.is_bridge(w))
        kernel.page = True
        kernel.send_custom(bridge, {"kind": "present"})
        kernel.send_custom(bridge, {"kind": "hello", "view": "tab-1", "ok": True, "path": "early.ipynb"})
        controls = kernel.wait_for_approval(timeout=60)
        kernel.pump_for(1.5)
        assert "No approval timeout: the cell waits until you answer." in kernel.widget_texts()
        kernel.answer(controls, "allow")
        kernel.wait(run)
        assert run.status == "ok", run.error
        assert target.read_text() == "x\n"
    finally:
        kernel.close()


def _wait_for_cli(kernel_pid: int, timeout: float = 60) -> None:
    """Until the kernel has started a Claude Code CLI process (Session.start spawns it)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        for child in psutil.Process(kernel_pid).children(recursive=True):
            with contextlib.suppress(psutil.Error):
                if any("claude" in part for part in child.cmdline()):
                    return
        time.sleep(0.02)
    raise TimeoutError("the kernel started no CLI")
