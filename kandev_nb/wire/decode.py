"""Decoding the CLI's JSON lines: msgspec first, the standard library for what it refuses.

Two decoders, both from msgspec:

- :func:`decode_json` (and the bare :func:`fast_loads` the reader uses) decodes any line to
  the value :func:`json.loads` gives; what msgspec refuses (``NaN``, ``Infinity``) falls
  through to the standard library, so results and errors are the same.
- :func:`delta_decoder` reads the commonest line of all, a `stream_event` carrying a
  `content_block_delta`, straight into a small typed :class:`StreamDelta`: the fields the
  adapter reads are checked in C and the rest (`uuid`, `index`, ...) is skipped unbuilt.
  It is only tried on lines that start with :data:`DELTA_PREFIX` (the CLI writes compact
  JSON with `type` first); a line of another shape, or with a field of an unusual type,
  raises ValueError and takes the full path, where nothing is lost.

``KANDEV_NB_JSON=stdlib`` makes both use the standard library's decoder (the benchmark's
"json" row; the typed view is then checked with ``msgspec.convert``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from json.decoder import JSONDecoder
from typing import Any, Literal

import msgspec

__all__ = [
    "DELTA_PREFIX",
    "ENV_JSON",
    "JSON_DECODER",
    "Delta",
    "StreamDelta",
    "decode_json",
    "delta_decoder",
    "fast_loads",
]

ENV_JSON = "KANDEV_NB_JSON"
"""Set to "stdlib" to decode with the standard library only."""

DELTA_PREFIX = b'{"type":"stream_event","event":{"type":"content_block_delta"'
"""How every `content_block_delta` line of the CLI starts (CLI 2.1.197 and 2.1.332, as recorded
in tests/transcripts); a line laid out otherwise is read one by one, not merged."""


class Delta(msgspec.Struct, frozen=True, gc=False):
    """`event.delta` of a `content_block_delta`: `type` ("text_delta", "thinking_delta",
    "input_json_delta", ...) and the text of the first two (None when absent)."""

    type: str
    text: str | None = None
    thinking: str | None = None


class _DeltaEvent(msgspec.Struct, frozen=True, gc=False):
    type: Literal["content_block_delta"]
    delta: Delta


class StreamDelta(msgspec.Struct, frozen=True, gc=False):
    """A `stream_event` line whose `event` is a `content_block_delta`: ``event.delta``,
    `session_id` and `parent_tool_use_id` (strings or None; any other JSON type fails).
    `type` and `event.type` are checked too (in C, as literals): a line that repeats a key
    takes its last value (as :func:`json.loads` does), so a later ``"type"`` may make it
    another message, and then decoding fails."""

    type: Literal["stream_event"]
    event: _DeltaEvent
    session_id: str | None = None
    parent_tool_use_id: str | None = None


_scan_once = JSONDecoder().scan_once  # type: ignore[attr-defined]  # the C scanner


def _decode_stdlib(line: bytes | str) -> Any:
    """:func:`json.loads`, without what it spends most of its time on for a short line
    (encoding detection, two whitespace regexes): a line that starts and ends with its
    value goes straight to the C scanner; anything else takes ``json.loads`` itself."""
    text = line.decode("utf-8") if isinstance(line, bytes) else line
    try:
        obj, end = _scan_once(text, 0)
    except StopIteration:
        return json.loads(text)
    if end != len(text) and text[end:].strip():
        return json.loads(text)  # raises "Extra data" just like json.loads
    return obj


def _stdlib_delta(line: bytes | str) -> StreamDelta:
    try:
        return msgspec.convert(_decode_stdlib(line), StreamDelta)
    except msgspec.ValidationError as exc:
        raise ValueError(str(exc)) from exc


_STDLIB = os.environ.get(ENV_JSON, "").lower() == "stdlib"
_fast_loads: Callable[[bytes | str], Any] | None = None if _STDLIB else msgspec.json.Decoder().decode
_delta_decode: Callable[[bytes], StreamDelta] = _stdlib_delta if _STDLIB else msgspec.json.Decoder(StreamDelta).decode
JSON_DECODER = "json" if _STDLIB else "msgspec"
"""Which decoder :func:`decode_json` tries first: "msgspec", or "json" (``KANDEV_NB_JSON=stdlib``)."""


def decode_json(line: bytes | str) -> Any:
    """Decode one JSON text to the value :func:`json.loads` gives.

    Raises:
        ValueError: not JSON (:class:`json.JSONDecodeError`, or :class:`UnicodeDecodeError`).
        RecursionError: nested too deeply.
    """
    if _fast_loads is not None:
        try:
            return _fast_loads(line)
        except ValueError:  # msgspec.DecodeError is one: NaN, Infinity, or not JSON
            pass
    return _decode_stdlib(line)


def fast_loads() -> Callable[[bytes | str], Any]:
    """The decoder to try first (msgspec's), else :func:`decode_json`. It raises ValueError
    on what :func:`decode_json` may still read (NaN, Infinity)."""
    return _fast_loads or decode_json


def delta_decoder() -> Callable[[bytes], StreamDelta]:
    """``decode(line) -> StreamDelta`` for a line that starts with :data:`DELTA_PREFIX`.

    Raises ValueError (``msgspec.DecodeError``) when the line is not JSON, lacks
    ``event.delta.type``, or has a field of another JSON type than :class:`StreamDelta`'s.
    """
    return _delta_decode
