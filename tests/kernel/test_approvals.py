"""Approvals in a real kernel with the real CLI: the test is the frontend (widget comms)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from kandev_nb.testing import Reply, ScriptedModelServer, text, tool_use
from tests.kernel.conftest import setup_code
from tests.kernel.kernel_harness import CellRun, KernelHarness, WidgetModel

pytestmark = pytest.mark.timeout(300)


# -- the frontend's side --------------------------------------------------------------------


def with_class(kernel: KernelHarness, cls: str) -> list[WidgetModel]:
    """Widgets whose `_dom_classes` contain `cls`, in creation order."""
    return [w for w in kernel.widgets.values() if cls in w.state.get("_dom_classes", ())]


def descendants(kernel: KernelHarness, root: WidgetModel) -> list[WidgetModel]:
    out: list[WidgetModel] = []
    todo = [root]
    while todo:
        node = todo.pop()
        for ref in node.state.get("children", ()):
            child = kernel.widgets.get(str(ref).removeprefix("IPY_MODEL_"))
            if child is not None:
                out.append(child)
                todo.append(child)
    return out


def part(kernel: KernelHarness, card: WidgetModel, cls: str) -> WidgetModel:
    """The widget with dom class `cls` inside `card`."""
    found = [w for w in descendants(kernel, card) if cls in w.state.get("_dom_classes", ())]
    assert found, f"no {cls} in the card"
    return found[0]


def wait_for_card(kernel: KernelHarness, n: int, timeout: float = 90) -> WidgetModel:
    """The `n`-th approval card (1-based) once it exists."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        cards = with_class(kernel, "kandev-approval")
        if len(cards) >= n:
            return cards[n - 1]
        kernel.pump_for(0.1)
    raise TimeoutError(f"approval card {n} did not appear in {timeout} s")


def answer(kernel: KernelHarness, card: WidgetModel, action: str, **fields: str) -> None:
    """What the card's controls send on a click: one message with the typed text in it."""
    kernel.send_custom(part(kernel, card, "kandev-approval-controls"), {"action": action, **fields})


def wait_until_decided(kernel: KernelHarness, card: WidgetModel, timeout: float = 60) -> str:
    """The card's decision line once it shows one (HTML text)."""
    status = part(kernel, card, "kandev-decision")
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if status.state.get("value"):
            return str(status.state["value"])
        kernel.pump_for(0.1)
    raise TimeoutError("the card never showed a decision")


def html_of(run: CellRun) -> str:
    return "\n".join(run.data("text/html"))


def last_tool_result(scripted_model: ScriptedModelServer) -> str:
    return json.dumps([m for m in scripted_model.main_requests[-1].messages if m.get("role") == "user"][-1])


# -- tests ----------------------------------------------------------------------------------


def test_the_card_answers_once_for_the_session_edited_or_denied_with_a_reason(
    kernel: KernelHarness, scripted_model: ScriptedModelServer, claude_env: dict[str, str], claude_workdir: Path
) -> None:
    scripted_model.push(
        Reply(tool_use("Bash", {"command": "mkdir one", "description": "first dir"})),
        Reply(tool_use("Bash", {"command": "mkdir two", "description": "second dir"})),
        Reply(tool_use("Write", {"file_path": str(claude_workdir / "w.txt"), "content": "proposed\n"})),
        Reply(tool_use("Write", {"file_path": str(claude_workdir / "x.txt"), "content": "x\n"})),
        Reply(text("All done.")),
    )
    kernel.execute(setup_code(claude_env, claude_workdir))
    run = kernel.start("%%claude\nMake two dirs and two files")

    first = wait_for_card(kernel, 1)
    answer(kernel, first, "allow_always")
    answer(kernel, first, "deny", reason="too late")  # a second click, sent before the first is seen
    answer(kernel, first, "allow")
    assert "for the session" in wait_until_decided(kernel, first)

    edit_card = wait_for_card(kernel, 2)  # "mkdir two" needs no card: `mkdir …` is allowed for the session
    assert "w.txt" in part(kernel, edit_card, "kandev-approval-what").state["value"]
    answer(kernel, edit_card, "edit")  # the kernel sends the input to the editor
    controls = part(kernel, edit_card, "kandev-approval-controls")
    end = time.monotonic() + 30
    while not controls.state.get("input_json") and time.monotonic() < end:
        kernel.pump_for(0.1)
    assert json.loads(controls.state["input_json"])["content"] == "proposed\n"
    answer(
        kernel,
        edit_card,
        "allow_edited",
        input=json.dumps({"file_path": str(claude_workdir / "w.txt"), "content": "edited\n"}),
    )
    assert "Edited and allowed" in wait_until_decided(kernel, edit_card)

    deny_card = wait_for_card(kernel, 3)
    answer(kernel, deny_card, "deny", reason="x.txt belongs to someone else")
    answer(kernel, deny_card, "allow")  # too late: changes nothing
    status = wait_until_decided(kernel, deny_card)
    assert "Denied" in status and "x.txt belongs to someone else" in status
    kernel.wait(run)

    assert run.status == "ok" and run.error is None
    assert (claude_workdir / "one").is_dir() and (claude_workdir / "two").is_dir()
    assert (claude_workdir / "w.txt").read_text() == "edited\n"
    assert not (claude_workdir / "x.txt").exists()
    assert "x.txt belongs to someone else" in last_tool_result(scripted_model)
    assert kernel.eval("[r.decision.message for r in kandev_nb.last_turn().tools.values() if r.decision][-1]") == (
        "x.txt belongs to someone else"
    )
    assert len(with_class(kernel, "kandev-approval")) == 3
    decisions = kernel.eval(
        "[(r.call.tool_name, r.decision and (r.decision.behavior, r.decision.decided_by))"
        " for r in kandev_nb.last_turn().tools.values()]"
    )
    assert decisions == [
        ["Bash", ["allow", "person"]],
        ["Bash", ["allow", "grant"]],  # the scoped grant Bash(mkdir:*) given on the first card
        ["Write", ["allow", "person"]],
        ["Write", ["deny", "person"]],
    ]  # (kernel.eval goes through JSON: lists)


