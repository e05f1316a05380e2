"""The stream-json wire: typed views of every message, both directions.

Lines from the CLI are parsed with :func:`parse_line`, which never raises: a line that is
not JSON becomes :class:`InvalidLine`; a JSON object with a `type` we do not model (or a
known type without its required fields) becomes :class:`UnknownMessage` carrying the
object unchanged.

A wire message is a thin, read-only view over the decoded object (``msg.raw``): the
properties read the wire's fields with a dict lookup, fall back to a default when a field
is missing or has the wrong JSON type, and never copy or validate the rest. Nothing the
CLI sends is lost (``raw`` is the object as decoded), and parsing a `stream_event` delta
costs little more than decoding its JSON (see ``python benchmarks/bench_adapter.py``).
Property names follow the wire's snake_case; camelCase payload keys (``modelUsage``)
get a snake_case property (``model_usage``) and stay camelCase inside the dicts.

Outgoing messages are built in :mod:`kandev_nb.wire.outbound` (re-exported here: :func:`user_message`,
:func:`control_request`, :func:`control_success`, :func:`control_error`).
"""

from __future__ import annotations

import json
import math
from typing import Any, ClassVar

from kandev_nb.wire.decode import JSON_DECODER, decode_json, fast_loads

__all__ = [
    "HUMAN_ORIGIN",
    "JSON_DECODER",
    "AssistantMessage",
    "CommandLifecycle",
    "ControlCancelRequest",
    "ControlRequest",
    "ControlResponse",
    "ConversationReset",
    "InvalidLine",
    "KeepAlive",
    "RateLimitEvent",
    "ResultMessage",
    "StreamEvent",
    "SystemMessage",
    "TranscriptMirror",
    "UnknownMessage",
    "UserMessage",
    "WireMessage",
    "control_error",
    "control_request",
    "control_success",
    "decode_json",
    "fast_loads",
    "parse_line",
    "parse_object",
    "user_message",
]


# -- typed reads of a raw dict ---------------------------------------------------------
# Decoded JSON has exact types (a JSON true is a bool, never an int), so `type(...) is` checks.


from kandev_nb.wire.outbound import HUMAN_ORIGIN, control_error, control_request, control_success, user_message


def _s(raw: dict[str, Any], key: str) -> str | None:
    value = raw.get(key)
    return value if type(value) is str else None


def _i(raw: dict[str, Any], key: str) -> int | None:
    value = raw.get(key)
    return value if type(value) is int else None


def _f(raw: dict[str, Any], key: str) -> float | None:
    """A finite number, else None (a bool, text, NaN, inf, or an int beyond a float:
    ``float(10**400)`` raised, and the `result` it came with was lost)."""
    value = raw.get(key)
    if type(value) is not float and type(value) is not int:
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None


def _d(raw: dict[str, Any], key: str) -> dict[str, Any] | None:
    value = raw.get(key)
    return value if type(value) is dict else None


class _Wire:
    """A read-only view over one decoded JSON object from the CLI.

    Attributes:
        raw: the object exactly as decoded (never modified; do not modify it either).
    """

    __slots__ = ("raw",)
    type: ClassVar[str] = ""

    def __init__(self, raw: dict[str, Any]) -> None:
        self.raw = raw

    def model_dump(self) -> dict[str, Any]:
        """The raw object (the name matches pydantic's, for callers that log messages)."""
        return self.raw

    @property
    def session_id(self) -> str | None:
        """The `session_id` field, if present and a string."""
        value = self.raw.get("session_id")  # _s, inlined: read for every message
        return value if type(value) is str else None

    @property
    def uuid(self) -> str | None:
        """The `uuid` field: the message's id in the session transcript (resume points)."""
        value = self.raw.get("uuid")  # _s, inlined: read for every message
        return value if type(value) is str else None

    @property
    def parent_tool_use_id(self) -> str | None:
        """`parent_tool_use_id`: set on a subagent's messages (the Task call's tool_use_id)."""
        value = self.raw.get("parent_tool_use_id")  # _s, inlined: read for every message
        return value if type(value) is str else None

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and isinstance(other, _Wire) and other.raw == self.raw

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"{type(self).__name__}({json.dumps(self.raw, ensure_ascii=False)[:300]})"


