"""Issue 27 point 9 in a real kernel with the real CLI: the header chips and the plan card's
choices change the session's next turn, seen on the wire (the model the CLI asks the scripted
model server for, the mode the CLI reports in `system/status`). Point 4 headless: without a
tab on the bridge, a finished turn's output carries no Insert / Copy marks."""

from __future__ import annotations

from pathlib import Path

from kandev_nb.testing import Reply, ScriptedModelServer, text, tool_use
from tests.kernel.conftest import setup_code
from tests.kernel.kernel_harness import KernelHarness, WidgetModel
from tests.kernel.test_approvals import answer, descendants, html_of, wait_for_card, with_class
from tests.widgets.test_static import plain


def _bridge(kernel: KernelHarness) -> WidgetModel:
    (found,) = [w for w in kernel.widgets.values() if w.state.get("kernel")]  # the bridge's kernel token
    return found


def test_the_header_chips_choose_the_next_turns_mode_and_model(
    kernel: KernelHarness, scripted_model: ScriptedModelServer, claude_env: dict[str, str], claude_workdir: Path
) -> None:
    scripted_model.push(Reply(text("First.")), Reply(text("Second.")))
    kernel.execute(setup_code(claude_env, claude_workdir))
    first = kernel.execute("%%claude\nHello")
    # point 4: no tab said hello to the bridge (this test is the frontend): no Insert buttons, no marks
    assert "First." in html_of(first) and "kandev-answer-host" not in html_of(first)
    first_model = scripted_model.main_requests[-1].body["model"]
    assert first_model != "claude-other-1"
    header = with_class(kernel, "kandev-run-info")[-1]
    assert 'data-kandev-session="default"' in header.state["value"]  # what the tab makes chips of
    bridge = _bridge(kernel)
    kernel.send_custom(bridge, {"kind": "next", "session": "default", "mode": "plan"})
    kernel.send_custom(bridge, {"kind": "next", "session": "default", "model": "claude-other-1"})
    kernel.send_custom(bridge, {"kind": "next", "session": "default", "mode": "sudo"})  # refused, logged
    kernel.execute("%%claude\nAgain")
    assert scripted_model.main_requests[-1].body["model"] == "claude-other-1"  # on the wire
    assert kernel.eval("kandev_nb.sessions['default'].config.mode") == "plan"
    assert "claude · default · turn 2 · plan" in plain(with_class(kernel, "kandev-run-info")[-1].state["value"])
    assert kernel.eval("kandev_nb.last_turn().text").endswith("Second.")


def test_the_plan_card_offers_the_clis_own_choices(
    kernel: KernelHarness, scripted_model: ScriptedModelServer, claude_env: dict[str, str], claude_workdir: Path
) -> None:
    scripted_model.push(
        Reply(tool_use("ExitPlanMode", {"plan": "1. Write plan.txt"})),
        Reply(tool_use("Write", {"file_path": str(claude_workdir / "plan.txt"), "content": "p\n"})),
        Reply(text("Planned and done.")),
        Reply(tool_use("Write", {"file_path": str(claude_workdir / "next.txt"), "content": "n\n"})),
        Reply(text("Still accepting edits.")),
    )
    kernel.execute(setup_code(claude_env, claude_workdir))
    run = kernel.start("%%claude --mode plan\nPlan, then write plan.txt")
    plan_card = wait_for_card(kernel, 1)
    answer(kernel, plan_card, "approve_accept_edits")
    kernel.wait(run)
    assert run.status == "ok", run.error
    assert (claude_workdir / "plan.txt").read_text() == "p\n"
    assert len(with_class(kernel, "kandev-approval")) == 1  # the Write did not ask: edits are auto-accepted
    modes = kernel.eval("[e.mode for e in kandev_nb.last_turn().events if e.type == 'session_mode']")
    assert modes[-1] == "acceptEdits", modes  # the CLI switched
    status = "".join(str(w.state.get("value", "")) for w in descendants(kernel, plan_card))
    assert "acceptEdits" in status
    kernel.execute("%%claude\nWrite next.txt")  # the next cell keeps the mode chosen on the card
    assert (claude_workdir / "next.txt").read_text() == "n\n"
    assert len(with_class(kernel, "kandev-approval")) == 1
    assert kernel.eval("kandev_nb.sessions['default'].config.mode") == "acceptEdits"