def test_policies_per_notebook_and_per_cell_show_on_the_card(
    kernel: KernelHarness, scripted_model: ScriptedModelServer, claude_env: dict[str, str], claude_workdir: Path
) -> None:
    src = claude_workdir / "src"
    scripted_model.push(
        Reply(tool_use("Bash", {"command": "mkdir src", "description": "dir"})),
        Reply(text("ok")),
        Reply(tool_use("Write", {"file_path": str(src / "a.py"), "content": "a = 1\n"})),
        Reply(text("ok")),
    )
    kernel.execute(setup_code(claude_env, claude_workdir))
    kernel.execute("kandev_nb.configure(approve=kandev_nb.Rules(allow=['Bash(mkdir *)']))")
    kernel.execute("%%claude\nMake src")
    assert "by policy" in wait_until_decided(kernel, wait_for_card(kernel, 1))
    kernel.execute(f"edits = kandev_nb.Rules(allow_edits_under=[{str(src)!r}])")
    kernel.execute("%%claude --approve edits\nWrite src/a.py")
    assert "by policy" in wait_until_decided(kernel, wait_for_card(kernel, 2))
    assert (src / "a.py").read_text() == "a = 1\n"
    assert kernel.eval("[r.decision.decided_by for r in kandev_nb.last_turn().tools.values()]") == ["policy"]


def test_kernel_interrupt_while_a_card_waits_withdraws_it_and_keeps_the_session(
    kernel: KernelHarness, scripted_model: ScriptedModelServer, claude_env: dict[str, str], claude_workdir: Path
) -> None:
    target = claude_workdir / "w.txt"
    scripted_model.push(
        Reply(text("Noted: the code word is heron.")),
        Reply(tool_use("Write", {"file_path": str(target), "content": "w\n"})),
        Reply(text("Stopped; the code word was heron.")),
    )
    kernel.execute(setup_code(claude_env, claude_workdir))
    kernel.execute("%%claude\nThe code word is heron.")
    pid = kernel.eval("kandev_nb.sessions['default'].pid")
    run = kernel.start("%%claude\nWrite w.txt")
    card = wait_for_card(kernel, 1)
    controls = part(kernel, card, "kandev-approval-controls")
    kernel.km.interrupt_kernel()
    kernel.wait(run, timeout=60)
    assert run.status == "error" and run.reply["ename"] == "KeyboardInterrupt"  # drops a Run All queue (28.9)
    assert "Withdrawn by Claude Code" in wait_until_decided(kernel, card)
    kernel.send_custom(controls, {"action": "allow"})  # a click on the withdrawn card changes nothing
    kernel.execute("%%claude\nWhat was the code word?")
    assert kernel.eval("kandev_nb.sessions['default'].pid") == pid
    assert kernel.eval("kandev_nb.last_turn().text") == "Stopped; the code word was heron."
    assert not target.exists()
    history = repr(scripted_model.main_requests[-1].messages)
    assert "The code word is heron." in history and "Request interrupted by user" in history
    assert kernel.eval(
        "[type(e).__name__ for e in kandev_nb.notebook.magic._turns[-2].events"
        " if type(e).__name__.startswith('Permission')]"
    ) == ["PermissionRequest", "PermissionCancelled"]


