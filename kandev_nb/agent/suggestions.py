"""The CLI's `permission_suggestions`: saved permission rules offered with a can_use_tool.

Measured on CLI 2.1.332 and 2.1.197: for ``npm test -- --watch=false`` the request carried
``permission_suggestions: [{"type": "addRules", "rules": [{"toolName": "Bash", "ruleContent":
"npm test *"}], "behavior": "allow", "destination": "localSettings"}]``. Answering ``allow``
with ``updatedPermissions`` = that entry makes the CLI save the rule (``localSettings``:
``<project>/.claude/settings.local.json``) and stop asking for matching commands.

The update types are the Agent SDK's ``PermissionUpdate`` (``addRules``, ``replaceRules``,
``removeRules``, ``setMode``, ``addDirectories``, ``removeDirectories``) and the
destinations ``userSettings``, ``projectSettings``, ``localSettings``, ``session`` (and
``cliArg``). :func:`describe` names one for a button; an unknown type gets no button
(:func:`offered` leaves it out and says so).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["DESTINATIONS", "ModeChoices", "describe", "offered", "saved_where"]

DESTINATIONS: dict[str, str] = {
    "localSettings": "in this project (.claude/settings.local.json)",
    "projectSettings": "in this project's shared settings (.claude/settings.json)",
    "userSettings": "for all your projects (~/.claude/settings.json)",
    "session": "for this session",
    "cliArg": "for this CLI process",
}
"""What each `destination` means, as the buttons say it."""

_VERBS = {"allow": "Always allow", "deny": "Always deny", "ask": "Always ask for"}


def saved_where(destination: Any) -> str:
    """The words for a `destination` ("in this project (.claude/settings.local.json)")."""
    return DESTINATIONS.get(str(destination), f"in {destination}")


def _rule(rule: Any) -> str:
    if not isinstance(rule, dict) or not isinstance(rule.get("toolName"), str):
        raise ValueError("a rule without a toolName")  # noqa: TRY004 - one error type for every bad suggestion
    content = rule.get("ruleContent")
    return f"{rule['toolName']}({content})" if isinstance(content, str) else rule["toolName"]


def describe(suggestion: Any) -> str:
    """A button label for one suggestion: "Always allow Bash(npm test *) in this project (...)".

    Raises:
        ValueError: `suggestion` is not an update of a known type, or lacks a field its
            type needs (rules and behavior, mode, directories); the message names it.
    """
    if not isinstance(suggestion, dict):
        raise ValueError(f"a permission suggestion that is not an object: {suggestion!r}")  # noqa: TRY004
    kind = suggestion.get("type")
    where = saved_where(suggestion.get("destination", "session"))
    if kind in ("addRules", "replaceRules", "removeRules"):
        rules = suggestion.get("rules")
        if not isinstance(rules, list) or not rules:
            raise ValueError(f"permission suggestion {kind} has no rules")
        names = ", ".join(_rule(r) for r in rules)
        behavior = str(suggestion.get("behavior"))
        if behavior not in _VERBS:
            raise ValueError(f"permission suggestion {kind} has behavior {behavior!r}")
        if kind == "removeRules":
            return f"Allow, and remove the {behavior} rule {names} {where}"
        verb = _VERBS[behavior] if kind == "addRules" else f"Allow; {behavior} rules become"
        return f"{verb} {names} {where}"
    if kind == "setMode":
        if not isinstance(suggestion.get("mode"), str):
            raise ValueError("permission suggestion setMode has no mode")
        return f"Allow, and switch to {suggestion['mode']} mode {where}"
    if kind in ("addDirectories", "removeDirectories"):
        dirs = suggestion.get("directories")
        if not isinstance(dirs, list) or not dirs:
            raise ValueError(f"permission suggestion {kind} has no directories")
        verb = "add" if kind == "addDirectories" else "remove"
        return f"Allow, and {verb} {', '.join(map(str, dirs))} {where}"
    raise ValueError(f"kandev-nb does not know the permission suggestion type {kind!r}")


def offered(suggestions: Sequence[Any]) -> tuple[list[tuple[int, str]], list[str]]:
    """The suggestions that get a button, and why the others do not.

    Returns:
        ``([(index into suggestions, label), ...], [problem, ...])``: one problem text per
        suggestion :func:`describe` cannot name (it gets no button, nothing is sent for it).
    """
    buttons: list[tuple[int, str]] = []
    problems: list[str] = []
    for i, suggestion in enumerate(suggestions):
        try:
            buttons.append((i, describe(suggestion)))
        except ValueError as exc:
            problems.append(f"{exc}; not offered")
    return buttons, problems


class ModeChoices:
    """A turn consumer that notes the mode a person chose on an approval card ("Allow, and
    switch to acceptEdits mode for this session": a ``setMode`` suggestion accepted).

    The CLI switches its mode at once (``system/status`` ``permissionMode``). The button says
    "for this session", so the magic keeps that mode for the session's later cells that have no
    ``--mode`` of their own (instead of putting the notebook's mode back on the next cell).
    Call the instance with every event of the turn; read :attr:`mode` after it.
    """

    def __init__(self) -> None:
        self._approvals: list[Any] = []

    def __call__(self, event: Any) -> None:
        """Keep the `approval` of each PermissionRequest event (its decision is read later)."""
        approval = getattr(event, "approval", None)
        if getattr(event, "type", None) == "permission_request" and approval is not None:
            self._approvals.append(approval)

    @property
    def mode(self) -> str | None:
        """The CLI mode (``acceptEdits``, ``plan``, ``default``...) of the last accepted ``setMode``
        suggestion of the turn, or None when no card switched the mode."""
        chosen = None
        for approval in self._approvals:
            decision = getattr(approval, "decision", None)
            suggestion = getattr(decision, "suggestion", None)
            if (
                getattr(decision, "behavior", None) == "allow"
                and isinstance(suggestion, dict)
                and suggestion.get("type") == "setMode"
                and isinstance(suggestion.get("mode"), str)
            ):
                chosen = str(suggestion["mode"])
        return chosen
