"""The approval card: what it shows per tool, and its buttons answering the Approval."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

from kandev_nb.agent import events as ev
from kandev_nb.agent import tools as t
from kandev_nb.agent.permissions import Approval
from kandev_nb.notebook.widgets import TurnView
from kandev_nb.notebook.widgets.approval import ApprovalCard
from kandev_nb.notebook.widgets.recording import Recorder
from tests.widgets.test_view import find


def request(name: str, tool_input: dict[str, Any], **kw: Any) -> ev.PermissionRequest:
    approval = Approval("req-1", name, tool_input, tool_use_id="toolu_1")
    return ev.PermissionRequest(request_id="req-1", tool_name=name, tool_use_id="toolu_1", input=tool_input,
                                normalized=t.normalize_tool_call(name, tool_input), approval=approval, **kw)


def card_of(v: TurnView) -> ApprovalCard:
    return next(iter(v.approvals.values()))


async def test_buttons_have_the_names_the_browser_tests_use(rec: Recorder) -> None:
    v = TurnView("x")
    v.handle(request("Bash", {"command": "rm -rf build", "description": "clean"}, reason="not in allow list"))
    assert v.root is not None
    (box,) = find(v.root, "kandev-approval")
    assert find(box, "kandev-allow")[0].description == "Allow"
    assert find(box, "kandev-deny")[0].description == "Deny"
    assert find(box, "kandev-allow-always")[0].description == "Allow for session"
    what = card_of(v).what.value
    assert "rm -rf build" in what and "clean" in what and "not in allow list" in what
    assert "Waiting for your approval" in v.activity.value


async def test_allow_click_decides_and_disables(rec: Recorder) -> None:
    v = TurnView("x")
    e = request("Bash", {"command": "ls"})
    v.handle(e)
    card = card_of(v)
    rec.click(card.allow)  # as the browser sends it
    d = e.approval.decision
    assert d is not None and d.behavior == "allow" and d.decided_by == "person" and d.updated_permissions is None
    assert all(c.disabled for c in card.controls)
    assert "Allowed" in card.status.value and "by you" in card.status.value
    assert "kandev-decided" in card.box._dom_classes
    card.deny.click()  # too late: nothing changes
    assert e.approval.decision is d


async def test_allow_for_session_sends_permissions(rec: Recorder) -> None:
    v = TurnView("x")
    e = request("Bash", {"command": "ls"})
    v.handle(e)
    card_of(v).allow_always.click()
    d = e.approval.decision
    assert d is not None and d.updated_permissions and d.updated_permissions[0]["behavior"] == "allow"
    assert "for the session" in card_of(v).status.value


async def test_deny_with_reason(rec: Recorder) -> None:
    v = TurnView("x")
    e = request("Write", {"file_path": "/p/x.txt", "content": "hi\n"})
    v.handle(e)
    card = card_of(v)
    assert "kandev-diff" in card.what.value and "/p/x.txt" in card.what.value
    card.reason.value = "use a temp dir"
    card.deny.click()
    d = e.approval.decision
    assert d is not None and d.behavior == "deny" and d.message == "use a temp dir"
    assert "Denied" in card.status.value and "use a temp dir" in card.status.value


async def test_edit_then_allow(rec: Recorder) -> None:
    v = TurnView("x")
    e = request("Bash", {"command": "rm -rf /"})
    v.handle(e)
    card = card_of(v)
    card.edit.click()
    assert '"rm -rf /"' in card.editor.value and card.editor.layout.display is None
    card.editor.value = "{not json"
    card.allow_edited.click()
    assert e.approval.decision is None and "not valid JSON" in card.error.value
    card.editor.value = '{"command": "ls"}'
    card.allow_edited.click()
    d = e.approval.decision
    assert d is not None and d.updated_input == {"command": "ls"} and "edited input" in card.status.value


async def test_click_from_another_thread(rec: Recorder) -> None:
    v = TurnView("x")
    e = request("Bash", {"command": "ls"})
    v.handle(e)
    th = threading.Thread(target=card_of(v).allow.click)
    th.start()
    th.join()
    decision = await e.approval.wait(1)
    assert decision.behavior == "allow" and card_of(v).allow.disabled


async def test_timeout_and_policy_update_the_card(rec: Recorder) -> None:
    v = TurnView("x")
    e = request("Bash", {"command": "ls"})
    v.handle(e)
    await e.approval.wait(0.01)  # nobody answers: denied by timeout
    card = card_of(v)
    assert "Denied" in card.status.value and "by timeout" in card.status.value and card.allow.disabled
    v2 = TurnView("y")
    e2 = request("Read", {"file_path": "/etc/passwd"}, blocked_path="/etc/passwd")
    e2.approval.deny("policy says no", by="policy")  # decided before the card exists
    v2.handle(e2)
    card2 = card_of(v2)
    assert "by policy" in card2.status.value and card2.deny.disabled and "blocked path" in card2.what.value


async def test_decided_and_cancelled_events(rec: Recorder) -> None:
    v = TurnView("x")
    e = request("Bash", {"command": "ls"})
    v.handle(e)
    v.handle(ev.PermissionCancelled(request_id="req-1"))
    card = card_of(v)
    assert "Withdrawn" in card.status.value and card.allow.disabled
    v2 = TurnView("y")
    v2.handle(ev.ToolCall(tool_call_id="toolu_1", tool_name="Bash", title="ls",
                          normalized=t.normalize_tool_call("Bash", {"command": "ls"})))
    v2.handle(request("Bash", {"command": "ls"}))
    v2.handle(ev.PermissionDecided(request_id="req-1", tool_name="Bash", behavior="allow", decided_by="policy",
                                   waited_ms=1200))
    assert "by policy" in card_of(v2).status.value and "1.2 s" in card_of(v2).status.value
    assert "allowed by policy" in v2.cards["toolu_1"].html.value


async def test_plan_is_rendered_as_markdown(rec: Recorder) -> None:
    v = TurnView("x")
    v.handle(request("ExitPlanMode", {"plan": "## Plan\n\n1. read\n2. write"}))
    what = card_of(v).what.value
    assert "<h2>Plan</h2>" in what and "<ol>" in what


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
    assert (card.allow.description, card.deny.description) == ("Approve plan", "Keep planning")
    assert card.allow_always not in card.buttons.children and card.edit not in card.buttons.children
    card.reason.value = "also add a test"
    rec.click(card.deny)
    d = e.approval.decision
    assert d is not None and d.behavior == "deny"
    assert d.message == "The user wants you to keep planning: also add a test"