@pytest.mark.parametrize("how", ["stop_button", "kernel_interrupt"])
def test_stopping_a_streaming_turn_keeps_the_process_and_the_conversation(
    how: str,
    kernel: KernelHarness,
    scripted_model: ScriptedModelServer,
    claude_env: dict[str, str],
    claude_workdir: Path,
) -> None:
    scripted_model.push(Reply(text("z" * 300, chunk_size=1, delay=0.2)), Reply(text("Back again.")))
    kernel.execute(setup_code(claude_env, claude_workdir))
    run = kernel.start("%%claude\nWrite a long answer")
    stop = kernel.wait_for_button("Stop")
    end = time.monotonic() + 60
    while "zzz" not in kernel.widget_texts() and time.monotonic() < end:
        kernel.pump_for(0.1)
    if how == "stop_button":
        kernel.click(stop)
    else:
        kernel.km.interrupt_kernel()
    kernel.wait(run, timeout=60)
    # The Stop button ends the turn; the kernel's interrupt also fails the cell (Run All stops, 28.9).
    assert run.status == ("ok" if how == "stop_button" else "error"), run.error
    interrupted = kernel.eval(
        "(kandev_nb.last_turn().interrupted, kandev_nb.last_turn().stats.result_subtype,"
        " len(kandev_nb.last_turn().text), kandev_nb.sessions['default'].pid)"
    )
    assert interrupted[:2] == [True, "error_during_execution"] and interrupted[2] < 300
    kernel.execute("%%claude\nAre you still there?")
    assert kernel.eval("(kandev_nb.last_turn().text, kandev_nb.sessions['default'].pid)") == [
        "Back again.",
        interrupted[3],
    ]
    assert "Write a long answer" in repr(scripted_model.main_requests[-1].messages)


def test_modes_plan_then_accept_edits_in_one_live_process(
    kernel: KernelHarness, scripted_model: ScriptedModelServer, claude_env: dict[str, str], claude_workdir: Path
) -> None:
    plan = "## Plan\n\n1. Write **plan.txt**\n2. Report"
    scripted_model.push(
        Reply(tool_use("ExitPlanMode", {"plan": plan})),
        Reply(tool_use("Write", {"file_path": str(claude_workdir / "plan.txt"), "content": "p\n"})),
        Reply(text("Planned and done.")),
        Reply(tool_use("Write", {"file_path": str(claude_workdir / "edit.txt"), "content": "e\n"})),
        Reply(text("Edited without asking.")),
    )
    kernel.execute(setup_code(claude_env, claude_workdir))
    run = kernel.start("%%claude --mode plan\nPlan, then write plan.txt")
    plan_card = wait_for_card(kernel, 1)
    what = part(kernel, plan_card, "kandev-approval-what").state["value"]
    assert "<strong>plan.txt</strong>" in what  # the plan, rendered as Markdown
    answer(kernel, plan_card, "allow")
    answer(kernel, wait_for_card(kernel, 2), "allow")
    kernel.wait(run)
    assert kernel.eval(
        "(kandev_nb.sessions['default'].config.mode,"
        " [e.mode for e in kandev_nb.last_turn().events if e.type == 'session_mode'])"
    ) == ["supervised", ["default"]]
    pid = kernel.eval("kandev_nb.sessions['default'].pid")
    kernel.execute("%%claude --mode acceptEdits\nWrite edit.txt")
    assert (claude_workdir / "edit.txt").read_text() == "e\n"
    assert len(with_class(kernel, "kandev-approval")) == 2  # no card in acceptEdits
    write_card = with_class(kernel, "kandev-tool-card")[-1]
    card_text = "".join(str(w.state.get("value", "")) for w in descendants(kernel, write_card))
    assert "allowed by acceptEdits mode" in card_text  # the mode let it through, not a settings rule
    assert kernel.eval(
        "(kandev_nb.sessions['default'].pid, kandev_nb.sessions['default'].config.mode,"
        " [r.decision.decided_by for r in kandev_nb.last_turn().tools.values()])"
    ) == [pid, "acceptEdits", ["mode"]]


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="the refusal is for root only")
def test_autonomous_as_root_says_what_to_do_and_runs_with_the_opt_in(
    kernel: KernelHarness, scripted_model: ScriptedModelServer, claude_env: dict[str, str], claude_workdir: Path
) -> None:
    scripted_model.push(
        Reply(tool_use("Bash", {"command": 'python3 -c \'open("a.txt", "w").write("a")\'', "description": "a"})),
        Reply(text("done")),
    )
    kernel.execute(setup_code(claude_env, claude_workdir))
    refused = kernel.wait(kernel.start("%%claude --mode autonomous\nDo anything"))
    assert refused.status == "error"  # a UsageError: one line, no traceback
    assert "IS_SANDBOX=1" in refused.stdout() and "--i-am-sandboxed" in refused.stdout()
    assert scripted_model.main_requests == []
    kernel.execute("%%claude --mode autonomous --i-am-sandboxed\nWrite a.txt")
    assert (claude_workdir / "a.txt").read_text() == "a"
    assert with_class(kernel, "kandev-approval") == []


