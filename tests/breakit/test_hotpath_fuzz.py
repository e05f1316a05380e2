"""Break-it: Adapter.feed (one read, deltas merged, typed fast path) against handle() line by line.

Hostile lines: compact deltas (the typed msgspec path) with odd unicode and lone surrogate
escapes, fields of the wrong JSON type, duplicate keys, `type` not first, CRLF, NaN, lines
over the framer's limit between deltas, subagent parents, text/thinking alternation.
"""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kandev_nb.agent import events as ev
from kandev_nb.agent.adapter import Adapter
from kandev_nb.wire.decode import DELTA_PREFIX
from kandev_nb.wire.protocol import parse_line
from kandev_nb.wire.transport import LineTooLong

_ODD = st.sampled_from([None, 0, False, True, {}, [], 5, 1.5, "", ["a"], {"a": 1}])
_SID = st.sampled_from([None, "s", "t", ""])
_PARENT = st.sampled_from([None, "toolu_1", "toolu_2"])
_TEXT = st.text(st.characters(codec=None), max_size=6) | st.sampled_from(["\ud800", "\udc00x", "\x00", "\u2028", "é"])


def _dump(obj: Any, compact: bool) -> bytes:
    if compact:
        return json.dumps(obj, separators=(",", ":")).encode()
    return json.dumps(obj).encode()


@st.composite
def _delta(draw: st.DrawFn) -> bytes:
    kind = draw(st.sampled_from(["text_delta", "thinking_delta", "input_json_delta", "signature_delta", "odd_delta"]))
    key = {"text_delta": "text", "thinking_delta": "thinking"}.get(kind, "partial_json")
    value = draw(_TEXT | _ODD) if draw(st.integers(0, 4)) == 0 else draw(_TEXT)
    delta: dict[str, Any] = {"type": kind}
    if draw(st.integers(0, 9)):
        delta[key] = value
    line: dict[str, Any] = {
        "type": "stream_event",
        "event": {"type": "content_block_delta", "index": 0, "delta": delta},
    }
    sid = draw(_SID | _ODD) if draw(st.integers(0, 6)) == 0 else draw(_SID)
    if sid is not None or draw(st.booleans()):
        line["session_id"] = sid
    parent = draw(_PARENT | _ODD) if draw(st.integers(0, 6)) == 0 else draw(_PARENT)
    if parent is not None or draw(st.booleans()):
        line["parent_tool_use_id"] = parent
    out = _dump(line, compact=draw(st.integers(0, 5)) > 0)
    tail = draw(st.sampled_from([b"", b"", b"", b"\r", b" ", b"x", b"{}"]))
    return out + tail


_OTHER = st.sampled_from(
    [
        b'{"type":"stream_event","event":{"type":"message_stop"},"session_id":"s2"}',
        b'{"type":"stream_event","event":{"type":"content_block_stop","index":0}}',
        b'{"type":"stream_event","event":{"type":"ping"},"session_id":5}',
        b'{"type":"stream_event","event":{"type":"message_start","message":{"id":"m1","usage":{"input_tokens":3}}}}',
        b'{"type":"stream_event","event":{"type":"message_start","message":{"id":"m2","usage":{"input_tokens":NaN}}}}',
        b'{"type":"stream_event","event":{"type":"message_delta","usage":{"output_tokens":7}}}',
        b'{"type":"stream_event","event":{"type":"message_delta","usage":{"output_tokens":"x"}}}',
        b'{"type":"stream_event","event":{"type":"message_delta","usage":{"output_tokens":1e999}}}',
        b'{"type":"stream_event","event":{"type":"content_block_start","content_block":{"type":"text"}}}',
        (
            b'{"type":"stream_event","event":{"type":"content_block_start","content_block":{"type":"thinking"}},'
            b'"parent_tool_use_id":"toolu_1"}'
        ),
        b'{"type":"stream_event","event":{"type":"message_start","message":{"id":"m3"}},"parent_tool_use_id":7}',
        b'{"type":"stream_event","event":7}',
        b'{"type":"stream_event"}',
        b'{"type":"assistant","message":{"id":"m1","model":"m","content":[{"type":"text","text":"whole"}]}}',
        b'{"type":"result","subtype":"success","result":"final","session_id":"s"}',
        b'{"type":"system","subtype":"init","session_id":"s3","model":"m","tools":[]}',
        b"not json",
        b"[1,2]",
        b'{"type":"nope"}',
        b"\xff\xfe",
        b'{"a":NaN}',
        b"{" * 2000,
        (
            b'{"type":"stream_event","event":{"type":"content_block_delta","delta":{"type":"text_delta","text":"a"}},'
            b'"type":"user"}'
        ),
        (
            b'{"type":"stream_event","event":{"type":"content_block_delta","delta":{"type":"text_delta","text":"b"},'
            b'"type":"message_stop"}}'
        ),
        (
            b'{"type":"stream_event","event":{"type":"content_block_delta","delta":{"type":"text_delta","text":"c"}},'
            b'"type":"assistant","message":{"id":"m9","content":[{"type":"text","text":"C"}]}}'
        ),
    ]
)