class UserMessage(_Wire):
    """`user`: the prompt echoed back, tool results, or "[Request interrupted by user]".

    `message.content` is a string or a list of blocks (`text`, `tool_result`, `image`).
    """

    __slots__ = ()
    type = "user"

    @property
    def message(self) -> dict[str, Any]:
        """`message`: ``{"role": "user", "content": str | list[block]}``."""
        return self.raw["message"]  # type: ignore[no-any-return]  # checked by parse_object

    @property
    def tool_use_result(self) -> Any:
        """The CLI's structured result of the tool: a dict, or a string on a denial; or None."""
        return self.raw.get("tool_use_result")

    @property
    def is_replay(self) -> bool:
        """`isReplay`: the CLI echoed back a message we sent (``--replay-user-messages``)."""
        return self.raw.get("isReplay") is True


class AssistantMessage(_Wire):
    """`assistant`: one content block of an API message (several lines share `message.id`)."""

    __slots__ = ()
    type = "assistant"

    @property
    def message(self) -> dict[str, Any]:
        """`message`: an Anthropic Messages API message (`id`, `model`, `content`, `usage`)."""
        return self.raw["message"]  # type: ignore[no-any-return]  # checked by parse_object

    @property
    def error(self) -> str | None:
        """`error`: set on the CLI's synthetic error messages (e.g. ``"authentication_failed"``)."""
        return _s(self.raw, "error")


class StreamEvent(_Wire):
    """`stream_event` (with ``--include-partial-messages``): one raw Messages API SSE event."""

    __slots__ = ()
    type = "stream_event"

    @property
    def event(self) -> dict[str, Any]:
        """`event`: ``{"type": "content_block_delta", "index": 0, "delta": {...}}`` and so on."""
        return self.raw["event"]  # type: ignore[no-any-return]  # checked by parse_object


class SystemMessage(_Wire):
    """`system`: init, status, api_retry, compact_boundary, task_* ... (read `raw` for the rest)."""

    __slots__ = ()
    type = "system"

    @property
    def subtype(self) -> str:
        """`subtype` ("" when missing)."""
        return _s(self.raw, "subtype") or ""


