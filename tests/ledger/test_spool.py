"""Nothing lost when the database is away (issue 15, 6): a real PostgreSQL server is stopped
while turns are recorded; they wait in the spool and land exactly once when it is back."""

from __future__ import annotations

from pathlib import Path

import pytest

from kandev_nb import ledger as ledger_mod
from kandev_nb.ledger import ENV_LEDGER, LedgerError, RunLedger, ledger_flush, record_or_spool
from kandev_nb.ledger.rows import turn_rows
from kandev_nb.ledger.spool import pending, write
from kandev_nb.testing.postgres import PostgresCluster
from tests.ledger.conftest import make_turn


@pytest.fixture
def team_ledger(postgres_url: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """KANDEV_NB_LEDGER pointing at a fresh PostgreSQL database; the default-ledger cache emptied."""
    monkeypatch.setenv(ENV_LEDGER, postgres_url)
    monkeypatch.setattr(ledger_mod, "_defaults", {})
    return postgres_url


def test_turns_recorded_while_the_server_is_down_appear_once_when_it_is_back(
    postgres_cluster: PostgresCluster, team_ledger: str
) -> None:
    assert record_or_spool(make_turn("before", tools=(("Bash", "allow"),))) == 1
    postgres_cluster.stop()
    try:
        turns = [make_turn(f"while down {i}", tools=(("Read", None),)) for i in range(3)]
        assert [record_or_spool(t, notebook="team.ipynb", execution_count=i) for i, t in enumerate(turns)] == [
            None,
            None,
            None,
        ]
        assert all(Path(t.meta["ledger_spooled"]).exists() for t in turns)
        with pytest.raises(LedgerError, match="still does not answer"):
            ledger_flush()
    finally:
        postgres_cluster.start()
    assert ledger_flush() == 3
    assert ledger_flush() == 0
    runs = ledger_mod.runs()
    assert list(runs["prompt"]) == ["before", "while down 0", "while down 1", "while down 2"]
    assert list(runs["execution_count"].iloc[1:]) == [0, 1, 2]
    assert runs["turn_uid"].is_unique
    assert sorted(ledger_mod.tool_calls()["tool_name"]) == ["Bash", "Read", "Read", "Read"]
    assert len(ledger_mod.model_usage()) == 4


def test_a_ledger_that_cannot_be_opened_keeps_the_turn_for_the_next_one(
    postgres_cluster: PostgresCluster, team_ledger: str
) -> None:
    postgres_cluster.stop()  # the kernel starts while the server is away
    try:
        first = make_turn("first, server away")
        assert record_or_spool(first, execution_count=1) is None
        assert "password" not in first.meta["ledger_spooled"]
        note = Path(first.meta["ledger_spooled"]).parent / "ledger.txt"
        assert postgres_cluster.password not in note.read_text() and "***" in note.read_text()
    finally:
        postgres_cluster.start()
    assert record_or_spool(make_turn("second"), execution_count=2) is not None  # flushes the first
    assert list(ledger_mod.runs()["prompt"]) == ["first, server away", "second"]


def test_a_spooled_turn_already_in_the_ledger_is_not_written_again(ledger: RunLedger) -> None:
    rows = turn_rows(make_turn("written, then the kernel died"), None, 1)
    write(ledger.spool_dir, rows, str(ledger))
    ledger._insert(rows)  # the flush wrote it but died before removing the file
    assert ledger.flush() == 0
    assert list(ledger.runs()["prompt"]) == ["written, then the kernel died"]
    assert not list(pending(ledger.spool_dir))


def test_a_damaged_spool_file_is_set_aside_and_the_rest_is_written(ledger: RunLedger) -> None:
    ledger.spool_dir.mkdir(parents=True)
    (ledger.spool_dir / "0-broken.json").write_text("{not json")
    write(ledger.spool_dir, turn_rows(make_turn("good"), None, None), str(ledger))
    assert ledger.flush() == 1
    assert list(ledger.runs()["prompt"]) == ["good"]
    assert [p.name for p in ledger.spool_dir.glob("*.bad")] == ["0-broken.bad"]
