"""issue 17, 3 and 5: deny rules see through other spellings, `allow_edits_under` never
covers what can make a later command run code, and an allowed interpreter is marked."""

from __future__ import annotations

from pathlib import Path

import pytest

from kandev_nb.agent import events as ev
from kandev_nb.agent.permissions import Rules
from kandev_nb.testing import Reply, ScriptedModelServer, text, tool_use
from tests.approvals.conftest import SessionMaker

pytestmark = pytest.mark.timeout(180)

BASH = Rules(allow=["Bash(*)"], deny=["Bash(rm *)"])


@pytest.mark.parametrize(
    "command",
    [
        "rm\tvictim",
        "rm  victim",
        "/bin/rm victim",
        "\\rm victim",
        "'rm' victim",
        "command rm victim",
        "builtin rm victim",
        "env rm victim",
        "env -i A=1 rm victim",
        "exec rm victim",
        "sudo rm victim",
        "sudo -u bob -n rm victim",
        "nohup rm victim",
        "time rm victim",
        "timeout 5 rm victim",
        "A=1 rm victim",
        "ls; /usr/bin/rm victim",
        "true && nice -n 3 rm victim",
        "bash -c 'rm victim'",
        "sh -lc 'echo; rm victim'",
        "eval rm victim",
    ],
)
def test_a_deny_rule_sees_other_spellings_of_the_command(command: str) -> None:
    assert BASH("Bash", {"command": command}) == "deny"


@pytest.mark.parametrize("command", ["ls -la", "rmdir build", "echo rm victim", "grep -r rm ."])
def test_other_commands_are_still_allowed(command: str) -> None:
    assert BASH("Bash", {"command": command}) == "allow"


def test_allow_rules_do_not_see_through_wrappers() -> None:
    rules = Rules(allow=["Bash(git status*)"])
    assert rules("Bash", {"command": "git\tstatus"}) == "allow"
    assert rules("Bash", {"command": "sudo git status"}) is None


@pytest.mark.parametrize(
    "url",
    [
        "https://evil.com/x",
        "HTTPS://EVIL.COM/",
        "https://evil.com./a",
        "https://Evil.Com:443/a",
        "https://me@evil.com/a",
    ],
)
def test_a_url_deny_compares_scheme_and_host_normalised(url: str) -> None:
    rules = Rules(allow=["WebFetch"], deny=["WebFetch(https://evil.com/*)"])
    assert rules("WebFetch", {"url": url, "prompt": "p"}) == "deny"
    assert rules("WebFetch", {"url": "https://example.com/evil.com/", "prompt": "p"}) == "allow"


def test_a_path_deny_ignores_case_and_sees_the_resolved_path(tmp_path: Path) -> None:
    (tmp_path / "link").symlink_to(tmp_path / "prod.env")
    rules = Rules(allow=["Read"], deny=["Read(*.env)"])
    assert rules("Read", {"file_path": str(tmp_path / ".ENV")}) == "deny"
    assert rules("Read", {"file_path": str(tmp_path / "link")}) == "deny"
    assert rules("Read", {"file_path": str(tmp_path / "notes.txt")}) == "allow"


@pytest.mark.parametrize(
    ("command", "interpreter"),
    [
        ("python3 -c 'import os; os.remove(\"victim\")'", "python3"),
        ("bash -c 'ls -la'", "bash"),
        ("sh x.sh", "sh"),
        ("node -e 1", "node"),
        ("perl -e 1", "perl"),
        ("env python script.py", "python"),
        ("ls && /usr/bin/python3.12 a.py", "python3.12"),
    ],
)
def test_an_allowed_interpreter_is_marked(command: str, interpreter: str) -> None:
    assert BASH("Bash", {"command": command}) == "allow"  # a deny rule cannot see inside it
    assert f"interpreter ({interpreter})" in BASH.note("Bash", {"command": command})
    assert BASH.note("Bash", {"command": "ls -la"}) == ""


