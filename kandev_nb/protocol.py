"""The stream-json wire: pydantic models of every message, both directions.

Lines from the CLI are parsed with :func:`parse_line`, which never raises: a line that is
not JSON becomes :class:`InvalidLine`, a JSON object with a `type` we do not model (or a
known type with the wrong shape) becomes :class:`UnknownMessage` carrying the object
unchanged. Known messages keep any extra fields the CLI adds (``extra="allow"``), so a
newer CLI loses nothing. Field names follow the wire (snake_case there, camelCase where the
CLI uses it inside payloads, which stay plain dicts).

Outgoing messages are built by the small functions at the bottom (:func:`user_message`,
:func:`control_request`, :func:`control_success`, :func:`control_error`).
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

__all__ = [
    "AssistantMessage",
    "ControlCancelRequest",
    "ControlRequest",
    "ControlResponse",
    "InvalidLine",
    "KeepAlive",
    "RateLimitEvent",
    "ResultMessage",
    "StreamEvent",
    "SystemMessage",
    "UnknownMessage",
    "UserMessage",
    "WireMessage",
    "control_error",
    "control_request",
    "control_success",
    "parse_line",
    "parse_object",
    "user_message",
]


class _Wire(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True)


class UserMessage(_Wire):
    """`user`: the prompt echoed back, tool results, or "[Request interrupted by user]".

    `message.content` is a string or a list of blocks (`text`, `tool_result`, `image`).
    `tool_use_result` is the CLI's structured result of the tool (a dict, or a string on a
    denial).
    """

    type: Literal["user"]
    message: dict[str, Any]
    session_id: str | None = None
    parent_tool_use_id: str | None = None
    uuid: str | None = None
    tool_use_result: Any = None
    isReplay: bool = False


class AssistantMessage(_Wire):
    """`assistant`: one content block of an API message (several lines share `message.id`)."""

    type: Literal["assistant"]
    message: dict[str, Any]
    session_id: str | None = None
    parent_tool_use_id: str | None = None
    uuid: str | None = None
    error: str | None = None


class StreamEvent(_Wire):
    """`stream_event` (with ``--include-partial-messages``): one raw Messages API SSE event."""

    type: Literal["stream_event"]
    event: dict[str, Any]
    session_id: str | None = None
    parent_tool_use_id: str | None = None
    uuid: str | None = None


class SystemMessage(_Wire):
    """`system`: init, status, api_retry, compact_boundary, task_* ... (extra keys kept)."""

    type: Literal["system"]
    subtype: str = ""
    session_id: str | None = None
    uuid: str | None = None


class ResultMessage(_Wire):
    """`result`: the turn is over.

    `total_cost_usd` (USD) and `modelUsage` are cumulative per CLI process; `usage` is this
    turn's. Error results (`error_max_turns`, `error_during_execution`) carry `errors` and
    no `result`; an API failure is `subtype="success"`, `is_error=True`, `api_error_status`.
    """

    type: Literal["result"]
    subtype: str = "success"
    is_error: bool = False
    duration_ms: int = 0
    duration_api_ms: int = 0
    num_turns: int = 0
    result: str | None = None
    session_id: str | None = None
    total_cost_usd: float = 0.0
    usage: dict[str, Any] | None = None
    modelUsage: dict[str, Any] | None = None
    permission_denials: list[Any] | None = None
    stop_reason: str | None = None
    terminal_reason: str | None = None
    api_error_status: int | None = None
    errors: list[Any] | None = None
    uuid: str | None = None


class ControlRequest(_Wire):
    """`control_request`: `request.subtype` is can_use_tool, hook_callback, mcp_message...

    The fields live under `request` (a dict), never at the top level.
    """

    type: Literal["control_request"]
    request_id: str
    request: dict[str, Any]


class ControlResponse(_Wire):
    """`control_response`: `response` holds `subtype`, `request_id`, and `response`/`error`."""

    type: Literal["control_response"]
    response: dict[str, Any]


class ControlCancelRequest(_Wire):
    """`control_cancel_request`: the CLI withdraws the control_request `request_id`."""

    type: Literal["control_cancel_request"]
    request_id: str


class KeepAlive(_Wire):
    """`keep_alive`: no content; never counts as activity."""

    type: Literal["keep_alive"]


class RateLimitEvent(_Wire):
    """`rate_limit_event` (current CLIs) or `rate_limit` (the seed's name)."""

    type: Literal["rate_limit_event", "rate_limit"]


class UnknownMessage(BaseModel):
    """A JSON object we do not model (or that did not validate), kept unchanged in `raw`."""

    model_config = ConfigDict(frozen=True)
    type: Literal["unknown"] = "unknown"
    raw: dict[str, Any]
    reason: str = ""


class InvalidLine(BaseModel):
    """A line that is not a JSON object (log noise, a truncated write)."""

    model_config = ConfigDict(frozen=True)
    type: Literal["invalid"] = "invalid"
    text: str
    error: str


WireMessage = (
    UserMessage
    | AssistantMessage
    | StreamEvent
    | SystemMessage
    | ResultMessage
    | ControlRequest
    | ControlResponse
    | ControlCancelRequest
    | KeepAlive
    | RateLimitEvent
    | UnknownMessage
    | InvalidLine
)

_MODELS: dict[str, type[_Wire]] = {
    "user": UserMessage,
    "assistant": AssistantMessage,
    "stream_event": StreamEvent,
    "system": SystemMessage,
    "result": ResultMessage,
    "control_request": ControlRequest,
    "control_response": ControlResponse,
    "control_cancel_request": ControlCancelRequest,
    "keep_alive": KeepAlive,
    "rate_limit_event": RateLimitEvent,
    "rate_limit": RateLimitEvent,
}


def parse_object(obj: Any) -> WireMessage:
    """Turn one decoded JSON value into a wire message; never raises."""
    if not isinstance(obj, dict):
        return InvalidLine(text=json.dumps(obj)[:1000], error="not a JSON object")
    model = _MODELS.get(obj.get("type"))  # type: ignore[arg-type]
    if model is None:
        return UnknownMessage(raw=obj, reason=f"unknown type {obj.get('type')!r}")
    try:
        return model.model_validate(obj)  # type: ignore[return-value]
    except ValidationError as exc:
        return UnknownMessage(raw=obj, reason=f"invalid {obj.get('type')}: {exc.errors()[0]['msg']}")


def parse_line(line: bytes | str) -> WireMessage:
    """Parse one NDJSON line (without its newline); never raises.

    Args:
        line: UTF-8 bytes or text. Blank lines should be skipped by the caller.

    Returns:
        A wire model, :class:`UnknownMessage` for unmodelled objects, or
        :class:`InvalidLine` (its `text` cut to 1,000 characters) for anything not JSON.
    """
    try:
        obj = json.loads(line)
    except (ValueError, RecursionError) as exc:
        text = line.decode("utf-8", "replace") if isinstance(line, bytes) else line
        return InvalidLine(text=text[:1000], error=str(exc)[:200])
    return parse_object(obj)


# -- outgoing --------------------------------------------------------------------------


def user_message(content: str | list[dict[str, Any]], session_id: str = "") -> dict[str, Any]:
    """A prompt in the nested shape the CLI requires (the flat shape crashes it)."""
    return {
        "type": "user",
        "message": {"role": "user", "content": content},
        "parent_tool_use_id": None,
        "session_id": session_id,
    }


def control_request(request_id: str, subtype: str, **fields: Any) -> dict[str, Any]:
    """An outgoing control_request, e.g. ``control_request(id, "interrupt")``."""
    return {"type": "control_request", "request_id": request_id, "request": {"subtype": subtype, **fields}}


def control_success(request_id: str, response: dict[str, Any]) -> dict[str, Any]:
    """The control_response shape the CLI accepts (`request_id` inside `response`)."""
    return {
        "type": "control_response",
        "response": {"subtype": "success", "request_id": request_id, "response": response},
    }


def control_error(request_id: str, error: str) -> dict[str, Any]:
    """An error answer to a control_request."""
    return {"type": "control_response", "response": {"subtype": "error", "request_id": request_id, "error": error}}
