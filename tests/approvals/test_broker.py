"""The approval broker on its own: no CLI process, no transport (issue 12 point 2).

Each test drives :class:`~kandev_nb.agent.approvals.ApprovalBroker` the way the CLI
connection does (a `can_use_tool` request, a `control_cancel_request`, an in-process MCP
`tools/call`) and looks at what it would send back and which events it reports.
"""

from __future__ import annotations

import asyncio
from typing import Any

from kandev_nb.agent import events as ev
from kandev_nb.agent.adapter import Adapter
from kandev_nb.agent.approvals import ApprovalBroker
from kandev_nb.agent.permissions import Rules
from kandev_nb.agent.tools import normalize_tool_call as normalize


class Harness:
    """A broker whose answers and events are kept in lists."""

    def __init__(self, **kwargs: Any) -> None:
        self.events: list[ev.AgentEvent] = []
        self.answers: list[tuple[str, dict[str, Any]]] = []
        self.broker = ApprovalBroker(self.events.append, Adapter().tool_payload, lambda: "sid-1", **kwargs)

    async def answer(self, request_id: str, response: dict[str, Any]) -> None:
        self.answers.append((request_id, response))

    def ask(self, request_id: str, tool_name: str, tool_input: dict[str, Any], tool_use_id: str = "tu-1") -> Any:
        request = {"subtype": "can_use_tool", "tool_name": tool_name, "input": tool_input, "tool_use_id": tool_use_id}
        return self.broker.on_can_use_tool(request_id, request, self.answer)

    async def settle(self) -> None:
        for _ in range(20):  # let the answer tasks run (no wall-clock wait)
            await asyncio.sleep(0)

    def of(self, kind: type[ev.AgentEvent]) -> list[Any]:
        return [e for e in self.events if isinstance(e, kind)]


class KernelLike:
    """An in-process MCP server: `run_code` changes state, `list_variables` does not."""

    def needs_approval(self, name: str) -> bool:
        return name != "list_variables"


