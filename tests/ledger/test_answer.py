"""Issue 28.4: the ledger holds each turn's final answer (`runs()["answer"]`, migration 0004),
on SQLite and PostgreSQL, with URL passwords masked as in error texts."""

from __future__ import annotations

from kandev_nb.agent import events as ev
from kandev_nb.ledger import RunLedger
from tests.ledger.conftest import make_turn


def test_the_answer_is_a_column_of_runs(ledger: RunLedger) -> None:
    turn = make_turn("Where is the data?")
    turn.add(ev.MessageChunk(text="It is in postgresql://team:hunter2@db.internal/x, "))
    turn.add(ev.MessageChunk(text="table **sales**."))
    ledger.record(turn)
    ledger.record(make_turn("no answer"))
    runs = ledger.runs()
    assert list(runs.columns[:2]) == ["prompt", "answer"]
    assert runs["answer"].iloc[0] == "It is in postgresql://team:***@db.internal/x, table **sales**."
    assert runs["answer"].isna().iloc[1]
