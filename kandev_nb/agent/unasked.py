"""The tool calls that reach the approval broker without a `can_use_tool`.

Mixed into :class:`~kandev_nb.agent.approvals.ApprovalBroker`:

* kandev-nb's PreToolUse hook, which the CLI asks before every tool call in every mode
  (:meth:`UnaskedCalls.pre_tool_use`, :mod:`kandev_nb.policy.enforce`: the file guard and the
  deny side of the policies in force);
* the results of tools the CLI ran without asking (:meth:`UnaskedCalls.note_unasked`),
  reported as decided by its own settings, its permission mode ("allowed by acceptEdits
  mode"), a hook, or the person's session grant that covers them ("allowed by your session
  grant Bash(touch:*), given in cell [12]").

What acceptEdits runs unasked (measured on CLI 2.1.332, 2.1.197 and 2.1.118, in
tests/approvals/test_accept_edits.py): Write, Edit, MultiEdit and NotebookEdit of files in the
working directory, and the shell commands ``mkdir``, ``touch``, ``rm`` (``-rf`` too), ``rmdir``,
``mv``, ``cp`` and ``sed`` (``sed -i`` too) on paths in it (:data:`ACCEPT_EDITS_COMMANDS`);
``chmod``, ``ln``, interpreters, ``git`` and any path outside the working directory still ask.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

from kandev_nb.agent import events as ev
from kandev_nb.agent.questions import QUESTION_TOOL
from kandev_nb.agent.revoke import revoked_ask
from kandev_nb.agent.tools import ShellExec
from kandev_nb.policy import enforce
from kandev_nb.policy.grants import grant_matches
from kandev_nb.policy.shell import parse_command

__all__ = ["ACCEPT_EDITS_COMMANDS", "ACCEPT_EDITS_TOOLS", "NO_APPROVAL_NOTE", "UnaskedCalls", "allowed_by_mode"]

ACCEPT_EDITS_TOOLS = frozenset({"Write", "Edit", "MultiEdit", "NotebookEdit"})
"""The file tools acceptEdits runs unasked in the working directory."""

ACCEPT_EDITS_COMMANDS = frozenset({"mkdir", "touch", "rm", "rmdir", "mv", "cp", "sed"})
"""The shell commands acceptEdits runs unasked on paths in the working directory (measured on
CLI 2.1.332, 2.1.197 and 2.1.118; ``chmod``, ``ln``, ``python3``, ``git`` still ask)."""


def allowed_by_mode(mode: str, event: ev.ToolUpdate, decision: dict[str, Any]) -> bool:
    """True when the CLI ran `event`'s call unasked because of the permission `mode` (acceptEdits),
    not because of a settings rule or its read-only classification.

    Args:
        mode: the session's mode when the result arrived.
        event: the call's ToolUpdate (its `normalized` payload holds a Bash command).
        decision: the CLI's ``tool_result_meta[].permission_decision`` for it ({} when not sent:
            CLIs before 2.1.332). A decision from a rule (``reason_type: "rule"``) or a source
            other than the CLI's config is never the mode's.
    """
    if mode != "acceptEdits" or decision.get("reason_type") == "rule":
        return False
    if decision.get("source") not in (None, "config"):
        return False
    if event.tool_name in ACCEPT_EDITS_TOOLS:
        return True
    payload = event.normalized
    if event.tool_name != "Bash" or not isinstance(payload, ShellExec):
        return False
    return any(_writes(c.words) for c in parse_command(payload.command).commands if c.words)


def _writes(words: tuple[str, ...]) -> bool:
    """True for one of :data:`ACCEPT_EDITS_COMMANDS` that only acceptEdits runs unasked. Not a
    ``sed -n`` that is not in place (``-n 1p``: the CLI's read-only check runs it unasked in
    every mode, measured on 2.1.332, 2.1.197 and 2.1.118; ``sed s/a/b/ f`` asks in supervised)."""
    program = words[0].rsplit("/", 1)[-1]
    if program != "sed":
        return program in ACCEPT_EDITS_COMMANDS
    flags = [w for w in words[1:] if w.startswith("-")]
    in_place = any(w.startswith("--in-place") or (not w.startswith("--") and "i" in w[1:]) for w in flags)
    quiet = any(w in ("--quiet", "--silent") or (not w.startswith("--") and "n" in w[1:]) for w in flags)
    return in_place or not quiet


NO_APPROVAL_NOTE = frozenset(
    {
        "Read",
        "Glob",
        "Grep",
        "LS",
        "NotebookRead",
        "TodoWrite",
        "Task",
        "Agent",
        "TaskCreate",
        "TaskUpdate",
        "TaskList",
        "TaskGet",
        "TaskOutput",
        "TaskStop",
        "ToolSearch",
        "Skill",
        "EnterPlanMode",
        "ExitPlanMode",
        "AskUserQuestion",
        "ListAgents",
        "Monitor",
        "SendMessage",
        "CronList",
        "StructuredOutput",  # a --schema turn's answer (kandev_nb.agent.structured): no permission matter
    }
)
"""Tools that never need approval: running them without a request is not worth a note."""


class UnaskedCalls:
    """The broker's part that answers the PreToolUse hook and reports unasked tool calls.

    Needs from the broker: `emit`, `session_id`, `cwd`, :meth:`policies_in_force`, and its
    `_asked` (tool_use_ids decided by a request), `_grants` (``(rule, where given)`` of this
    process) and `_inputs` (tool_use_id -> ``(tool_name, tool_input)`` the hook saw).
    """

    emit: Callable[[ev.AgentEvent], None]
    session_id: Callable[[], str | None]
    _asked: set[str]
    _grants: list[tuple[str, str]]
    _inputs: dict[str, tuple[str, dict[str, Any]]]

    @property
    def cwd(self) -> str:  # the broker's
        raise NotImplementedError

    def policies_in_force(self) -> list[tuple[Any, str]]:  # the broker's
        raise NotImplementedError

    # -- the PreToolUse hook of every tool call ---------------------------------------------

    def pre_tool_use(self, request: dict[str, Any], guard: enforce.FileGuard | None) -> dict[str, Any]:
        """The answer to the enforcement hook's `hook_callback` (:mod:`kandev_nb.policy.enforce`).

        Args:
            request: the control_request's `request`: ``callback_id``, ``tool_use_id``,
                ``input: {hook_event_name, tool_name, tool_input, tool_use_id, cwd, permission_mode}``.
            guard: the session's file guard, asked first.

        Returns:
            The hook output: a deny (the guard's reason; a policy's "deny", naming its rule),
            an "ask" (a policy raised), or ``{}`` (no opinion). A policy's deny is reported
            first as a PermissionDecided (``decided_by="policy"``, `rule`, `who`), in every
            mode, and its tool_use_id counts as asked. Never raises.
        """
        raw = request.get("input")
        hook_input: dict[str, Any] = raw if isinstance(raw, dict) else {}
        tool_name = str(hook_input.get("tool_name") or "unknown")
        raw_input = hook_input.get("tool_input")
        tool_input: dict[str, Any] = raw_input if isinstance(raw_input, dict) else {}
        tool_use_id = request.get("tool_use_id") or hook_input.get("tool_use_id")
        tool_use_id = tool_use_id if isinstance(tool_use_id, str) else None
        if tool_use_id is not None and self._grants:  # to name the grant that lets it run unasked
            self._inputs[tool_use_id] = (tool_name, tool_input)
        cwd = hook_input.get("cwd")
        verdict = enforce.check(
            tool_name,
            tool_input,
            guard=guard,
            policies=self.policies_in_force() if tool_name != QUESTION_TOOL else [],  # the answer policy's
            cwd=cwd if isinstance(cwd, str) else self.cwd,
        )
        if verdict is None:  # a revoked session grant makes the CLI ask again (agent/revoke.py)
            revoked = getattr(self, "revoked", ())
            return revoked_ask(revoked, tool_name, tool_input, self.cwd) if revoked else {}
        if verdict.source == "policy" and verdict.decision == "deny":
            if tool_use_id is not None:
                self._asked.add(tool_use_id)
            self.emit(
                ev.PermissionDecided(
                    request_id=f"policy:{tool_use_id or uuid.uuid4().hex}",
                    tool_name=tool_name,
                    behavior="deny",
                    decided_by="policy",
                    waited_ms=0,
                    message=verdict.reason,
                    tool_use_id=tool_use_id,
                    session_id=self.session_id(),
                    rule=verdict.rule,
                    who=verdict.who,
                )
            )
        return verdict.hook_output()

    def _grant_of(self, call: tuple[str, dict[str, Any] | None]) -> tuple[str, str] | None:
        """The session grant (rule, where given) that covers the call ``(tool_name,
        tool_input)`` (input None: unknown, only a whole-tool grant can be named), if one does."""
        name, tool_input = call
        for rule, where in self._grants:
            if tool_input is None:
                if rule == name:
                    return rule, where
            elif grant_matches(rule, name, tool_input, self.cwd):
                return rule, where
        return None

    # -- tools that ran unasked -------------------------------------------------------------

    def note_unasked(self, raw: dict[str, Any], events: list[ev.AgentEvent], mode: str) -> list[ev.AgentEvent]:
        """Make visible that the CLI ran a tool without asking us.

        In every mode but autonomous, a tool outside :data:`NO_APPROVAL_NOTE` whose result
        arrives with no can_use_tool before it was allowed by the CLI's own permission
        settings: a ``permissions.allow`` rule of the user, or its read-only classification
        of a shell command (``decided_by="settings"``); or by the mode: an edit or one of
        :data:`ACCEPT_EDITS_COMMANDS` in acceptEdits (``decided_by="mode"``, "allowed by
        acceptEdits mode", :func:`allowed_by_mode`). A
        :class:`~kandev_nb.agent.events.PermissionDecided` is
        put before its ToolUpdate, so the tool's record and card show who decided. On CLIs
        that report it (2.1.332), the reason comes from the `user` message's
        ``tool_result_meta[].permission_decision`` (`source`, `reason_type`), given in `raw`; a
        PreToolUse hook's deny (``source: "hook"``, measured with 2.1.332) is reported as
        ``decided_by="hook"`` with the hook's reason (the `tool_result` text). A call that a
        person's session grant covers (:meth:`pre_tool_use` saw its input) is reported as
        ``decided_by="grant"``: "allowed by your session grant Bash(touch:*), given in cell [12]".
        """
        calls = {e.tool_call_id: self._inputs.pop(e.tool_call_id, None) for e in events if isinstance(e, ev.ToolUpdate)}
        if mode == "autonomous":
            return events
        meta: dict[str, dict[str, Any]] = {}
        for entry in raw.get("tool_result_meta") or ():
            if isinstance(entry, dict) and isinstance(entry.get("permission_decision"), dict):
                meta[str(entry.get("id"))] = entry["permission_decision"]
        out: list[ev.AgentEvent] = []
        for event in events:
            if (
                isinstance(event, ev.ToolUpdate)
                and event.tool_call_id not in self._asked
                and event.tool_name not in NO_APPROVAL_NOTE
                and not event.auto_completed
            ):
                self._asked.add(event.tool_call_id)
                decision = meta.get(event.tool_call_id, {})
                accepted = decision.get("decision", "accept" if event.status == "complete" else None)
                if accepted in ("accept", "reject", "deny"):
                    source = " / ".join(str(decision[k]) for k in ("source", "reason_type") if decision.get(k))
                    call = calls.get(event.tool_call_id)
                    grant = self._grant_of(call or (event.tool_name, None)) if accepted == "accept" else None
                    who = f"your session grant {grant[0]}, {grant[1]}" if grant else ""
                    by_mode = not grant and accepted == "accept" and allowed_by_mode(mode, event, decision)
                    if by_mode:
                        who = f"{mode} mode"
                    why = (
                        f"allowed by {who}"
                        if grant or by_mode
                        else f"Claude Code's own permission settings ({source or 'no request was sent'})"
                    )
                    by_hook = decision.get("source") == "hook"
                    if accepted != "accept" and event.output.strip():
                        # the tool_result text is the reason (a hook's permissionDecisionReason)
                        why = event.output.strip() if by_hook else f"{why}: {event.output.strip()}"
                    out.append(
                        ev.PermissionDecided(
                            request_id=f"settings:{event.tool_call_id}",
                            tool_name=event.tool_name,
                            tool_use_id=event.tool_call_id,
                            behavior="allow" if accepted == "accept" else "deny",
                            decided_by="grant" if grant else "mode" if by_mode else "hook" if by_hook else "settings",
                            waited_ms=0,
                            message=why,
                            session_id=self.session_id(),
                            parent_tool_use_id=event.parent_tool_use_id,
                            rule=grant[0] if grant else "",
                            who=who,
                        )
                    )
            out.append(event)
        return out
