"""Revoking a session grant on the broker alone (issue 27 point 3): the hook asks again, and the
next allowed can_use_tool tells the CLI to drop the rule (``removeRules``)."""

from __future__ import annotations

from pathlib import Path

from kandev_nb.agent.revoke import remove_rules_update, revoke_grant, revoked_ask
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
