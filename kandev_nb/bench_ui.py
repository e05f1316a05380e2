"""``python -m kandev_nb.bench ui [--quick]``: every figure of issue 8, measured in one run.

Prints tables, then one summary table ("Issue 8: every figure"); nothing is asserted.

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
import contextlib
import gc
import json
import random
import statistics
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import ipywidgets as w

from kandev_nb.agent import events as ev
from kandev_nb.agent import tools as t
from kandev_nb.notebook.widgets.recording import record_comms
from kandev_nb.render import html as r

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
    max_1s: int = 0  # most text updates inside any 1 s of (simulated) time while streaming
    max_1s_all: int = 0  # the same, counting the flush at the end of the turn

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
        from jupyter_client.session import Session
    except ImportError:  # pragma: no cover
        from kandev_nb.notebook.widgets.recording import ENVELOPE_BYTES

        return ENVELOPE_BYTES
    s = Session(key=b"k" * 32, username="kernel")
    parent = s.msg("execute_request", content={})
    content = {"comm_id": "0" * 32, "data": {}}
    frames = s.serialize(s.msg("comm_msg", content=content, parent=parent))
    return sum(len(f) for f in frames) - len(json.dumps(content).encode())


ENVELOPE = 0  # set in main()


def _stream(kind: str, pieces: list[str], seconds: float, interval_s: float = 0.05) -> Result:
    from kandev_nb.notebook.widgets import TurnView
    from kandev_nb.notebook.widgets.stream import kandev_lib

    kandev_lib()  # once per kernel: not part of any turn
    clock = Clock()
    dt = seconds / max(len(pieces), 1)
    text = "".join(pieces)
    with record_comms() as rec:
        times: list[float] = []
        add = rec._add

        def note(m: Any) -> None:  # the (simulated) time of every text update
            text_update = m.kind == "msg" and ((kind != "append" and m.method == "update")
                                               or m.data.get("content", {}).get("type") == "append")
            if text_update and (kind == "append" or not times or times[-1] != clock.now):  # hold_sync: one update
                times.append(clock.now)
            add(m)

        rec._add = note  # type: ignore[method-assign,assignment]
        if kind == "append":
            view = TurnView("bench", clock=clock, interval_s=interval_s, tick_s=0)
            for p in pieces:
                clock.now += dt
                view.handle(ev.MessageChunk(text=p))
            streamed = len(times)
            view.handle(ev.Complete(stats=ev.TurnStats()))  # flushes the rest at once
            updates = view.text_updates
            assert "".join(s.text for s in view.segments) == text
            view.close()
        elif kind == "paragraphs":
            mark = [0]
            updates = _paragraphs(pieces, clock, dt, interval_s, lambda: mark.__setitem__(0, len(times)))
            streamed = mark[0]
        else:
            html = w.HTML()
            for p in pieces:
                clock.now += dt
                html.value = r.markdown_html(html.description + p)  # description holds the raw text
                html.description = html.description + p
            updates = len(pieces)
            streamed = len(times)
            html.close()
        msgs = rec.count()
        return Result(rec.total_bytes(), msgs, updates, len(text.encode()), seconds, len(pieces),
                      rec.total_bytes() + ENVELOPE * msgs, _max_in_window(times[:streamed]), _max_in_window(times))


def _paragraphs(pieces: list[str], clock: Clock, dt: float, interval_s: float, at_end: Callable[[], None]) -> int:
    """Stock widgets: frozen block HTML widgets + one tail HTML re-sent at most every interval."""
    from kandev_nb.notebook.widgets.cards import WidgetFactory
    from kandev_nb.notebook.widgets.stream import Throttle

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
    at_end()
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
    from kandev_nb.notebook.widgets import TurnView

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
    from kandev_nb.notebook.widgets import TurnView

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


# -- the final rendering ----------------------------------------------------------------------

_CODE = 'def greet(name):\n    """Say hello."""\n    return f"hello {name}"  # `ticks` and <tags>\n\nprint(greet("world"))'
_TABLE = "| tool | calls | share |\n|:---|---:|:---:|\n| Bash | 12 | 40% |\n| Read | 9 | *30%* |\n| Edit | 9 | `30%` |"


def _render_checks() -> dict[str, bool]:
    """Stream texts through a TurnView in small random pieces; the saved rendering must be
    the rendering of the whole text, and the text sent to the browser must be the text."""
    import html as _html
    import re

    from kandev_nb.notebook.widgets import TurnView

    cases = {
        "Markdown (paragraphs, lists, code, tables)": markdown_text(12_000, seed=5),
        "a code block split across chunks": f"Before.\n\n```python\n{_CODE}\n```\n\nAfter.",
        "a table": f"Counts:\n\n{_TABLE}\n\nDone.",
    }
    rnd = random.Random(8)
    out = {}
    for name, full in cases.items():
        cuts = sorted({rnd.randint(1, len(full) - 1) for _ in range(len(full) // 3)})
        pieces = [full[a:b] for a, b in zip([0, *cuts], [*cuts, len(full)], strict=True)]
        with record_comms() as rec:
            view = TurnView("check", tick_s=0)
            for p in pieces:
                view.handle(ev.MessageChunk(text=p))
            view.handle(ev.Complete(stats=ev.TurnStats()))
            bundle = view.finish()
        sent = "".join(m.data["content"]["text"] for m in rec.messages
                       if m.method == "custom" and m.data.get("content", {}).get("type") == "append")
        ok = sent == full and r.markdown_html(full) in bundle["text/html"] and full in bundle["text/markdown"]
        if name == "a code block split across chunks":
            pre = re.search(r'<pre class="kandev-code"[^>]*>(.*?)</pre>', bundle["text/html"], re.DOTALL)
            ok = ok and pre is not None and _html.unescape(re.sub(r"<[^>]+>", "", pre.group(1))) == _CODE
            ok = ok and "<span" in (pre.group(1) if pre else "")  # coloured
        if name == "a table":
            ok = ok and bundle["text/html"].count("<tr>") == 4 and 'style="text-align:right"' in bundle["text/html"]
        out[name] = ok
    return out


# -- real CLI: a raw stdin/stdout loop vs the %%claude path ------------------------------------


def _rss_mb() -> float:
    """Resident set size of this process, in MB (Linux /proc; else the peak from getrusage)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


