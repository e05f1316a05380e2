"""One agent per row (issues 25, 26, 33): the fleet's rows per minute against a hand-written
anchor, what the kernel pays for it, and where a row's time goes.

Run: ``python benchmarks/bench_fleet.py [--quick] [--cluster] [--rows 1000] [--concurrency 16] [--delay 0.5]``.
Every row is one turn of the real CLI (the newest pinned one) against the scripted model,
which answers each request after `--delay` seconds. The model runs in a child process of
its own (``--serve-model``), so that this process, the kernel's stand-in, holds only what a
kernel would: the fleet, its ledger and its board. Measured, in one run:

* the anchor a user would write by hand: ``asyncio.gather`` over the Agent SDK's ``query()``
  with an ``asyncio.Semaphore(concurrency)``, same rows, same model, in this process;
* ``kandev_nb.fleet`` (:func:`kandev_nb.fleet.build_fleet`) with a ledger, the board
  (:class:`~kandev_nb.notebook.fleet_board.FleetBoard`, refreshed by its own 4 Hz ticker,
  its comms recorded, not displayed) and the approval queue on;
* the kernel's own CPU per row (``time.process_time`` of this process: the fleet's overhead
  outside the CLI processes);
* the kernel's peak RSS growth during the fleet (MB, sampled every 50 ms), the board's comm
  bytes per second over the fleet (payload bytes from the board's creation to its last
  redraw: :func:`kandev_nb.notebook.widgets.recording.record_comms`, no envelope) and the
  size of the fleet cell's saved output (the static board and its text, KB);
* where a row's time goes (:class:`_Timeline`): the mean and median of each stretch of a
  row's life between timestamps this process or the model can see, from the moment the row
  gets its slot to the moment it is finished;
* the scaling from concurrency 1 to `--concurrency` (rows per minute, at most 24 rows);
* the board's comm bytes per second while `--stream-rows` rows stream text at once.

Prints a table, then ``headline: fleet rows/min: <r>x Agent SDK gather`` and
``headline: fleet at concurrency N: <r>x concurrency 1``. Asserts nothing.

With ``--cluster`` (issue 26; needs dask and distributed), instead, in one run:

* the anchor, then the same fleet (ledger and board on) in the kernel and on a
  ``distributed.LocalCluster`` of 2 worker processes (``threads_per_worker`` =
  `--concurrency`, so a row waiting for its Semaphore lease never starves another), all at
  the same total `--concurrency`; the workers get the scripted model's URL, its key and the
  CLI through the cluster's worker environment (``LocalCluster(env=...)``), as a user's
  cluster would; for the cluster's fleet the kernel's peak RSS growth, the board's comm
  bytes per second, the saved output and where a row's time goes (from the kernel's and
  the model's clocks, and the turn's own timestamps from the worker);
* the approval round trip worker -> notebook -> worker: `--approval-rows` rows each ask
  ``can_use_tool`` for one Bash call, answered by the fleet's kernel-side ``approve`` policy
  (no human think time); the figure is the ``waited_ms`` of the worker's own Decision
  (the worker's clock from the CLI's request to the answer taken from its Queue);
* the Dask messages per row: ``Worker.log_event`` messages the kernel's
  ``subscribe_topic`` handler got, and ``distributed.Queue`` answers it sent.

Prints a table, then ``headline: fleet on a 2-worker LocalCluster rows/min: <r>x Agent SDK
gather`` and ``... <r>x fleet in the kernel``. Asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from _common import headline, use_this_clone

use_this_clone()

import pandas as pd

from kandev_nb.agent.config import SessionConfig
from kandev_nb.fleet import build_fleet
from kandev_nb.ledger import RunLedger
from kandev_nb.testing import (
    RecordedRequest,
    Reply,
    ScriptedModelServer,
    pinned_cli,
    scripted_env,
    text,
    tool_use,
)

TOUCH = re.compile(r"Touch ticket (\d+)")
TICKET = re.compile(r"(?:Classify|Touch|Stream) ticket (\d+)")
LABEL = 44
"""Width of a table line's label: its figures start after it."""