class ResultMessage(_Wire):
    """`result`: the turn is over.

    `total_cost_usd` (USD) and `modelUsage` are cumulative per CLI process; `usage` is this
    turn's. Error results (`error_max_turns`, `error_during_execution`) carry `errors` and
    no `result`; an API failure is `subtype="success"`, `is_error=True`, `api_error_status`.
    """

    __slots__ = ()
    type = "result"

    @property
    def subtype(self) -> str:
        """`subtype`: success, error_max_turns, error_during_execution, ... ("success" if missing)."""
        return _s(self.raw, "subtype") or "success"

    @property
    def is_error(self) -> bool:
        """`is_error` (False if missing)."""
        return self.raw.get("is_error") is True

    @property
    def duration_ms(self) -> int:
        """`duration_ms`: wall time of the turn, ms (0 if missing)."""
        return _i(self.raw, "duration_ms") or 0

    @property
    def duration_api_ms(self) -> int:
        """`duration_api_ms`: time spent waiting for the API, ms (0 if missing)."""
        return _i(self.raw, "duration_api_ms") or 0

    @property
    def num_turns(self) -> int:
        """`num_turns`: model round trips in this turn (0 if missing)."""
        return _i(self.raw, "num_turns") or 0

    @property
    def result(self) -> str | None:
        """`result`: the final answer text (absent on error results)."""
        return _s(self.raw, "result")

    @property
    def total_cost_usd(self) -> float | None:
        """`total_cost_usd`: cumulative cost of the CLI process, USD (None if missing or not a finite number)."""
        return _f(self.raw, "total_cost_usd")

    @property
    def usage(self) -> dict[str, Any]:
        """`usage`: this turn's tokens (`input_tokens`, `output_tokens`, `cache_*`); {} if missing."""
        return _d(self.raw, "usage") or {}

    @property
    def model_usage(self) -> dict[str, Any]:
        """`modelUsage`: cumulative per-model figures (`inputTokens`, `costUSD`, `contextWindow`)."""
        return _d(self.raw, "modelUsage") or {}

    @property
    def permission_denials(self) -> list[Any]:
        """`permission_denials`: tools denied this turn ([] if missing)."""
        value = self.raw.get("permission_denials")
        return value if isinstance(value, list) else []

    @property
    def stop_reason(self) -> str | None:
        """`stop_reason` of the last API message."""
        return _s(self.raw, "stop_reason")

    @property
    def terminal_reason(self) -> str | None:
        """`terminal_reason` (newer CLIs): completed, aborted_streaming, max_turns, ..."""
        return _s(self.raw, "terminal_reason")

    @property
    def api_error_status(self) -> int | None:
        """`api_error_status`: the HTTP status of a failed API call."""
        return _i(self.raw, "api_error_status")

    @property
    def errors(self) -> list[str]:
        """`errors`: messages of an error result, as strings ([] if missing)."""
        value = self.raw.get("errors")
        if not isinstance(value, list):
            return []
        return [v if isinstance(v, str) else json.dumps(v) for v in value]

    @property
    def user_message_uuids(self) -> tuple[str, ...]:
        """The `uuid` of every user message this turn took in, in order: `user_message_uuids`,
        else `user_message_uuid` alone; () on CLIs that send neither (2.1.197). Only prompts
        sent with a top-level `uuid` (:func:`user_message`) are named (CLI 2.1.332, measured)."""
        value = self.raw.get("user_message_uuids")
        if isinstance(value, list):
            return tuple(v for v in value if isinstance(v, str))
        one = _s(self.raw, "user_message_uuid")
        return (one,) if one else ()

    @property
    def origin(self) -> dict[str, Any] | None:
        """`origin`: provenance of the user message that started this turn, ``{"kind": ...}``
        (``"human"`` when the prompt was sent with :data:`HUMAN_ORIGIN`; ``"task-notification"``
        for a turn a background task started); None when absent or without a string `kind`."""
        value = _d(self.raw, "origin")
        return value if value is not None and isinstance(value.get("kind"), str) else None


class ControlRequest(_Wire):
    """`control_request`: `request.subtype` is can_use_tool, hook_callback, mcp_message...

    The fields live under `request` (a dict), never at the top level.
    """

    __slots__ = ()
    type = "control_request"

    @property
    def request_id(self) -> str:
        """`request_id`, to be echoed inside the control_response."""
        return self.raw["request_id"]  # type: ignore[no-any-return]  # checked by parse_object

    @property
    def request(self) -> dict[str, Any]:
        """`request`: ``{"subtype": ..., ...}``."""
        return self.raw["request"]  # type: ignore[no-any-return]  # checked by parse_object


class ControlResponse(_Wire):
    """`control_response`: `response` holds `subtype`, `request_id`, and `response`/`error`."""

    __slots__ = ()
    type = "control_response"

    @property
    def response(self) -> dict[str, Any]:
        """`response`: ``{"subtype": "success"|"error", "request_id": ..., ...}``."""
        return self.raw["response"]  # type: ignore[no-any-return]  # checked by parse_object


class ControlCancelRequest(_Wire):
    """`control_cancel_request`: the CLI withdraws the control_request `request_id`."""

    __slots__ = ()
    type = "control_cancel_request"

    @property
    def request_id(self) -> str:
        """The withdrawn request's `request_id`."""
        return self.raw["request_id"]  # type: ignore[no-any-return]  # checked by parse_object


