"""kandev-nb's own CLI hook: a PreToolUse guard on the file tools (the user's Python hooks
are :mod:`kandev_nb.agent.hooks`).

`initialize` may carry ``hooks: {"PreToolUse": [{"matcher", "hookCallbackIds"}]}``; the CLI
then sends a `hook_callback` control request (``callback_id``, ``input: {hook_event_name,
tool_name, tool_input, ...}``) before every matching tool call, in every permission mode, and
reads ``{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
"permissionDecisionReason": ...}}`` as a refusal that the model sees (CLI 2.1.332: the tool
result reads ``PreToolUse:<tool> hook error: <reason>``). The CLI checks a tool's own
preconditions first (Write/NotebookEdit of an existing file it has not read fails before).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

__all__ = ["CALLBACK_ID", "GUARDED_TOOLS", "FileGuard", "hook_answer", "initialize_hooks"]

log = logging.getLogger("kandev_nb")

FileGuard = Callable[[str, dict[str, Any]], "str | None"]
"""``(tool_name, tool_input) -> reason | None``: a reason refuses the call with it."""

GUARDED_TOOLS = "NotebookEdit|Write|Edit|MultiEdit"
"""The PreToolUse matcher (a regular expression over tool names)."""

CALLBACK_ID = "kandev_file_guard"
"""The guard's `callback_id` in `initialize` and in its `hook_callback` requests."""


def initialize_hooks(guard: FileGuard | None) -> dict[str, Any] | None:
    """The `initialize` request's ``hooks`` for `guard` (None: no hooks)."""
    if guard is None:
        return None
    return {"PreToolUse": [{"matcher": GUARDED_TOOLS, "hookCallbackIds": [CALLBACK_ID]}]}


def hook_answer(guard: FileGuard | None, request: dict[str, Any]) -> dict[str, Any]:
    """The answer to one `hook_callback` request: a deny with the guard's reason, else ``{}``.

    Never raises: a guard that fails lets the normal permission flow decide (logged).
    """
    raw = request.get("input")
    hook_input: dict[str, Any] = raw if isinstance(raw, dict) else {}
    if guard is None or request.get("callback_id") != CALLBACK_ID:
        return {}
    tool_input = hook_input.get("tool_input")
    try:
        reason = guard(str(hook_input.get("tool_name")), tool_input if isinstance(tool_input, dict) else {})
    except Exception:
        log.exception("kandev-nb file guard failed")
        return {}
    if not reason:
        return {}
    return {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": reason,
        }
    }
