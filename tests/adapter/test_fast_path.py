"""The delta fast path (Adapter._fast_stream_event) gives exactly what the full path gives.

Every recorded transcript is fed twice, once as shipped and once with the fast path turned
off (it then always answers "take the full path"); the events must be equal field by field,
including which fields were set. Deltas with a field of an unusual JSON type must still
reach the full path and be reported, as before.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kandev_nb.agent import events as ev
from kandev_nb.agent import fastpath
from kandev_nb.agent.adapter import Adapter
from kandev_nb.agent.tools import ShellExec
from kandev_nb.wire.decode import DELTA_PREFIX
from kandev_nb.wire.protocol import parse_line
from kandev_nb.wire.recorder import load_transcript, out_lines

ROOT = Path(__file__).parents[1] / "transcripts"
TRANSCRIPTS = sorted(ROOT.glob("*/*.jsonl"))


def _events(lines: list[bytes], fast: bool, monkeypatch: pytest.MonkeyPatch) -> list[ev.AgentEvent]:
    with monkeypatch.context() as patch:
        if not fast:
            patch.setattr(Adapter, "_fast_stream_event", lambda self, raw: None)
        adapter = Adapter()
        return [e for line in lines for e in adapter.handle(parse_line(line))]


def _exact(events: list[ev.AgentEvent]) -> list[tuple[str, Any, Any]]:
    return [(type(e).__name__, e.model_dump(mode="json"), sorted(e.model_fields_set)) for e in events]


@pytest.mark.parametrize("path", TRANSCRIPTS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_fast_path_events_equal_the_full_path(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    lines = list(out_lines(load_transcript(path)))
    fast, full = _events(lines, True, monkeypatch), _events(lines, False, monkeypatch)
    assert _exact(fast) == _exact(full)
    assert fast == full


def test_the_recordings_have_text_deltas_so_the_fast_path_ran(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[bool] = []
    original = Adapter._fast_stream_event

    def counting(self: Adapter, raw: dict[str, Any]) -> list[ev.AgentEvent] | None:
        out = original(self, raw)
        calls.append(bool(out))
        return out

    monkeypatch.setattr(Adapter, "_fast_stream_event", counting)
    adapter = Adapter()
    for line in out_lines(load_transcript(ROOT / "2.1.332" / "text.jsonl")):
        adapter.handle(parse_line(line))
    assert sum(calls) > 5  # deltas answered by the fast path


def test_built_events_are_the_validated_ones() -> None:
    assert fastpath._BUILT_OK  # pydantic's internals as expected: events are built, not validated
    assert fastpath.trusted(ev.ToolUpdate) is not ev.ToolUpdate
    for cls in (ev.MessageChunk, ev.Reasoning):
        built = fastpath.fast_event(cls, "hé", "sess", "toolu_1")
        valid = cls(text="hé", session_id="sess", parent_tool_use_id="toolu_1")
        assert built == valid and hash(built) == hash(valid) and repr(built) == repr(valid)
        assert built.model_fields_set == valid.model_fields_set and built.model_dump_json() == valid.model_dump_json()
        assert built.model_copy(update={"text": "x"}).text == "x" and built.text == "hé"
        with pytest.raises(Exception, match="frozen"):
            built.text = "changed"  # type: ignore[misc]
    shell = ShellExec(command="ls")
    call = fastpath.trusted(ev.ToolCall)(tool_call_id="t", tool_name="Bash", title="ls", normalized=shell)
    other = fastpath.trusted(ev.ToolCall)(tool_call_id="u", tool_name="Bash", title="ls", normalized=shell)
    assert call.input == {} and call.input is not other.input  # a default factory runs per event


@pytest.mark.parametrize("path", TRANSCRIPTS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_trusted_events_equal_validated_ones(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every event of every transcript, built (the default) and validated (VALIDATE), is the
    same: class, values in field order, fields-set, JSON."""
    lines = list(out_lines(load_transcript(path)))

    def events(validate: bool) -> list[tuple[str, Any, Any, Any]]:
        with monkeypatch.context() as patch:
            patch.setattr(fastpath, "VALIDATE", validate)
            adapter = Adapter()
            adapter.observer = None
            found = [e for _, evs in adapter.feed(lines) for e in evs]
        return [
            (type(e).__name__, list(e.__dict__.items()), sorted(e.model_fields_set), e.model_dump_json()) for e in found
        ]

    built, validated = events(False), events(True)
    assert built and built == validated


def _delta(**fields: Any) -> bytes:
    delta = {"type": "text_delta", "text": "hi"}
    line: dict[str, Any] = {
        "type": "stream_event",
        "session_id": "s",
        "parent_tool_use_id": None,
        "event": {"type": "content_block_delta", "index": 0, "delta": delta},
    }
    for key, value in fields.items():
        (delta if key == "text" else line)[key] = value
    return json.dumps(line).encode()


