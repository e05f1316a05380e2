"""``python -m kandev_nb.bench ui``: what the widgets send to the browser, and what they cost.

Everything is measured in one run and printed as a table of ratios; nothing is asserted.

* Streaming text cases feed :class:`~kandev_nb.events.MessageChunk` events to a
  :class:`~kandev_nb.widgets.TurnView` on a SIMULATED clock with realistic timestamps
  (deltas evenly spaced over the stated duration), so the 60 s case takes well under a
  second; the throttle sees the same times it would see live. Bytes are counted by a
  recording comm (:mod:`kandev_nb.widgets.recording`): the JSON of every comm_open /
  comm_msg / comm_close payload of the turn's widgets. "wire" adds the Jupyter message
  envelope, measured by serialising a real comm_msg with jupyter_client's Session.
* Three ways to stream are compared on the same text: ``append`` (the shipped anywidget,
  only new characters), ``paragraphs`` (stock widgets: finished blocks frozen into HTML
  widgets, the last block re-sent), and ``naive`` (one HTML widget, the whole rendering
  re-sent on every delta).
* Large tool outputs: bytes sent for the card before and after "Show all".
* Memory: Python heap growth after N finished turns (tracemalloc), and live widgets left.
* ``--real``: a warm real-CLI turn of 6,000 deltas through Session with and without a
  TurnView, side by side (needs the CLI; uses the scripted model server).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import random
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import ipywidgets as w

from kandev_nb import events as ev
from kandev_nb import tools as t
from kandev_nb.widgets import render as r
from kandev_nb.widgets.recording import Recorder, record_comms

__all__ = ["main", "markdown_text", "stable_end"]


# -- inputs -------------------------------------------------------------------------------


def markdown_text(size: int, seed: int = 1) -> str:
    """About `size` characters of agent-like Markdown: paragraphs, lists, code, tables."""
    rnd = random.Random(seed)
    words = ("the", "widget", "sends", "only", "new", "text", "while", "a", "turn", "streams", "and", "code",
             "blocks", "tables", "render", "once", "finished", "tool", "cards", "show", "diffs")
    parts: list[str] = []
    n = 0
    while n < size:
        kind = rnd.random()
        if kind < 0.55:
            block = " ".join(rnd.choice(words) for _ in range(rnd.randint(25, 70))).capitalize() + "."
        elif kind < 0.7:
            block = "\n".join(f"- **{rnd.choice(words)}**: " + " ".join(rnd.choice(words) for _ in range(8))
                              for _ in range(rnd.randint(3, 6)))
        elif kind < 0.9:
            body = "\n".join(f"    x{i} = compute({i}, '{rnd.choice(words)}')  # step {i}" for i in range(rnd.randint(5, 25)))
            block = f"```python\ndef f():\n{body}\n    return x0\n```"
        else:
            rows = "\n".join(f"| {rnd.choice(words)} | {rnd.randint(1, 999)} | {rnd.random():.3f} |"
                             for _ in range(rnd.randint(3, 8)))
            block = "| name | count | ratio |\n|---|---:|---:|\n" + rows
        parts.append(block)
        n += len(block) + 2
    return "\n\n".join(parts)[:size]


def deltas(text: str, n: int) -> list[str]:
    """`text` cut into `n` pieces of nearly equal length."""
    step = len(text) / n
    return [text[int(i * step): int((i + 1) * step)] for i in range(n)]


_FENCE = ("```", "~~~")


def stable_end(text: str, start: int) -> int:
    """Python port of the client's ``stableEnd`` (js/src/lib.js), for the paragraphs variant."""
    pos, best, fence, prev_blank = start, start, "", False
    while True:
        nl = text.find("\n", pos)
        if nl < 0:
            return best
        line = text[pos:nl]
        stripped = line.strip()
        opener = next((f for f in _FENCE if line.lstrip(" ").startswith(f) and len(line) - len(line.lstrip(" ")) < 4), "")
        if fence:
            if stripped.startswith(fence) and set(stripped) == {fence[0]}:
                fence = ""
            prev_blank = False
        elif opener:
            if prev_blank:
                best = pos
            fence, prev_blank = opener, False
        elif not stripped:
            prev_blank = True
        else:
            if prev_blank and not line.startswith(("    ", "\t", "- ", "* ", "+ ")) and not line[:1].isdigit():
                best = pos
            prev_blank = False
        pos = nl + 1


# -- the three ways to stream ---------------------------------------------------------------


