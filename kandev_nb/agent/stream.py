"""The stream side of the adapter: reads of lines, and `stream_event` messages.

:class:`StreamRules` is the part of :class:`~kandev_nb.agent.adapter.Adapter` that sees
``--include-partial-messages`` traffic: :meth:`StreamRules.feed` takes the lines of one read
(parsed once, runs of text deltas merged into one event), and the `stream_event` rules
(text and thinking deltas, context-window figures from `message_start` / `message_delta`,
which blocks were streamed so the `assistant` line does not show them again).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from kandev_nb.agent import debug
from kandev_nb.agent import events as ev
from kandev_nb.agent.fastpath import NO_EVENT_DELTAS, fast_event
from kandev_nb.agent.usage import usage_total
from kandev_nb.wire import decode
from kandev_nb.wire.decode import DELTA_PREFIX
from kandev_nb.wire.protocol import WireMessage, parse_line, parse_object
from kandev_nb.wire.transport import LineTooLong

__all__ = ["StreamRules"]

_SILENT_EVENTS = frozenset({"content_block_stop", "message_stop", "ping"})
"""Stream events that make no event: only their session_id counts."""
_Chunk, _Reasoning = ev.MessageChunk, ev.Reasoning


_INLINE_EVENTS = frozenset({"content_block_start", "message_start", "message_delta"})
"""Stream events :meth:`StreamRules.feed` reads without a wire message (:meth:`StreamRules._stream_event`)."""


class StreamRules:
    """Base of :class:`~kandev_nb.agent.adapter.Adapter`: its stream-side rules.

    It reads and writes the adapter's state declared below; the adapter initialises it.
    """

    observer: debug.Observer | None
    session_id: str | None
    context_used: int
    _shown_text: bool
    _streamed: set[tuple[str | None, str, str]]
    _current_msg: dict[str | None, str]
    _msg_usage: dict[str, dict[str, Any]]

    def handle(self, msg: WireMessage) -> list[ev.AgentEvent]:
        raise NotImplementedError

    def _context_event(self) -> list[ev.AgentEvent]:
        raise NotImplementedError

    def feed(self, lines: Iterable[bytes | LineTooLong]) -> list[tuple[WireMessage | None, list[ev.AgentEvent]]]:
        """Parse and handle the lines of one read from the CLI, in order; never raises.

        Returns one ``(message, events)`` pair per line, with three exceptions:

        - a run of consecutive text (or thinking) deltas of one source becomes a single
          ``(None, [event])`` pair whose text is the run's texts joined (what arrived in one
          read is shown in one update). Only lines as the CLI writes them (compact JSON,
          :data:`~kandev_nb.wire.decode.DELTA_PREFIX`) are merged; others are read one by one;
        - stream events that make no event are left out (input_json and signature deltas,
          block and message starts and stops, pings, a `message_delta` with no new figures);
        - a `message_delta`'s ContextWindow comes back as ``(None, [event])``.

        Any stream event with a field of an unusual type goes through :meth:`handle` with its
        message, which reports it. Control messages and keep-alives come back with no
        events, for the caller to route. A line over the framer's limit is
        ``(None, [Unknown])``. With an :attr:`observer` set (the debug logs), every line goes
        through :meth:`handle`, so each raw message keeps its own events.

        The text a consumer sees is exactly what :meth:`handle` of each line gives.
        """
        out: list[tuple[WireMessage | None, list[ev.AgentEvent]]] = []
        if self.observer is not None:
            for line in lines:
                if isinstance(line, LineTooLong):
                    out.append((None, [self._too_long(line)]))
                else:
                    msg = parse_line(line)
                    out.append((msg, self.handle(msg)))
            return out
        run: list[str] = []  # texts of the open run of deltas, all of one (cls, sid, parent)
        cls: type[ev.MessageChunk | ev.Reasoning] | None = None
        sid: str | None = None
        parent: str | None = None
        loads, decode_delta = decode.fast_loads(), decode.delta_decoder()
        kind: type[ev.MessageChunk | ev.Reasoning] | None
        for line in lines:
            if isinstance(line, LineTooLong):
                if run:
                    out.append((None, [self._run_event(cls, run, sid, parent)]))  # type: ignore[arg-type]
                    run, cls = [], None
                out.append((None, [self._too_long(line)]))
                continue
            if line.startswith(DELTA_PREFIX):  # most lines: read into a typed StreamDelta
                try:
                    found = decode_delta(line)
                except (ValueError, RecursionError):  # not the usual shape (a repeated "type" key
                    pass  # too: json.loads keeps the last one): the full path below reads it
                else:
                    delta = found.event.delta
                    dtype = delta.type
                    if dtype == "text_delta":
                        kind, text = _Chunk, delta.text
                    elif dtype == "thinking_delta":
                        kind, text = _Reasoning, delta.thinking
                    elif dtype in NO_EVENT_DELTAS:
                        continue
                    else:
                        kind, text = None, None
                    if text is not None:
                        line_sid, line_parent = found.session_id or self.session_id, found.parent_tool_use_id
                        if kind is not cls or line_sid != sid or line_parent != parent:
                            if run:
                                out.append((None, [self._run_event(cls, run, sid, parent)]))  # type: ignore[arg-type]
                                run = []
                            cls, sid, parent = kind, line_sid, line_parent
                        if text:
                            run.append(text)
                        continue
            try:
                obj = loads(line)
            except (ValueError, RecursionError):  # msgspec refuses it, or nested too deep: parse_line reads it
                obj = None
            if type(obj) is dict and obj.get("type") == "stream_event":
                event = obj.get("event")
                etype = event.get("type") if type(event) is dict else None
                if etype in _SILENT_EVENTS:  # a run of deltas goes on across these
                    line_sid = obj.get("session_id")
                    if type(line_sid) is str and line_sid:
                        self.session_id = line_sid
                    continue
                line_parent = obj.get("parent_tool_use_id")
                if etype in _INLINE_EVENTS and (line_parent is None or type(line_parent) is str):
                    try:
                        events = self._stream_event(obj, line_parent)
                    except Exception:  # noqa: BLE001 - handle() below reports it
                        events = None
                    if events is not None:
                        if events:
                            if run:
                                out.append((None, [self._run_event(cls, run, sid, parent)]))  # type: ignore[arg-type]
                                run, cls = [], None
                            out.append((None, events))
                        continue
            if run:
                out.append((None, [self._run_event(cls, run, sid, parent)]))  # type: ignore[arg-type]
                run = []
            cls = None
            msg = parse_object(obj) if obj is not None else parse_line(line)
            out.append((msg, self.handle(msg)))
        if run:
            out.append((None, [self._run_event(cls, run, sid, parent)]))  # type: ignore[arg-type]
        return out

    def _run_event(
        self, cls: type[ev.MessageChunk | ev.Reasoning], texts: list[str], sid: str | None, parent: str | None
    ) -> ev.MessageChunk | ev.Reasoning:
        """The one event of a run of deltas (their texts joined), as :meth:`handle` makes it."""
        if parent is None and cls is _Chunk:
            self._shown_text = True
        return fast_event(cls, "".join(texts), sid, parent)

    def _too_long(self, line: LineTooLong) -> ev.AgentEvent:
        return ev.Unknown(
            raw={"size": line.size}, reason=f"line of {line.size} bytes over the limit", session_id=self.session_id
        )

    # -- stream_event -------------------------------------------------------------------

    def _fast_stream_event(self, raw: dict[str, Any]) -> list[ev.AgentEvent] | None:
        """The events of the commonest `stream_event` lines, or None for the full path.

        A text or thinking `content_block_delta` whose fields all have the usual JSON types
        (`text`/`thinking`, `session_id`, `parent_tool_use_id`: strings, the last two or
        null) becomes one event built without validation (:func:`~kandev_nb.agent.fastpath.fast_event`); other
        deltas, `content_block_stop`, `message_stop` and `ping` make none. Anything else,
        including a field of another type, returns None: :meth:`_stream_event` reads it.
        """
        event = raw["event"]
        kind = event.get("type")
        if kind == "content_block_delta":
            delta = event.get("delta")
            dtype = delta.get("type") if type(delta) is dict else None
            cls: type[ev.MessageChunk | ev.Reasoning] | None = None  # input_json, signature: no event
            text: Any = None
            if dtype == "text_delta":
                cls, text = ev.MessageChunk, delta.get("text")
            elif dtype == "thinking_delta":
                cls, text = ev.Reasoning, delta.get("thinking")
            if cls is None:
                return []
            parent = raw.get("parent_tool_use_id")
            sid = raw.get("session_id") or self.session_id
            if (
                type(text) is not str
                or not (parent is None or type(parent) is str)
                or not (sid is None or type(sid) is str)
            ):
                return None
            if not text:
                return []
            if parent is None and cls is ev.MessageChunk:
                self._shown_text = True
            return [fast_event(cls, text, sid, parent)]
        if kind in _SILENT_EVENTS:  # only the session_id counts
            sid = raw.get("session_id")
            if type(sid) is str and sid:
                self.session_id = sid
            return []
        return None

    def _stream_event(self, raw: dict[str, Any], parent: str | None) -> list[ev.AgentEvent]:
        """The events of a `stream_event` (`raw`, its `parent_tool_use_id` a str or None)
        that the fast path did not take: context-window figures, streamed-block marks."""
        event = raw["event"]
        kind = event.get("type")
        if kind == "content_block_delta":
            # What handle()'s fast path left: a delta with a field of an unusual type, or
            # another delta (input_json deltas are read whole from the assistant line; the
            # block was marked as streamed at its content_block_start).
            delta = event.get("delta")
            dtype = delta.get("type") if type(delta) is dict else None
            cls: type[ev.MessageChunk | ev.Reasoning]
            if dtype == "text_delta":
                cls, text = ev.MessageChunk, delta.get("text")
            elif dtype == "thinking_delta":
                cls, text = ev.Reasoning, delta.get("thinking")
            else:
                return []
            if text == "":
                return []
            parent = raw.get("parent_tool_use_id")  # as sent: validation reports a non-string
            # Validated: a `text` that is not a string (null, 0, false, {} included) fails and
            # handle() reports it; only then is the text marked as shown (else the result's
            # text would be held back for a delta nobody saw).
            event = cls(text=text, session_id=raw.get("session_id") or self.session_id, parent_tool_use_id=parent)
            if parent is None and cls is ev.MessageChunk:
                self._shown_text = True
            return [event]
        self._sid(raw)
        if kind == "content_block_start":
            block = event.get("content_block")
            btype = block.get("type") if isinstance(block, dict) else None
            if btype == "text" or btype == "thinking":
                self._streamed.add((parent, self._current_msg.get(parent, ""), btype))
            return []
        if kind == "message_start":
            message = event.get("message")
            if isinstance(message, dict) and isinstance(message.get("id"), str):
                self._current_msg[parent] = message["id"]
                if parent is None and isinstance(message.get("usage"), dict):
                    self._msg_usage[message["id"]] = dict(message["usage"])
            return []
        if kind == "message_delta" and parent is None:
            usage = event.get("usage")
            mid = self._current_msg.get(None)
            if isinstance(usage, dict) and mid is not None:
                merged = self._msg_usage.setdefault(mid, {})
                merged.update({k: v for k, v in usage.items() if v is not None})
                self.context_used = usage_total(merged)
                return self._context_event()
        return []

    def _sid(self, raw: dict[str, Any]) -> str | None:
        sid = raw.get("session_id")
        if isinstance(sid, str) and sid:
            self.session_id = sid
        return self.session_id

    def _was_streamed(self, parent: str | None, mid: str, kind: str) -> bool:
        return (parent, mid, kind) in self._streamed or (parent, "", kind) in self._streamed