class KeepAlive(_Wire):
    """`keep_alive`: no content; never counts as activity."""

    __slots__ = ()
    type = "keep_alive"


class RateLimitEvent(_Wire):
    """`rate_limit_event` (current CLIs) or `rate_limit` (the seed's name)."""

    __slots__ = ()
    type = "rate_limit_event"

    @property
    def info(self) -> dict[str, Any]:
        """`rate_limit_info` when present, else the whole object."""
        return _d(self.raw, "rate_limit_info") or self.raw


class ConversationReset(_Wire):
    """`conversation_reset` (CLI 2.1.332; 2.1.197 and 2.1.118 send none): ``/clear`` started a
    new conversation, and the CLI's cumulative figures (`total_cost_usd`, `duration_api_ms`,
    `modelUsage`) restart at zero from here; the ``/clear`` turn's own `result` already
    reports zeros. Measured shape: ``{"type": "conversation_reset", "new_conversation_id",
    "uuid", "trigger": "clear", "user_message_uuid", "timestamp", "session_id"}`` (the old
    session's id; the `system/init` after it carries the new one)."""

    __slots__ = ()
    type = "conversation_reset"

    @property
    def trigger(self) -> str | None:
        """`trigger`: what reset the conversation ("clear")."""
        return _s(self.raw, "trigger")

    @property
    def new_conversation_id(self) -> str | None:
        """`new_conversation_id`: the new conversation's id."""
        return _s(self.raw, "new_conversation_id")


class TranscriptMirror(_Wire):
    """`transcript_mirror` (CLI 2.1.332 started with ``--session-mirror``): entries the CLI
    appended to a transcript file, ``{"type": "transcript_mirror", "filePath": <absolute
    path of the .jsonl>, "entries": [<transcript entry>, ...]}``. The main transcript is
    ``<config>/projects/<project key>/<session_id>.jsonl``; a subagent's is
    ``<session_id>/subagents/agent-<agent_id>.jsonl`` beside it, whose ``agent_metadata``
    entries carry its ``.meta.json`` sidecar (measured). Never a turn's event: the session
    store takes them (:mod:`kandev_nb.agent.session_store`)."""

    __slots__ = ()
    type = "transcript_mirror"

    @property
    def file_path(self) -> str:
        """`filePath`: the transcript file the entries were appended to ("" if missing)."""
        return _s(self.raw, "filePath") or ""

    @property
    def entries(self) -> list[dict[str, Any]]:
        """`entries`: the appended transcript entries (JSON objects only)."""
        return [e for e in self.raw["entries"] if isinstance(e, dict)]


class CommandLifecycle(_Wire):
    """`command_lifecycle` (CLI 2.1.332, for a prompt sent with a `uuid`): where that prompt
    is, ``{"type": "command_lifecycle", "command_uuid": <the prompt's uuid>, "state":
    "queued" | "started" | "completed" | "cancelled" | "discarded" | "refused", "uuid",
    "session_id"}`` (measured: "queued" then "started" before the turn's first event). Never a
    turn's event: a turn sends one prompt and reads its fate from the `result`."""

    __slots__ = ()
    type = "command_lifecycle"

    @property
    def command_uuid(self) -> str | None:
        """`command_uuid`: the uuid of the prompt it is about (``Turn.prompt_uuid``)."""
        return _s(self.raw, "command_uuid")

    @property
    def state(self) -> str | None:
        """`state`: "queued", "started", "completed", "cancelled", "discarded" or "refused"."""
        return _s(self.raw, "state")


class UnknownMessage(_Wire):
    """A JSON object we do not model (or that lacks a required field), kept unchanged in `raw`.

    Attributes:
        reason: why it was not modelled ("unknown type 'x'", "invalid user: no message").
    """

    __slots__ = ("reason",)
    type = "unknown"

    def __init__(self, raw: dict[str, Any], reason: str = "") -> None:
        super().__init__(raw)
        self.reason = reason


