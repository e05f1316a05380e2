"""One agent per row (issue 25): the fleet's rows per minute against a hand-written anchor.

Run: ``python benchmarks/bench_fleet.py [--quick] [--cluster] [--rows 32] [--concurrency 8] [--delay 2]``.
Every row is one turn of the real CLI (the newest pinned one) against the scripted model,
which answers each request after `--delay` seconds. Measured, in one run:

* the anchor a user would write by hand: ``asyncio.gather`` over the Agent SDK's ``query()``
  with an ``asyncio.Semaphore(concurrency)``, same rows, same model;
* ``kandev_nb.fleet`` (:func:`kandev_nb.fleet.build_fleet`) with a ledger, the board
  (:class:`~kandev_nb.notebook.fleet_board.FleetBoard`, refreshed by its own 4 Hz ticker,
  not displayed) and the approval queue on;
* the kernel's own CPU per row (``time.process_time`` of this process: the fleet's overhead
  outside the CLI processes);
* the kernel's peak RSS growth during the fleet (MB) and the size of the fleet cell's saved
  output (the static board and result table, KB);
* the scaling from concurrency 1 to `--concurrency` (rows per minute);
* the board's comm bytes per second while `--stream-rows` rows stream text at once (recorded
  with :func:`kandev_nb.notebook.widgets.recording.record_comms`; payload bytes, no envelope).

Prints a table, then ``headline: fleet rows/min: <r>x Agent SDK gather`` and
``headline: fleet at concurrency N: <r>x concurrency 1``. Asserts nothing.

With ``--cluster`` (issue 26; needs dask and distributed), instead, in one run:

* the same fleet (ledger and board on) in the kernel and on a ``distributed.LocalCluster``
  of 2 worker processes (``threads_per_worker`` = `--concurrency`, so a row waiting for its
  Semaphore lease never starves another), both at the same total `--concurrency`; the
  workers get the scripted model's URL, its key and the CLI through the cluster's worker
  environment (``LocalCluster(env=...)``), as a user's cluster would;
* the approval round trip worker -> notebook -> worker: `--approval-rows` rows each ask
  ``can_use_tool`` for one Bash call, answered by the fleet's kernel-side ``approve`` policy
  (no human think time); the figure is the ``waited_ms`` of the worker's own Decision
  (the worker's clock from the CLI's request to the answer taken from its Queue);
* the Dask messages per row: ``Worker.log_event`` messages the kernel's
  ``subscribe_topic`` handler got, and ``distributed.Queue`` answers it sent.

Prints a table, then ``headline: fleet on a 2-worker LocalCluster rows/min: <r>x fleet in
the kernel``. Asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import statistics
import tempfile
import time
from pathlib import Path

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


PEAK: dict[str, float] = {}
"""What the last :func:`_fleet` measured besides its time: ``rss_growth_mb`` (this process's
peak resident set above its size at the start, sampled every 50 ms) and ``saved_kb`` (the
fleet cell's saved output: the static board and result table, :func:`board_html`)."""


async def _fleet(
    rows: int, concurrency: int, config: SessionConfig, ledger: RunLedger, name: str, template: str = ""
) -> tuple[float, float]:
    """(seconds, CPU seconds of this process) for one fleet of `rows` rows with the board on;
    its peak memory growth and saved output size go to :data:`PEAK`."""
    import psutil

    from kandev_nb.notebook.fleet_board import FleetBoard, board_html

    frame = pd.DataFrame({"id": range(rows)})
    fleet = build_fleet(
        frame, template or "Classify ticket {id}.", concurrency=concurrency, name=name, config=config, ledger=ledger
    )
    board = FleetBoard(fleet)
    me = psutil.Process()
    base = peak = me.memory_info().rss

    async def sample() -> None:
        nonlocal peak
        while True:
            peak = max(peak, me.memory_info().rss)
            await asyncio.sleep(0.05)

    sampler = asyncio.get_running_loop().create_task(sample())
    ticker = asyncio.get_running_loop().create_task(board._tick())
    cpu, began = time.process_time(), time.perf_counter()
    result = await fleet.run()
    seconds, cpu = time.perf_counter() - began, time.process_time() - cpu
    ticker.cancel()
    sampler.cancel()
    board.finish(result)
    PEAK.update(rss_growth_mb=(peak - base) / 2**20, saved_kb=len(board_html(fleet, result).encode()) / 1000)
    assert (result["status"] == "done").all(), result["error"].tolist()
    return seconds, cpu


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


async def _cluster_fleet(
    rows: int, concurrency: int, config: SessionConfig, ledger: RunLedger | None, name: str, **options: object
) -> tuple[float, _Counted, object]:
    """(seconds, message counts, the fleet) for one fleet of `rows` rows on `options["cluster"]`."""
    from kandev_nb.notebook.fleet_board import FleetBoard

    template = "Touch ticket {id}." if "approve" in options else "Classify ticket {id}."
    fleet = build_fleet(
        pd.DataFrame({"id": range(rows)}),
        template,
        concurrency=concurrency,
        name=name,
        config=config,
        ledger=ledger,
        **options,  # type: ignore[arg-type]
    )
    counted = _Counted(fleet)
    board = FleetBoard(fleet)
    ticker = asyncio.get_running_loop().create_task(board._tick())
    began = time.perf_counter()
    result = await fleet.run()
    seconds = time.perf_counter() - began
    ticker.cancel()
    board.finish(result)
    assert (result["status"] == "done").all(), result["error"].tolist()
    return seconds, counted, fleet


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


async def cluster_async(args: argparse.Namespace) -> None:
    """The same fleet in the kernel and on a 2-worker LocalCluster; the approval round trip
    and the Dask messages per row; print the table and the headline."""
    import distributed

    cli = pinned_cli()
    home = Path(tempfile.mkdtemp(prefix="bench-fleet-home-"))
    cwd = tempfile.mkdtemp(prefix="bench-fleet-")
    script = [_answer(args.delay)] * (args.rows * 12 + args.approval_rows * 6 + 20)
    with ScriptedModelServer(script) as model:
        env = scripted_env(model, home)
        config = SessionConfig(cwd=cwd, cli_path=cli, env=env, approval_timeout=60)
        ledger = RunLedger(Path(cwd) / "ledger.sqlite")
        worker_env = {**env, "KANDEV_CLAUDE_CLI": str(cli)}  # the cluster's own configuration
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
            await _cluster_fleet(2, 2, config, None, "bench-warm", cluster=client)  # imports on both workers
            kernel_s, _ = await _fleet(args.rows, args.concurrency, config, ledger, "bench-kernel")
            cluster_s, counted, _ = await _cluster_fleet(
                args.rows, args.concurrency, config, ledger, "bench-cluster", cluster=client
            )
            _, asked, fleet = await _cluster_fleet(
                args.approval_rows,
                args.concurrency,
                config,
                None,
                "bench-approve",
                cluster=client,
                approve=lambda tool, tool_input: "allow",
            )
    trips = sorted(_round_trips(fleet))
    median, p90 = statistics.median(trips), trips[min(len(trips) - 1, int(0.9 * len(trips)))]
    rate_kernel, rate_cluster = args.rows / kernel_s * 60, args.rows / cluster_s * 60
    print(f"rows {args.rows}, concurrency {args.concurrency}, model delay {args.delay:g} s, CLI {cli.name}")
    print(f"{'LocalCluster(2 worker processes) up':36} {startup * 1000:10.1f} ms")
    print(f"{'fleet in the kernel':36} {rate_kernel:10.1f} rows/min")
    print(f"{'fleet on the LocalCluster':36} {rate_cluster:10.1f} rows/min")
    label = f"approval round trip, {len(trips)} asks"
    print(f"{label:36} {median:10.1f} ms median, {p90:.1f} ms p90 (worker -> notebook -> worker)")
    per_row = (counted.events / args.rows, counted.answers / args.rows)
    print(f"{'Dask messages per row, no approval':36} {per_row[0]:10.2f} log_event, {per_row[1]:.2f} Queue answers")
    per_row = (asked.events / args.approval_rows, asked.answers / args.approval_rows)
    print(f"{'Dask messages per row, one approval':36} {per_row[0]:10.2f} log_event, {per_row[1]:.2f} Queue answers")
    headline("fleet on a 2-worker LocalCluster rows/min", rate_cluster / rate_kernel, "fleet in the kernel")


async def main_async(args: argparse.Namespace) -> None:
    """Run the anchor, the fleet and the scaling; print the table and the headlines."""
    cli = pinned_cli()
    home = Path(tempfile.mkdtemp(prefix="bench-fleet-home-"))
    cwd = tempfile.mkdtemp(prefix="bench-fleet-")
    with ScriptedModelServer([_answer(args.delay)] * (args.rows * 6 + 20)) as model:
        env = scripted_env(model, home)
        config = SessionConfig(cwd=cwd, cli_path=cli, env=env, approval_timeout=60)
        ledger = RunLedger(Path(cwd) / "ledger.sqlite")
        anchor = await _anchor(args.rows, args.concurrency, {**os.environ, **env}, cwd, cli)
        fleet_s, fleet_cpu = await _fleet(args.rows, args.concurrency, config, ledger, "bench")
        fleet_peak = dict(PEAK)
        one_s, _ = await _fleet(max(2, args.rows // 4), 1, config, ledger, "bench-1")
        one_rate = max(2, args.rows // 4) / one_s * 60
        from kandev_nb.notebook.widgets.recording import record_comms

        with record_comms() as recorder:
            stream_s, _ = await _fleet(
                args.stream_rows, args.stream_rows, config, ledger, "bench-stream", "Stream ticket {id}."
            )
        comm_rate, comm_count = recorder.total_bytes() / stream_s, recorder.count() / stream_s
    rate_anchor, rate_fleet = args.rows / anchor * 60, args.rows / fleet_s * 60
    print(f"rows {args.rows}, concurrency {args.concurrency}, model delay {args.delay:g} s, CLI {cli.name}")
    print(f"{'Agent SDK gather + semaphore':36} {rate_anchor:10.1f} rows/min")
    print(f"{'kandev_nb.fleet (ledger, board)':36} {rate_fleet:10.1f} rows/min")
    print(f"{'kandev_nb.fleet at concurrency 1':36} {one_rate:10.1f} rows/min")
    print(f"{'kernel CPU per row (fleet)':36} {fleet_cpu / args.rows * 1000:10.1f} ms")
    print(f"{'kernel peak RSS growth (fleet)':36} {fleet_peak['rss_growth_mb']:10.1f} MB")
    print(f"{'fleet cell saved output':36} {fleet_peak['saved_kb']:10.1f} KB")
    label = f"board comm, {args.stream_rows} rows streaming"
    print(f"{label:36} {comm_rate:10.1f} bytes/s ({comm_count:.1f} messages/s, 300 text deltas per row)")
    headline("fleet rows/min", rate_fleet / rate_anchor, "Agent SDK gather")
    headline(f"fleet at concurrency {args.concurrency}", rate_fleet / one_rate, "concurrency 1")


def main() -> None:
    """Parse the options and run."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="8 rows, concurrency 4, 0.5 s per answer")
    parser.add_argument("--rows", type=int, default=32)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--delay", type=float, default=2.0)
    parser.add_argument("--stream-rows", type=int, default=16, help="rows streaming text for the comm figure")
    parser.add_argument("--cluster", action="store_true", help="the fleet on a 2-worker LocalCluster vs the kernel")
    parser.add_argument("--approval-rows", type=int, default=16, help="rows asking one approval (--cluster)")
    args = parser.parse_args()
    if args.quick:
        args.rows, args.concurrency, args.delay, args.stream_rows, args.approval_rows = 8, 4, 0.5, 6, 6
    asyncio.run(cluster_async(args) if args.cluster else main_async(args))


if __name__ == "__main__":
    main()
