"""Revoking a session grant on the broker alone (issue 27 point 3): the hook asks again, and the
next allowed can_use_tool tells the CLI to drop the rule (``removeRules``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kandev_nb.agent import events as ev
from kandev_nb.agent.revoke import remove_rules_update, revoke_grant, revoked_ask
from kandev_nb.testing import Reply, ScriptedModelServer, text, tool_use
from tests.approvals.conftest import SessionMaker
from tests.approvals.test_broker import Harness


def hook(tool_name: str, tool_input: dict[str, object], tool_use_id: str) -> dict[str, object]:
    return {"input": {"tool_name": tool_name, "tool_input": tool_input, "tool_use_id": tool_use_id}}


async def test_a_revoked_grant_makes_the_hook_ask_and_the_next_allow_removes_the_rule(tmp_path: Path) -> None:
    h = Harness(cwd=lambda: str(tmp_path))
    first = h.ask("r1", "Bash", {"command": "touch a"}, "tu-1")
    first.allow(always=True)
    await h.settle()
    assert h.broker._grants[0][0] == "Bash(touch:*)"
    assert h.broker.pre_tool_use(hook("Bash", {"command": "touch b"}, "tu-2"), None) == {}  # granted: no opinion

    assert revoke_grant(h.broker, "Bash(touch:*)") is True
    assert revoke_grant(h.broker, "Bash(touch:*)") is False  # once
    asked = h.broker.pre_tool_use(hook("Bash", {"command": "touch c"}, "tu-3"), None)
    assert asked["hookSpecificOutput"]["permissionDecision"] == "ask"  # type: ignore[index]
    assert "Bash(touch:*) was revoked" in asked["hookSpecificOutput"]["permissionDecisionReason"]  # type: ignore[index]
    assert h.broker.pre_tool_use(hook("Bash", {"command": "ls"}, "tu-4"), None) == {}  # other calls: untouched

    again = h.ask("r2", "Bash", {"command": "touch c"}, "tu-3")
    again.allow()
    await h.settle()
    sent = h.answers[-1][1]
    assert sent["updatedPermissions"] == [
        {
            "type": "removeRules",
            "rules": [{"toolName": "Bash", "ruleContent": "touch:*"}],
            "behavior": "allow",
            "destination": "session",
        }
    ]
    regrant = h.ask("r3", "Bash", {"command": "touch d"}, "tu-5")
    regrant.allow(always=True)  # granted again: no longer revoked
    await h.settle()
    assert h.broker.revoked == set()
    assert h.broker.pre_tool_use(hook("Bash", {"command": "touch e"}, "tu-6"), None) == {}


def test_remove_rules_update_and_ask_shapes() -> None:
    assert remove_rules_update([]) is None
    assert remove_rules_update(["mcp__kernel__run_cell"]) == {
        "type": "removeRules",
        "rules": [{"toolName": "mcp__kernel__run_cell"}],
        "behavior": "allow",
        "destination": "session",
    }
    assert revoked_ask(["WebFetch(domain:example.com)"], "WebFetch", {"url": "https://example.com/x"}, "/")
    assert revoked_ask(["WebFetch(domain:example.com)"], "WebFetch", {"url": "https://other.org/"}, "/") == {}


@pytest.mark.parametrize(
    "command",
    ["nice touch e.txt", "timeout 5 touch f.txt", "sudo -u me touch g", "echo a && touch h", "x=touch; $x i"],
)
def test_a_revoked_rule_reaches_what_the_clis_copy_of_the_grant_covers(command: str) -> None:
    assert revoked_ask(["Bash(touch:*)"], "Bash", {"command": command}, "/")
    assert revoked_ask(["Bash(touch:*)"], "Bash", {"command": "ls -l"}, "/") == {}


@pytest.mark.timeout(180)
async def test_after_revoke_wrapped_commands_the_clis_grant_still_covers_are_asked(
    make_session: SessionMaker, scripted_model: ScriptedModelServer, claude_workdir: Path
) -> None:
    """Issue 32 point 5: after Revoke of ``Bash(touch:*)``, ``nice touch e.txt`` and
    ``timeout 5 touch f.txt`` ran with no card (the CLI's own grant covered them)."""
    scripted_model.push(
        Reply(tool_use("Bash", {"command": "touch a.txt", "description": "1"})),
        Reply(tool_use("Bash", {"command": "nice touch pre.txt", "description": "2"})),
        Reply(text("ok")),
        Reply(tool_use("Bash", {"command": "nice touch e.txt", "description": "3"})),
        Reply(tool_use("Bash", {"command": "timeout 5 touch f.txt", "description": "4"})),
        Reply(text("ok")),
    )
    asked: list[str] = []

    def grant(event: ev.AgentEvent) -> None:
        if isinstance(event, ev.PermissionRequest):
            asked.append(event.input["command"])
            event.approval.allow(always=True)

    def deny(event: ev.AgentEvent) -> None:
        if isinstance(event, ev.PermissionRequest):
            asked.append(event.input["command"])
            event.approval.deny("revoked")  # a deny carries no removeRules: the CLI keeps its grant

    session = make_session()
    await session.run("first", consumers=[grant])
    assert asked == ["touch a.txt"] and (claude_workdir / "pre.txt").exists()  # the CLI's grant covers `nice touch`
    assert revoke_grant(session.broker, "Bash(touch:*)")
    await session.run("second", consumers=[deny])
    assert asked == ["touch a.txt", "nice touch e.txt", "timeout 5 touch f.txt"]  # old code: neither was asked
    assert not (claude_workdir / "e.txt").exists() and not (claude_workdir / "f.txt").exists()
