"""Events per second through framing, parsing and the adapter, against ``json.loads``.

Run from a clone: ``python benchmarks/bench_adapter.py [--quick] [transcripts...]``.

The input is synthesised from recorded transcripts (``tests/transcripts/<version>/*.jsonl``
by default): their stdout lines, each text/thinking delta repeated so that deltas dominate
as in a long answer, the whole repeated with fresh tool and message ids until there are at
least ``--lines`` lines (default 200,000). The pipelines run on the same lines, timed
in CPU time, slice by slice with the pipelines interleaved, best of ``--repeat`` per slice:

- ours: the bytes in 64 KiB reads -> :class:`~kandev_nb.wire.transport.LineFramer` ->
  :meth:`~kandev_nb.agent.adapter.Adapter.feed` per read (parse, handle, runs of deltas
  merged), as the session's reader does;
- the same with the standard library's decoder only (``KANDEV_NB_JSON=stdlib``; by default
  :mod:`kandev_nb.wire.decode` decodes with msgspec, delta lines straight into a typed view);
- ``json.loads`` on each line alone;
- ``json.loads`` then ``claude_agent_sdk``'s own ``parse_message`` on each line.

It prints lines per second for each, events per second for ours, and ours as a ratio of
each baseline; last, the headline ratios (``headline: ...: 1.52x json.loads``). Target:
>= 1.5x the ``json.loads`` rate (issue 12). Nothing is asserted. ``--quick`` is a short run
for tests (fewer lines, slices and repeats), whose figures are rougher.
"""

from __future__ import annotations

import argparse
import gc
import json
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path

from _common import ROOT, headline, use_this_clone

use_this_clone()

from kandev_nb.agent.adapter import Adapter
from kandev_nb.wire import decode, protocol  # after the path is set
from kandev_nb.wire.recorder import load_transcript, out_lines
from kandev_nb.wire.transport import LineFramer

__all__ = ["main", "synthesise"]

DEFAULT_DIR = ROOT / "tests" / "transcripts" / "2.1.332"
READ_SIZE = 65536
_IDS = re.compile(rb"(toolu_|msg_scripted_)")


def _suffixer(prefix: bytes) -> Callable[[re.Match[bytes]], bytes]:
    """A replacement that keeps an id's kind and makes the id unique per copy."""
    return lambda m: m.group(1) + prefix


_DELTA = (b'"text_delta"', b'"thinking_delta"')


def synthesise(transcripts: list[Path], min_lines: int, delta_repeat: int = 20) -> list[bytes]:
    """At least `min_lines` stdout lines built from the `transcripts`' out lines.

    Each text/thinking delta line is repeated `delta_repeat` times; each copy of the whole
    gets its own tool_use and message ids (``toolu_7_0001``), so that the adapter sees new
    tool calls rather than repeats of old ones.
    """
    base: list[bytes] = []
    for path in transcripts:
        for line in out_lines(load_transcript(path)):
            base += [line] * (delta_repeat if any(d in line for d in _DELTA) else 1)
    if not base:
        raise SystemExit(f"no out lines in {', '.join(map(str, transcripts)) or 'no transcripts'}")
    lines: list[bytes] = []
    copy = 0
    while len(lines) < min_lines:
        copy += 1
        prefix = b"%d_" % copy
        lines += [_IDS.sub(_suffixer(prefix), line) for line in base]
    return lines


def _ours(data: bytes) -> tuple[int, int]:
    """What the session's reader does with each read: frame it, then :meth:`Adapter.feed`
    (parse, route control messages aside, handle the rest, one event per run of deltas)."""
    adapter = Adapter()
    adapter.observer = None  # no debug logs in a benchmark, whatever KANDEV_DEBUG_AGENT_MESSAGES says
    framer = LineFramer()
    feed = adapter.feed
    n_lines = n_events = 0
    for start in range(0, len(data), READ_SIZE):
        lines = framer.push(data[start : start + READ_SIZE])
        n_lines += len(lines)
        for _msg, events in feed(lines):
            n_events += len(events)
    lines = framer.flush()
    n_lines += len(lines)
    for _msg, events in feed(lines):
        n_events += len(events)
    return n_lines, n_events


def _json_only(lines: list[bytes]) -> tuple[int, int]:
    loads = json.loads
    for line in lines:
        loads(line)
    return len(lines), 0


def _sdk(lines: list[bytes]) -> tuple[int, int]:
    from claude_agent_sdk._errors import MessageParseError  # the test extra
    from claude_agent_sdk._internal.message_parser import parse_message

    loads = json.loads
    for line in lines:
        try:
            parse_message(loads(line))
        except MessageParseError:
            pass
    return len(lines), 0