@pytest.mark.parametrize("fields", [{"text": 5}, {"text": ["a"]}, {"parent_tool_use_id": 7}, {"session_id": {"a": 1}}])
def test_a_delta_with_an_unusual_field_takes_the_full_path_and_is_reported(fields: dict[str, Any]) -> None:
    adapter = Adapter()
    events = adapter.handle(parse_line(_delta(**fields)))
    assert len(events) == 1 and isinstance(events[0], ev.Unknown) and "adapter error" in events[0].reason
    after = adapter.handle(parse_line(_delta()))  # and the next delta is fine
    assert after == [ev.MessageChunk(text="hi", session_id="s")]


def test_usual_deltas_and_silent_events() -> None:
    adapter = Adapter()
    assert adapter.handle(parse_line(_delta(text=""))) == []
    assert adapter.handle(parse_line(_delta(parent_tool_use_id="toolu_9"))) == [
        ev.MessageChunk(text="hi", session_id="s", parent_tool_use_id="toolu_9")
    ]
    stop = {"type": "stream_event", "session_id": "later", "event": {"type": "message_stop"}}
    assert adapter.handle(parse_line(json.dumps(stop))) == [] and adapter.session_id == "later"
    thinking = {
        "type": "stream_event",
        "event": {"type": "content_block_delta", "delta": {"type": "thinking_delta", "thinking": "hmm"}},
    }
    assert adapter.handle(parse_line(json.dumps(thinking))) == [ev.Reasoning(text="hmm", session_id="later")]


class _ReferenceFramer:
    """LineFramer.push as it was before it split with bytes.split (find loop), to compare."""

    def __init__(self, max_line_bytes: int) -> None:
        self.max_line_bytes, self._buf, self._skipping = max_line_bytes, bytearray(), 0

    def push(self, chunk: bytes) -> list[Any]:
        from kandev_nb.wire.transport import LineTooLong

        out: list[Any] = []
        start = 0
        while (end := chunk.find(b"\n", start)) >= 0:
            if self._skipping:
                out.append(LineTooLong(self._skipping + end - start))
                self._skipping = 0
            elif self._buf:
                self._buf += chunk[start:end]
                line = bytes(self._buf)
                self._buf.clear()
                if line.strip():
                    out.append(line)
            elif end > start and chunk[start:end].strip():
                out.append(chunk[start:end])
            start = end + 1
        rest = len(chunk) - start
        if rest:
            if self._skipping:
                self._skipping += rest
            elif len(self._buf) + rest > self.max_line_bytes:
                self._skipping = len(self._buf) + rest
                self._buf.clear()
            else:
                self._buf += chunk[start:]
        return out


@given(
    st.lists(st.binary(max_size=40).map(lambda b: b.replace(b"\r", b"\n")), max_size=30),
    st.integers(min_value=1, max_value=50),
)
def test_the_framer_splits_as_before(chunks: list[bytes], limit: int) -> None:
    from kandev_nb.wire.transport import LineFramer

    new, old = LineFramer(limit), _ReferenceFramer(limit)
    for chunk in chunks:
        assert new.push(chunk) == old.push(chunk)
    assert new._buf == old._buf and new._skipping == old._skipping


# -- Adapter.feed: one read at a time, runs of deltas merged -------------------------------


def _merged(events: list[ev.AgentEvent]) -> list[tuple[str, Any]]:
    """Events with consecutive text (thinking) chunks of one source joined, as JSON."""
    out: list[tuple[str, Any]] = []
    for e in events:
        dumped = e.model_dump(mode="json")
        if out and isinstance(e, ev.MessageChunk | ev.Reasoning) and out[-1][0] == type(e).__name__:
            last = out[-1][1]
            if (last["session_id"], last["parent_tool_use_id"]) == (dumped["session_id"], dumped["parent_tool_use_id"]):
                last["text"] += dumped["text"]
                continue
        out.append((type(e).__name__, dumped))
    return out


def _fed(data: bytes, cuts: list[int]) -> tuple[list[ev.AgentEvent], list[str]]:
    from kandev_nb.wire.transport import LineFramer

    adapter, framer = Adapter(observer=lambda m, e: None), LineFramer()
    adapter.observer = None
    events: list[ev.AgentEvent] = []
    routed: list[str] = []
    bounds = [0, *sorted(cuts), len(data)]
    reads = [data[a:b] for a, b in itertools.pairwise(bounds)]
    for lines in [*(framer.push(r) for r in reads), framer.flush()]:
        for msg, evs in adapter.feed(lines):
            events += evs
            if msg is not None and msg.type.startswith("control"):
                routed.append(msg.raw.get("request_id") or msg.raw.get("response", {}).get("request_id", ""))
    return events, routed