@pytest.mark.parametrize(
    "relative",
    [
        ".git/config",
        ".git/hooks/pre-commit",
        ".claude/settings.json",
        ".claude/settings.local.json",
        ".env",
        ".env.production",
        ".bashrc",
        ".zshrc",
        ".profile",
        ".bash_profile",
        ".gitconfig",
        ".gitmodules",
        ".mcp.json",
        ".husky/pre-commit",
        ".vscode/tasks.json",
        "sub/.GIT/config",
        ".ipython/profile_default/startup/a.py",
    ],
)
def test_allow_edits_under_never_covers_sensitive_files(tmp_path: Path, relative: str) -> None:
    rules = Rules(allow_edits_under=[tmp_path])
    assert rules("Write", {"file_path": str(tmp_path / relative), "content": "x"}) is None
    assert rules("Edit", {"file_path": str(tmp_path / "src" / "hooks.py")}) == "allow"


async def test_the_real_cli_asks_for_git_config_under_an_allowed_project(
    make_session: SessionMaker, scripted_model: ScriptedModelServer, claude_workdir: Path
) -> None:
    git_config = claude_workdir / ".git" / "config"
    git_config.parent.mkdir()
    git_config.write_text("[core]\n")
    scripted_model.push(
        Reply(tool_use("Write", {"file_path": str(git_config), "content": '[core]\n\tfsmonitor = "touch pwned"\n'})),
        Reply(tool_use("Write", {"file_path": str(claude_workdir / "src" / "a.py"), "content": "a\n"})),
        Reply(text("ok")),
    )
    asked: list[str] = []

    def person(event: ev.AgentEvent) -> None:
        if isinstance(event, ev.PermissionRequest) and event.approval.decision is None:
            asked.append(event.input["file_path"])
            event.approval.deny("not .git")

    session = make_session(approve=Rules(allow_edits_under=[claude_workdir]))
    turn = await session.run("configure git", consumers=[person])
    assert asked == [str(git_config)] and git_config.read_text() == "[core]\n"
    assert (claude_workdir / "src" / "a.py").read_text() == "a\n"
    decided = [(e.behavior, e.decided_by) for e in turn.events if isinstance(e, ev.PermissionDecided)]
    assert decided == [("deny", "person"), ("allow", "policy")]


async def test_the_real_cli_keeps_a_file_a_tab_spelled_rm_would_delete(
    make_session: SessionMaker, scripted_model: ScriptedModelServer, claude_workdir: Path
) -> None:
    victim = claude_workdir / "victim"
    victim.write_text("keep me\n")
    scripted_model.push(
        Reply(tool_use("Bash", {"command": "rm\tvictim", "description": "tab"})),
        Reply(tool_use("Bash", {"command": "python3 -c 'print(1)'", "description": "py"})),
        Reply(text("ok")),
    )
    turn = await make_session(approve=BASH).run("clean")
    assert victim.read_text() == "keep me\n"
    decided = [(e.behavior, e.decided_by, e.note) for e in turn.events if isinstance(e, ev.PermissionDecided)]
    assert [d[:2] for d in decided] == [("deny", "policy"), ("allow", "policy")]
    assert "interpreter (python3)" in decided[1][2]


async def test_the_real_cli_keeps_data_that_shell_spellings_would_delete(
    make_session: SessionMaker, scripted_model: ScriptedModelServer, claude_workdir: Path
) -> None:
    """issue 23, point 5: with ``Bash(rm:*)`` denied, a group, a subshell and an ``if`` body
    are denied by the policy, and a command word from a variable is asked, never allowed."""
    data = claude_workdir / "data"
    data.mkdir()
    (data / "keep.txt").write_text("keep me\n")
    spellings = ["{ rm -rf data; }", "(rm -rf data)", "if true; then rm -rf data; fi", "x=ls; $x -rf data"]
    scripted_model.push(
        *(Reply(tool_use("Bash", {"command": c, "description": "clean"})) for c in spellings),
        Reply(text("ok")),
    )
    asked: list[str] = []

    def person(event: ev.AgentEvent) -> None:
        if isinstance(event, ev.PermissionRequest) and event.approval.decision is None:
            asked.append(event.input["command"])
            event.approval.deny("no")

    rules = Rules(allow=["Bash(*)"], deny=["Bash(rm:*)"])
    turn = await make_session(approve=rules).run("clean", consumers=[person])
    assert (data / "keep.txt").read_text() == "keep me\n"
    decided = [(e.behavior, e.decided_by) for e in turn.events if isinstance(e, ev.PermissionDecided)]
    assert decided == [("deny", "policy")] * 3 + [("deny", "person")]
    assert asked == ["x=ls; $x -rf data"]