def _answer(delay: float):  # type: ignore[no-untyped-def]
    def entry(request: RecordedRequest) -> Reply:
        if "Stream" in repr(request.messages):  # the streaming run: many small text deltas
            return Reply(text("word " * 300, chunk_size=5, delay=0.005))
        touch = TOUCH.search(repr(request.messages))
        if touch and request.last_user_text():  # the approval run: one Bash call the CLI asks about
            command = f"touch out-{touch.group(1)}.txt"
            return Reply(tool_use("Bash", {"command": command, "description": "make a file"}))
        return Reply(text("classified"), delay_first_byte=delay)

    return entry


# -- the model, in a process of its own -----------------------------------------------------


def serve_model(delay: float, entries: int) -> None:
    """``--serve-model``: run the scripted model, print its URL; on each ``dump`` line of stdin
    print the main requests received since the last one as a JSON line of ``[received_at
    (epoch seconds), ticket number or null]`` pairs; exit at EOF."""
    with ScriptedModelServer([_answer(delay)] * entries) as model:
        print(model.url, flush=True)
        seen = 0
        for line in sys.stdin:
            if line.strip() != "dump":
                continue
            requests = model.requests
            out = []
            for request in requests[seen:]:
                if request.main:
                    found = TICKET.search(request.last_user_text())
                    out.append([request.received_at, int(found.group(1)) if found else None])
            seen = len(requests)
            print(json.dumps(out), flush=True)


class ModelProcess:
    """The scripted model in a child process (:func:`serve_model`): its `url`, and
    :meth:`dump` of the main requests since the last dump."""

    def __init__(self, delay: float, entries: int) -> None:
        argv = [sys.executable, __file__, "--serve-model", "--delay", str(delay), "--entries", str(entries)]
        self.process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert self.process.stdout is not None
        self.url = self.process.stdout.readline().strip()
        if not self.url.startswith("http"):
            raise RuntimeError(f"the scripted model did not start: {self.url!r}")

    def dump(self) -> list[tuple[float, int | None]]:
        """(received_at, ticket number) of each main request since the last dump."""
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write("dump\n")
        self.process.stdin.flush()
        return [(at, n) for at, n in json.loads(self.process.stdout.readline())]

    def close(self) -> None:
        """End the child (stdin EOF), killing it after 10 s."""
        if self.process.stdin is not None:
            self.process.stdin.close()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


# -- the anchor -------------------------------------------------------------------------------


async def _anchor(rows: int, concurrency: int, env: dict[str, str], cwd: str, cli: Path) -> float:
    """Seconds for `rows` Agent SDK ``query()`` calls under a semaphore."""
    from claude_agent_sdk import ClaudeAgentOptions, query

    gate = asyncio.Semaphore(concurrency)
    options = ClaudeAgentOptions(cwd=cwd, env=env, cli_path=str(cli))

    async def one(i: int) -> None:
        async with gate:
            async for _message in query(prompt=f"Classify ticket {i}.", options=options):
                pass

    began = time.perf_counter()
    await asyncio.gather(*(one(i) for i in range(rows)))
    return time.perf_counter() - began


# -- where a row's time goes -------------------------------------------------------------------