class RawCLI:
    """The baseline: the CLI driven over stdin/stdout with nothing but json and asyncio.

    It writes the user message as one JSON line and reads lines (``json.loads`` each) until
    the ``result``; `first_delta` is the perf_counter time the first text_delta line was read.
    """

    def __init__(self, argv: list[str], env: dict[str, str], cwd: str) -> None:
        self.argv, self.env, self.cwd = argv, env, cwd
        self.proc: asyncio.subprocess.Process | None = None
        self._buf = b""
        self.first_delta: float | None = None
        self.lines = 0

    async def start(self) -> None:
        """Spawn the CLI and wait for its answer to ``initialize``."""
        self.proc = await asyncio.create_subprocess_exec(
            *self.argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL, env=self.env, cwd=self.cwd, start_new_session=True)
        await self._send({"type": "control_request", "request_id": "raw-init",
                          "request": {"subtype": "initialize", "hooks": None}})
        await self._until("control_response")

    async def _send(self, message: dict[str, Any]) -> None:
        assert self.proc is not None and self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        await self.proc.stdin.drain()

    async def _until(self, kind: str) -> None:
        assert self.proc is not None and self.proc.stdout is not None
        while True:
            *lines, self._buf = (self._buf + (await self.proc.stdout.read(1 << 20) or b"\n")).split(b"\n")
            for line in lines:
                if not line.strip():
                    continue
                self.lines += 1
                if self.first_delta is None and b'"text_delta"' in line:
                    self.first_delta = time.perf_counter()
                obj = json.loads(line)
                if obj.get("type") == kind:
                    return
            if self.proc.stdout.at_eof() and not self._buf:
                raise RuntimeError("the CLI exited")

    async def turn(self, prompt: str) -> None:
        """One turn: the user message out, lines in until ``result``."""
        self.first_delta, self.lines = None, 0
        await self._send({"type": "user", "message": {"role": "user", "content": prompt},
                          "parent_tool_use_id": None, "session_id": ""})
        await self._until("result")

    async def close(self) -> None:
        if self.proc is not None and self.proc.returncode is None:
            assert self.proc.stdin is not None
            self.proc.stdin.close()
            try:
                await asyncio.wait_for(self.proc.wait(), 10)
            except TimeoutError:
                self.proc.kill()
                await self.proc.wait()


