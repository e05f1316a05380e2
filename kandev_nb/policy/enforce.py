"""The deny side of a policy, in every permission mode: one PreToolUse hook for every tool.

A policy (``(tool_name, tool_input) -> "allow" | "deny" | None``, e.g. ``Rules``) used to be
asked only on `can_use_tool`. In acceptEdits the CLI runs ``rm <cwd>/data.csv`` without a
can_use_tool, and in autonomous mode (``bypassPermissions``) it sends none at all, so a deny
rule was never consulted (DESIGN.md, third release). A PreToolUse hook is asked before every
tool call in every mode, so kandev-nb registers one for all tools (:data:`ALL_TOOLS`) in
`initialize` and answers its `hook_callback` with :func:`check`:

* the file guard's reason (the notebook open in a tab), as before;
* else the first policy in force that answers "deny" (the running turn's, then the
  session's): a hook deny whose reason names the rule (``Denied by your policy rule
  Bash(rm:*).``), which the model sees as the tool's result;
* else no opinion (``{}``): the CLI's normal flow goes on (its mode, its settings, a
  can_use_tool for the person or the allow side of the policy).

Which side holds where: **deny** holds in every mode (this hook); **allow** only answers a
can_use_tool, so in acceptEdits and autonomous the CLI's own mode decides what runs unasked.

A policy that raises neither allows nor denies: the hook answers ``"ask"``, which makes the
CLI send a can_use_tool even in acceptEdits and bypassPermissions (measured on 2.1.332), so a
person decides, or the approval timeout denies. A broken deny rule thus never lets a call
through unseen, and never silently refuses one either.

This module is pure (no I/O, no events): the approval broker reports a denial as a
PermissionDecided (``decided_by="policy"``), see
:meth:`kandev_nb.agent.approvals.ApprovalBroker.pre_tool_use`.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

__all__ = [
    "ALL_TOOLS",
    "CALLBACK_ID",
    "GUARDED_TOOLS",
    "LabelledPolicy",
    "PolicyVerdict",
    "check",
    "denial",
    "denying_rule",
    "disallowed_tools",
    "initialize_hooks",
    "policy_label",
    "rooted",
]

log = logging.getLogger("kandev_nb")

CALLBACK_ID = "kandev_policy"
"""The hook's `callback_id` in `initialize` and in its `hook_callback` requests."""

GUARDED_TOOLS = frozenset({"NotebookEdit", "Write", "Edit", "MultiEdit"})
"""The tools the file guard is asked about."""

ALL_TOOLS = "*"
"""The PreToolUse matcher for every tool. On CLI 2.1.332 ``"*"``, ``""``, ``".*"`` and no
matcher at all each matched Read and Bash alike (tests/policy/test_enforce.py)."""

Policy = Callable[[str, dict[str, Any]], Any]
FileGuard = Callable[[str, dict[str, Any]], "str | None"]


def initialize_hooks() -> dict[str, list[dict[str, Any]]]:
    """The `initialize` request's ``hooks`` entry of the enforcement hook (always registered:
    the running turn's policy is only known later, and the hook costs one round trip)."""
    return {"PreToolUse": [{"matcher": ALL_TOOLS, "hookCallbackIds": [CALLBACK_ID]}]}


class LabelledPolicy:
    """A policy with a name for its denials ("this cell's policy (--approve rules)").

    Calls, ``denied_by``, ``note`` and any other attribute go to the wrapped policy.

    Args:
        policy: the approval policy.
        label: a noun phrase that reads before "rule X" in a denial.
    """

    def __init__(self, policy: Policy, label: str) -> None:
        self.policy = policy
        self.label = label

    def __call__(self, tool_name: str, tool_input: dict[str, Any]) -> Any:
        """The wrapped policy's answer."""
        return self.policy(tool_name, tool_input)

    def __getattr__(self, name: str) -> Any:
        if name in ("policy", "label"):  # not set yet (a copy being made): no recursion
            raise AttributeError(name)
        return getattr(self.policy, name)

    def __repr__(self) -> str:
        return f"LabelledPolicy({self.policy!r}, {self.label!r})"


