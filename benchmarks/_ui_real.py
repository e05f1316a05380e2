"""The real-CLI part of ``benchmarks/bench_ui.py``: a raw stdin/stdout loop and the
``%%claude`` path, side by side in one run against one scripted model server."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import json
import statistics
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from _ui_sim import markdown_text, max_in_window

from kandev_nb.notebook.widgets.recording import record_comms

__all__ = ["RawCLI", "Real", "median", "run_real"]


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
            *self.argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            env=self.env,
            cwd=self.cwd,
            start_new_session=True,
        )
        await self._send(
            {"type": "control_request", "request_id": "raw-init", "request": {"subtype": "initialize", "hooks": None}}
        )
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
        await self._send(
            {
                "type": "user",
                "message": {"role": "user", "content": prompt},
                "parent_tool_use_id": None,
                "session_id": "",
            }
        )
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
        async def batches(self) -> Any:  # what the session's reader takes: one read at a time
            async for lines in super().batches():
                for line in lines:
                    if mark["first_delta"] is None and isinstance(line, bytes) and b'"text_delta"' in line:
                        mark["first_delta"] = time.perf_counter()
                    elif isinstance(line, bytes) and b'"type":"result"' in line:
                        mark["result"] = time.perf_counter()
                yield lines

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

        def publish(
            self,
            data: Any,
            metadata: Any = None,
            source: Any = None,
            *,
            transient: Any = None,
            update: bool = False,
            **_: Any,
        ) -> None:
            JsonPublisher.sent += len(
                json.dumps(
                    {"data": data, "metadata": metadata or {}, "transient": transient or {}}, default=str
                ).encode()
            )

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


def median(xs: list[float]) -> float:
    return statistics.median(xs) if xs else float("nan")


async def run_real(n_deltas: int, rounds: int, mem_turns: int, log: Callable[[str], None]) -> Real:
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
    await asyncio.to_thread(
        subprocess.run, [str(cli), "--version"], capture_output=True, check=False, timeout=60
    )  # the binary into the page cache, for both sides alike
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


async def _real_in(
    res: Real,
    srv: str,
    tmp: Path,
    cli: Path,
    shell: Any,
    body: str,
    rounds: int,
    mem_turns: int,
    log: Callable[[str], None],
) -> None:
    from kandev_nb.agent.session import Session, SessionConfig
    from kandev_nb.notebook import magic
    from kandev_nb.testing import scripted_env
    from kandev_nb.wire.cli import LaunchOptions, build_argv, child_env

    async def page_shown() -> bool:
        return True  # this shell plays a tab that shows widgets: the turn gets its live TurnView

    magic.page_shown = page_shown  # type: ignore[attr-defined]  # (no page says "present" here)
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
            SessionConfig(
                cwd=str(tmp / "work"), env=dict(magic.settings.env), approval_timeout=magic.settings.approval_timeout
            ),
            transport_factory=factory,
        )
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
                res.max_updates_1s = max(res.max_updates_1s, max_in_window([t for t in appends if t < end]))
                res.max_updates_1s_all = max(res.max_updates_1s_all, max_in_window(appends))

            for i in range(rounds):  # alternate which goes first, so drift hits both alike
                for step in (raw_turn, kandev_turn) if i % 2 == 0 else (kandev_turn, raw_turn):
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