class _Timeline:
    """Timestamps of each row's life that can really be observed, and the stretches between.

    In the kernel (:meth:`watching`): the row's slot (``RowState.started``), the CLI's spawn
    and its answer to ``initialize`` (``CLIConnection.start`` entered and returned, in the
    row's task), the turn's start and end (``Turn.started_at``/``ended_at``: the prompt is
    sent, the ``result`` arrived), the model's request (the model's own clock, same machine),
    the time the CLI itself says it spent in the API (``duration_api_ms``), ``Session.close``
    (the CLI's exit) and the row's end (``RowState.ended``). On a cluster the worker's stamps
    are not observable from the kernel: the row's start is the kernel's receipt of the
    worker's ``start`` message; the turn's stamps and the task's own (the CLI exited, the task
    returned: :class:`~kandev_nb.fleet.cluster_worker.RowOutcome`) come back with the result
    (the worker's clock, the same machine's), and the kernel stamps its receipt (:meth:`receiving`).
    """

    def __init__(self) -> None:
        self.offset = time.time() - time.monotonic()  # monotonic -> epoch seconds
        self.spawn: dict[Any, float] = {}
        self.ready: dict[Any, float] = {}
        self.closing: dict[Any, float] = {}
        self.closed: dict[Any, float] = {}
        self.received: dict[Any, float] = {}
        """By row key, when the kernel had a cluster row's result (epoch seconds)."""

    def receiving(self, fleet: Any) -> None:
        """Stamp the moment a :class:`~kandev_nb.fleet.cluster.ClusterFleet` gets each row's
        result from Dask (its ``_judge_outcome`` called; wrapped on the instance)."""
        judge = fleet._judge_outcome

        async def stamped(state: Any, outcome: Any) -> Any:
            self.received.setdefault(state.key, time.time())
            return await judge(state, outcome)

        fleet._judge_outcome = stamped

    @contextlib.contextmanager
    def watching(self) -> Iterator[None]:
        """Stamp every ``CLIConnection.start`` and ``Session.close`` by the task that runs it."""
        from kandev_nb.agent.connection import CLIConnection
        from kandev_nb.agent.session import Session

        start, close = CLIConnection.start, Session.close

        async def timed_start(connection: Any, timeout: float) -> Any:
            task = asyncio.current_task()
            self.spawn.setdefault(task, time.monotonic())
            try:
                return await start(connection, timeout)
            finally:
                self.ready.setdefault(task, time.monotonic())

        async def timed_close(session: Any) -> None:
            task = asyncio.current_task()
            self.closing.setdefault(task, time.monotonic())
            try:
                await close(session)
            finally:
                self.closed.setdefault(task, time.monotonic())

        CLIConnection.start, Session.close = timed_start, timed_close  # type: ignore[method-assign]
        try:
            yield
        finally:
            CLIConnection.start, Session.close = start, close  # type: ignore[method-assign]

    def stretches(self, fleet: Any, requests: list[tuple[float, int | None]]) -> dict[str, list[float]]:
        """By stretch, its length in ms for each done row with every stamp (a partition of the
        row's time from its slot to its end)."""
        first: dict[int, float] = {}
        for at, number in requests:
            if number is not None:
                first[number] = min(first.get(number, at), at)
        tasks = getattr(fleet, "_tasks", {})
        kernel = bool(self.spawn)
        out: dict[str, list[float]] = {}
        for key, state in fleet.rows.items():
            result = state.result
            turn = result.turn if result is not None else None
            if turn is None or turn.stats is None or turn.ended_at is None or state.started is None:
                continue
            if key not in first or state.ended is None:
                continue
            row_start, row_end = state.started + self.offset, state.ended + self.offset
            turn_start, turn_end = turn.started_at.timestamp(), turn.ended_at.timestamp()
            model_at, api = first[key], turn.stats.duration_api_ms / 1000
            parts: list[tuple[str, float]] = []
            if kernel:
                task = tasks.get(key)
                if task not in self.spawn or task not in self.closed:
                    continue
                spawn, ready = self.spawn[task] + self.offset, self.ready[task] + self.offset
                closing, closed = self.closing[task] + self.offset, self.closed[task] + self.offset
                parts += [
                    ("slot -> CLI spawned (ours)", spawn - row_start),
                    ("CLI start + initialize (spawn -> answer)", ready - spawn),
                    ("initialize -> prompt sent (ours)", turn_start - ready),
                ]
            else:
                parts.append(("start msg -> prompt sent (CLI start, init)", turn_start - row_start))
            parts += [
                ("prompt -> model request (the CLI)", model_at - turn_start),
                ("model request -> result read", turn_end - model_at),
                ("  of which the API (duration_api_ms)", api),
            ]
            if kernel:
                parts += [
                    ("result -> close (ours: judge, ledger)", closing - turn_end),
                    ("CLI exit (Session.close)", closed - closing),
                    ("close -> row finished (ours)", row_end - closed),
                ]
            else:
                outcome, received = fleet.outcomes.get(key), self.received.get(key)
                if outcome is None or outcome.closed_at is None or outcome.returned_at is None or received is None:
                    continue
                parts += [
                    ("result -> CLI exited (Session.close)", outcome.closed_at - turn_end),
                    ("CLI exited -> task returned (lease back)", outcome.returned_at - outcome.closed_at),
                    ("task returned -> kernel has it (Dask)", received - outcome.returned_at),
                    ("kernel has it -> row finished (ours)", row_end - received),
                ]
            parts.append(("row: slot -> finished", row_end - row_start))
            for label, seconds in parts:
                out.setdefault(label, []).append(seconds * 1000)
        return out


