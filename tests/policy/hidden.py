"""Checks shared by the hidden-command tests (``test_hidden_expansions*.py``): a command line
that hides a command must be asked under any allow rules, and a deny rule must see (or at
least not allow past) what it hides."""

from __future__ import annotations

import subprocess
from pathlib import Path

from kandev_nb.policy import Rules, parse_command

DENY = ["Bash(touch:*)", "Bash(rm:*)"]


def assert_asked_and_not_bypassed(command: str, allow: list[str], *, written_out: bool) -> None:
    """Asked (never allowed) under `allow`; with :data:`DENY` added, denied when the hidden
    command is `written_out` in the text, else denied or asked."""
    verdict = Rules(allow=allow).verdict("Bash", {"command": command})
    assert verdict.answer is None, f"{command!r} was {verdict}"
    denied = Rules(allow=allow, deny=DENY)("Bash", {"command": command})
    assert denied == "deny" if written_out else denied in ("deny", None), f"{command!r} was {denied}"


def assert_read_and_denied(command: str, allow: list[str]) -> None:
    """The hidden ``touch`` is read as a command: it needs its own allow rule, and a deny
    denies it under `allow` and under the whole-tool ``Bash``."""
    assert any(c.words[:1] == ("touch",) for c in parse_command(command).commands)
    assert Rules(allow=allow).verdict("Bash", {"command": command}).answer is None
    assert Rules(allow=allow, deny=DENY)("Bash", {"command": command}) == "deny"
    assert Rules(allow=["Bash"], deny=DENY)("Bash", {"command": command}) == "deny"


def assert_rm_runs_in_bash_and_is_denied(command: str, allow: list[str], where: Path) -> None:
    """Real bash deletes ``victim`` with `command`; the policy asks and a deny on rm denies."""
    (where / "victim").touch()
    subprocess.run(["/bin/bash", "-c", command], cwd=where, capture_output=True, timeout=10, check=False)
    assert not (where / "victim").exists()
    assert Rules(allow=allow).verdict("Bash", {"command": command}).answer is None
    assert Rules(allow=allow, deny=DENY)("Bash", {"command": command}) == "deny"
