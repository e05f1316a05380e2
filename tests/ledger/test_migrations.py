"""Schema versions (issue 15, 3): a ledger written by the release before Alembic upgrades in
place, every row and sum kept, an SQLite backup beside it, once even when two kernels open it.

The old ledger is ``tests/ledger/data/ledger-before-alembic.sqlite``, written by the code
before this schema change (``make_before_alembic.py`` says how). On PostgreSQL the same
rows are loaded into tables made by revision 0001 without a version table, as that release
made them.
"""

from __future__ import annotations

import datetime as dt
import json
import multiprocessing
import shutil
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext

from kandev_nb.ledger import RunLedger, metadata
from kandev_nb.ledger.migrate import BEFORE_ALEMBIC, head, schema_version
from kandev_nb.ledger.migrate import _run as run_migrations
from tests.ledger.conftest import make_turn

OLD = Path(__file__).parent / "data" / "ledger-before-alembic.sqlite"
TABLES = ("turns", "tool_calls", "model_usage")


def _raw_rows(url: str) -> dict[str, tuple[list[str], list[tuple[Any, ...]]]]:
    """Every row of every table, as the driver gives it, by id."""
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            out = {}
            for table in TABLES:
                columns = [c["name"] for c in sa.inspect(conn).get_columns(table)]
                quoted = ", ".join(f'"{c}"' for c in columns)
                out[table] = (
                    columns,
                    [tuple(r) for r in conn.execute(sa.text(f"SELECT {quoted} FROM {table} ORDER BY id"))],
                )
        return out
    finally:
        engine.dispose()


def _value(column: sa.Column[Any], value: Any) -> Any:
    if value is None:
        return None
    if isinstance(column.type, sa.DateTime):
        return dt.datetime.fromisoformat(value).replace(tzinfo=dt.UTC)
    if isinstance(column.type, sa.Boolean):
        return bool(value)
    if isinstance(column.type, sa.JSON):
        return json.loads(value)
    return value


def old_ledger(ledger_url: str, tmp_path: Path) -> str:
    """A ledger at the schema before Alembic holding the fixture's rows; its URL or path."""
    if not ledger_url.startswith("postgresql"):
        target = Path(ledger_url)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(OLD, target)
        return str(target)
    rows = _raw_rows(f"sqlite:///{OLD}")
    engine = sa.create_engine(ledger_url)
    with engine.begin() as conn:
        run_migrations(conn, None, BEFORE_ALEMBIC)
        conn.execute(sa.text("DROP TABLE alembic_version"))  # that release had none
        reflected = sa.MetaData()
        reflected.reflect(conn)
        for name in TABLES:
            table = reflected.tables[name]
            columns, values = rows[name]
            conn.execute(
                table.insert(),
                [{c: _value(table.c[c], v) for c, v in zip(columns, row, strict=True)} for row in values],
            )
            conn.execute(
                sa.text(f"SELECT setval(pg_get_serial_sequence('{name}', 'id'), (SELECT max(id) FROM {name}))")
            )
    engine.dispose()
    return ledger_url


def _url(location: str) -> str:
    return location if "://" in location else f"sqlite:///{location}"


def test_the_fixture_is_a_ledger_of_the_release_before_alembic() -> None:
    rows = _raw_rows(f"sqlite:///{OLD}")
    assert "user" not in rows["turns"][0] and len(rows["turns"][1]) == 6
    engine = sa.create_engine(f"sqlite:///{OLD}")
    with engine.connect() as conn:
        assert not sa.inspect(conn).has_table("alembic_version")
        assert schema_version(conn) == BEFORE_ALEMBIC
    engine.dispose()