def _best_of(
    pipelines: dict[str, Callable[[int], tuple[int, int]]], slices: int, repeat: int
) -> dict[str, tuple[float, int, int]]:
    """Per pipeline: CPU seconds, lines and events, summed over `slices` slices of the input.

    Each slice is timed `repeat` times per pipeline with the pipelines interleaved, and its
    best time counts. CPU time (``time.process_time``) rather than wall time, so that other
    processes on a shared machine do not count against whichever pipeline was running.
    """
    best: dict[tuple[str, int], tuple[float, int, int]] = {}
    for _ in range(repeat):
        for index in range(slices):
            for name, fn in pipelines.items():
                gc.collect()
                start = time.process_time()
                n_lines, n_events = fn(index)
                seconds = time.process_time() - start
                key = (name, index)
                if key not in best or seconds < best[key][0]:
                    best[key] = (seconds, n_lines, n_events)
    totals: dict[str, tuple[float, int, int]] = {}
    for name in pipelines:
        parts = [best[(name, index)] for index in range(slices)]
        totals[name] = (sum(p[0] for p in parts), sum(p[1] for p in parts), sum(p[2] for p in parts))
    return totals


def _stdlib_only(data: bytes) -> tuple[int, int]:
    """:func:`_ours` as with ``KANDEV_NB_JSON=stdlib``: the standard library's decoder only."""
    saved = decode._fast_loads, decode._delta_decode
    decode._fast_loads, decode._delta_decode = None, decode._stdlib_delta
    try:
        return _ours(data)
    finally:
        decode._fast_loads, decode._delta_decode = saved


def _has_sdk() -> bool:
    try:
        import claude_agent_sdk._internal.message_parser  # noqa: F401
    except ImportError:
        return False
    return True


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print its table; returns 0 (1 if no transcripts were found)."""
    parser = argparse.ArgumentParser(prog="python benchmarks/bench_adapter.py", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a short run: 30,000 lines, 6 slices, best of 2")
    parser.add_argument("--lines", type=int, help="minimum number of lines (default 200,000; quick 30,000)")
    parser.add_argument("--repeat", type=int, help="runs per slice and pipeline; the best counts (default 3; quick 2)")
    parser.add_argument("--slices", type=int, help="the input is timed in this many slices (default 20; quick 6)")
    parser.add_argument("--delta-repeat", type=int, default=20, help="copies of each text delta (default 20)")
    parser.add_argument("transcripts", nargs="*", type=Path, help=f"default: {DEFAULT_DIR}/*.jsonl")
    args = parser.parse_args(argv)
    n_lines = args.lines or (30_000 if args.quick else 200_000)
    repeat = args.repeat or (2 if args.quick else 3)
    slices = args.slices or (6 if args.quick else 20)
    paths = args.transcripts or sorted(DEFAULT_DIR.glob("*.jsonl"))
    if not paths:
        print(f"no transcripts found in {DEFAULT_DIR}; pass some .jsonl paths")
        return 1
    lines = synthesise(paths, n_lines, args.delta_repeat)
    data = b"".join(line + b"\n" for line in lines)
    deltas = sum(1 for line in lines if b'"stream_event"' in line)
    tools = sum(line.count(b'"type":"tool_use"') for line in lines if b'"assistant"' in line)
    print(
        f"{len(lines):,} lines ({len(data) / 1e6:.1f} MB) from {len(paths)} transcripts: "
        f"{deltas:,} stream_event lines, {tools:,} tool calls"
    )

    ours = f"kandev_nb ({protocol.JSON_DECODER}): framer + parse + adapter"
    sdk = "json.loads + claude_agent_sdk parse_message"
    step = -(-len(lines) // slices)
    parts = [lines[i : i + step] for i in range(0, len(lines), step)]
    blobs = [b"".join(line + b"\n" for line in part) for part in parts]
    pipelines: dict[str, Callable[[int], tuple[int, int]]] = {"json.loads only": lambda i: _json_only(parts[i])}
    if _has_sdk():
        pipelines[sdk] = lambda i: _sdk(parts[i])
    pipelines[ours] = lambda i: _ours(blobs[i])
    if protocol.JSON_DECODER != "json":  # also show the standard-library-only figure
        pipelines["kandev_nb (json): framer + parse + adapter"] = lambda i: _stdlib_only(blobs[i])
    rows = _best_of(pipelines, len(parts), repeat)
    ours_t, ours_lines, ours_events = rows[ours]
    print(f"\n{'pipeline':48} {'lines/s':>12} {'events/s':>12} {'ours vs this':>13}")
    print(f"{'':48} {'':12} {'':12} {'(ours: ' + protocol.JSON_DECODER + ')':>13}")
    for name, (seconds, n, n_events) in rows.items():
        events = f"{n_events / seconds:12,.0f}" if n_events else f"{'':12}"
        print(f"{name:48} {n / seconds:12,.0f} {events} {(ours_lines / ours_t) / (n / seconds):12.2f}x")
    ours_rate = ours_lines / ours_t
    print(f"\n{ours_events:,} events from {ours_lines:,} lines")
    headline(
        "framer + parse + adapter",
        ours_rate / (rows["json.loads only"][1] / rows["json.loads only"][0]),
        "json.loads (target >= 1.5x)",
    )
    if sdk in rows:
        headline("framer + parse + adapter", ours_rate / (rows[sdk][1] / rows[sdk][0]), "the SDK parser")
    return 0


if __name__ == "__main__":
    sys.exit(main())
