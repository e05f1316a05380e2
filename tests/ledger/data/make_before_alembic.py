"""How tests/ledger/data/ledger-before-alembic.sqlite was made, with the code at commit 2e42f78 (the
schema before Alembic: no version table, no user/host columns). Kept as a record; running it
again with a later release makes a file of that release's schema, not this one."""

import datetime as dt
import sys
from pathlib import Path

from kandev_nb.ledger import RunLedger
from tests.ledger.conftest import make_turn

out = Path(sys.argv[1])
out.unlink(missing_ok=True)
base = dt.datetime(2026, 11, 30, 9, 0, tzinfo=dt.UTC)
specs = [
    ("Summarise df in three bullets", "sess-a", 0.0123, (), "claude-sonnet-4-5"),
    ("Fix the axis labels in plot.py", "sess-a", 0.0456, (("Read", None), ("Edit", "allow")), "claude-sonnet-4-5"),
    ("Run the tests", "sess-a", 0.0311, (("Bash", "deny"),), "claude-sonnet-4-5"),
    (
        "Review the last commit",
        "sess-b",
        0.2504,
        (("Bash", "allow"), ("Grep", None), ("Read", None)),
        "claude-opus-4-1",
    ),
    ("unfinished turn", "sess-b", None, (("Bash", None),), "claude-opus-4-1"),
    ("Plan a refactor of utils.py", "sess-c", 0.0007, (), "claude-haiku-4-5"),
]
with RunLedger(out) as ledger:
    total = {}
    for i, (prompt, sess, cost, tools, model) in enumerate(specs):
        total[sess] = total.get(sess, 0.0) + (cost or 0.0)
        turn = make_turn(
            prompt,
            session_id=sess,
            started_at=base + dt.timedelta(minutes=7 * i),
            cost_usd=cost,
            total_cost_usd=total[sess] if cost is not None else None,
            model=model,
            tools=tools,
        )
        turn.ended_at = turn.started_at + dt.timedelta(seconds=3 + i)
        ledger.record(
            turn, notebook=f"/home/ana/{'analysis' if sess != 'sess-c' else 'plan'}.ipynb", execution_count=i + 1
        )
    print(ledger.runs()[["id", "prompt", "cost_usd", "tool_call_count"]])
    print(ledger.totals())