class _CountingComm:
    """A widget comm like a kernel's for memory purposes: it serialises every message to JSON
    (counting bytes) and keeps nothing; closing drops its handler (the kernel's comm manager
    forgets a closed comm). :class:`~kandev_nb.notebook.widgets.recording.Recorder` keeps every
    message and comm, which would be counted as the widgets' memory."""

    kernel = "bench"
    sent = 0
    _ids = 0

    def __init__(self, data: Any = None, buffers: Any = None, comm_id: str | None = None, **_: Any) -> None:
        _CountingComm._ids += 1
        self.comm_id = comm_id or f"count-{_CountingComm._ids}"
        self._handler: Any = None
        self.send(data)

    def send(self, data: Any = None, metadata: Any = None, buffers: Any = None) -> None:
        _CountingComm.sent += len(json.dumps(data or {}, default=str).encode())

    def close(self, data: Any = None, metadata: Any = None, buffers: Any = None, deleting: bool = False) -> None:
        self._handler = None

    def on_msg(self, callback: Any) -> None:
        self._handler = callback

    def on_close(self, callback: Any) -> None:
        pass


@contextlib.contextmanager
def _counting_comms() -> Any:
    import ipywidgets.comm as ipw_comm

    original = ipw_comm.create_comm
    ipw_comm.create_comm = _CountingComm
    try:
        yield
    finally:
        ipw_comm.create_comm = original


_SERVE = """
import json, sys
from kandev_nb.testing import Reply, ScriptedModelServer, text
spec = json.loads(sys.stdin.readline())
with ScriptedModelServer([Reply(text(t, chunk_size=n)) for t, n in spec]) as srv:
    print(srv.url, flush=True)
    sys.stdin.read()
"""