def policy_label(policy: Policy, default: str) -> str:
    """The policy's own label (:class:`LabelledPolicy`), else `default`."""
    label = getattr(policy, "label", None)
    return label if isinstance(label, str) and label else default


@dataclass(frozen=True)
class PolicyVerdict:
    """The enforcement hook's decision for one call.

    Attributes:
        decision: "deny" (the call does not run) or "ask" (an ask rule matched, or a policy
            raised or answered something else than "allow", "deny" or None: a person decides).
        reason: the ``permissionDecisionReason`` (the model reads it in the tool_result).
        who: who decided, in words: "your policy rule Bash(rm:*)", "the file guard".
        rule: the rule that matched ("" for the file guard, a function policy, an error).
        source: "guard" or "policy".
    """

    decision: Literal["deny", "ask"]
    reason: str
    who: str
    rule: str = ""
    source: Literal["guard", "policy"] = "policy"

    def hook_output(self) -> dict[str, Any]:
        """The `hook_callback` answer (``hookSpecificOutput`` of a PreToolUse hook)."""
        return {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": self.decision,
                "permissionDecisionReason": self.reason,
            }
        }


def denying_rule(policy: Policy, tool_name: str, tool_input: dict[str, Any], cwd: str | None = None) -> str:
    """The rule of `policy` that denies this call ("" when none can be named).

    Asks ``policy.denied_by(tool_name, tool_input[, cwd=])`` when the policy has it; else, for
    a ``Rules``-like policy with a ``deny`` list, the first deny rule that denies the call on
    its own. Never raises (a failure names no rule).
    """
    target = getattr(policy, "policy", policy)  # a LabelledPolicy's own policy
    denied_by = getattr(target, "denied_by", None)
    try:
        if callable(denied_by):
            takes_cwd = "cwd" in inspect.signature(denied_by).parameters
            found = denied_by(tool_name, tool_input, cwd=cwd) if takes_cwd else denied_by(tool_name, tool_input)
            return str(found or "")
        rules = getattr(target, "deny", None)
        if isinstance(rules, list | tuple):
            for rule in rules:
                make: Any = type(target)
                if make(deny=[rule])(tool_name, tool_input) == "deny":
                    return str(rule)
    except Exception:
        log.debug("kandev-nb could not name the policy rule", exc_info=True)
    return ""


def rooted(policy: Policy, cwd: str | None) -> Policy:
    """`policy` with the CLI's `cwd` as the root of its relative rules when it has no root of
    its own (``Rules.with_root``): ``Read(./.env)`` is the session folder's .env even when the
    kernel runs elsewhere. Other policies, or no `cwd`: `policy` itself. Never raises."""
    target = getattr(policy, "policy", policy)  # a LabelledPolicy's own policy
    with_root = getattr(target, "with_root", None)
    if not cwd or not callable(with_root) or getattr(target, "root", None) is not None:
        return policy
    try:
        bound: Policy = with_root(cwd)
    except Exception:  # the policy as it is
        log.debug("kandev-nb could not root the policy at %s", cwd, exc_info=True)
        return policy
    return bound


def _ask_rule(policy: Policy, tool_name: str, tool_input: dict[str, Any]) -> str:
    """The ask rule of a ``Rules``-like policy (one with ``verdict``) that matches this call, or ""."""
    target = getattr(policy, "policy", policy)
    verdict_of = getattr(target, "verdict", None)
    if not callable(verdict_of):
        return ""
    verdict = verdict_of(tool_name, tool_input)
    return str(verdict.rule or "") if getattr(verdict, "answer", None) == "ask" else ""


def _function_name(policy: Policy) -> str:
    target = getattr(policy, "policy", policy)
    name = getattr(target, "__qualname__", None) or type(target).__name__
    return str(name)