class Clock:
    """A settable clock in seconds (simulated time)."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


@dataclass
class Result:
    """One measured case."""

    bytes: int
    messages: int
    updates: int
    text_bytes: int
    seconds: float
    deltas: int
    wire: int

    @property
    def per_byte(self) -> float:
        return self.bytes / max(self.text_bytes, 1)

    @property
    def wire_per_byte(self) -> float:
        return self.wire / max(self.text_bytes, 1)

    @property
    def per_second(self) -> float:
        return self.updates / self.seconds if self.seconds else float("nan")

    @property
    def per_delta(self) -> float:
        return self.updates / max(self.deltas, 1)


def _envelope_bytes() -> int:
    """Bytes a Jupyter comm_msg adds around its payload (jupyter_client Session, HMAC-signed)."""
    try:
        from jupyter_client.session import Session  # noqa: PLC0415
    except ImportError:  # pragma: no cover
        from kandev_nb.widgets.recording import ENVELOPE_BYTES  # noqa: PLC0415

        return ENVELOPE_BYTES
    s = Session(key=b"k" * 32, username="kernel")
    parent = s.msg("execute_request", content={})
    content = {"comm_id": "0" * 32, "data": {}}
    frames = s.serialize(s.msg("comm_msg", content=content, parent=parent))
    return sum(len(f) for f in frames) - len(json.dumps(content).encode())


ENVELOPE = 0  # set in main()


def _stream(kind: str, pieces: list[str], seconds: float, interval_s: float = 0.05) -> Result:
    from kandev_nb.widgets import TurnView  # noqa: PLC0415
    from kandev_nb.widgets.stream import kandev_lib  # noqa: PLC0415

    kandev_lib()  # once per kernel: not part of any turn
    clock = Clock()
    dt = seconds / max(len(pieces), 1)
    text = "".join(pieces)
    with record_comms() as rec:
        if kind == "append":
            view = TurnView("bench", clock=clock, interval_s=interval_s, tick_s=0)
            for p in pieces:
                clock.now += dt
                view.handle(ev.MessageChunk(text=p))
            view.handle(ev.Complete(stats=ev.TurnStats()))
            updates = view.text_updates
            assert "".join(s.text for s in view.segments) == text
            view.close()
        elif kind == "paragraphs":
            updates = _paragraphs(pieces, clock, dt, interval_s)
        else:
            html = w.HTML()
            for p in pieces:
                clock.now += dt
                html.value = r.markdown_html(html.description + p)  # description holds the raw text
                html.description = html.description + p
            updates = len(pieces)
            html.close()
        msgs = rec.count()
        return Result(rec.total_bytes(), msgs, updates, len(text.encode()), seconds, len(pieces),
                      rec.total_bytes() + ENVELOPE * msgs)


def _paragraphs(pieces: list[str], clock: Clock, dt: float, interval_s: float) -> int:
    """Stock widgets: frozen block HTML widgets + one tail HTML re-sent at most every interval."""
    from kandev_nb.widgets.cards import WidgetFactory  # noqa: PLC0415

    from kandev_nb.widgets.stream import Throttle  # noqa: PLC0415

    f = WidgetFactory()
    tail = f.html("")
    box = f.vbox((tail,))
    st = _ParaState()

    def flush() -> bool:
        if len(st.text) == st.shown:
            return False
        end = stable_end(st.text, st.frozen)
        with box.hold_sync():
            if end > st.frozen:
                block = f.html(r.markdown_html(st.text[st.frozen:end]))
                box.children = (*box.children[:-1], block, tail)
                st.frozen = end
            tail.value = r.markdown_html(st.text[st.frozen:])
        st.shown = len(st.text)
        st.updates += 1
        return True

    throttle = Throttle(flush, interval_s, clock=clock)  # the same coalescing as the shipped widget
    for p in pieces:
        clock.now += dt
        st.text += p
        throttle.poke(len(st.text) - st.shown)
    throttle.flush_now()
    f.close_all()
    return st.updates


@dataclass
class _ParaState:
    text: str = ""
    frozen: int = 0
    shown: int = 0
    updates: int = 0


# -- large outputs, memory, real CLI -------------------------------------------------------


def _big_output(kind: str, size: int) -> tuple[int, int, int]:
    from kandev_nb.widgets import TurnView  # noqa: PLC0415

    line = "0123456789 the quick brown fox jumps over the lazy dog 0123456789\n"
    big = (line * (size // len(line) + 1))[:size]
    with record_comms() as rec:
        view = TurnView("bench", tick_s=0)
        if kind == "shell":
            call = ev.ToolCall(tool_call_id="t", tool_name="Bash", title="cat big",
                               normalized=t.normalize_tool_call("Bash", {"command": "cat big"}))
            payload = t.normalize_tool_result(call.normalized, big, False, {"stdout": big, "stderr": ""})
        else:
            call = ev.ToolCall(tool_call_id="t", tool_name="Read", title="/big.txt",
                               normalized=t.normalize_tool_call("Read", {"file_path": "/big.txt"}))
            payload = t.normalize_tool_result(call.normalized, big, False, {"file": {"content": big, "numLines": 0}})
        view.handle(call)
        mark = rec.total_bytes()
        view.handle(ev.ToolUpdate(tool_call_id="t", tool_name=call.tool_name, status="complete",
                                  normalized=payload, output=big))
        before = rec.total_bytes() - mark
        card = view.cards["t"]
        assert card.more is not None
        mark = rec.total_bytes()
        card.more.click()
        after = rec.total_bytes() - mark
        view.close()
    return size, before, after


def _memory(turns: int) -> tuple[float, int, int]:
    from kandev_nb.widgets import TurnView  # noqa: PLC0415

    text = markdown_text(4000)
    pieces = deltas(text, 300)
    gc.collect()
    widgets_before = len(w.Widget.widgets)
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    bundles = []
    with record_comms():
        for i in range(turns):
            view = TurnView(f"turn {i}", tick_s=0)
            for p in pieces:
                view.handle(ev.MessageChunk(text=p))
            c = ev.ToolCall(tool_call_id=f"t{i}", tool_name="Bash", title="ls",
                            normalized=t.normalize_tool_call("Bash", {"command": "ls"}))
            view.handle(c)
            view.handle(ev.ToolUpdate(tool_call_id=f"t{i}", tool_name="Bash", status="complete",
                                      normalized=t.normalize_tool_result(c.normalized, "a\n" * 50, False),
                                      output="a\n" * 50))
            view.handle(ev.Complete(stats=ev.TurnStats(cost_usd=0.01)))
            bundles.append(view.finish())  # what the notebook keeps of each turn
    gc.collect()
    grown = tracemalloc.get_traced_memory()[0] - base
    tracemalloc.stop()
    static = sum(len(json.dumps(b)) for b in bundles)
    return grown / 2**20, len(w.Widget.widgets) - widgets_before, static


async def _real(n_deltas: int) -> tuple[float, float, float] | None:
    try:
        from kandev_nb.session import Session  # noqa: PLC0415
        from kandev_nb.testing import Reply, ScriptedModelServer, scripted_env, text  # noqa: PLC0415
        from kandev_nb.widgets import TurnView  # noqa: PLC0415
    except ImportError:
        return None
    body = markdown_text(n_deltas * 2)
    tmp = Path(tempfile.mkdtemp())
    (tmp / "home").mkdir()
    (tmp / "work").mkdir()
    rounds = 3
    with ScriptedModelServer([Reply(text(body, chunk_size=2)) for _ in range(2 * rounds + 1)]) as srv:
        session = Session(cwd=str(tmp / "work"), env=scripted_env(srv, tmp / "home"))
        try:
            t0 = time.perf_counter()
            await session.run("warm up")
            first = time.perf_counter() - t0
            plain_s, view_s = [], []
            with record_comms():
                for _ in range(rounds):  # interleaved, so drift hits both sides alike
                    t0 = time.perf_counter()
                    await session.run("go")
                    plain_s.append(time.perf_counter() - t0)
                    view = TurnView("go")
                    t0 = time.perf_counter()
                    turn = await session.run("go", consumers=[view.handle])
                    view.finish(turn)
                    view_s.append(time.perf_counter() - t0)
        finally:
            await session.close()
    return first, min(plain_s), min(view_s)


# -- main -----------------------------------------------------------------------------------


def _row(name: str, res: Result) -> str:
    return (f"{name:<44} {res.deltas:>7,} {res.text_bytes / 1024:>7.1f} {res.updates:>7,} {res.per_second:>7.1f} "
            f"{res.per_delta:>8.4f} {res.bytes / 1024:>9.1f} {res.per_byte:>8.2f} {res.wire_per_byte:>8.2f}")


def main(argv: list[str]) -> int:
    """Run the UI benchmark and print the tables (see the module docstring)."""
    global ENVELOPE
    ap = argparse.ArgumentParser(prog="python -m kandev_nb.bench ui")
    ap.add_argument("--real", action="store_true", help="also time a warm real-CLI turn with/without a TurnView")
    ap.add_argument("--turns", type=int, default=200, help="finished turns for the memory figure")
    ap.add_argument("--no-naive", action="store_true", help="skip the naive variant (slow: quadratic)")
    args = ap.parse_args(argv)
    ENVELOPE = _envelope_bytes()
    from kandev_nb.widgets.stream import ASSETS  # noqa: PLC0415

    lib_bytes = len((ASSETS / "kandev_lib.js").read_bytes()) + len((ASSETS / "kandev.css").read_bytes())
    print(f"Streaming text (simulated clock; bytes = comm payload JSON; wire = + {ENVELOPE} B Jupyter envelope/msg)")
    print(f"{'case':<44} {'deltas':>7} {'KB text':>7} {'updates':>7} {'upd/s':>7} {'upd/delta':>8} "
          f"{'KB sent':>9} {'B/B':>8} {'wire B/B':>8}")
    t12 = markdown_text(12_000, seed=2)
    t80 = markdown_text(80_000, seed=3)
    t20 = markdown_text(20_000, seed=4)
    cases: list[tuple[str, Callable[[], Result]]] = [
        ("append: 6,000 deltas, 12 KB, 0.6 s", lambda: _stream("append", deltas(t12, 6000), 0.6)),
        ("append: 80 KB over 60 s (6,667 deltas)", lambda: _stream("append", deltas(t80, 6667), 60.0)),
        ("append: 10,000 deltas, 20 KB, 1 s", lambda: _stream("append", deltas(t20, 10_000), 1.0)),
        ("paragraphs: 6,000 deltas, 12 KB, 0.6 s", lambda: _stream("paragraphs", deltas(t12, 6000), 0.6)),
        ("paragraphs: 80 KB over 60 s", lambda: _stream("paragraphs", deltas(t80, 6667), 60.0)),
    ]
    if not args.no_naive:
        cases.append(("naive (whole value per delta): 6,000 deltas", lambda: _stream("naive", deltas(t12, 6000), 0.6)))
    for name, fn in cases:
        print(_row(name, fn()), flush=True)
    print(f"one-off per kernel (KandevLib: marked + highlight.js + CSS): {lib_bytes / 1024:.1f} KB")

    print("\nCPU per text delta in TurnView.handle (real clock, no frontend)")
    from kandev_nb.widgets import TurnView  # noqa: PLC0415

    chunks = [ev.MessageChunk(text=p) for p in deltas(t80, 20_000)]  # built outside the timing
    with record_comms():
        view = TurnView("cpu", tick_s=0)
        t0 = time.perf_counter()
        for chunk in chunks:
            view.handle(chunk)
        per = (time.perf_counter() - t0) / len(chunks)
        view.close()
    print(f"  {per * 1e6:.1f} µs per delta ({len(chunks):,} deltas)")

    print("\nLarge tool outputs: bytes sent for the card")
    print(f"{'case':<28} {'output':>10} {'before Show all':>16} {'ratio':>8} {'after click':>12} {'ratio':>8}")
    for kind, size in (("shell stdout", 5 * 2**20), ("file read", 2 * 2**20)):
        total, before, after = _big_output("shell" if kind.startswith("shell") else "read", size)
        print(f"{kind:<28} {total / 2**20:>8.1f}MB {before / 1024:>14.1f}KB {before / total:>8.4f} "
              f"{after / 2**20:>10.2f}MB {after / total:>8.2f}")

    print(f"\nMemory after {args.turns} finished turns (4 KB text + one tool each)")
    grown, live, static = _memory(args.turns)
    print(f"  Python heap growth {grown:.1f} MB; widgets still open: {live}; "
          f"static renderings kept: {static / 2**20:.2f} MB")

    if args.real:
        print("\nWarm real-CLI turn, 6,000 text deltas (best of 3, interleaved)")
        res = asyncio.run(_real(6000))
        if res is None:
            print("  skipped: kandev_nb.testing not available")
        else:
            first, plain_s, view_s = res
            print(f"  first turn (CLI start-up + turn): {first:.2f} s")
            print(f"  Session.run, no consumer: {plain_s:.3f} s; with TurnView: {view_s:.3f} s; "
                  f"ratio {view_s / plain_s:.3f}")
    return 0