class InvalidLine:
    """A line that is not a JSON object (log noise, a truncated write, a JSON array).

    Attributes:
        text: the line as text (invalid UTF-8 replaced), cut to 1,000 characters.
        error: the decoder's message.
    """

    __slots__ = ("error", "text")
    type: ClassVar[str] = "invalid"
    session_id: ClassVar[None] = None

    def __init__(self, text: str, error: str) -> None:
        self.text = text
        self.error = error

    def __eq__(self, other: object) -> bool:
        return isinstance(other, InvalidLine) and (other.text, other.error) == (self.text, self.error)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"InvalidLine({self.text[:100]!r}, {self.error!r})"


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
    | ConversationReset
    | TranscriptMirror
    | CommandLifecycle
    | UnknownMessage
    | InvalidLine
)

# type -> (view class, required field, its JSON type)
_MODELS: dict[str, tuple[type[_Wire], str | None, type]] = {
    "stream_event": (StreamEvent, "event", dict),
    "assistant": (AssistantMessage, "message", dict),
    "user": (UserMessage, "message", dict),
    "system": (SystemMessage, None, dict),
    "result": (ResultMessage, None, dict),
    "control_request": (ControlRequest, "request", dict),
    "control_response": (ControlResponse, "response", dict),
    "control_cancel_request": (ControlCancelRequest, "request_id", str),
    "keep_alive": (KeepAlive, None, dict),
    "rate_limit_event": (RateLimitEvent, None, dict),
    "rate_limit": (RateLimitEvent, None, dict),
    "conversation_reset": (ConversationReset, None, dict),
    "transcript_mirror": (TranscriptMirror, "entries", list),
    "command_lifecycle": (CommandLifecycle, None, dict),
}


def parse_object(obj: Any) -> WireMessage:
    """Turn one decoded JSON value into a wire message; never raises.

    Args:
        obj: what :func:`decode_json` returned.

    Returns:
        A view of the message type named by ``obj["type"]``; :class:`UnknownMessage` when
        the type is unknown or a required field (`event`, `message`, `request`, ...) is
        missing or of the wrong JSON type; :class:`InvalidLine` when `obj` is not an object.
    """
    if type(obj) is not dict:
        return InvalidLine(text=json.dumps(obj)[:1000], error="not a JSON object")
    kind = obj.get("type")
    if kind == "stream_event" and type(obj.get("event")) is dict:  # most lines
        return StreamEvent(obj)
    entry = _MODELS.get(kind) if type(kind) is str else None
    if entry is None:
        return UnknownMessage(obj, f"unknown type {kind!r}")
    model, required, json_type = entry
    if required is not None and not isinstance(obj.get(required), json_type):
        return UnknownMessage(obj, f"invalid {kind}: no {json_type.__name__} {required!r}")
    if model is ControlRequest and not isinstance(obj.get("request_id"), str):
        return UnknownMessage(obj, "invalid control_request: no str 'request_id'")
    return model(obj)  # type: ignore[return-value]  # one of the WireMessage classes


def parse_line(line: bytes | str) -> WireMessage:
    """Parse one NDJSON line (without its newline); never raises.

    Args:
        line: UTF-8 bytes or text. Blank lines should be skipped by the caller.

    Returns:
        A wire message (see :func:`parse_object`), or :class:`InvalidLine` (its `text`
        cut to 1,000 characters) for anything that is not a JSON object.
    """
    try:
        obj = decode_json(line)
    except (ValueError, RecursionError) as exc:
        return _invalid(line, exc)
    if type(obj) is dict and obj.get("type") == "stream_event" and type(obj.get("event")) is dict:
        return StreamEvent(obj)  # most lines: what parse_object would return, one call sooner
    return parse_object(obj)


def _invalid(line: bytes | str, exc: BaseException) -> InvalidLine:
    text = line.decode("utf-8", "replace") if isinstance(line, bytes) else line
    return InvalidLine(text=text[:1000], error=str(exc)[:200])


# -- outgoing --------------------------------------------------------------------------