def tools_call(name: str, arguments: dict[str, Any], tool_use_id: str | None = None) -> dict[str, Any]:
    params: dict[str, Any] = {"name": name, "arguments": arguments}
    if tool_use_id:
        params["_meta"] = {"claudecode/toolUseId": tool_use_id}
    return {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": params}


async def test_a_policy_answers_at_once_and_the_answer_is_sent_once() -> None:
    h = Harness(policy=Rules(allow=["Read"]))
    approval = h.ask("r1", "Read", {"file_path": "/tmp/x"})
    await h.settle()
    assert h.answers == [("r1", {"behavior": "allow", "updatedInput": {"file_path": "/tmp/x"}})]
    assert approval.allow() is False and approval.deny("late") is False  # already answered
    await h.settle()
    assert len(h.answers) == 1
    (request,) = h.of(ev.PermissionRequest)
    (decided,) = h.of(ev.PermissionDecided)
    assert h.events.index(request) < h.events.index(decided)
    assert (decided.decided_by, decided.behavior, decided.session_id) == ("policy", "allow", "sid-1")
    assert h.broker.approvals == {}


async def test_the_card_waits_for_a_person_and_only_the_first_click_counts() -> None:
    h = Harness()
    approval = h.ask("r2", "Bash", {"command": "ls"})
    await h.settle()
    assert h.answers == [] and set(h.broker.approvals) == {"r2"}  # waiting for the card
    (request,) = h.of(ev.PermissionRequest)
    assert request.approval is approval and request.normalized == normalize("Bash", {"command": "ls"})
    assert approval.deny("not now") is True
    assert approval.allow() is False
    await h.settle()
    assert h.answers == [("r2", {"behavior": "deny", "message": "not now", "interrupt": False})]
    assert [d.decided_by for d in h.of(ev.PermissionDecided)] == ["person"]


async def test_no_answer_within_the_timeout_denies() -> None:
    h = Harness(timeout=0.01)
    h.ask("r3", "Bash", {"command": "make"})
    for _ in range(200):
        if h.answers:
            break
        await asyncio.sleep(0.01)
    ((request_id, response),) = h.answers
    assert request_id == "r3" and response["behavior"] == "deny"
    assert [d.decided_by for d in h.of(ev.PermissionDecided)] == ["timeout"]


async def test_a_turn_policy_and_timeout_apply_to_that_turn_only() -> None:
    h = Harness(policy=Rules(deny=["Bash(ls:*)"]), timeout=None)
    h.broker.begin_turn(Rules(allow=["Bash(*)"]), timeout=None, has_timeout=True)
    h.ask("r4", "Bash", {"command": "pwd"}, tool_use_id="tu-4")
    h.broker.end_turn()
    h.ask("r5", "Bash", {"command": "ls"}, tool_use_id="tu-5")
    await h.settle()
    assert [(r, a["behavior"]) for r, a in h.answers] == [("r4", "allow"), ("r5", "deny")]
    assert h.broker.current_timeout is None


async def test_a_turn_policy_never_lifts_the_session_policys_deny_rules() -> None:
    """A deny rule means never: a cell's own --approve policy answers for its turn, but the
    session's deny rules still hold (issue 23: "a deny rule in every mode")."""
    h = Harness(policy=Rules(deny=["Bash(rm:*)"]), timeout=None)
    h.broker.begin_turn(Rules(allow=["Bash(*)"]), timeout=None, has_timeout=True)
    h.ask("r8", "Bash", {"command": "rm -rf data"}, tool_use_id="tu-8")
    await h.settle()
    assert [(r, a["behavior"]) for r, a in h.answers] == [("r8", "deny")]
    assert "Bash(rm:*)" in h.answers[0][1]["message"]


async def test_a_withdrawn_request_closes_its_card_and_gets_no_answer() -> None:
    h = Harness()
    approval = h.ask("r6", "Write", {"file_path": "a.txt", "content": "x"})
    await h.settle()
    h.broker.withdraw("r6")
    h.broker.withdraw("no-such-request")  # ignored
    assert approval.allow() is False
    await h.settle()
    assert h.answers == []
    assert [c.request_id for c in h.of(ev.PermissionCancelled)] == ["r6"]
    assert h.of(ev.PermissionDecided) == []


async def test_an_interrupt_denies_what_is_still_waiting() -> None:
    h = Harness()
    h.ask("r7", "Bash", {"command": "sleep 100"})
    await h.settle()
    h.broker.deny_all("The user interrupted the turn.")
    await h.settle()
    ((_, response),) = h.answers
    assert response == {"behavior": "deny", "message": "The user interrupted the turn.", "interrupt": True}


async def test_an_unasked_state_changing_tools_call_asks_and_the_timeout_denies_it() -> None:
    h = Harness(timeout=0.01)
    refusal = await h.broker.authorize_tool_call("kernel", KernelLike(), tools_call("run_code", {"code": "x = 1"}))
    assert refusal is not None and "mcp__kernel__run_code was denied" in refusal
    (request,) = h.of(ev.PermissionRequest)
    assert request.tool_name == "mcp__kernel__run_code" and "without a permission request" in request.title
    assert [d.decided_by for d in h.of(ev.PermissionDecided)] == ["timeout"]


async def test_an_unasked_tools_call_runs_once_a_person_allows_it_with_their_edit() -> None:
    h = Harness()
    message = tools_call("run_code", {"code": "rm_everything()"})
    task = asyncio.get_running_loop().create_task(h.broker.authorize_tool_call("kernel", KernelLike(), message))
    await h.settle()
    (approval,) = h.broker.approvals.values()
    approval.allow({"code": "print('safe')"})
    assert await task is None
    assert message["params"]["arguments"] == {"code": "print('safe')"}


async def test_a_tools_call_covered_by_an_allowed_can_use_tool_runs_unasked_once() -> None:
    h = Harness(policy=Rules(allow=["mcp__kernel__run_code"]))
    h.ask("r8", "mcp__kernel__run_code", {"code": "x = 1"}, tool_use_id="tu-8")
    await h.settle()
    assert await h.broker.authorize_tool_call("kernel", KernelLike(), tools_call("run_code", {}, "tu-8")) is None
    asked_before = len(h.of(ev.PermissionRequest))
    # The same tool_use_id again is not covered any more: it asks (and the policy answers).
    assert await h.broker.authorize_tool_call("kernel", KernelLike(), tools_call("run_code", {}, "tu-8")) is None
    assert len(h.of(ev.PermissionRequest)) == asked_before + 1


async def test_read_only_and_allowed_tools_never_ask() -> None:
    h = Harness(allowed_tools=("mcp__kernel__inspect_variable",))
    assert await h.broker.authorize_tool_call("kernel", KernelLike(), tools_call("list_variables", {})) is None
    assert await h.broker.authorize_tool_call("kernel", KernelLike(), tools_call("inspect_variable", {})) is None
    assert h.of(ev.PermissionRequest) == []


def _ran(tool_use_id: str, name: str = "Bash") -> ev.ToolUpdate:
    return ev.ToolUpdate(
        tool_call_id=tool_use_id, tool_name=name, status="complete", normalized=normalize(name, {"command": "ls"})
    )


async def test_a_tool_the_cli_ran_without_asking_is_marked_as_decided_by_its_settings() -> None:
    h = Harness()
    h.ask("r9", "Bash", {"command": "ls"}, tool_use_id="asked")
    raw = {"tool_result_meta": [{"id": "unasked", "permission_decision": {"decision": "accept", "source": "rule"}}]}
    events: list[ev.AgentEvent] = [_ran("asked"), _ran("unasked"), _ran("read", "Read")]
    out = h.broker.note_unasked(raw, events, "supervised")
    notes = [e for e in out if isinstance(e, ev.PermissionDecided)]
    assert [(n.tool_use_id, n.decided_by, n.behavior) for n in notes] == [("unasked", "settings", "allow")]
    assert out.index(notes[0]) == out.index(events[1]) - 1  # just before its ToolUpdate
    assert "rule" in notes[0].message
    assert h.broker.note_unasked({}, [_ran("other")], "autonomous") == [_ran("other")]