def _print_stretches(title: str, stretches: dict[str, list[float]]) -> None:
    total = statistics.fmean(stretches["row: slot -> finished"]) if stretches else float("nan")
    n = len(next(iter(stretches.values()), []))
    print(f"where a row's time goes, {title} ({n} rows): mean, median, share of the mean row")
    print("  (the stretches add up to the row; an indented one is part of the one above it)")
    for label, values in stretches.items():
        mean, median = statistics.fmean(values), statistics.median(values)
        print(f"  {label:{LABEL - 2}} {mean:10.1f} ms mean {median:10.1f} ms median {mean / total * 100:6.1f} %")


# -- one fleet, measured ---------------------------------------------------------------------------


@dataclass
class Measured:
    """One fleet's figures: wall and CPU seconds, peak RSS growth (MB), saved output (KB), the
    board's comm payload (bytes, messages), the fleet and, on a cluster, its Dask messages."""

    seconds: float
    cpu_s: float
    rss_growth_mb: float
    saved_kb: float
    comm_bytes: int
    comm_messages: int
    fleet: Any
    counted: _Counted | None = None

    @property
    def comm_rate(self) -> float:
        """The board's comm payload bytes per second over the run."""
        return self.comm_bytes / self.seconds


class _Counted:
    """The Dask messages of one :class:`~kandev_nb.fleet.cluster.ClusterFleet` run: the
    ``log_event`` messages its ``subscribe_topic`` handler gets (worker -> notebook) and the
    ``distributed.Queue`` messages it puts (notebook -> worker), counted by wrapping both."""

    def __init__(self, fleet: object) -> None:
        self.events = self.answers = 0
        on_message, send = fleet._on_message, fleet._send  # type: ignore[attr-defined]

        def counted_message(event: object) -> None:
            self.events += 1
            on_message(event)

        async def counted_send(key: object, attempt: str, wire: dict[str, str]) -> None:
            self.answers += 1
            await send(key, attempt, wire)

        fleet._on_message, fleet._send = counted_message, counted_send  # type: ignore[attr-defined]


async def _fleet(
    rows: int,
    concurrency: int,
    config: SessionConfig,
    ledger: RunLedger | None,
    name: str,
    template: str = "Classify ticket {id}.",
    timeline: _Timeline | None = None,
    **options: Any,
) -> Measured:
    """One fleet of `rows` rows with the board on (its comms recorded), its memory sampled."""
    import psutil

    from kandev_nb.notebook.fleet_board import FleetBoard, board_html, progress_text
    from kandev_nb.notebook.widgets.recording import record_comms

    me = psutil.Process()
    with record_comms(keep=False) as recorder:
        base = peak = me.memory_info().rss
        frame = pd.DataFrame({"id": range(rows)})
        fleet = build_fleet(
            frame, template, concurrency=concurrency, name=name, config=config, ledger=ledger, **options
        )
        counted = _Counted(fleet) if "cluster" in options else None
        if timeline is not None and "cluster" in options:
            timeline.receiving(fleet)
        board = FleetBoard(fleet)

        async def sample() -> None:
            nonlocal peak
            while True:
                peak = max(peak, me.memory_info().rss)
                await asyncio.sleep(0.05)

        loop = asyncio.get_running_loop()
        sampler, ticker = loop.create_task(sample()), loop.create_task(board._tick())
        in_kernel = timeline is not None and "cluster" not in options
        watching = timeline.watching() if in_kernel and timeline is not None else contextlib.nullcontext()
        cpu, began = time.process_time(), time.perf_counter()
        with watching:
            result = await fleet.run()
        seconds, cpu = time.perf_counter() - began, time.process_time() - cpu
        ticker.cancel()
        sampler.cancel()
        board.refresh()  # the last redraw: every row finished
        comm_bytes, comm_messages = recorder.total_bytes(), recorder.count()
        board.finish(result)
        saved = len(board_html(fleet, result).encode()) + len(progress_text(fleet).encode())
    assert (result["status"] == "done").all(), result["error"].tolist()[:5]
    return Measured(seconds, cpu, (peak - base) / 2**20, saved / 1000, comm_bytes, comm_messages, fleet, counted)