@pytest.mark.parametrize("path", TRANSCRIPTS, ids=lambda p: f"{p.parent.name}/{p.stem}")
@given(cuts=st.lists(st.integers(min_value=0, max_value=1 << 20), max_size=12))
def test_feed_gives_what_handle_gives_for_any_reads(path: Path, cuts: list[int]) -> None:
    lines = list(out_lines(load_transcript(path)))
    data = b"".join(line + b"\n" for line in lines)
    one_by_one = Adapter()
    one_by_one.observer = None
    expected = [e for line in lines for e in one_by_one.handle(parse_line(line))]
    events, routed = _fed(data, [c % (len(data) + 1) for c in cuts])
    assert _merged(events) == _merged(expected)
    controls = [parse_line(line) for line in lines]
    assert routed == [
        m.raw.get("request_id") or m.raw.get("response", {}).get("request_id", "")
        for m in controls
        if m.type.startswith("control")
    ]


def _compact_delta(text: Any, **fields: Any) -> bytes:
    """A text delta line as the CLI writes it: compact JSON, `type` first."""
    line = {
        "type": "stream_event",
        "event": {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}},
        "session_id": "s",
        "parent_tool_use_id": None,
        "uuid": "u",
        **fields,
    }
    return json.dumps(line, separators=(",", ":"), ensure_ascii=False).encode()


def test_feed_merges_a_run_of_deltas_into_one_event() -> None:
    lines = [_compact_delta(t) for t in ["Hel", "lo, ", "wörld"]]
    assert all(line.startswith(DELTA_PREFIX) for line in lines)  # the typed path reads them
    adapter = Adapter()
    adapter.observer = None
    out = adapter.feed(lines)
    assert [(m, [e.text for e in evs]) for m, evs in out] == [(None, ["Hello, wörld"])]  # type: ignore[attr-defined]


def test_feed_reads_deltas_of_another_layout_one_by_one_with_the_same_text() -> None:
    spaced = [json.dumps(json.loads(_compact_delta(t))).encode() for t in ["Hel", "lo"]]
    adapter = Adapter()
    adapter.observer = None
    out = adapter.feed(spaced)
    assert [[e.text for e in evs] for _, evs in out] == [["Hel"], ["lo"]]  # type: ignore[attr-defined]


@pytest.mark.parametrize("fields", [{"text": 5}, {"text": ["a"]}, {"parent_tool_use_id": 7}, {"session_id": {"a": 1}}])
def test_feed_reports_a_compact_delta_with_an_unusual_field_and_goes_on(fields: dict[str, Any]) -> None:
    text = fields.pop("text", "hi")
    adapter = Adapter()
    adapter.observer = None
    out = adapter.feed([_compact_delta("a"), _compact_delta(text, **fields), _compact_delta("b")])
    events = [e for _, evs in out for e in evs]
    assert [type(e).__name__ for e in events] == ["MessageChunk", "Unknown", "MessageChunk"]
    assert "adapter error" in events[1].reason  # type: ignore[attr-defined]
    assert (events[0].text, events[2].text) == ("a", "b")  # type: ignore[attr-defined]


def test_feed_keeps_a_malformed_line_and_an_unknown_message_in_order() -> None:
    adapter = Adapter()
    adapter.observer = None
    out = adapter.feed(
        [
            b'{"type": "nope", "x": 1}',
            b"{not json",
            (
                b'{"type": "stream_event", "event": {"type": "content_block_delta", '
                b'"delta": {"type": "text_delta", "text": 5}}}'
            ),
        ]
    )
    kinds = [[type(e).__name__ for e in evs] for _, evs in out]
    assert kinds == [["Unknown"], ["Unknown"], ["Unknown"]]
    assert "unknown type 'nope'" in out[0][1][0].reason  # type: ignore[attr-defined]
    assert "not JSON" in out[1][1][0].reason  # type: ignore[attr-defined]


def test_feed_keeps_text_before_a_line_over_the_limit_in_order() -> None:
    from kandev_nb.wire.transport import LineTooLong

    adapter = Adapter()
    adapter.observer = None
    out = adapter.feed([_compact_delta("before"), LineTooLong(10_000_000), _compact_delta("after")])
    events = [e for _, evs in out for e in evs]
    assert [(type(e).__name__, getattr(e, "text", None)) for e in events] == [
        ("MessageChunk", "before"),
        ("Unknown", None),
        ("MessageChunk", "after"),
    ]