@contextlib.contextmanager
def _server_process(replies: list[tuple[str, int]]) -> Any:
    """A ScriptedModelServer answering `replies` ((text, chunk_size) each) in a child
    process, so that neither its CPU nor the requests it records count as the kernel's.
    Yields its URL; it stops when its stdin closes."""
    import subprocess
    import sys

    proc = subprocess.Popen([sys.executable, "-c", _SERVE], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.write(json.dumps(replies) + "\n")
        proc.stdin.flush()
        url = proc.stdout.readline().strip()
        if not url.startswith("http"):
            raise RuntimeError("the scripted model server did not start")
        yield url
    finally:
        proc.stdin.close()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _timed_stdio() -> tuple[Callable[..., Any], dict[str, float | None]]:
    """A transport factory for Session whose StdioTransport notes when it read the first
    text_delta line of a turn and its result line (`mark`; reset both before a turn)."""
    from kandev_nb.wire.transport import StdioTransport

    mark: dict[str, float | None] = {"first_delta": None, "result": None}

    class TimedStdio(StdioTransport):
        async def lines(self) -> Any:
            async for line in super().lines():
                if mark["first_delta"] is None and isinstance(line, bytes) and b'"text_delta"' in line:
                    mark["first_delta"] = time.perf_counter()
                elif isinstance(line, bytes) and b'"type":"result"' in line:
                    mark["result"] = time.perf_counter()
                yield line

    return (lambda argv, env, cwd: TimedStdio(argv, env, cwd)), mark


def _shell() -> Any:
    """An IPython shell whose display publisher serialises every display message to JSON
    (what ipykernel does before sending), counting bytes: `view.display()` and
    `update_display` then run as in a kernel."""
    from IPython.core.displaypub import DisplayPublisher
    from IPython.core.interactiveshell import InteractiveShell
    from traitlets.config import Config

    class JsonPublisher(DisplayPublisher):
        sent = 0

        def publish(self, data: Any, metadata: Any = None, source: Any = None, *, transient: Any = None,
                    update: bool = False, **_: Any) -> None:
            JsonPublisher.sent += len(json.dumps({"data": data, "metadata": metadata or {}, "transient": transient or {}},
                                                 default=str).encode())

        def clear_output(self, wait: bool = False) -> None:
            pass

    config = Config()
    config.HistoryManager.enabled = False
    shell = InteractiveShell.instance(config=config)
    shell.display_pub = JsonPublisher(shell=shell)  # type: ignore[no-untyped-call, unused-ignore]  # typed from IPython 9
    return shell


@dataclass
class Real:
    """What the real-CLI part measured (seconds unless named otherwise)."""

    raw_start: float = 0.0
    kandev_start: float = 0.0
    raw_first: float = 0.0
    kandev_first: float = 0.0
    raw: list[float] = field(default_factory=list)
    kandev: list[float] = field(default_factory=list)
    raw_cpu: list[float] = field(default_factory=list)
    kandev_cpu: list[float] = field(default_factory=list)
    latency_ms: list[float] = field(default_factory=list)  # kandev: first delta line read -> first append sent
    raw_ttft_ms: list[float] = field(default_factory=list)  # raw: prompt sent -> first delta line read
    kandev_ttft_ms: list[float] = field(default_factory=list)  # kandev: prompt sent -> first append sent
    text_bytes: int = 0
    comm_bytes: list[int] = field(default_factory=list)
    display_bytes: list[int] = field(default_factory=list)
    tail_ms: list[float] = field(default_factory=list)  # kandev: result line read -> run_cell returned
    max_updates_1s: int = 0  # text updates in any 1 s before the result line was read
    max_updates_1s_all: int = 0  # the same, counting the flush at the end of the turn
    text_equal: bool = True
    deltas: int = 0
    mem_turns: int = 0
    rss_mb: float = float("nan")
    heap_mb: float = float("nan")
    mem_seconds: float = 0.0
    ledger_rows: int = 0


def _median(xs: list[float]) -> float:
    return statistics.median(xs) if xs else float("nan")


def _max_in_window(times: list[float], window: float = 1.0) -> int:
    """Largest number of `times` inside any half-open window of `window` seconds."""
    best, lo = 0, 0
    for hi, t_hi in enumerate(times):
        while t_hi - times[lo] >= window:
            lo += 1
        best = max(best, hi - lo + 1)
    return best


async def _real(n_deltas: int, rounds: int, mem_turns: int, log: Callable[[str], None]) -> Real:
    """Side by side in one run: start-up, warm turns (raw / %%claude alternating), memory."""
    import os
    import subprocess

    from kandev_nb.wire.cli import find_cli

    res = Real()
    body = markdown_text(n_deltas * 2, seed=6)
    small = markdown_text(2_000, seed=7)
    res.text_bytes, res.deltas = len(body.encode()), n_deltas
    tmp = Path(tempfile.mkdtemp(prefix="kandev-bench-"))
    for d in ("home-raw", "home-kandev", "work"):
        (tmp / d).mkdir()
    old_ledger = os.environ.get("KANDEV_NB_LEDGER")
    os.environ["KANDEV_NB_LEDGER"] = str(tmp / "ledger.sqlite")
    shell = _shell()
    cli = find_cli(None)
    await asyncio.to_thread(subprocess.run, [str(cli), "--version"], capture_output=True, check=False,
                            timeout=60)  # the binary into the page cache, for both sides alike
    replies = [(body, 2)] * (2 * rounds + 2) + [(small, 10)] * (mem_turns + 3)
    try:
        with _server_process(replies) as url:
            await _real_in(res, url, tmp, cli, shell, body, rounds, mem_turns, log)
    finally:
        if old_ledger is None:
            os.environ.pop("KANDEV_NB_LEDGER", None)
        else:
            os.environ["KANDEV_NB_LEDGER"] = old_ledger
    return res


async def _real_in(res: Real, srv: str, tmp: Path, cli: Path, shell: Any, body: str, rounds: int, mem_turns: int,
                   log: Callable[[str], None]) -> None:
    from kandev_nb.agent.session import Session, SessionConfig
    from kandev_nb.notebook import magic
    from kandev_nb.testing import scripted_env
    from kandev_nb.wire.cli import LaunchOptions, build_argv, child_env

    raw: RawCLI | None = None
    session: Session | None = None
    try:
        argv = build_argv(cli, LaunchOptions(include_partial_messages=True))
        raw = RawCLI(argv, child_env(scripted_env(srv, tmp / "home-raw")), str(tmp / "work"))
        t0 = time.perf_counter()
        await raw.start()
        res.raw_start = time.perf_counter() - t0
        factory, mark = _timed_stdio()
        magic.configure(env=scripted_env(srv, tmp / "home-kandev"), cwd=str(tmp / "work"), kernel_tools=False)
        session = magic.sessions["default"] = Session(
            SessionConfig(cwd=str(tmp / "work"), env=dict(magic.settings.env),
                          approval_timeout=magic.settings.approval_timeout), transport_factory=factory)
        t0 = time.perf_counter()
        await session.start()  # what the first cell does before sending: find, --version, spawn, initialize
        res.kandev_start = time.perf_counter() - t0
        with record_comms() as rec:
            add = rec._add
            appends: list[float] = []

            def note(m: Any) -> None:
                if m.kind == "msg" and m.method == "custom" and m.data.get("content", {}).get("type") == "append":
                    appends.append(time.perf_counter())
                add(m)

            rec._add = note  # type: ignore[method-assign,assignment]
            t0 = time.perf_counter()
            await raw.turn("warm up")
            res.raw_first = res.raw_start + time.perf_counter() - t0
            t0 = time.perf_counter()
            await magic.run_cell("", "warm up")
            res.kandev_first = res.kandev_start + time.perf_counter() - t0

            async def raw_turn() -> None:
                assert raw is not None
                t0, c0 = time.perf_counter(), time.process_time()
                await raw.turn("go")
                res.raw.append(time.perf_counter() - t0)
                res.raw_cpu.append(time.process_time() - c0)
                if raw.first_delta is not None:
                    res.raw_ttft_ms.append((raw.first_delta - t0) * 1000)

            async def kandev_turn() -> None:
                mark["first_delta"] = mark["result"] = None
                appends.clear()
                n0, d0 = len(rec.messages), type(shell.display_pub).sent
                t0, c0 = time.perf_counter(), time.process_time()
                turn = await magic.run_cell("", "go")  # TurnView + Session.run + finish + ledger
                t_end = time.perf_counter()
                res.kandev.append(t_end - t0)
                if mark["result"] is not None:
                    res.tail_ms.append((t_end - mark["result"]) * 1000)
                res.kandev_cpu.append(time.process_time() - c0)
                res.comm_bytes.append(rec.total_bytes(n0))
                res.display_bytes.append(type(shell.display_pub).sent - d0)
                res.text_equal = res.text_equal and turn is not None and turn.text == body
                if appends and mark["first_delta"] is not None:
                    res.latency_ms.append((appends[0] - mark["first_delta"]) * 1000)
                    res.kandev_ttft_ms.append((appends[0] - t0) * 1000)
                end = mark["result"] or float("inf")
                res.max_updates_1s = max(res.max_updates_1s, _max_in_window([t for t in appends if t < end]))
                res.max_updates_1s_all = max(res.max_updates_1s_all, _max_in_window(appends))

            for i in range(rounds):  # alternate which goes first, so drift hits both alike
                for step in ((raw_turn, kandev_turn) if i % 2 == 0 else (kandev_turn, raw_turn)):
                    await step()
                log(f"  round {i + 1}/{rounds}: raw {res.raw[-1]:.3f} s, %%claude {res.kandev[-1]:.3f} s")

        if mem_turns:
            await raw.close()
            raw = None
            with _counting_comms():
                await magic.run_cell("", "small")  # caches and the first small-turn allocations
                await magic.run_cell("", "small")
                gc.collect()
                tracemalloc.start()
                rss0, heap0 = _rss_mb(), tracemalloc.get_traced_memory()[0]
                t0 = time.perf_counter()
                for i in range(mem_turns):
                    await magic.run_cell("", "small")
                    if (i + 1) % 50 == 0:
                        log(f"  memory: {i + 1}/{mem_turns} turns")
                res.mem_seconds = time.perf_counter() - t0
                gc.collect()
                res.heap_mb = (tracemalloc.get_traced_memory()[0] - heap0) / 2**20
                # RSS growth without tracemalloc's own bookkeeping
                res.rss_mb = _rss_mb() - rss0 - tracemalloc.get_tracemalloc_memory() / 2**20
                tracemalloc.stop()
                res.mem_turns = mem_turns
        from kandev_nb.ledger import default_ledger

        res.ledger_rows = len(default_ledger().runs())
    finally:
        if raw is not None:
            await raw.close()
        if session is not None:
            await session.close()
        magic.sessions.pop("default", None)


# -- main -----------------------------------------------------------------------------------


def _row(name: str, res: Result) -> str:
    return (f"{name:<44} {res.deltas:>7,} {res.text_bytes / 1024:>7.1f} {res.updates:>7,} {res.max_1s:>3} ({res.max_1s_all:>2}) "
            f"{res.per_delta:>8.4f} {res.bytes / 1024:>9.1f} {res.per_byte:>8.2f} {res.wire_per_byte:>8.2f}")


def _yes(ok: bool) -> str:
    return "met" if ok else "MISSED"


def main(argv: list[str]) -> int:
    """Run the UI benchmark and print the tables (see the module docstring)."""
    global ENVELOPE
    ap = argparse.ArgumentParser(prog="python -m kandev_nb.bench ui")
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
    ENVELOPE = _envelope_bytes()
    from kandev_nb.notebook.widgets.stream import ASSETS

    lib_bytes = len((ASSETS / "kandev_lib.js").read_bytes()) + len((ASSETS / "kandev.css").read_bytes())
    print(f"Streaming text (simulated clock; bytes = comm payload JSON; wire = + {ENVELOPE} B Jupyter envelope/msg)")
    print(f"{'case':<44} {'deltas':>7} {'KB text':>7} {'updates':>7} {'max/1s':>7} {'upd/delta':>9} "
          f"{'KB sent':>9} {'B/B':>8} {'wire B/B':>8}")
    t12 = markdown_text(12_000, seed=2)
    t80 = markdown_text(80_000, seed=3)
    t20 = markdown_text(20_000, seed=4)
    cases: list[tuple[str, Callable[[], Result]]] = [
        ("append: 6,000 deltas, 12 KB, 0.6 s", lambda: _stream("append", deltas(t12, 6000), 0.6)),
        ("append: 80 KB over 60 s (6,667 deltas)", lambda: _stream("append", deltas(t80, 6667), 60.0)),
        ("append: 10,000 deltas, 20 KB, 1 s", lambda: _stream("append", deltas(t20, 10_000), 1.0)),
    ]
    if not args.quick:
        cases += [("paragraphs: 6,000 deltas, 12 KB, 0.6 s", lambda: _stream("paragraphs", deltas(t12, 6000), 0.6)),
                  ("paragraphs: 80 KB over 60 s", lambda: _stream("paragraphs", deltas(t80, 6667), 60.0))]
    if args.naive:
        cases.append(("naive (whole value per delta): 6,000 deltas", lambda: _stream("naive", deltas(t12, 6000), 0.6)))
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
    checks = _render_checks()
    for name, ok in checks.items():
        print(f"  {name}: {'equal' if ok else 'DIFFERENT'}")

    print("\nLarge tool outputs: bytes sent for the card")
    print(f"{'case':<28} {'output':>10} {'before Show all':>16} {'ratio':>8} {'after click':>12} {'ratio':>8}")
    big = {}
    for kind, size in (("shell stdout", 5 * 2**20), ("file read", 2 * 2**20)):
        total, before, after = _big_output("shell" if kind.startswith("shell") else "read", size)
        big[kind] = (total, before, after)
        print(f"{kind:<28} {total / 2**20:>8.1f}MB {before / 1024:>14.1f}KB {before / total:>8.4f} "
              f"{after / 2**20:>10.2f}MB {after / total:>8.2f}")

    real: Real | None = None
    sim_mem: tuple[float, int, int] | None = None
    if not args.no_real:
        print(f"\nReal CLI, one run: raw stdin/stdout loop vs %%claude path ({args.deltas:,}-delta turns, "
              f"{rounds} rounds alternating; then {turns} small turns for memory)", flush=True)
        try:
            real = asyncio.run(_real(args.deltas, rounds, turns, lambda s: print(s, flush=True)))
        except Exception as exc:  # noqa: BLE001 - no CLI here: say so, print the rest
            print(f"  skipped: {exc!r}")
    if real is None:
        print(f"\nMemory after {turns} finished TurnViews (no CLI; 4 KB text + one tool each)")
        sim_mem = _memory(turns)
        print(f"  Python heap growth {sim_mem[0]:.1f} MB; widgets still open: {sim_mem[1]}; "
              f"static renderings kept: {sim_mem[2] / 2**20:.2f} MB")
    _summary(sim, checks, big, real, sim_mem, turns)
    return 0


def _summary(sim: dict[str, Result], checks: dict[str, bool], big: dict[str, tuple[int, int, int]],
             real: Real | None, sim_mem: tuple[float, int, int] | None, turns: int) -> None:
    rows: list[tuple[str, str, str, str]] = []
    s80 = sim["append: 80 KB over 60 s (6,667 deltas)"]
    s6 = sim["append: 6,000 deltas, 12 KB, 0.6 s"]
    rows.append(("bytes/byte, 80 KB over 60 s (payload; wire)", "<= 4",
                 f"{s80.per_byte:.2f}; {s80.wire_per_byte:.2f}", _yes(s80.per_byte <= 4)))
    rows.append(("bytes/byte, 6,000-delta turn, simulated (payload; wire)", "<= 4",
                 f"{s6.per_byte:.2f}; {s6.wire_per_byte:.2f}", _yes(s6.per_byte <= 4)))
    if real is not None and real.comm_bytes:
        bb = _median([float(b) for b in real.comm_bytes]) / real.text_bytes
        rows.append((f"bytes/byte, {real.deltas:,}-delta turn, real CLI (all comm msgs of the turn)", "<= 4",
                     f"{bb:.2f} (+ static rendering {_median([float(b) for b in real.display_bytes]) / 1024:.0f} KB)",
                     _yes(bb <= 4)))
    appends = [x for name, x in sim.items() if name.startswith("append")]
    most, most_all = max(x.max_1s for x in appends), max(x.max_1s_all for x in appends)
    rows.append(("text updates in any 1 s while streaming, simulated (+ end-of-turn flush)", "<= 20",
                 f"{most} ({most_all})", _yes(most <= 20)))
    if real is not None:
        rows.append(("text updates in any 1 s while streaming, real CLI (+ end-of-turn flush)", "<= 20",
                     f"{real.max_updates_1s} ({real.max_updates_1s_all})", _yes(real.max_updates_1s <= 20)))
        if real.latency_ms:
            lat = (_median(real.latency_ms), max(real.latency_ms))
            rows.append(("first token: CLI line read -> widget append sent (median; max)", "<= 50 ms",
                         f"{lat[0]:.1f} ms; {lat[1]:.1f} ms", _yes(lat[1] <= 50)))
            rows.append(("prompt sent -> first delta: raw loop vs %%claude widget (median)", "report",
                         f"{_median(real.raw_ttft_ms):.0f} ms vs {_median(real.kandev_ttft_ms):.0f} ms", ""))
    for name, ok in checks.items():
        rows.append((f"final rendering equal to the text: {name}", "equal", "equal" if ok else "DIFFERENT", _yes(ok)))
    if real is not None:
        rows.append(("final rendering: real CLI turn text == scripted text", "equal",
                     "equal" if real.text_equal else "DIFFERENT", _yes(real.text_equal)))
    for kind, (total, before, after) in big.items():
        rows.append((f"large output, {kind} {total / 2**20:.0f} MB: sent before / after Show all", "bounded",
                     f"{before / 1024:.1f} KB / {after / 2**20:.2f} MB", _yes(before < 64 * 1024)))
    if real is not None and real.raw:
        raw_m, k_m = _median(real.raw), _median(real.kandev)
        rows.append((f"warm turn, raw loop (median of {len(real.raw)}; best)", "",
                     f"{raw_m:.3f} s; {min(real.raw):.3f} s", ""))
        rows.append((f"warm turn, %%claude path (median of {len(real.kandev)}; best)", "",
                     f"{k_m:.3f} s; {min(real.kandev):.3f} s", ""))
        ratio = k_m / raw_m
        rows.append(("per-turn overhead: %%claude / raw (medians; bests)", "<= 1.1",
                     f"{ratio:.3f}; {min(real.kandev) / min(real.raw):.3f}", _yes(ratio <= 1.1)))
        rows.append(("%%claude after the result line (finish, ledger; median; max)", "report",
                     f"{_median(real.tail_ms):.0f} ms; {max(real.tail_ms, default=float('nan')):.0f} ms", ""))
        rows.append(("our CPU per warm turn: raw loop vs %%claude (median)", "report",
                     f"{_median(real.raw_cpu) * 1000:.0f} ms vs {_median(real.kandev_cpu) * 1000:.0f} ms", ""))
        rows.append(("start-up (process + initialize): raw vs kandev Session.start", "report",
                     f"{real.raw_start:.2f} s vs {real.kandev_start:.2f} s", ""))
        rows.append(("first turn incl. start-up: raw vs %%claude", "report",
                     f"{real.raw_first:.2f} s vs {real.kandev_first:.2f} s", ""))
    if real is not None and real.mem_turns:
        rows.append((f"memory after {real.mem_turns} warm %%claude turns, one session: RSS growth", "< 50 MB",
                     f"{real.rss_mb:.1f} MB", _yes(real.rss_mb < 50)))
        rows.append((f"memory after {real.mem_turns} warm %%claude turns: Python heap growth", "< 50 MB",
                     f"{real.heap_mb:.1f} MB", _yes(real.heap_mb < 50)))
    elif sim_mem is not None:
        rows.append((f"memory after {turns} finished TurnViews (no CLI): Python heap growth", "< 50 MB",
                     f"{sim_mem[0]:.1f} MB", _yes(sim_mem[0] < 50)))
    width = max(len(r[0]) for r in rows)
    print("\nIssue 8: every figure")
    print(f"{'figure':<{width}}  {'target':>8}  {'measured':<34} result")
    for name, target, value, verdict in rows:
        print(f"{name:<{width}}  {target:>8}  {value:<34} {verdict}")