def denial(
    policy: Policy, default: str, tool_name: str, tool_input: dict[str, Any], cwd: str | None = None
) -> PolicyVerdict:
    """The deny of `policy` (which answered "deny" for this call), naming its rule:
    ``Denied by your policy rule Bash(rm:*).``; a policy without rules is named by its
    function (``Denied by this turn's policy (tests_only answered deny).``).

    Args:
        default: the label when the policy has none of its own (:func:`policy_label`).
    """
    label = policy_label(policy, default)
    rule = denying_rule(policy, tool_name, tool_input, cwd)
    who = f"{label} rule {rule}" if rule else f"{label} ({_function_name(policy)} answered deny)"
    return PolicyVerdict("deny", f"Denied by {who}.", who, rule)


def check(
    tool_name: str,
    tool_input: dict[str, Any],
    *,
    guard: FileGuard | None,
    policies: Sequence[tuple[Policy, str]],
    cwd: str | None = None,
) -> PolicyVerdict | None:
    """The enforcement hook's decision for one call (None: no opinion).

    Args:
        tool_name, tool_input: the hook input's ``tool_name`` / ``tool_input``.
        guard: the file guard (``(tool_name, tool_input) -> reason | None``); asked first,
            for :data:`GUARDED_TOOLS` only.
        policies: ``(policy, label)`` pairs in force, the running turn's first; the label
            names a policy without its own (:func:`policy_label`), e.g. "your policy".
        cwd: the hook input's ``cwd`` (rules with relative paths resolve against it).

    Returns:
        A deny (the guard's reason, or the first policy answering "deny", naming its rule),
        an "ask" when a policy raised, else None. Never raises.
    """
    if guard is not None and tool_name in GUARDED_TOOLS:
        try:
            reason = guard(tool_name, tool_input)
        except Exception:
            log.exception("kandev-nb file guard failed")
            reason = None
        if reason:
            return PolicyVerdict("deny", str(reason), "the file guard", source="guard")
    broken: list[str] = []
    asked: list[tuple[str, str]] = []
    for policy, default in policies:
        label = policy_label(policy, default)
        try:
            bound = rooted(policy, cwd)
            answer = bound(tool_name, tool_input)
            ask_rule = _ask_rule(bound, tool_name, tool_input) if answer is None else None
        except Exception as exc:  # noqa: BLE001 - a broken policy makes the CLI ask a person
            log.warning("approval policy %s raised %r; asking a person", label, exc)
            broken.append(f"{label} raised {type(exc).__name__}: {exc}")
            continue
        if answer == "deny":
            return denial(policy, default, tool_name, tool_input, cwd)
        if answer not in ("allow", None):  # "Deny", False, "ask": not an answer; a person decides
            log.warning("approval policy %s answered %r, not 'allow', 'deny' or None; asking a person", label, answer)
            broken.append(f"{label} answered {answer!r}, not 'allow', 'deny' or None")
        elif ask_rule:
            asked.append((f"{label} rule {ask_rule}", ask_rule))
    if asked and not broken:  # an ask rule asks in every mode, as a deny rule denies
        who = ", ".join(w for w, _ in asked)
        return PolicyVerdict("ask", f"An ask rule matched ({who}); a person decides.", who, asked[0][1])
    if broken:
        text = "; ".join(broken)
        return PolicyVerdict("ask", f"The approval policy failed ({text}); a person decides.", text)
    return None


def disallowed_tools(policy: Policy | None) -> tuple[str, ...]:
    """The plain deny rules of `policy` for the CLI's ``--disallowedTools``
    (``policy.cli_disallowed_tools()`` when it has it; else none). Never raises."""
    if policy is None:
        return ()
    method = getattr(policy, "cli_disallowed_tools", None)
    if not callable(method):
        return ()
    try:
        return tuple(str(rule) for rule in method())
    except Exception:  # noqa: BLE001 - the hook still enforces every deny rule
        log.warning("cli_disallowed_tools() of %r failed; the hook still enforces the deny rules", policy)
        return ()