_LINE = _delta() | _OTHER | st.builds(LineTooLong, st.integers(1, 10**9))


def _merged(events: list[ev.AgentEvent]) -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []
    for e in events:
        dumped = e.model_dump(mode="json")
        if out and isinstance(e, ev.MessageChunk | ev.Reasoning) and out[-1][0] == type(e).__name__:
            last = out[-1][1]
            if (last["session_id"], last["parent_tool_use_id"]) == (
                dumped["session_id"],
                dumped["parent_tool_use_id"],
            ):
                last["text"] += dumped["text"]
                continue
        out.append((type(e).__name__, dumped))
    return out


def _state(a: Adapter) -> tuple[Any, ...]:
    return (
        a.session_id,
        a._shown_text,
        a.context_used,
        a._last_context,
        dict(a._current_msg),
        sorted(map(repr, a._streamed)),
        repr(a._msg_usage),
    )


def _one_by_one(lines: list[bytes | LineTooLong]) -> tuple[list[ev.AgentEvent], Adapter]:
    adapter = Adapter()
    adapter.observer = None
    out: list[ev.AgentEvent] = []
    for line in lines:
        if isinstance(line, LineTooLong):
            out.append(adapter._too_long(line))
        else:
            out += adapter.handle(parse_line(line))
    return out, adapter


def _fed(reads: list[list[bytes | LineTooLong]]) -> tuple[list[ev.AgentEvent], Adapter]:
    adapter = Adapter()
    adapter.observer = None
    out: list[ev.AgentEvent] = []
    for read in reads:
        for _msg, evs in adapter.feed(read):
            out += evs
    return out, adapter


