"""Event builders for the widget tests (AgentEvents as the adapter makes them)."""

from __future__ import annotations

from typing import Any

from kandev_nb.agent import events as ev
from kandev_nb.agent import tools as t


def call(tool_id: str, name: str, tool_input: dict[str, Any], parent: str | None = None) -> ev.ToolCall:
    """A ToolCall event as the adapter makes it."""
    payload = t.normalize_tool_call(name, tool_input)
    return ev.ToolCall(
        tool_call_id=tool_id,
        tool_name=name,
        title=t.tool_title(name, payload),
        normalized=payload,
        input=tool_input,
        parent_tool_use_id=parent,
    )


def result(c: ev.ToolCall, content: Any, *, is_error: bool = False, structured: Any = None) -> ev.ToolUpdate:
    """The ToolUpdate for `c` with a tool_result `content` (and the user line's tool_use_result)."""
    payload = t.normalize_tool_result(c.normalized, content, is_error, structured)
    return ev.ToolUpdate(
        tool_call_id=c.tool_call_id,
        tool_name=c.tool_name,
        status="error" if is_error else "complete",
        normalized=payload,
        output=t.tool_result_text(content),
        parent_tool_use_id=c.parent_tool_use_id,
    )


def complete(**stats: Any) -> ev.Complete:
    return ev.Complete(stats=ev.TurnStats(**stats))
