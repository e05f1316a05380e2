"""Feed a recorded transcript through framing, parsing and the adapter, as the session does."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from pydantic import TypeAdapter

from kandev_nb.agent import events as ev
from kandev_nb.agent.adapter import Adapter
from kandev_nb.wire.protocol import (
    ControlCancelRequest,
    ControlRequest,
    ControlResponse,
    parse_line,
)
from kandev_nb.wire.recorder import Entry, out_lines
from kandev_nb.wire.transport import LineFramer, LineTooLong

_EVENTS: TypeAdapter[list[ev.AgentEvent]] = TypeAdapter(list[ev.AgentEvent])


def processes(entries: Sequence[Entry]) -> list[list[Entry]]:
    """Split a transcript at its "meta" entries: one list per CLI process."""
    runs: list[list[Entry]] = []
    for entry in entries:
        if entry.get("dir") == "meta" or not runs:
            runs.append([])
        runs[-1].append(entry)
    return runs


def _resumed(run: Sequence[Entry]) -> bool:
    meta = run[0].get("msg") if run and run[0].get("dir") == "meta" else None
    return isinstance(meta, dict) and "--resume" in (meta.get("argv") or [])


def feed(adapter: Adapter, lines: Iterable[bytes | LineTooLong]) -> list[ev.AgentEvent]:
    """Parse framed lines and hand the non-control ones to `adapter`, as Session's reader does."""
    out: list[ev.AgentEvent] = []
    for line in lines:
        if isinstance(line, LineTooLong):
            out.append(ev.Unknown(raw={"size": line.size}, reason="line too long"))
            continue
        msg = parse_line(line)
        if isinstance(msg, ControlRequest | ControlResponse | ControlCancelRequest):
            continue
        out += adapter.handle(msg)
    return out


def stream_of(entries: Sequence[Entry]) -> bytes:
    """The stdout bytes of a transcript's out lines, newline-terminated."""
    return b"".join(line + b"\n" for line in out_lines(entries))


def adapter_events(entries: Sequence[Entry], cuts: Iterable[int] | None = None) -> list[ev.AgentEvent]:
    """The adapter's events for a transcript's stdout, process by process.

    Args:
        entries: the transcript.
        cuts: offsets at which to split each process's stdout into reads (None: one read).
    """
    adapter: Adapter | None = None
    out: list[ev.AgentEvent] = []
    for run in processes(entries):
        if adapter is None:
            adapter = Adapter(resumed=_resumed(run))
        else:
            adapter.new_process()
        data = stream_of(run)
        framer = LineFramer()
        lines: list[bytes | LineTooLong] = []
        start = 0
        for cut in sorted({c for c in (cuts or ()) if 0 < c < len(data)}):
            lines += framer.push(data[start:cut])
            start = cut
        lines += framer.push(data[start:])
        lines += framer.flush()
        out += feed(adapter, lines)
    return out


def events_json(events: Sequence[ev.AgentEvent]) -> str:
    """The events as stable, reviewable JSON (one event per line)."""
    dumped = [e.model_dump(mode="json") for e in events]
    return "[\n" + ",\n".join(json.dumps(d, sort_keys=True, ensure_ascii=False) for d in dumped) + "\n]\n"


def dump(events: Sequence[ev.AgentEvent]) -> list[dict[str, Any]]:
    """The events as plain dicts, for comparisons."""
    return [e.model_dump(mode="json") for e in events]
