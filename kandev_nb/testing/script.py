"""What the scripted model answers: replies made of text, thinking and tool_use blocks, or HTTP errors.

A script is a list of :data:`ScriptEntry` (a :class:`Reply` or an :class:`HttpError`), consumed
in order by :class:`~kandev_nb.testing.model_server.ScriptedModelServer`, one per main request.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, TypeAlias

__all__ = [
    "DEFAULT_MODEL",
    "EXHAUSTED_TEXT",
    "SIDE_TEXT",
    "HttpError",
    "Reply",
    "TextBlock",
    "ThinkingBlock",
    "ToolUseBlock",
    "Usage",
    "http_error",
    "text",
    "thinking",
    "tool_use",
]

EXHAUSTED_TEXT = "(scripted model: script exhausted)"
SIDE_TEXT = "(scripted model: side request)"
DEFAULT_MODEL = "claude-scripted"

_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}

# --- script vocabulary ----------------------------------------------------------------


@dataclass(frozen=True)
class Usage:
    """Token counts reported for one API response (all in tokens).

    ``input_tokens`` and the cache fields go in ``message_start``; ``output_tokens`` in
    ``message_delta``, as the real API does. The CLI's ``result.usage`` sums these over
    every request of a turn.
    """

    input_tokens: int = 100
    output_tokens: int = 20
    cache_read_input_tokens: int = 0
    cache_creation_input_tokens: int = 0


def _chunks(s: str, size: int) -> list[str]:
    size = max(1, size)
    return [s[i : i + size] for i in range(0, len(s), size)] or [""]


@dataclass(frozen=True)
class TextBlock:
    """A text block, streamed as ``text_delta`` chunks of ``chunk_size`` characters.

    ``delay`` is the pause between two deltas, in seconds.
    """

    text: str
    chunk_size: int = 12
    delay: float = 0.0

    def content(self, tool_id: str | None) -> dict[str, Any]:
        return {"type": "text", "text": self.text}

    def start(self, tool_id: str | None) -> dict[str, Any]:
        return {"type": "text", "text": ""}

    def deltas(self) -> list[dict[str, Any]]:
        return [{"type": "text_delta", "text": c} for c in _chunks(self.text, self.chunk_size)]


@dataclass(frozen=True)
class ThinkingBlock:
    """A thinking block: ``thinking_delta`` chunks, then one ``signature_delta``.

    ``delay`` is the pause between two deltas, in seconds.
    """

    thinking: str
    chunk_size: int = 12
    delay: float = 0.0
    signature: str = "c2NyaXB0ZWQtc2lnbmF0dXJl"

    def content(self, tool_id: str | None) -> dict[str, Any]:
        return {"type": "thinking", "thinking": self.thinking, "signature": self.signature}

    def start(self, tool_id: str | None) -> dict[str, Any]:
        return {"type": "thinking", "thinking": "", "signature": ""}

    def deltas(self) -> list[dict[str, Any]]:
        chunks = _chunks(self.thinking, self.chunk_size)
        return [{"type": "thinking_delta", "thinking": c} for c in chunks] + [
            {"type": "signature_delta", "signature": self.signature}
        ]


@dataclass(frozen=True)
class ToolUseBlock:
    """A tool call; its input is streamed as ``input_json_delta`` fragments of JSON text.

    ``id=None`` lets the server number it (``toolu_0001``, ``toolu_0002``, ...).
    """

    name: str
    input: Mapping[str, Any]
    id: str | None = None
    chunk_size: int = 16
    delay: float = 0.0

    def content(self, tool_id: str | None) -> dict[str, Any]:
        return {"type": "tool_use", "id": tool_id, "name": self.name, "input": dict(self.input)}

    def start(self, tool_id: str | None) -> dict[str, Any]:
        return {"type": "tool_use", "id": tool_id, "name": self.name, "input": {}}

    def deltas(self) -> list[dict[str, Any]]:
        payload = json.dumps(dict(self.input), separators=(",", ":"))
        return [{"type": "input_json_delta", "partial_json": c} for c in _chunks(payload, self.chunk_size)]


Block: TypeAlias = TextBlock | ThinkingBlock | ToolUseBlock


def text(s: str, *, chunk_size: int = 12, delay: float = 0.0) -> TextBlock:
    """A text block streamed in ``chunk_size``-character deltas, ``delay`` seconds apart."""
    return TextBlock(s, chunk_size=chunk_size, delay=delay)


def thinking(s: str, *, chunk_size: int = 12, delay: float = 0.0) -> ThinkingBlock:
    """A thinking block streamed in ``chunk_size``-character deltas, ``delay`` seconds apart."""
    return ThinkingBlock(s, chunk_size=chunk_size, delay=delay)


def tool_use(name: str, input: Mapping[str, Any], *, id: str | None = None, chunk_size: int = 16) -> ToolUseBlock:
    """A ``tool_use`` block: the model calls tool ``name`` with ``input``.

    Args:
        name: Tool name as the CLI knows it (``"Write"``, ``"Bash"``, ...).
        input: The tool's arguments, a JSON-serialisable object.
        id: The ``tool_use`` id; ``None`` numbers it per server (``toolu_0001``, ...).
        chunk_size: Characters of serialised JSON per ``input_json_delta``.
    """
    return ToolUseBlock(name, dict(input), id=id, chunk_size=chunk_size)


class Reply:
    """One scripted API response: content blocks and the numbers around them.

    Args:
        *blocks: Content blocks in order (:func:`text`, :func:`thinking`, :func:`tool_use`).
        usage: Token counts to report; default 100 input and 20 output tokens.
        stop_reason: ``None`` means ``"tool_use"`` if any block is a tool call, else
            ``"end_turn"``.
        model: Model name to report; ``None`` echoes the request's ``model``.
        delay_first_byte: Seconds to wait before sending the response headers.
    """

    def __init__(
        self,
        *blocks: Block,
        usage: Usage | None = None,
        stop_reason: str | None = None,
        model: str | None = None,
        delay_first_byte: float = 0.0,
    ) -> None:
        self.blocks: tuple[Block, ...] = blocks
        self.usage: Usage = usage if usage is not None else Usage()
        calls_tool = any(isinstance(b, ToolUseBlock) for b in blocks)
        self.stop_reason: str = stop_reason or ("tool_use" if calls_tool else "end_turn")
        self.model = model
        self.delay_first_byte = delay_first_byte

    def __repr__(self) -> str:
        return f"Reply({', '.join(map(repr, self.blocks))}, stop_reason={self.stop_reason!r})"


@dataclass(frozen=True)
class HttpError:
    """A scripted HTTP error answer (build it with :func:`http_error`)."""

    status: int
    message: str
    error_type: str
    headers: Mapping[str, str] = field(default_factory=dict)

    def body(self) -> dict[str, Any]:
        """``{"type": "error", "error": {"type": error_type, "message": message}}``."""
        return {"type": "error", "error": {"type": self.error_type, "message": self.message}}


def http_error(
    status: int,
    message: str,
    *,
    error_type: str | None = None,
    headers: Mapping[str, str] | None = None,
) -> HttpError:
    """An HTTP error answer in the Anthropic shape, e.g. ``http_error(529, "Overloaded")``.

    The CLI retries: 429, 5xx and 529 up to 10 times with backoff (about 0.5 s, 1 s,
    2 s, ..., each announced by a ``system/api_retry`` line), and 2.1.332 even resends a
    400 up to 5 times with fewer beta headers. Script one entry per attempt, answer from a
    callable, or send ``headers={"x-should-retry": "false"}`` (honoured by 2.1.332, not by
    2.1.197).

    Args:
        status: HTTP status code.
        message: ``error.message``.
        error_type: ``error.type``; by default derived from the status
            (400 ``invalid_request_error``, 429 ``rate_limit_error``, 529
            ``overloaded_error``, other 5xx ``api_error``, ...).
        headers: Extra response headers (``retry-after`` in seconds, ``x-should-retry``).
    """
    fallback = "api_error" if status >= 500 else "invalid_request_error"
    kind = error_type or _ERROR_TYPES.get(status, fallback)
    return HttpError(status, message, kind, dict(headers or {}))