def test_turn_timer_ends_a_silent_turn_with_a_clear_error(
    kernel: KernelHarness, scripted_model: ScriptedModelServer, claude_env: dict[str, str], claude_workdir: Path
) -> None:
    scripted_model.push(Reply(text("late"), delay_first_byte=60), Reply(text("On time.")))
    kernel.execute(setup_code(claude_env, claude_workdir, inactivity_timeout=3.0))
    run = kernel.execute("%%claude\nAnswer slowly")
    assert "No message from Claude Code for" in html_of(run) + kernel.widget_texts()
    kernel.execute("%%claude\nAnswer now")
    assert kernel.eval("kandev_nb.last_turn().text") == "On time."


def test_a_cells_policy_denies_in_accept_edits_by_its_rule_and_a_grant_names_its_cell(
    kernel: KernelHarness, scripted_model: ScriptedModelServer, claude_env: dict[str, str], claude_workdir: Path
) -> None:
    """Issues 23.5 and 28.8: a cell's --approve deny holds in acceptEdits (old main: data.csv
    was deleted) and says whose rule it was; a session grant says where it was given."""
    (claude_workdir / "data.csv").write_text("a,b\n")
    (claude_workdir / "stats.py").write_text("print(1)\n")
    scripted_model.push(
        Reply(tool_use("Bash", {"command": "rm data.csv", "description": "clean"})),
        Reply(text("ok")),
        Reply(tool_use("Bash", {"command": "touch out1.txt", "description": "t"})),
        Reply(text("ok")),
        Reply(tool_use("Bash", {"command": "rm -f stats.py", "description": "r"})),
        Reply(tool_use("Bash", {"command": "touch out2.txt", "description": "t"})),
        Reply(text("ok")),
    )
    kernel.execute(setup_code(claude_env, claude_workdir))
    kernel.execute("no_rm = kandev_nb.Rules(deny=['Bash(rm*)'])")
    kernel.execute("%%claude --mode acceptEdits --approve no_rm\nClean up")
    assert (claude_workdir / "data.csv").exists()
    message = "Denied by this cell's policy (--approve no_rm) rule Bash(rm*)."
    assert kernel.eval("[r.decision.message for r in kandev_nb.last_turn().tools.values()]") == [message]
    assert "policy (--approve no_rm) rule Bash(rm*)" in kernel.eval("kandev_nb.last_turn()._repr_html_()")

    run = kernel.start("%%claude\nTouch one")
    card = wait_for_card(kernel, 1)
    answer(kernel, card, "allow_always")
    kernel.wait(run)
    given_in = run.reply.get("execution_count")
    assert isinstance(given_in, int)
    run = kernel.start("%%claude\nRemove stats, touch two")
    rm_card = wait_for_card(kernel, 2)  # old main: rm ran unasked after "Allow for session" on touch
    assert "rm -f stats.py" in part(kernel, rm_card, "kandev-approval-what").state["value"]
    answer(kernel, rm_card, "deny", reason="keep it")
    kernel.wait(run)
    assert (claude_workdir / "stats.py").exists() and (claude_workdir / "out2.txt").exists()
    assert kernel.eval("[r.decision.message for r in kandev_nb.last_turn().tools.values()][-1]") == (
        f"allowed by your session grant Bash(touch:*), given in cell [{given_in}]"
    )
