from __future__ import annotations

import threading
from pathlib import Path

import pytest

from kandev_nb.agent.permissions import Approval, RootBypassError, Rules, cli_permission_mode


async def test_approval_is_answered_exactly_once() -> None:
    approval = Approval("r1", "Bash", {"command": "ls"})
    seen = []
    approval.on_decided(seen.append)
    assert approval.allow() is True
    assert approval.deny("late") is False
    assert approval.cancel() is False
    decision = await approval.wait(1)
    assert decision.behavior == "allow" and decision.decided_by == "person"
    assert decision.to_wire({"command": "ls"}) == {"behavior": "allow", "updatedInput": {"command": "ls"}}
    assert seen == [decision]


async def test_click_from_another_thread_resolves_on_the_loop() -> None:
    approval = Approval("r1", "Write", {"file_path": "x"})
    thread = threading.Thread(target=lambda: approval.deny("no thanks"))
    thread.start()
    decision = await approval.wait(5)
    thread.join()
    assert decision.to_wire({}) == {"behavior": "deny", "message": "no thanks", "interrupt": False}


async def test_timeout_denies_and_a_late_click_changes_nothing() -> None:
    approval = Approval("r1", "Write", {})
    decision = await approval.wait(0.05)
    assert decision.behavior == "deny" and decision.decided_by == "timeout"
    assert approval.allow() is False
    assert approval.decision == decision


async def test_allow_for_session_sends_a_permission_update() -> None:
    approval = Approval("r1", "Bash", {"command": "ls"})
    approval.allow(always=True)
    wire = (await approval.wait(1)).to_wire({"command": "ls"})
    assert wire["updatedPermissions"][0]["rules"] == [{"toolName": "Bash", "ruleContent": "ls:*"}]  # scoped
    assert wire["updatedPermissions"][0]["destination"] == "session"


async def test_edited_input_is_what_runs() -> None:
    approval = Approval("r1", "Bash", {"command": "rm -rf build"})
    approval.allow(updated_input={"command": "rm -rf build/tmp"})
    assert (await approval.wait(1)).to_wire({})["updatedInput"] == {"command": "rm -rf build/tmp"}


def test_rules(tmp_path: Path) -> None:
    rules = Rules(allow=["Bash(git status*)", "Read"], deny=["Bash(*rm -rf*)"], allow_edits_under=[tmp_path])
    assert rules("Bash", {"command": "git status --short"}) == "allow"
    assert rules("Bash", {"command": "git push"}) is None
    assert rules("Bash", {"command": "sudo rm -rf /"}) == "deny"
    assert rules("Read", {"file_path": "/etc/passwd"}) == "allow"
    assert rules("Write", {"file_path": str(tmp_path / "a.txt")}) == "allow"
    assert rules("Write", {"file_path": "/etc/a.txt"}) is None


def test_modes() -> None:
    assert cli_permission_mode("supervised") == "default"
    assert cli_permission_mode("acceptEdits") == "acceptEdits"
    with pytest.raises(ValueError, match="unknown permission mode"):
        cli_permission_mode("yolo")


def test_autonomous_as_root_needs_the_opt_in(monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    monkeypatch.setattr(os, "geteuid", lambda: 0)
    with pytest.raises(RootBypassError, match="--i-am-sandboxed"):
        cli_permission_mode("autonomous")
    assert cli_permission_mode("autonomous", allow_root_bypass=True) == "bypassPermissions"
