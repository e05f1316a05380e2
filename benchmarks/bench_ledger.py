"""How long the ledger takes: loading 100,000 turns into a DataFrame, and recording turns.

Run from a clone: ``python benchmarks/bench_ledger.py [--quick] [--rows 100000] [--path
ledger.sqlite]``. Prints figures, then, last, its headline ratio (:meth:`RunLedger.runs`
against a bare ``pandas.read_sql`` of the same table); asserts nothing. Rows are bulk-inserted with one executemany per table
(not through :meth:`RunLedger.record`), then read back with :meth:`RunLedger.runs`,
:meth:`RunLedger.tool_calls` and :meth:`RunLedger.summary`.
"""

from __future__ import annotations

import argparse
import datetime as dt
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _common import headline, use_this_clone

use_this_clone()

import pandas as pd  # after the path is set

from kandev_nb._version import __version__
from kandev_nb.agent import events as ev
from kandev_nb.agent.turn import Turn
from kandev_nb.ledger import RunLedger, tool_calls_table, turns_table

MODELS = ("claude-opus-5-5", "claude-sonnet-5", "claude-haiku-5")
TOOLS = ("Bash", "Read", "Edit", "Write", "Grep")


def turn_rows(count: int, seed: int = 1) -> list[dict[str, Any]]:
    """`count` plausible ``turns`` rows, one minute apart, ending now."""
    rng = random.Random(seed)
    start = dt.datetime.now(dt.UTC) - dt.timedelta(minutes=count)
    total, rows = 0.0, []
    for i in range(count):
        cost = round(rng.uniform(0.0005, 0.2), 6)
        total += cost
        used = {name: rng.randint(1, 3) for name in rng.sample(TOOLS, rng.randint(0, 3))}
        began = start + dt.timedelta(minutes=i)
        prompt = f"prompt number {i}: " + "x" * rng.randint(10, 400)
        rows.append({
            "started_at": began, "ended_at": began + dt.timedelta(seconds=rng.uniform(1, 40)),
            "notebook": f"/home/user/project/nb{i % 20}.ipynb", "execution_count": i % 300,
            "session_name": "default", "session_id": f"session-{i // 50:05d}", "cwd": "/home/user/project",
            "prompt": prompt, "prompt_chars": len(prompt),
            "model": rng.choice(MODELS), "models": MODELS[0], "cost_usd": cost, "total_cost_usd": total,
            "input_tokens": rng.randint(100, 50_000), "output_tokens": rng.randint(10, 4000),
            "cache_read_input_tokens": rng.randint(0, 100_000), "cache_creation_input_tokens": rng.randint(0, 5000),
            "duration_ms": rng.randint(500, 60_000), "duration_api_ms": rng.randint(400, 50_000),
            "approval_wait_ms": rng.randint(0, 5000), "num_turns": rng.randint(1, 12),
            "tool_calls": used, "tool_call_count": sum(used.values()), "permission_denials": rng.randint(0, 1),
            "is_error": rng.random() < 0.03, "result_subtype": "success", "terminal_reason": "completed",
            "api_error_status": None, "error": None, "last_message_uuid": f"uuid-{i}", "interrupted": False,
            "cli_version": "2.1.332", "kandev_nb_version": __version__,
        })
    return rows


def sample_turn() -> Turn:
    """A finished turn as :class:`~kandev_nb.agent.session.Session` would hand it over."""
    turn = Turn(prompt="benchmark")
    stats = ev.TurnStats(session_id="bench", result_subtype="success", cost_usd=0.01, total_cost_usd=0.01,
                         input_tokens=100, output_tokens=20,
                         model_usage={MODELS[0]: ev.ModelUsage(input_tokens=100, output_tokens=20, cost_usd=0.01)})
    turn.add(ev.Complete(stats=stats, session_id="bench"))
    return turn


