"""Scoped "Allow for this session" grants (issue 23 point 2), pure and on the real CLI.

On the old main, "Allow for session" on ``touch out1.txt`` sent ``{"toolName": "Bash"}``:
``rm -f stats.py`` in the next turn ran unasked, reported as "Claude Code's own permission
settings".
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kandev_nb.agent import events as ev
from kandev_nb.policy.grants import grant_matches, session_grant, tool_grant
from kandev_nb.testing import Reply, ScriptedModelServer, text, tool_use
from tests.approvals.conftest import SessionMaker

pytestmark = pytest.mark.timeout(180)
BOTH = pytest.mark.parametrize("claude_cli", ["2.1.332", "2.1.197"], indirect=True)


@pytest.mark.parametrize(
    ("tool_name", "tool_input", "rule", "label"),
    [
        ("Bash", {"command": "touch out1.txt"}, "Bash(touch:*)", "Allow `touch …` for this session"),
        ("Bash", {"command": "git push origin main"}, "Bash(git push:*)", "Allow `git push …` for this session"),
        ("Bash", {"command": "sudo ls"}, "Bash(sudo ls)", "Allow `sudo ls` (this exact command) for this session"),
        ("Edit", {"file_path": "/p/sub/f.py"}, "Edit(//p/sub/**)", "Allow edits in sub/ for this session"),
        ("Write", {"file_path": "w.txt"}, "Edit(//p/**)", "Allow edits in the working folder for this session"),
        ("Read", {"file_path": "/etc/hosts"}, "Read(//etc/**)", "Allow reads in /etc/ for this session"),
        ("WebFetch", {"url": "HTTPS://Example.COM./x"}, "WebFetch(domain:example.com)", None),
        (
            "mcp__kernel__run_cell",
            {"cell_id": "1"},
            "mcp__kernel__run_cell",
            "Allow kernel · run_cell for this session",
        ),
    ],
)
def test_a_grant_is_scoped_like_the_clis_suggestions(
    tool_name: str, tool_input: dict[str, str], rule: str, label: str | None
) -> None:
    grant = session_grant(tool_name, tool_input, "/p")
    assert grant is not None and grant.rule == rule
    assert label is None or grant.label == label
    assert grant.update["destination"] == "session" and grant.update["behavior"] == "allow"


@pytest.mark.parametrize(
    "command", ["touch a && rm b", "rm $(ls)", "x=rm; $x f", "{rm,-rf,d}", "/bin/r? f", "echo > f", "(rm d)", "a | b"]
)
def test_a_compound_or_dynamic_command_gets_no_scoped_grant(command: str) -> None:
    assert session_grant("Bash", {"command": command}, "/p") is None
    assert tool_grant("Bash").label == "Allow all Bash commands for this session"
    assert tool_grant("Bash").update["rules"] == [{"toolName": "Bash"}]


def test_grant_matches_the_calls_it_covers_only() -> None:
    assert grant_matches("Bash(touch:*)", "Bash", {"command": "touch out2.txt"}, "/p")
    assert not grant_matches("Bash(touch:*)", "Bash", {"command": "rm -f stats.py"}, "/p")
    assert not grant_matches("Bash(touch:*)", "Bash", {"command": "touch a; rm b"}, "/p")
    assert grant_matches("Edit(//p/sub/**)", "Write", {"file_path": "/p/sub/deeper/g.txt"}, "/p")
    assert not grant_matches("Edit(//p/sub/**)", "Write", {"file_path": "/p/other/g.txt"}, "/p")
    assert grant_matches("Bash", "Bash", {"command": "anything"}, "/p")


@BOTH
async def test_allow_for_session_covers_the_command_prefix_only_and_later_calls_name_it(
    make_session: SessionMaker, scripted_model: ScriptedModelServer, claude_workdir: Path
) -> None:
    (claude_workdir / "stats.py").write_text("print(1)\n")
    scripted_model.push(
        Reply(tool_use("Bash", {"command": "touch out1.txt", "description": "1"})),
        Reply(text("ok")),
        Reply(tool_use("Bash", {"command": "rm -f stats.py", "description": "2"})),
        Reply(tool_use("Bash", {"command": "touch out2.txt", "description": "3"})),
        Reply(text("ok")),
    )
    asked: list[str] = []

    def grant(event: ev.AgentEvent) -> None:
        if isinstance(event, ev.PermissionRequest):
            asked.append(event.input["command"])
            assert event.approval.grant is not None and event.approval.grant.rule == "Bash(touch:*)"
            event.approval.allow(always=True)

    def deny(event: ev.AgentEvent) -> None:
        if isinstance(event, ev.PermissionRequest):
            asked.append(event.input["command"])
            event.approval.deny("not that")

    session = make_session()
    session.broker.cell = 12  # the magic sets the running cell's In [n]
    await session.run("first", consumers=[grant])
    session.broker.cell = 13
    turn = await session.run("second", consumers=[deny])
    assert asked == ["touch out1.txt", "rm -f stats.py"]  # old main: rm ran unasked
    assert (claude_workdir / "stats.py").exists() and (claude_workdir / "out2.txt").exists()
    touched = next(r for r in turn.tools.values() if r.call.input.get("command") == "touch out2.txt")
    assert touched.decision is not None and touched.decision.decided_by == "grant"
    assert touched.decision.message == "allowed by your session grant Bash(touch:*), given in cell [12]"
    assert touched.decision.rule == "Bash(touch:*)"


async def test_the_whole_tool_choice_allows_every_command(
    make_session: SessionMaker, scripted_model: ScriptedModelServer, claude_workdir: Path
) -> None:
    (claude_workdir / "stats.py").write_text("print(1)\n")
    scripted_model.push(
        Reply(tool_use("Bash", {"command": "touch out1.txt", "description": "1"})),
        Reply(tool_use("Bash", {"command": "rm -f stats.py", "description": "2"})),
        Reply(text("ok")),
    )
    asked: list[str] = []

    def whole(event: ev.AgentEvent) -> None:
        if isinstance(event, ev.PermissionRequest):
            asked.append(event.input["command"])
            event.approval.allow(always="tool")

    turn = await make_session().run("go", consumers=[whole])
    assert asked == ["touch out1.txt"] and not (claude_workdir / "stats.py").exists()
    rm = next(r for r in turn.tools.values() if r.call.input.get("command") == "rm -f stats.py")
    assert rm.decision is not None and rm.decision.message.startswith("allowed by your session grant Bash, given")


async def test_allow_for_session_refuses_a_compound_command_and_decides_nothing() -> None:
    from kandev_nb.agent.permissions import Approval

    approval = Approval("r", "Bash", {"command": "touch a && rm b"})
    with pytest.raises(ValueError, match="no scoped session grant"):
        approval.allow(always=True)
    assert approval.decision is None and approval.allow(always="tool")
