"""Every figure of issue 8 (the streaming UI), measured in one run.

Run from a clone: ``python benchmarks/bench_ui.py [--quick] [--no-real]``. Prints tables,
then one summary table ("Issue 8: every figure"), then, last, its headline ratios
(``headline: ...: 1.05x the raw loop``); nothing is asserted. The simulated cases are in
``_ui_sim.py``, the real-CLI part in ``_ui_real.py``.

* Streaming text cases feed :class:`~kandev_nb.agent.events.MessageChunk` events to a
  :class:`~kandev_nb.notebook.widgets.TurnView` on a SIMULATED clock with realistic timestamps
  (deltas evenly spaced over the stated duration), so the 60 s case takes well under a
  second; the throttle sees the same times it would see live. Bytes are counted by a
  recording comm (:mod:`kandev_nb.notebook.widgets.recording`): the JSON of every comm_open /
  comm_msg / comm_close payload of the turn's widgets. "wire" adds the Jupyter message
  envelope, measured by serialising a real comm_msg with jupyter_client's Session.
  "max/1s" is the most text updates inside any one second while streaming (in brackets:
  counting the flush at the end of the turn, which the throttle does not delay).
* Three ways to stream are compared on the same text: ``append`` (the shipped anywidget,
  only new characters), ``paragraphs`` (stock widgets: finished blocks frozen into HTML
  widgets, the last block re-sent), and ``naive`` (``--naive``: one HTML widget, the whole
  rendering re-sent on every delta).
* The final rendering: texts streamed in random small pieces (Markdown, a code block split
  across chunks, a table); the saved rendering must contain the rendering of the whole text.
* Large tool outputs: bytes sent for the card before and after "Show all".
* The real CLI (skipped with ``--no-real``), in one run with one scripted model server:
  a raw loop (:class:`RawCLI`: the user message as a JSON line on stdin, ``json.loads`` of
  every stdout line until ``result``; no kandev_nb) and the ``%%claude`` path
  (``magic.run_cell``: TurnView displayed through an IPython shell whose publisher
  serialises to JSON, widgets on recording comms, ``Session.run``, ``view.finish`` and the
  ledger write to a temporary SQLite file), each with its own warm CLI process of the same
  binary and arguments, turns alternating. Start-up is process start + ``initialize``
  (kandev: ``Session.start``, which also probes ``claude --version``). First-token latency:
  from the moment the transport read the first text_delta line to the widget's first
  "append" message. Memory: RSS (less tracemalloc's own) and Python heap growth over N more
  small ``%%claude`` turns in the same session.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from collections.abc import Callable

from _common import headline, use_this_clone

use_this_clone()

import _ui_sim as ui_sim  # after the path is set
from _ui_real import Real, median, run_real
from _ui_sim import Result, deltas, markdown_text

from kandev_nb.agent import events as ev
from kandev_nb.notebook.widgets.recording import record_comms

__all__ = ["main"]


def _row(name: str, res: Result) -> str:
    return (
        f"{name:<44} {res.deltas:>7,} {res.text_bytes / 1024:>7.1f} {res.updates:>7,} "
        f"{res.max_1s:>3} ({res.max_1s_all:>2}) "
        f"{res.per_delta:>8.4f} {res.bytes / 1024:>9.1f} {res.per_byte:>8.2f} {res.wire_per_byte:>8.2f}"
    )


def _yes(ok: bool) -> str:
    return "met" if ok else "MISSED"


def main(argv: list[str]) -> int:
    """Run the UI benchmark and print the tables (see the module docstring)."""
    ap = argparse.ArgumentParser(prog="python benchmarks/bench_ui.py")
    ap.add_argument("--quick", action="store_true", help="a short run for CI: fewer rounds and memory turns")
    ap.add_argument("--rounds", type=int, help="warm turns of each kind, alternating (default 10; quick 3)")
    ap.add_argument("--turns", type=int, help="turns for the memory figure (default 200; quick 20)")
    ap.add_argument("--deltas", type=int, default=6000, help="text deltas of the real-CLI turn (default 6000)")
    ap.add_argument("--no-real", action="store_true", help="skip the real-CLI part (no CLI needed)")
    ap.add_argument("--real", action="store_true", help=argparse.SUPPRESS)  # the default now; kept for old scripts
    ap.add_argument("--naive", action="store_true", help="also the naive variant (slow: quadratic)")
    args = ap.parse_args(argv)
    rounds = args.rounds if args.rounds is not None else (3 if args.quick else 10)
    turns = args.turns if args.turns is not None else (20 if args.quick else 200)
    ui_sim.ENVELOPE = ui_sim._envelope_bytes()
    from kandev_nb.notebook.widgets.stream import ASSETS

    lib_bytes = len((ASSETS / "kandev_lib.js").read_bytes()) + len((ASSETS / "kandev.css").read_bytes())
    print(
        "Streaming text (simulated clock; bytes = comm payload JSON; "
        f"wire = + {ui_sim.ENVELOPE} B Jupyter envelope/msg)"
    )
    print(
        f"{'case':<44} {'deltas':>7} {'KB text':>7} {'updates':>7} {'max/1s':>7} {'upd/delta':>9} "
        f"{'KB sent':>9} {'B/B':>8} {'wire B/B':>8}"
    )
    t12 = markdown_text(12_000, seed=2)
    t80 = markdown_text(80_000, seed=3)
    t20 = markdown_text(20_000, seed=4)
    cases: list[tuple[str, Callable[[], Result]]] = [
        ("append: 6,000 deltas, 12 KB, 0.6 s", lambda: ui_sim._stream("append", deltas(t12, 6000), 0.6)),
        ("append: 80 KB over 60 s (6,667 deltas)", lambda: ui_sim._stream("append", deltas(t80, 6667), 60.0)),
        ("append: 10,000 deltas, 20 KB, 1 s", lambda: ui_sim._stream("append", deltas(t20, 10_000), 1.0)),
    ]
    if not args.quick:
        cases += [
            ("paragraphs: 6,000 deltas, 12 KB, 0.6 s", lambda: ui_sim._stream("paragraphs", deltas(t12, 6000), 0.6)),
            ("paragraphs: 80 KB over 60 s", lambda: ui_sim._stream("paragraphs", deltas(t80, 6667), 60.0)),
        ]
    if args.naive:
        cases.append(
            ("naive (whole value per delta): 6,000 deltas", lambda: ui_sim._stream("naive", deltas(t12, 6000), 0.6))
        )
    sim: dict[str, Result] = {}
    for name, fn in cases:
        sim[name] = fn()
        print(_row(name, sim[name]), flush=True)
    print(f"one-off per kernel (KandevLib: marked + highlight.js + CSS): {lib_bytes / 1024:.1f} KB")

    print("\nCPU per text delta in TurnView.handle (real clock, no frontend)")
    from kandev_nb.notebook.widgets import TurnView

    chunks = [ev.MessageChunk(text=p) for p in deltas(t80, 20_000)]  # built outside the timing
    with record_comms():
        view = TurnView("cpu", tick_s=0)
        t0 = time.process_time()
        for chunk in chunks:
            view.handle(chunk)
        per = (time.process_time() - t0) / len(chunks)
        view.close()
    print(f"  {per * 1e6:.1f} µs per delta ({len(chunks):,} deltas)")

    print("\nFinal rendering = rendering of the whole text (streamed in random 1-6 character pieces)")
    checks = ui_sim._render_checks()
    for name, ok in checks.items():
        print(f"  {name}: {'equal' if ok else 'DIFFERENT'}")

    print("\nLarge tool outputs: bytes sent for the card")
    print(f"{'case':<28} {'output':>10} {'before Show all':>16} {'ratio':>8} {'after click':>12} {'ratio':>8}")
    big = {}
    for kind, size in (("shell stdout", 5 * 2**20), ("file read", 2 * 2**20)):
        total, before, after = ui_sim._big_output("shell" if kind.startswith("shell") else "read", size)
        big[kind] = (total, before, after)
        print(
            f"{kind:<28} {total / 2**20:>8.1f}MB {before / 1024:>14.1f}KB {before / total:>8.4f} "
            f"{after / 2**20:>10.2f}MB {after / total:>8.2f}"
        )

    real: Real | None = None
    sim_mem: tuple[float, int, int] | None = None
    if not args.no_real:
        print(
            f"\nReal CLI, one run: raw stdin/stdout loop vs %%claude path ({args.deltas:,}-delta turns, "
            f"{rounds} rounds alternating; then {turns} small turns for memory)",
            flush=True,
        )
        try:
            real = asyncio.run(run_real(args.deltas, rounds, turns, lambda s: print(s, flush=True)))
        except Exception as exc:  # noqa: BLE001 - no CLI here: say so, print the rest
            print(f"  skipped: {exc!r}")
    if real is None:
        print(f"\nMemory after {turns} finished TurnViews (no CLI; 4 KB text + one tool each)")
        sim_mem = ui_sim._memory(turns)
        print(
            f"  Python heap growth {sim_mem[0]:.1f} MB; widgets still open: {sim_mem[1]}; "
            f"static renderings kept: {sim_mem[2] / 2**20:.2f} MB"
        )
    _summary(sim, checks, big, real, sim_mem, turns)
    _headlines(sim, real)
    return 0


def _summary(
    sim: dict[str, Result],
    checks: dict[str, bool],
    big: dict[str, tuple[int, int, int]],
    real: Real | None,
    sim_mem: tuple[float, int, int] | None,
    turns: int,
) -> None:
    rows: list[tuple[str, str, str, str]] = []
    s80 = sim["append: 80 KB over 60 s (6,667 deltas)"]
    s6 = sim["append: 6,000 deltas, 12 KB, 0.6 s"]
    rows.append(
        (
            "bytes/byte, 80 KB over 60 s (payload; wire)",
            "<= 4",
            f"{s80.per_byte:.2f}; {s80.wire_per_byte:.2f}",
            _yes(s80.per_byte <= 4),
        )
    )
    rows.append(
        (
            "bytes/byte, 6,000-delta turn, simulated (payload; wire)",
            "<= 4",
            f"{s6.per_byte:.2f}; {s6.wire_per_byte:.2f}",
            _yes(s6.per_byte <= 4),
        )
    )
    if real is not None and real.comm_bytes:
        bb = median([float(b) for b in real.comm_bytes]) / real.text_bytes
        rows.append(
            (
                f"bytes/byte, {real.deltas:,}-delta turn, real CLI (all comm msgs of the turn)",
                "<= 4",
                f"{bb:.2f} (+ static rendering {median([float(b) for b in real.display_bytes]) / 1024:.0f} KB)",
                _yes(bb <= 4),
            )
        )
    appends = [x for name, x in sim.items() if name.startswith("append")]
    most, most_all = max(x.max_1s for x in appends), max(x.max_1s_all for x in appends)
    rows.append(
        (
            "text updates in any 1 s while streaming, simulated (+ end-of-turn flush)",
            "<= 20",
            f"{most} ({most_all})",
            _yes(most <= 20),
        )
    )
    if real is not None:
        rows.append(
            (
                "text updates in any 1 s while streaming, real CLI (+ end-of-turn flush)",
                "<= 20",
                f"{real.max_updates_1s} ({real.max_updates_1s_all})",
                _yes(real.max_updates_1s <= 20),
            )
        )
        if real.latency_ms:
            lat = (median(real.latency_ms), max(real.latency_ms))
            rows.append(
                (
                    "first token: CLI line read -> widget append sent (median; max)",
                    "<= 50 ms",
                    f"{lat[0]:.1f} ms; {lat[1]:.1f} ms",
                    _yes(lat[1] <= 50),
                )
            )
            rows.append(
                (
                    "prompt sent -> first delta: raw loop vs %%claude widget (median)",
                    "report",
                    f"{median(real.raw_ttft_ms):.0f} ms vs {median(real.kandev_ttft_ms):.0f} ms",
                    "",
                )
            )
    for name, ok in checks.items():
        rows.append((f"final rendering equal to the text: {name}", "equal", "equal" if ok else "DIFFERENT", _yes(ok)))
    if real is not None:
        rows.append(
            (
                "final rendering: real CLI turn text == scripted text",
                "equal",
                "equal" if real.text_equal else "DIFFERENT",
                _yes(real.text_equal),
            )
        )
    for kind, (total, before, after) in big.items():
        rows.append(
            (
                f"large output, {kind} {total / 2**20:.0f} MB: sent before / after Show all",
                "bounded",
                f"{before / 1024:.1f} KB / {after / 2**20:.2f} MB",
                _yes(before < 64 * 1024),
            )
        )
    if real is not None and real.raw:
        raw_m, k_m = median(real.raw), median(real.kandev)
        rows.append(
            (f"warm turn, raw loop (median of {len(real.raw)}; best)", "", f"{raw_m:.3f} s; {min(real.raw):.3f} s", "")
        )
        rows.append(
            (
                f"warm turn, %%claude path (median of {len(real.kandev)}; best)",
                "",
                f"{k_m:.3f} s; {min(real.kandev):.3f} s",
                "",
            )
        )
        ratio = k_m / raw_m
        rows.append(
            (
                "per-turn overhead: %%claude / raw (medians; bests)",
                "<= 1.1",
                f"{ratio:.3f}; {min(real.kandev) / min(real.raw):.3f}",
                _yes(ratio <= 1.1),
            )
        )
        rows.append(
            (
                "%%claude after the result line (finish, ledger; median; max)",
                "report",
                f"{median(real.tail_ms):.0f} ms; {max(real.tail_ms, default=float('nan')):.0f} ms",
                "",
            )
        )
        rows.append(
            (
                "our CPU per warm turn: raw loop vs %%claude (median)",
                "report",
                f"{median(real.raw_cpu) * 1000:.0f} ms vs {median(real.kandev_cpu) * 1000:.0f} ms",
                "",
            )
        )
        rows.append(
            (
                "start-up (process + initialize): raw vs kandev Session.start",
                "report",
                f"{real.raw_start:.2f} s vs {real.kandev_start:.2f} s",
                "",
            )
        )
        rows.append(
            (
                "first turn incl. start-up: raw vs %%claude",
                "report",
                f"{real.raw_first:.2f} s vs {real.kandev_first:.2f} s",
                "",
            )
        )
    if real is not None and real.mem_turns:
        rows.append(
            (
                f"memory after {real.mem_turns} warm %%claude turns, one session: RSS growth",
                "< 50 MB",
                f"{real.rss_mb:.1f} MB",
                _yes(real.rss_mb < 50),
            )
        )
        rows.append(
            (
                f"memory after {real.mem_turns} warm %%claude turns: Python heap growth",
                "< 50 MB",
                f"{real.heap_mb:.1f} MB",
                _yes(real.heap_mb < 50),
            )
        )
    elif sim_mem is not None:
        rows.append(
            (
                f"memory after {turns} finished TurnViews (no CLI): Python heap growth",
                "< 50 MB",
                f"{sim_mem[0]:.1f} MB",
                _yes(sim_mem[0] < 50),
            )
        )
    width = max(len(r[0]) for r in rows)
    print("\nIssue 8: every figure")
    print(f"{'figure':<{width}}  {'target':>8}  {'measured':<34} result")
    for name, target, value, verdict in rows:
        print(f"{name:<{width}}  {target:>8}  {value:<34} {verdict}")


def _headlines(sim: dict[str, Result], real: Real | None) -> None:
    s80 = sim["append: 80 KB over 60 s (6,667 deltas)"]
    headline("bytes sent, 80 KB over 60 s (payload)", s80.per_byte, "the text's bytes")
    if real is not None and real.raw and real.kandev:
        headline("warm turn, %%claude path (wall, medians)", median(real.kandev) / median(real.raw), "the raw loop")
        headline(
            f"kernel CPU per {real.deltas:,}-delta turn, %%claude "
            f"({median(real.kandev_cpu) * 1000:.0f} ms vs {median(real.raw_cpu) * 1000:.0f} ms, medians)",
            median(real.kandev_cpu) / median(real.raw_cpu),
            "the raw loop",
        )


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