def timed(label: str, action: Callable[[], Any], repeat: int = 3) -> Any:
    """Run `action` `repeat` times; print the best and median wall time in seconds."""
    times, result = [], None
    for _ in range(repeat):
        began = time.perf_counter()
        result = action()
        times.append(time.perf_counter() - began)
    print(f"{label:<44} best {min(times):8.3f} s   median {statistics.median(times):8.3f} s")
    return result


def timed_best(action: Callable[[], Any], repeat: int = 3) -> float:
    """The best wall time of `repeat` runs of `action`, in seconds (nothing printed)."""
    times = []
    for _ in range(repeat):
        began = time.perf_counter()
        action()
        times.append(time.perf_counter() - began)
    return min(times)


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print its figures; returns 0."""
    parser = argparse.ArgumentParser(prog="python benchmarks/bench_ledger.py", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a short run: 5,000 rows, 30 records")
    parser.add_argument("--rows", type=int, help="turns bulk-inserted (default 100,000; quick 5,000)")
    parser.add_argument("--records", type=int, help="turns written one by one with record() (default 300; quick 30)")
    parser.add_argument("--path", type=Path, default=None, help="SQLite file (default: a temporary one)")
    args = parser.parse_args(argv)
    args.rows = args.rows or (5_000 if args.quick else 100_000)
    args.records = args.records or (30 if args.quick else 300)
    with tempfile.TemporaryDirectory() as tmp:
        path = args.path or Path(tmp) / "bench.sqlite"
        ledger = RunLedger(path)
        rows = turn_rows(args.rows)
        began = time.perf_counter()
        with ledger.engine.begin() as conn:
            conn.execute(turns_table.insert(), rows)
            ids = conn.execute(turns_table.select().with_only_columns(turns_table.c.id)).scalars().all()
            conn.execute(tool_calls_table.insert(), [
                {"turn_id": turn_id, "seq": 0, "tool_use_id": f"toolu_{turn_id}", "tool_name": TOOLS[turn_id % 5],
                 "kind": "shell_exec", "status": "complete", "duration_ms": turn_id % 900,
                 "decision": "allow", "decided_by": "person"}
                for turn_id in ids
            ])
        print(f"insert {args.rows:,} turns + {len(ids):,} tool calls (executemany)  {time.perf_counter() - began:8.3f} s")
        wal = path.with_name(path.name + "-wal")
        size = path.stat().st_size + (wal.stat().st_size if wal.exists() else 0)
        print(f"file size (with its WAL) {size / 1e6:.3f} MB")
        frame = timed(f"runs() -> DataFrame of {args.rows:,} rows", ledger.runs)
        print(f"  DataFrame memory {frame.memory_usage(deep=True).sum() / 1e6:.1f} MB, {frame.shape[1]} columns")
        timed(f"runs(since=...) last 10% of {args.rows:,}",
              lambda: ledger.runs(since=frame["started_at"].iloc[int(args.rows * 0.9)]))
        timed(f"runs(session_id=...) of {args.rows:,}", lambda: ledger.runs(session_id="session-00010"))
        timed(f"tool_calls() -> DataFrame of {len(ids):,} rows", ledger.tool_calls)
        timed("summary()", ledger.summary)
        began = time.perf_counter()
        for _ in range(args.records):
            ledger.record(sample_turn())
        per = (time.perf_counter() - began) / args.records
        print(f"record() one turn per transaction: {per * 1000:.2f} ms per turn ({1 / per:,.0f} turns/s)")
        ours = timed_best(ledger.runs)
        bare = timed_best(lambda: pd.read_sql(turns_table.select(), ledger.engine))
        print(f"runs() {ours:.3f} s vs pandas.read_sql of the turns table {bare:.3f} s (best of 3)")
        ledger.close()
    headline(f"runs() of {args.rows:,} rows (wall, best of 3)", ours / bare, "a bare pandas.read_sql")
    return 0


if __name__ == "__main__":
    sys.exit(main())