@settings(
    max_examples=int(__import__("os").environ.get("BREAK_EXAMPLES", "400")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(st.lists(_LINE, max_size=14), st.lists(st.integers(0, 14), max_size=4))
def test_feed_gives_what_handle_gives_line_by_line(lines: list[bytes | LineTooLong], cuts: list[int]) -> None:
    bounds = [0, *sorted(c % (len(lines) + 1) for c in cuts), len(lines)]
    reads = [lines[a:b] for a, b in itertools.pairwise(bounds)]
    expected, one = _one_by_one(lines)
    got, fed = _fed(reads)
    assert _merged(got) == _merged(expected)
    assert _state(fed) == _state(one)


def test_the_generated_deltas_reach_the_typed_path() -> None:
    line = (
        b'{"type":"stream_event","event":{"type":"content_block_delta",'
        b'"index":0,"delta":{"type":"text_delta","text":"a"}}}'
    )
    assert line.startswith(DELTA_PREFIX)


_DEEP = 100_000


def test_feed_does_not_raise_on_a_deeply_nested_line() -> None:
    """msgspec raises RecursionError (not ValueError) on deep nesting; feed() let it out, which
    stopped the session's reader ("kandev-nb reader failed")."""
    deep_object = b'{"a":' * _DEEP + b"1" + b"}" * _DEEP
    deep_delta = DELTA_PREFIX + b',"delta":{"type":"text_delta","text":"a","x":' + b"[" * _DEEP + b"]" * _DEEP + b"}}}"
    after = DELTA_PREFIX + b',"delta":{"type":"text_delta","text":"next"}}}'
    for deep in (deep_object, deep_delta):
        adapter = Adapter()
        adapter.observer = None
        out = adapter.feed([deep, after])
        assert [type(e).__name__ for _, evs in out for e in evs] == ["Unknown", "MessageChunk"]
        assert out[-1][1][0].text == "next"  # type: ignore[union-attr]
        expected, _ = _one_by_one([deep, after])
        assert _merged([e for _, evs in out for e in evs]) == _merged(expected)


def test_a_repeated_type_key_is_read_as_json_loads_reads_it() -> None:
    """A line that starts like a delta but repeats `type` (json.loads keeps the last value):
    feed() read it as a delta, handle() as the message the last `type` names."""
    lines = [
        DELTA_PREFIX + b',"delta":{"type":"text_delta","text":"a"}},"type":"user"}',
        DELTA_PREFIX + b',"delta":{"type":"text_delta","text":"b"},"type":"message_stop"}}',
        DELTA_PREFIX + b',"delta":{"type":"text_delta","text":"c"}},"type":"assistant",'
        b'"message":{"id":"m9","content":[{"type":"text","text":"C"}]}}',
    ]
    for line in lines:
        expected, one = _one_by_one([line])
        got, fed = _fed([[line]])
        assert _merged(got) == _merged(expected)
        assert _state(fed) == _state(one)


_RESULT = b'{"type":"result","subtype":"success","result":"final answer","session_id":"s"}'


@pytest.mark.parametrize(
    "bad",
    [
        DELTA_PREFIX + b',"delta":{"type":"text_delta","text":5}}}',
        DELTA_PREFIX + b',"delta":{"type":"text_delta","text":"x"}},"session_id":5}',
        DELTA_PREFIX + b',"delta":{"type":"text_delta","text":"x"}},"parent_tool_use_id":7}',
    ],
)
def test_a_reported_bad_delta_does_not_hide_the_results_text(bad: bytes) -> None:
    """A text delta that fails validation (reported as Unknown) marked the turn's text as
    shown, so `result.result` was held back: the turn showed no answer at all."""
    for feed in (False, True):
        events = _fed([[bad, _RESULT]])[0] if feed else _one_by_one([bad, _RESULT])[0]
        assert isinstance(events[0], ev.Unknown)
        assert [e.text for e in events if isinstance(e, ev.MessageChunk)] == ["final answer"]


@pytest.mark.parametrize("value", [b"0", b"false", b"{}", b"[]", b"null", b"0.0"])
def test_a_delta_text_of_a_falsy_wrong_type_is_reported(value: bytes) -> None:
    """`text` 5 or ["a"] was reported as Unknown, but 0, false, {}, [], null dropped silently."""
    line = DELTA_PREFIX + b',"delta":{"type":"text_delta","text":' + value + b"}}}"
    for feed in (False, True):
        events = _fed([[line]])[0] if feed else _one_by_one([line])[0]
        assert [type(e).__name__ for e in events] == ["Unknown"]


@settings(
    max_examples=int(__import__("os").environ.get("BREAK_EXAMPLES", "200")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(
    st.lists(_delta() | _OTHER, max_size=12),
    st.lists(st.integers(0, 1 << 16), max_size=6),
    st.integers(16, 400),
)
def test_feed_through_the_framer_with_reads_cut_anywhere(lines: list[bytes], cuts: list[int], limit: int) -> None:
    """Hostile lines written as the CLI writes them (one per "\\n"), read in pieces cut at any
    byte, through a LineFramer whose limit turns some into LineTooLong: what feed() shows is
    what handle() shows for the framer's lines one by one. (Whether a line is over the limit
    depends on the reads: one that arrives whole in one read is never buffered.)"""
    from kandev_nb.wire.transport import LineFramer

    data = b"".join(line + b"\n" for line in lines)
    bounds = [0, *sorted(c % (len(data) + 1) for c in cuts), len(data)]
    framer = LineFramer(limit)
    reads = [framer.push(data[a:b]) for a, b in itertools.pairwise(bounds)] + [framer.flush()]
    expected, one = _one_by_one([line for read in reads for line in read])
    got, fed = _fed(reads)
    assert _merged(got) == _merged(expected)
    assert _state(fed) == _state(one)
