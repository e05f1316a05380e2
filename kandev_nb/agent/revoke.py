"""Revoking an "Allow for this session" grant while its CLI process lives.

A session grant is a rule the CLI holds for the rest of its process (``addRules`` with
``destination: "session"``, :mod:`kandev_nb.policy.grants`). The CLI (measured on 2.1.332)
has no control_request that removes one: ``set_permission_mode`` changes only the mode,
``apply_flag_settings`` replaces the ``--settings`` layer, ``list_permission_rules`` only
reads; a ``removeRules`` update rides only on the answer to a can_use_tool. So a revoked
grant is held by kandev-nb's own PreToolUse hook (:mod:`kandev_nb.policy.enforce`, asked
before every tool call): for a call the revoked rule covers it answers
``permissionDecision: "ask"``, which makes the CLI send a can_use_tool (a card) although
its session rule would have let the call run. The next allow of such a card also carries a
``removeRules`` for the revoked rule, so the CLI forgets it as well. No restart is needed,
and the conversation goes on in the same process.

Until then the CLI's copy of the grant lives on, and it covers more than the rule read as an
allow rule: ``nice touch e.txt`` and ``timeout 5 touch f.txt`` under ``Bash(touch:*)``. So a
call is asked when the revoked rule *reaches* it the way a deny rule would
(:func:`kandev_nb.policy.rule_reaches`: wrappers peeled, every simple command of the line, and
any command that cannot be read statically), not only when it matches as an allow.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from kandev_nb.policy.grants import grant_matches
from kandev_nb.policy.policy import rule_reaches

__all__ = ["remove_rules_update", "revoke_grant", "revoked_ask"]


def revoked_ask(revoked: Iterable[str], tool_name: str, tool_input: dict[str, Any], cwd: str) -> dict[str, Any]:
    """The PreToolUse hook output for a call a revoked grant covers, or ``{}``.

    Args:
        revoked: the revoked rules, in the CLI's syntax (``Bash(touch:*)``).
        tool_name, tool_input: the hook input's ``tool_name`` / ``tool_input``.
        cwd: the CLI's working directory (a scoped grant resolves paths against it).

    Returns:
        ``{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "ask",
        "permissionDecisionReason": ...}}`` naming the rule, or ``{}`` when none covers the call.
        Never raises.
    """
    for rule in revoked:
        if _reaches(rule, tool_name, tool_input, cwd):
            return {
                "hookSpecificOutput": {
                    "hookEventName": "PreToolUse",
                    "permissionDecision": "ask",
                    "permissionDecisionReason": f"The session grant {rule} was revoked; a person decides.",
                }
            }
    return {}


def _reaches(rule: str, tool_name: str, tool_input: dict[str, Any], cwd: str) -> bool:
    try:
        return rule_reaches(rule, tool_name, tool_input, cwd=cwd) or grant_matches(rule, tool_name, tool_input, cwd)
    except Exception:  # noqa: BLE001 - a revoked rule we cannot read asks for every call of its tool
        return rule.partition("(")[0] == tool_name


def remove_rules_update(rules: Iterable[str]) -> dict[str, Any] | None:
    """The ``updatedPermissions`` entry that removes the session allow `rules` from the CLI
    (``{"type": "removeRules", "rules": [{"toolName", "ruleContent"?}], "behavior": "allow",
    "destination": "session"}``), or None when there is none."""
    parsed: list[dict[str, Any]] = []
    for rule in sorted(set(rules)):
        name, paren, rest = rule.partition("(")
        entry: dict[str, Any] = {"toolName": name}
        if paren and rest.endswith(")"):
            entry["ruleContent"] = rest[:-1]
        parsed.append(entry)
    if not parsed:
        return None
    return {"type": "removeRules", "rules": parsed, "behavior": "allow", "destination": "session"}


def revoke_grant(broker: Any, rule: str) -> bool:
    """Revoke the session grant `rule` of `broker` (an
    :class:`~kandev_nb.agent.approvals.ApprovalBroker`): it leaves the grants shown and named,
    and its calls are asked again (:func:`revoked_ask`).

    Returns:
        True when `rule` was a grant of the live process; False (nothing changed) otherwise.
    """
    grants: list[tuple[str, str]] = broker._grants
    kept = [(r, where) for r, where in grants if r != rule]
    if len(kept) == len(grants):
        return False
    grants[:] = kept
    broker._session_tools.discard(rule)
    broker.revoked.add(rule)
    return True