def _round_trips(fleet: object) -> list[int]:
    """The ``waited_ms`` of every approval decided on the workers (the Decision each row's
    CLI got, timed by the worker from the request to the answer off its Queue)."""
    waited = []
    for state in fleet.rows.values():  # type: ignore[attr-defined]
        turn = state.result.turn
        for record in turn.tools.values():
            if record.decision is not None:
                waited.append(record.decision.waited_ms)
    return waited


def _print_costs(run: Measured, rows: int) -> None:
    """The kernel's side of one fleet: CPU per row, peak RSS growth, saved output, comm."""
    print(f"{'kernel CPU per row':{LABEL}} {run.cpu_s / rows * 1000:10.1f} ms")
    print(f"{'kernel peak RSS growth':{LABEL}} {run.rss_growth_mb:10.1f} MB (goal < 300)")
    print(f"{'fleet cell saved output':{LABEL}} {run.saved_kb:10.1f} KB (goal < 60)")
    label = f"board comm over the {rows}-row fleet"
    rate, per_s = run.comm_rate, run.comm_messages / run.seconds
    print(f"{label:{LABEL}} {rate:10.1f} bytes/s ({per_s:.1f} messages/s; goal < 20,000 bytes/s)")


async def cluster_async(args: argparse.Namespace) -> None:
    """The anchor, the same fleet in the kernel and on a 2-worker LocalCluster; the approval
    round trip and the Dask messages per row; print the table and the headlines."""
    import distributed

    cli = pinned_cli()
    home = Path(tempfile.mkdtemp(prefix="bench-fleet-home-"))
    cwd = tempfile.mkdtemp(prefix="bench-fleet-")
    model = ModelProcess(args.delay, args.rows * 12 + args.approval_rows * 6 + 20)
    try:
        env = scripted_env(model.url, home)
        config = SessionConfig(cwd=cwd, cli_path=cli, env=env, approval_timeout=60)
        ledger = RunLedger(Path(cwd) / "ledger.sqlite")
        worker_env = {**env, "KANDEV_CLAUDE_CLI": str(cli)}  # the cluster's own configuration
        anchor = await _anchor(args.rows, args.concurrency, {**os.environ, **env}, cwd, cli)
        began = time.perf_counter()
        async with (
            distributed.LocalCluster(
                n_workers=2,
                threads_per_worker=args.concurrency,
                processes=True,
                dashboard_address=None,
                env=worker_env,
                asynchronous=True,
            ) as cluster,
            distributed.Client(cluster, asynchronous=True) as client,
        ):
            startup = time.perf_counter() - began
            await _fleet(2, 2, config, None, "bench-warm", cluster=client)  # imports on both workers
            kernel = await _fleet(args.rows, args.concurrency, config, ledger, "bench-kernel")
            model.dump()
            timeline = _Timeline()
            on_cluster = await _fleet(
                args.rows, args.concurrency, config, ledger, "bench-cluster", timeline=timeline, cluster=client
            )
            stretches = timeline.stretches(on_cluster.fleet, model.dump())
            asked = await _fleet(
                args.approval_rows,
                args.concurrency,
                config,
                None,
                "bench-approve",
                "Touch ticket {id}.",
                cluster=client,
                approve=lambda tool, tool_input: "allow",
            )
    finally:
        model.close()
    trips = sorted(_round_trips(asked.fleet))
    median, p90 = statistics.median(trips), trips[min(len(trips) - 1, int(0.9 * len(trips)))]
    rate_anchor = args.rows / anchor * 60
    rate_kernel, rate_cluster = args.rows / kernel.seconds * 60, args.rows / on_cluster.seconds * 60
    print(f"rows {args.rows}, concurrency {args.concurrency}, model delay {args.delay:g} s, CLI {cli.name}")
    print(f"{'LocalCluster(2 worker processes) up':{LABEL}} {startup * 1000:10.1f} ms")
    print(f"{'Agent SDK gather + semaphore':{LABEL}} {rate_anchor:10.1f} rows/min")
    print(f"{'fleet in the kernel':{LABEL}} {rate_kernel:10.1f} rows/min")
    print(f"{'fleet on the LocalCluster':{LABEL}} {rate_cluster:10.1f} rows/min")
    _print_costs(on_cluster, args.rows)
    label = f"approval round trip, {len(trips)} asks"
    print(f"{label:{LABEL}} {median:10.1f} ms median, {p90:.1f} ms p90 (worker -> notebook -> worker)")
    counted = on_cluster.counted
    assert counted is not None and asked.counted is not None
    for label, messages, rows in (
        ("Dask messages per row, no approval", counted, args.rows),
        ("Dask messages per row, one approval", asked.counted, args.approval_rows),
    ):
        print(f"{label:{LABEL}} {messages.events / rows:10.2f} log_event, {messages.answers / rows:.2f} Queue answers")
    _print_stretches("on the LocalCluster", stretches)
    headline("fleet on a 2-worker LocalCluster rows/min", rate_cluster / rate_anchor, "Agent SDK gather")
    headline("fleet on a 2-worker LocalCluster rows/min", rate_cluster / rate_kernel, "fleet in the kernel")


