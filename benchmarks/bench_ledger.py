"""How long the ledger takes, on SQLite and PostgreSQL: reading 1,000,000 turns into a
DataFrame (rows/s, and the ratio to ``pandas.read_sql`` of the same table in the same run),
the filtered reads, the summary, and recording turns one by one.

Run from a clone: ``python benchmarks/bench_ledger.py [--quick] [--rows 1000000] [--path
ledger.sqlite] [--postgres URL | --no-postgres]``; ``--quick`` reads 5,000 rows. It prints
its figures, the closing table and, last, one headline per backend: the speed of
:meth:`RunLedger.runs` as a ratio to ``pandas.read_sql`` of the same table, same run.
Without ``--postgres`` a throwaway PostgreSQL cluster is
started (:mod:`kandev_nb.testing.postgres`, Debian's server from
``python -m kandev_nb.testing.install``) when one is installed. Prints figures; asserts
nothing. Rows are bulk-inserted with executemany in chunks (not through
:meth:`RunLedger.record`), then read back with :meth:`RunLedger.runs` (typed columns:
UTC datetimes, categories, nullable ints, decoded JSON) and with plain
``pandas.read_sql(turns.select())`` (the driver's values as they come).
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import random
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _common import headline, use_this_clone

use_this_clone()

import pandas as pd  # after the path is set
import sqlalchemy as sa

from kandev_nb._version import __version__
from kandev_nb.agent import events as ev
from kandev_nb.agent.turn import Turn
from kandev_nb.ledger import RunLedger, tool_calls_table, turns_table

MODELS = ("claude-opus-5-5", "claude-sonnet-5", "claude-haiku-5")
TOOLS = ("Bash", "Read", "Edit", "Write", "Grep")


USERS = ("ana", "ben", "chen", "dara")


def turn_rows(count: int, seed: int = 1, first: int = 0, total_count: int | None = None) -> list[dict[str, Any]]:
    """`count` plausible ``turns`` rows (numbers `first`...), one minute apart, the last
    of `total_count` ending now."""
    rng = random.Random(seed + first)
    start = dt.datetime.now(dt.UTC) - dt.timedelta(minutes=total_count or count)
    total, rows = 0.0, []
    for i in range(first, first + count):
        cost = round(rng.uniform(0.0005, 0.2), 6)
        total += cost
        used = {name: rng.randint(1, 3) for name in rng.sample(TOOLS, rng.randint(0, 3))}
        began = start + dt.timedelta(minutes=i)
        prompt = f"prompt number {i}: " + "x" * rng.randint(10, 400)
        rows.append(
            {
                "started_at": began,
                "ended_at": began + dt.timedelta(seconds=rng.uniform(1, 40)),
                "notebook": f"/home/user/project/nb{i % 20}.ipynb",
                "execution_count": i % 300,
                "session_name": "default",
                "session_id": f"session-{i // 50:05d}",
                "cwd": "/home/user/project",
                "prompt": prompt,
                "prompt_chars": len(prompt),
                "model": rng.choice(MODELS),
                "models": MODELS[0],
                "cost_usd": cost,
                "total_cost_usd": total,
                "input_tokens": rng.randint(100, 50_000),
                "output_tokens": rng.randint(10, 4000),
                "cache_read_input_tokens": rng.randint(0, 100_000),
                "cache_creation_input_tokens": rng.randint(0, 5000),
                "duration_ms": rng.randint(500, 60_000),
                "duration_api_ms": rng.randint(400, 50_000),
                "approval_wait_ms": rng.randint(0, 5000),
                "num_turns": rng.randint(1, 12),
                "tool_calls": used,
                "tool_call_count": sum(used.values()),
                "permission_denials": rng.randint(0, 1),
                "is_error": rng.random() < 0.03,
                "result_subtype": "success",
                "terminal_reason": "completed",
                "api_error_status": None,
                "error": None,
                "last_message_uuid": f"uuid-{i}",
                "interrupted": False,
                "cli_version": "2.1.332",
                "kandev_nb_version": __version__,
                "user": USERS[i % 4],
                "host": "hub-node-1",
                "turn_uid": f"{i:032x}",
            }
        )
    return rows


def sample_turn() -> Turn:
    """A finished turn as :class:`~kandev_nb.agent.session.Session` would hand it over."""
    turn = Turn(prompt="benchmark")
    stats = ev.TurnStats(
        session_id="bench",
        result_subtype="success",
        cost_usd=0.01,
        total_cost_usd=0.01,
        input_tokens=100,
        output_tokens=20,
        model_usage={MODELS[0]: ev.ModelUsage(input_tokens=100, output_tokens=20, cost_usd=0.01)},
    )
    turn.add(ev.Complete(stats=stats, session_id="bench"))
    return turn


_best = 0.0


def timed(label: str, action: Callable[[], Any], repeat: int = 3) -> Any:
    """Run `action` `repeat` times; print the best and median wall time in seconds (the best
    is also left in ``_best``)."""
    global _best
    times, result = [], None
    for _ in range(repeat):
        result = None
        began = time.perf_counter()
        result = action()
        times.append(time.perf_counter() - began)
    _best = min(times)
    print(f"{label:<44} best {min(times):8.3f} s   median {statistics.median(times):8.3f} s")
    return result


CHUNK = 50_000


def fill(ledger: RunLedger, count: int) -> int:
    """Bulk-insert `count` turns and one tool call each, in chunks; the tool-call count."""
    calls = 0
    for first in range(0, count, CHUNK):
        rows = turn_rows(min(CHUNK, count - first), first=first, total_count=count)
        with ledger.engine.begin() as conn:
            conn.execute(turns_table.insert(), rows)
            ids = (
                conn.execute(sa.select(turns_table.c.id).where(turns_table.c.id > first).order_by(turns_table.c.id))
                .scalars()
                .all()
            )
            conn.execute(
                tool_calls_table.insert(),
                [
                    {
                        "turn_id": turn_id,
                        "seq": 0,
                        "tool_use_id": f"toolu_{turn_id}",
                        "tool_name": TOOLS[turn_id % 5],
                        "kind": "shell_exec",
                        "status": "complete",
                        "duration_ms": turn_id % 900,
                        "decision": "allow",
                        "decided_by": "person",
                    }
                    for turn_id in ids
                ],
            )
            calls += len(ids)
    return calls


def bench(name: str, ledger: RunLedger, args: argparse.Namespace) -> dict[str, Any]:
    """Every figure for one backend; returns the line of the closing table."""
    print(f"\n== {name}: {ledger}")
    began = time.perf_counter()
    calls = fill(ledger, args.rows)
    print(f"insert {args.rows:,} turns + {calls:,} tool calls (executemany)  {time.perf_counter() - began:8.3f} s")
    frame = timed(f"runs() -> DataFrame of {args.rows:,} rows", ledger.runs, args.repeat)
    ours = _best
    print(
        f"  {args.rows / ours:,.0f} rows/s; DataFrame memory {frame.memory_usage(deep=True).sum() / 1e6:.1f} MB, "
        f"{frame.shape[1]} columns"
    )

    def plain() -> pd.DataFrame:
        with ledger.engine.connect() as conn:
            return pd.read_sql(turns_table.select(), conn)

    timed(f"pandas.read_sql(turns) of {args.rows:,} rows", plain, args.repeat)
    theirs = _best
    print(f"  {args.rows / theirs:,.0f} rows/s; runs() takes {ours / theirs:.2f}x the time of pandas.read_sql")
    del frame
    since = dt.datetime.now(dt.UTC) - dt.timedelta(minutes=args.rows // 10)
    timed(f"runs(since=...) last 10% of {args.rows:,}", lambda: ledger.runs(since=since), args.repeat)
    timed(f"runs(user=...) a quarter of {args.rows:,}", lambda: ledger.runs(user="ana"), args.repeat)
    timed(f"tool_calls() -> DataFrame of {calls:,} rows", ledger.tool_calls, args.repeat)
    timed("summary()", ledger.summary, args.repeat)
    timed("team() (per user and notebook)", ledger.team, args.repeat)
    began = time.perf_counter()
    for _ in range(args.records):
        ledger.record(sample_turn())
    per = (time.perf_counter() - began) / args.records
    print(f"record() one turn per transaction: {per * 1000:.2f} ms per turn ({1 / per:,.0f} turns/s)")
    return {
        "backend": name,
        "rows": args.rows,
        "runs_s": ours,
        "rows_per_s": args.rows / ours,
        "read_sql_s": theirs,
        "ratio": ours / theirs,
        "record_ms": per * 1000,
    }


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print its figures; returns 0."""
    parser = argparse.ArgumentParser(prog="python benchmarks/bench_ledger.py", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a short run: 5,000 rows, 30 records, one read each")
    parser.add_argument("--rows", type=int, help="turns bulk-inserted (default 1,000,000; quick 5,000)")
    parser.add_argument("--records", type=int, help="turns written one by one with record() (default 300; quick 30)")
    parser.add_argument("--repeat", type=int, help="runs of each timed read, the best counts (default 3; quick 1)")
    parser.add_argument("--path", type=Path, default=None, help="SQLite file (default: a temporary one)")
    parser.add_argument("--postgres", metavar="URL", help="an empty PostgreSQL database to use")
    parser.add_argument("--no-postgres", action="store_true", help="SQLite only")
    args = parser.parse_args(argv)
    args.rows = args.rows or (5_000 if args.quick else 1_000_000)
    args.records = args.records or (30 if args.quick else 300)
    args.repeat = args.repeat or (1 if args.quick else 3)
    lines = []
    with tempfile.TemporaryDirectory() as tmp, contextlib.ExitStack() as stack:
        path = args.path or Path(tmp) / "bench.sqlite"
        with RunLedger(path, spool_dir=Path(tmp) / "spool") as ledger:
            lines.append(bench("sqlite", ledger, args))
            print(f"file size {path.stat().st_size / 1e6:.1f} MB (+ WAL)")
        url = args.postgres
        if url is None and not args.no_postgres:
            from kandev_nb.testing.postgres import PostgresCluster, PostgresNotInstalled

            try:
                cluster = stack.enter_context(PostgresCluster())
                url = cluster.create_database("bench")
            except PostgresNotInstalled as exc:
                print(f"\n(no PostgreSQL row: {exc})")
        if url is not None:
            with RunLedger(url, spool_dir=Path(tmp) / "spool") as ledger:
                lines.append(bench("postgresql", ledger, args))
    print("\nbackend      rows        runs() s   rows/s      read_sql s  runs()/read_sql  record ms")
    for line in lines:
        print(
            f"{line['backend']:<12} {line['rows']:<11,} {line['runs_s']:<10.3f} {line['rows_per_s']:<11,.0f} "
            f"{line['read_sql_s']:<11.3f} {line['ratio']:<16.2f} {line['record_ms']:.2f}"
        )
    for line in lines:
        headline(
            f"{line['backend']} runs() of {line['rows']:,} rows", 1 / line["ratio"], "the speed of pandas.read_sql"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
