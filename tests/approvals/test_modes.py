"""Permission modes on the real CLI (2.1.332 and 2.1.197): who is asked for what."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from kandev_nb.agent import events as ev
from kandev_nb.agent.permissions import RootBypassError
from kandev_nb.agent.tools import Plan
from kandev_nb.testing import Reply, ScriptedModelServer, text, tool_use
from tests.approvals.conftest import SessionMaker

pytestmark = pytest.mark.timeout(180)
BOTH = pytest.mark.parametrize("claude_cli", ["2.1.332", "2.1.197"], indirect=True)


def requests(turn_events: list[ev.AgentEvent]) -> list[ev.PermissionRequest]:
    return [e for e in turn_events if isinstance(e, ev.PermissionRequest)]


def allow_all(event: ev.AgentEvent) -> None:
    if isinstance(event, ev.PermissionRequest):
        event.approval.allow()


@BOTH
async def test_supervised_asks_for_changes_but_not_for_reads_or_what_settings_allow(
    make_session: SessionMaker, scripted_model: ScriptedModelServer, claude_workdir: Path, claude_home: Path
) -> None:
    (claude_home / ".claude" / "settings.json").write_text(json.dumps({"permissions": {"allow": ["Bash(git init*)"]}}))
    (claude_workdir / "notes.txt").write_text("notes\n")
    scripted_model.push(
        Reply(tool_use("Read", {"file_path": str(claude_workdir / "notes.txt")})),
        Reply(tool_use("Bash", {"command": "git init -q", "description": "make a repo"})),
        Reply(tool_use("Bash", {"command": "mkdir made", "description": "make a dir"})),
        Reply(tool_use("Write", {"file_path": str(claude_workdir / "w.txt"), "content": "w\n"})),
        Reply(text("done")),
    )
    session = make_session()
    turn = await session.run("go", consumers=[allow_all])
    assert [(r.tool_name, r.input.get("command")) for r in requests(turn.events)] == [
        ("Bash", "mkdir made"),
        ("Write", None),
    ]
    assert (claude_workdir / ".git").is_dir() and (claude_workdir / "made").is_dir()
    decided = {
        r.call.input.get("command", r.call.tool_name): (r.decision.decided_by if r.decision else None)
        for r in turn.tools.values()
    }
    # The settings rule decided git init, visibly; Read needs nobody; the person decided the rest.
    assert decided == {"Read": None, "git init -q": "settings", "mkdir made": "person", "Write": "person"}


@BOTH
async def test_accept_edits_runs_edits_and_asks_for_other_commands(
    make_session: SessionMaker, scripted_model: ScriptedModelServer, claude_workdir: Path
) -> None:
    scripted_model.push(
        Reply(tool_use("Write", {"file_path": str(claude_workdir / "w.txt"), "content": "w\n"})),
        Reply(tool_use("Bash", {"command": "python3 -c 'print(6*7)'", "description": "compute"})),
        Reply(text("done")),
    )
    turn = await make_session(mode="acceptEdits").run("go", consumers=[allow_all])
    assert [r.tool_name for r in requests(turn.events)] == ["Bash"]
    assert (claude_workdir / "w.txt").read_text() == "w\n"
    write = next(r for r in turn.tools.values() if r.call.tool_name == "Write")
    assert write.decision is not None and write.decision.decided_by == "mode"


@BOTH
async def test_plan_mode_asks_to_exit_with_the_plan_and_reports_the_new_mode(
    make_session: SessionMaker, scripted_model: ScriptedModelServer, claude_workdir: Path
) -> None:
    plan = "# Plan\n\n1. Write `w.txt`\n2. Stop"
    scripted_model.push(
        Reply(tool_use("ExitPlanMode", {"plan": plan})),
        Reply(tool_use("Write", {"file_path": str(claude_workdir / "w.txt"), "content": "w\n"})),
        Reply(text("done")),
    )
    session = make_session(mode="plan")
    turn = await session.run("plan it", consumers=[allow_all])
    asks = requests(turn.events)
    assert [a.tool_name for a in asks] == ["ExitPlanMode", "Write"]
    assert isinstance(asks[0].normalized, Plan) and asks[0].normalized.plan == plan  # 2.1.332 sends input {}
    modes = [e.mode for e in turn.events if isinstance(e, ev.SessionMode)]
    assert modes == ["default"]  # as the CLI reports it (system/status permissionMode)
    assert session.config.mode == "supervised"
    assert (claude_workdir / "w.txt").exists()


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="the refusal is for root only")
async def test_autonomous_as_root_needs_an_explicit_opt_in(
    make_session: SessionMaker, scripted_model: ScriptedModelServer, claude_workdir: Path
) -> None:
    with pytest.raises(RootBypassError, match="--i-am-sandboxed"):
        make_session(mode="autonomous")
    scripted_model.push(
        Reply(tool_use("Bash", {"command": 'python3 -c \'open("a.txt","w").write("a")\'', "description": "a"})),
        Reply(text("done")),
    )
    session = make_session(mode="autonomous", allow_root_bypass=True)
    turn = await session.run("go", consumers=[allow_all])
    assert not requests(turn.events) and turn.error is None
    assert (claude_workdir / "a.txt").read_text() == "a"
    assert session.transport is not None and session.transport.env is not None  # type: ignore[attr-defined]
    assert session.transport.env["IS_SANDBOX"] == "1"  # type: ignore[attr-defined]


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="the refusal is for root only")
async def test_without_the_opt_in_we_never_set_is_sandbox(make_session: SessionMaker) -> None:
    session = make_session(mode="acceptEdits")
    await session.start()
    assert session.transport is not None
    assert "IS_SANDBOX" not in (session.transport.env or {})  # type: ignore[attr-defined]
    with pytest.raises(RootBypassError):
        await session.set_mode("autonomous")


@BOTH
async def test_set_mode_between_turns_keeps_the_process(
    make_session: SessionMaker, scripted_model: ScriptedModelServer, claude_workdir: Path
) -> None:
    scripted_model.push(
        Reply(tool_use("Write", {"file_path": str(claude_workdir / "one.txt"), "content": "1\n"})),
        Reply(text("ok")),
        Reply(tool_use("Write", {"file_path": str(claude_workdir / "two.txt"), "content": "2\n"})),
        Reply(text("ok")),
    )
    session = make_session()
    first = await session.run("one", consumers=[allow_all])
    pid = session.pid
    assert [r.tool_name for r in requests(first.events)] == ["Write"]
    await session.set_mode("acceptEdits")
    second = await session.run("two", consumers=[allow_all])
    assert session.pid == pid
    assert requests(second.events) == []
    assert [e.mode for e in second.events if isinstance(e, ev.SessionMode)] == ["acceptEdits"]
    assert (claude_workdir / "two.txt").read_text() == "2\n"


async def test_switching_to_autonomous_restarts_and_resumes(
    make_session: SessionMaker, scripted_model: ScriptedModelServer, claude_workdir: Path
) -> None:
    scripted_model.push(
        Reply(text("first answer")),
        Reply(tool_use("Bash", {"command": "python3 -c 'print(1)'", "description": "p"})),
        Reply(text("ok")),
    )
    session = make_session(allow_root_bypass=True)
    await session.run("first prompt")
    pid, session_id = session.pid, session.session_id
    await session.set_mode("autonomous")  # the CLI refuses bypassPermissions on a live default process
    second = await session.run("second prompt")
    assert session.pid != pid and session.session_id == session_id
    assert requests(second.events) == [] and second.error is None
    assert "first answer" in repr(scripted_model.main_requests[1].messages)


async def test_back_from_autonomous_to_supervised_asks_again_in_the_same_process(
    make_session: SessionMaker, scripted_model: ScriptedModelServer, claude_workdir: Path
) -> None:
    # What the magic does for a plain cell after a `--mode autonomous` cell: the process
    # launched with bypassPermissions takes set_permission_mode and asks again.
    def write(name: str) -> dict[str, str]:
        return {"command": f'python3 -c \'open("{name}","w").write("x")\'', "description": name}

    scripted_model.push(
        Reply(tool_use("Bash", write("a.txt"))),
        Reply(text("ok")),
        Reply(tool_use("Bash", write("b.txt"))),
        Reply(text("not written")),
    )
    session = make_session(mode="autonomous", allow_root_bypass=True)
    first = await session.run("one", consumers=[allow_all])
    assert not requests(first.events) and (claude_workdir / "a.txt").exists()
    pid = session.pid
    await session.set_mode("supervised")

    def deny(event: ev.AgentEvent) -> None:
        if isinstance(event, ev.PermissionRequest):
            event.approval.deny("not now")

    second = await session.run("two", consumers=[deny])
    assert [r.tool_name for r in requests(second.events)] == ["Bash"]
    assert not (claude_workdir / "b.txt").exists() and session.pid == pid
    assert (first.mode, second.mode) == ("autonomous", "supervised")