async def main_async(args: argparse.Namespace) -> None:
    """Run the anchor, the fleet and the scaling; print the table and the headlines."""
    cli = pinned_cli()
    home = Path(tempfile.mkdtemp(prefix="bench-fleet-home-"))
    cwd = tempfile.mkdtemp(prefix="bench-fleet-")
    model = ModelProcess(args.delay, args.rows * 6 + 100)
    try:
        env = scripted_env(model.url, home)
        config = SessionConfig(cwd=cwd, cli_path=cli, env=env, approval_timeout=60)
        ledger = RunLedger(Path(cwd) / "ledger.sqlite")
        anchor = await _anchor(args.rows, args.concurrency, {**os.environ, **env}, cwd, cli)
        model.dump()
        timeline = _Timeline()
        fleet = await _fleet(args.rows, args.concurrency, config, ledger, "bench", timeline=timeline)
        stretches = timeline.stretches(fleet.fleet, model.dump())
        one_rows = min(24, max(2, args.rows // 4))
        one = await _fleet(one_rows, 1, config, ledger, "bench-1")
        stream = await _fleet(args.stream_rows, args.stream_rows, config, ledger, "bench-stream", "Stream ticket {id}.")
    finally:
        model.close()
    rate_anchor, rate_fleet = args.rows / anchor * 60, args.rows / fleet.seconds * 60
    one_rate = one_rows / one.seconds * 60
    print(f"rows {args.rows}, concurrency {args.concurrency}, model delay {args.delay:g} s, CLI {cli.name}")
    print(f"{'Agent SDK gather + semaphore':{LABEL}} {rate_anchor:10.1f} rows/min")
    print(f"{'kandev_nb.fleet (ledger, board)':{LABEL}} {rate_fleet:10.1f} rows/min")
    print(f"{'kandev_nb.fleet at concurrency 1':{LABEL}} {one_rate:10.1f} rows/min")
    _print_costs(fleet, args.rows)
    label = f"board comm, {args.stream_rows} rows streaming"
    rate, per_s = stream.comm_rate, stream.comm_messages / stream.seconds
    print(f"{label:{LABEL}} {rate:10.1f} bytes/s ({per_s:.1f} messages/s, 300 text deltas per row)")
    _print_stretches("in the kernel", stretches)
    headline("fleet rows/min", rate_fleet / rate_anchor, "Agent SDK gather")
    headline(f"fleet at concurrency {args.concurrency}", rate_fleet / one_rate, "concurrency 1")


def main() -> None:
    """Parse the options and run."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="8 rows, concurrency 4, 0.5 s per answer")
    parser.add_argument("--rows", type=int, default=32)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--delay", type=float, default=2.0, help="seconds the model takes to answer")
    parser.add_argument("--stream-rows", type=int, default=16, help="rows streaming text for the comm figure")
    parser.add_argument("--cluster", action="store_true", help="the fleet on a 2-worker LocalCluster vs the kernel")
    parser.add_argument("--approval-rows", type=int, default=16, help="rows asking one approval (--cluster)")
    parser.add_argument("--serve-model", action="store_true", help=argparse.SUPPRESS)  # the model's child process
    parser.add_argument("--entries", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_model:
        serve_model(args.delay, args.entries)
        return
    if args.quick:
        args.rows, args.concurrency, args.delay, args.stream_rows, args.approval_rows = 8, 4, 0.5, 6, 6
    asyncio.run(cluster_async(args) if args.cluster else main_async(args))


if __name__ == "__main__":
    main()