def test_an_old_ledger_upgrades_in_place_keeping_every_row_and_sum(ledger_url: str, tmp_path: Path) -> None:
    location = old_ledger(ledger_url, tmp_path)
    before = _raw_rows(_url(location))
    with RunLedger(location) as ledger:
        assert ledger.upgraded == ["0002", "0003", "0004", "0005", "0006", "0007", "0008"] and head() == "0008"
        after = _raw_rows(_url(location))
        for table in TABLES:
            old_columns, old_rows = before[table]
            new_columns, new_rows = after[table]
            kept = [new_columns.index(c) for c in old_columns]
            assert [tuple(r[i] for i in kept) for r in new_rows] == old_rows, table
        turns = ledger.runs()
        columns, rows = before["turns"]
        col = {c: i for i, c in enumerate(columns)}
        assert list(turns["id"]) == [r[col["id"]] for r in rows]
        assert list(turns["prompt"]) == [r[col["prompt"]] for r in rows]
        assert turns["user"].isna().all() and turns["host"].isna().all()  # that release did not know
        totals = ledger.totals()
        assert totals["turns"] == len(rows)
        assert totals["cost_usd"] == pytest.approx(sum(r[col["cost_usd"]] or 0.0 for r in rows))
        assert totals["input_tokens"] == sum(r[col["input_tokens"]] or 0 for r in rows)
        assert totals["tool_calls"] == sum(r[col["tool_call_count"]] for r in rows) == len(before["tool_calls"][1])
        assert totals["denials"] == sum(r[col["permission_denials"]] for r in rows)
        usage_cost = sum(r[before["model_usage"][0].index("cost_usd")] for r in before["model_usage"][1])
        assert ledger.model_usage()["cost_usd"].sum() == pytest.approx(usage_cost)
        assert list(ledger.tool_calls()["decision"].astype(object).where(lambda s: s.notna(), None)) == [
            r[before["tool_calls"][0].index("decision")] for r in before["tool_calls"][1]
        ]
        new_id = ledger.record(make_turn("after the upgrade"), notebook="n.ipynb", execution_count=1)
        assert new_id == max(r[col["id"]] for r in rows) + 1
        assert ledger.runs(user=ledger.runs()["user"].dropna().iloc[0])["prompt"].tolist() == ["after the upgrade"]
    with RunLedger(location) as again:
        assert again.upgraded == []
        assert len(again.runs()) == len(rows) + 1


def test_an_sqlite_ledger_is_copied_beside_itself_before_the_upgrade(ledger_path: Path, tmp_path: Path) -> None:
    location = old_ledger(str(ledger_path), tmp_path)
    before = _raw_rows(_url(location))
    RunLedger(location).close()
    backups = sorted(ledger_path.parent.glob("*.bak"))
    assert [b.name for b in backups] == ["ledger.sqlite.schema-0001.bak"]
    assert oct(backups[0].stat().st_mode & 0o777) == "0o600"
    assert _raw_rows(f"sqlite:///{backups[0]}") == before  # the old schema, every row
    engine = sa.create_engine(f"sqlite:///{backups[0]}")
    with engine.connect() as conn:
        assert schema_version(conn) == BEFORE_ALEMBIC
    engine.dispose()


def test_a_new_ledger_gets_no_backup_and_the_newest_schema(ledger_path: Path) -> None:
    with RunLedger(ledger_path) as ledger:
        assert ledger.upgraded == ["0001", "0002", "0003", "0004", "0005", "0006", "0007", "0008"]
    assert not list(ledger_path.parent.glob("*.bak"))


def test_the_migrations_build_exactly_the_schema_the_code_uses(ledger: RunLedger) -> None:
    with ledger.engine.connect() as conn:
        assert schema_version(conn) == head()
        assert compare_metadata(MigrationContext.configure(conn), metadata) == []


def _open(location: str, start: Any, results: Any) -> None:
    """Child process: wait for the other kernel, open the ledger, report what it upgraded."""
    start.wait(60)
    with RunLedger(location) as ledger:
        results.put((ledger.upgraded, len(ledger.runs())))


@pytest.mark.slow
def test_two_kernels_opening_an_old_ledger_at_once_upgrade_it_once(ledger_url: str, tmp_path: Path) -> None:
    location = old_ledger(ledger_url, tmp_path)
    ctx = multiprocessing.get_context("spawn")
    start, results = ctx.Barrier(2), ctx.Queue()
    kernels = [ctx.Process(target=_open, args=(location, start, results)) for _ in range(2)]
    for process in kernels:
        process.start()
    for process in kernels:
        process.join(120)
    assert [p.exitcode for p in kernels] == [0, 0]
    reports = sorted([results.get(timeout=10), results.get(timeout=10)])
    assert reports == [([], 6), (["0002", "0003", "0004", "0005", "0006", "0007", "0008"], 6)]
    if "://" not in location:
        assert len(list(Path(location).parent.glob("*.bak"))) == 1


def test_a_ledger_upgraded_by_a_later_release_is_used_as_it_is(ledger_url: str) -> None:
    RunLedger(ledger_url).close()
    engine = sa.create_engine(_url(ledger_url))
    with engine.begin() as conn:
        conn.execute(sa.text("UPDATE alembic_version SET version_num = '9999'"))
    engine.dispose()
    with RunLedger(ledger_url) as ledger:
        assert ledger.upgraded == []
        ledger.record(make_turn("from an older kernel"))
        assert list(ledger.runs()["prompt"]) == ["from an older kernel"]
