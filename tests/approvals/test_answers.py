"""Answers to can_use_tool on the real CLI: exactly once, for the session, with a reason,
edited, by a policy, by the timeout, withdrawn by the CLI."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from kandev_nb.agent import events as ev
from kandev_nb.agent.permissions import Rules
from kandev_nb.testing import Reply, ScriptedModelServer, text, tool_use
from tests.approvals.conftest import SessionMaker, sent

pytestmark = pytest.mark.timeout(180)
BOTH = pytest.mark.parametrize("claude_cli", ["2.1.332", "2.1.197"], indirect=True)


def of(kind: type[ev._Event], events: list[ev.AgentEvent]) -> list[ev.AgentEvent]:
    return [e for e in events if isinstance(e, kind)]


def tool_result(request_body_messages: list[dict[str, object]]) -> dict[str, object]:
    """The first tool_result block of the last user message of an API request."""
    for message in reversed(request_body_messages):
        if message.get("role") == "user" and isinstance(message.get("content"), list):
            for block in message["content"]:  # type: ignore[union-attr]
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    return block
    raise AssertionError("no tool_result in the request")


@BOTH
async def test_each_request_is_answered_once_whatever_is_clicked(
    make_session: SessionMaker, scripted_model: ScriptedModelServer, claude_workdir: Path
) -> None:
    target = claude_workdir / "w.txt"
    scripted_model.push(Reply(tool_use("Write", {"file_path": str(target), "content": "w\n"})), Reply(text("ok")))
    outcomes: list[bool] = []

    def clicks(event: ev.AgentEvent) -> None:
        if isinstance(event, ev.PermissionRequest):
            outcomes.extend(
                [
                    event.approval.allow(),
                    event.approval.allow(),
                    event.approval.deny("no"),
                    event.approval.allow(always=True),
                    event.approval.cancel(),
                ]
            )

    session = make_session()
    turn = await session.run("go", consumers=[clicks])
    request = of(ev.PermissionRequest, turn.events)[0]
    assert outcomes == [True, False, False, False, False]
    assert len(sent(session).answers_to(request.request_id)) == 1
    assert [e.behavior for e in of(ev.PermissionDecided, turn.events)] == ["allow"]  # type: ignore[attr-defined]
    assert target.read_text() == "w\n"


@BOTH
async def test_allow_the_whole_tool_for_the_session_stops_the_cli_asking_for_that_tool(
    make_session: SessionMaker, scripted_model: ScriptedModelServer, claude_workdir: Path
) -> None:
    scripted_model.push(
        Reply(tool_use("Bash", {"command": "mkdir one", "description": "1"})),
        Reply(tool_use("Bash", {"command": "python3 -c 'print(2)'", "description": "2"})),
        Reply(text("ok")),
        Reply(tool_use("Bash", {"command": "mkdir three", "description": "3"})),
        Reply(text("ok")),
    )
    asked: list[str] = []

    def always(event: ev.AgentEvent) -> None:
        if isinstance(event, ev.PermissionRequest):
            asked.append(event.input["command"])
            event.approval.allow(always="tool")  # the plainly labelled whole-tool choice

    session = make_session()
    await session.run("first", consumers=[always])
    await session.run("second", consumers=[always])  # same process: the session rule holds across turns
    assert asked == ["mkdir one"]
    assert (claude_workdir / "three").is_dir()
    assert not (claude_workdir / ".claude").exists()  # nothing written to the project's settings


@BOTH
async def test_deny_reason_reaches_the_agent(
    make_session: SessionMaker, scripted_model: ScriptedModelServer, claude_workdir: Path
) -> None:
    scripted_model.push(
        Reply(tool_use("Bash", {"command": "rm -rf build", "description": "clean"})), Reply(text("I will not."))
    )

    def deny(event: ev.AgentEvent) -> None:
        if isinstance(event, ev.PermissionRequest):
            event.approval.deny("keep build/, it holds the release")

    turn = await make_session().run("clean up", consumers=[deny])
    block = tool_result(scripted_model.main_requests[1].messages)
    assert block["is_error"] is True and "keep build/, it holds the release" in json.dumps(block["content"])
    decided = of(ev.PermissionDecided, turn.events)[0]
    assert (decided.behavior, decided.decided_by) == ("deny", "person")  # type: ignore[attr-defined]


@BOTH
async def test_edit_then_allow_runs_the_edited_input(
    make_session: SessionMaker, scripted_model: ScriptedModelServer, claude_workdir: Path
) -> None:
    target = claude_workdir / "w.txt"
    scripted_model.push(
        Reply(tool_use("Write", {"file_path": str(target), "content": "proposed\n"})), Reply(text("ok"))
    )

    def edit(event: ev.AgentEvent) -> None:
        if isinstance(event, ev.PermissionRequest):
            event.approval.allow(updated_input={**event.input, "content": "edited by the reviewer\n"})

    await make_session().run("write", consumers=[edit])
    assert target.read_text() == "edited by the reviewer\n"


async def test_policies_per_session_and_per_turn_and_the_rest_is_asked(
    make_session: SessionMaker, scripted_model: ScriptedModelServer, claude_workdir: Path
) -> None:
    scripted_model.push(
        Reply(tool_use("Bash", {"command": "git init -q", "description": "repo"})),
        Reply(tool_use("Bash", {"command": "git init -q; rm -rf /tmp/nothing-here", "description": "sneaky"})),
        Reply(tool_use("Bash", {"command": "curl -s http://127.0.0.1:9", "description": "net"})),
        Reply(text("ok")),
        Reply(tool_use("Write", {"file_path": str(claude_workdir / "src" / "a.py"), "content": "a\n"})),
        Reply(text("ok")),
    )
    person: list[str] = []

    def ask(event: ev.AgentEvent) -> None:
        if isinstance(event, ev.PermissionRequest) and event.approval.decision is None:
            person.append(event.input.get("command", event.tool_name))
            event.approval.deny("no")

    session = make_session(approve=Rules(allow=["Bash(git init*)"], deny=["Bash(curl *)"]))
    first = await session.run("one", consumers=[ask])
    assert person == ["git init -q; rm -rf /tmp/nothing-here"]  # a compound command is never allowed by a prefix
    decided = [(e.tool_name, e.behavior, e.decided_by) for e in of(ev.PermissionDecided, first.events)]  # type: ignore[attr-defined]
    assert decided == [("Bash", "allow", "policy"), ("Bash", "deny", "person"), ("Bash", "deny", "policy")]
    second = await session.run("two", consumers=[ask], approve=Rules(allow_edits_under=[claude_workdir / "src"]))
    assert (claude_workdir / "src" / "a.py").read_text() == "a\n"
    assert [e.decided_by for e in of(ev.PermissionDecided, second.events)] == ["policy"]  # type: ignore[attr-defined]


async def test_headless_timeout_denies_and_a_late_click_changes_nothing(
    make_session: SessionMaker, scripted_model: ScriptedModelServer, claude_workdir: Path
) -> None:
    target = claude_workdir / "w.txt"
    scripted_model.push(Reply(tool_use("Write", {"file_path": str(target), "content": "w\n"})), Reply(text("ok")))
    session = make_session(approval_timeout=1.0)
    turn = await session.run("go")
    request = of(ev.PermissionRequest, turn.events)[0]
    decided = of(ev.PermissionDecided, turn.events)[0]
    assert (decided.behavior, decided.decided_by) == ("deny", "timeout")  # type: ignore[attr-defined]
    assert request.approval.allow() is False  # type: ignore[attr-defined]
    await asyncio.sleep(0.2)
    assert len(sent(session).answers_to(request.request_id)) == 1  # type: ignore[attr-defined]
    assert not target.exists() and turn.done


async def test_headless_policy_answers_before_the_timeout(
    make_session: SessionMaker, scripted_model: ScriptedModelServer, claude_workdir: Path
) -> None:
    target = claude_workdir / "w.txt"
    scripted_model.push(Reply(tool_use("Write", {"file_path": str(target), "content": "w\n"})), Reply(text("ok")))
    turn = await make_session(approval_timeout=30.0, approve=lambda name, _input: "allow").run("go")
    assert [e.decided_by for e in of(ev.PermissionDecided, turn.events)] == ["policy"]  # type: ignore[attr-defined]
    assert target.read_text() == "w\n"


@BOTH
async def test_interrupt_while_an_approval_waits_makes_the_cli_withdraw_it(
    make_session: SessionMaker, scripted_model: ScriptedModelServer, claude_workdir: Path
) -> None:
    target = claude_workdir / "w.txt"
    scripted_model.push(
        Reply(tool_use("Write", {"file_path": str(target), "content": "w\n"})), Reply(text("after the interrupt"))
    )
    session = make_session()
    waiting: asyncio.Queue[ev.PermissionRequest] = asyncio.Queue()
    seen: list[ev.AgentEvent] = []

    def watch(event: ev.AgentEvent) -> None:
        seen.append(event)
        if isinstance(event, ev.PermissionRequest):
            waiting.put_nowait(event)

    run = asyncio.create_task(session.run("go", consumers=[watch]))
    request = await asyncio.wait_for(waiting.get(), 60)
    pid = session.pid
    await session.interrupt()
    turn = await asyncio.wait_for(run, 60)
    assert [e.request_id for e in of(ev.PermissionCancelled, turn.events)] == [request.request_id]  # type: ignore[attr-defined]
    assert request.approval.decision is not None and request.approval.decision.decided_by == "cancelled"
    assert request.approval.allow() is False  # a click on the closed card
    await asyncio.sleep(0.2)
    assert sent(session).answers_to(request.request_id) == []  # the CLI withdrew it; we never answered
    assert turn.interrupted and turn.stats is not None and turn.stats.result_subtype == "error_during_execution"
    assert not target.exists()
    following = await session.run("continue")
    assert session.pid == pid and following.text == "after the interrupt"
