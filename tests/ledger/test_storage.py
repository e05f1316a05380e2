"""Where the ledger lives and how it behaves on disk: location, URLs, processes, failures."""

from __future__ import annotations

import multiprocessing
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from kandev_nb import ledger as ledger_mod
from kandev_nb.ledger import (
    ENV_LEDGER,
    LedgerError,
    RunLedger,
    default_ledger,
    default_path,
    resolve_url,
)
from tests.ledger.conftest import make_turn

ROWS_PER_WRITER = 200


def _write_many(path: str, writer: int, count: int, start: Any) -> None:
    """Child process: open the ledger, wait for the other writer, record `count` turns."""
    with RunLedger(path) as ledger:
        start.wait(60)
        for i in range(count):
            turn = make_turn(f"w{writer}-{i}", session_id=f"writer-{writer}", tools=(("Bash", "allow"),))
            ledger.record(turn, execution_count=i)


@pytest.mark.slow
def test_two_processes_writing_at_once_lose_no_rows(ledger_url: str) -> None:
    RunLedger(ledger_url).close()  # both children open an existing ledger
    ctx = multiprocessing.get_context("spawn")
    start = ctx.Barrier(2)
    writers = [ctx.Process(target=_write_many, args=(ledger_url, w, ROWS_PER_WRITER, start)) for w in (1, 2)]
    for process in writers:
        process.start()
    for process in writers:
        process.join(120)
    assert [p.exitcode for p in writers] == [0, 0]
    with RunLedger(ledger_url) as ledger:
        runs, calls, usage = ledger.runs(), ledger.tool_calls(), ledger.model_usage()
    assert len(runs) == 2 * ROWS_PER_WRITER
    assert list(runs["id"]) == list(range(1, 2 * ROWS_PER_WRITER + 1))
    for writer in (1, 2):
        mine = runs[runs["session_id"] == f"writer-{writer}"]
        assert list(mine["execution_count"]) == list(range(ROWS_PER_WRITER))  # each writer's order kept
    assert sorted(calls["turn_id"]) == sorted(runs["id"])
    assert sorted(usage["turn_id"]) == sorted(runs["id"])


def test_a_ledger_written_by_another_process_is_read_here(ledger_url: str) -> None:
    code = (
        "import sys\n"
        "from tests.ledger.conftest import make_turn\n"
        "from kandev_nb.ledger import RunLedger\n"
        "print(RunLedger(sys.argv[1]).record(make_turn('from the other kernel', cost_usd=0.25), notebook='x.ipynb'))\n"
    )
    root = Path(__file__).resolve().parents[2]
    out = subprocess.run([sys.executable, "-c", code, ledger_url], capture_output=True, text=True, check=True, cwd=root)
    with RunLedger(ledger_url) as ledger:
        frame = ledger.runs()
    assert list(frame["id"]) == [int(out.stdout)]
    assert frame["prompt"].iloc[0] == "from the other kernel"
    assert frame["cost_usd"].iloc[0] == 0.25
    assert str(frame["started_at"].dt.tz) == "UTC"


def test_sqlite_is_in_wal_mode_with_a_busy_timeout(ledger_path: Path) -> None:
    with RunLedger(ledger_path) as ledger, ledger.engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        assert conn.exec_driver_sql("PRAGMA busy_timeout").scalar() == 30_000
        assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1


def test_a_locked_database_spools_the_turn_and_the_next_record_writes_it_once(
    ledger_path: Path, private_spool: Path
) -> None:
    ledger = RunLedger(ledger_path, busy_timeout_s=0.2)
    ledger.record(make_turn("before"))
    other = sqlite3.connect(ledger_path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # another kernel holds the write lock
    try:
        with pytest.raises(LedgerError, match="did not take the turn") as info:
            ledger.record(make_turn("while locked", tools=(("Bash", None),)))
        assert isinstance(info.value.__cause__, sa.exc.OperationalError)
        assert "locked" in str(info.value.__cause__)
        assert info.value.url == str(ledger)
        assert info.value.spooled is not None and info.value.spooled.parent.parent == private_spool
        assert oct(info.value.spooled.stat().st_mode & 0o777) == "0o600"
    finally:
        other.execute("ROLLBACK")
        other.close()
    assert list(ledger.runs()["prompt"]) == ["before"]
    assert ledger.tool_calls().empty
    ledger.record(make_turn("after"))
    assert list(ledger.runs()["prompt"]) == ["before", "while locked", "after"]
    assert list(ledger.tool_calls()["tool_name"]) == ["Bash"]
    assert ledger.flush() == 0 and len(ledger.runs()) == 3
    assert not list(ledger.spool_dir.glob("*.json"))
    ledger.close()


def test_an_unusable_location_raises_ledger_error(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    with pytest.raises(LedgerError, match="cannot open the ledger") as info:
        RunLedger(blocker / "ledger.sqlite")
    assert isinstance(info.value.__cause__, OSError)
    corrupt = tmp_path / "corrupt.sqlite"
    corrupt.write_bytes(b"this is not an SQLite database, just some bytes" * 100)
    with pytest.raises(LedgerError):
        RunLedger(corrupt)


def test_env_var_chooses_the_default_ledger(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ledger_mod, "_defaults", {})  # leave the process's real cache alone
    first, second = tmp_path / "one.sqlite", tmp_path / "two.sqlite"
    monkeypatch.setenv(ENV_LEDGER, str(first))
    ledger = default_ledger()
    assert default_ledger() is ledger
    assert ledger.url.database == str(first)
    ledger.record(make_turn("to the first"))
    assert list(ledger_mod.runs()["prompt"]) == ["to the first"]
    assert len(ledger_mod.tool_calls()) == 0 and len(ledger_mod.model_usage()) == 1
    assert ledger_mod.summary()["all"]["turns"] == 1
    monkeypatch.setenv(ENV_LEDGER, f"sqlite:///{second}")  # a URL works as well
    assert default_ledger() is not ledger
    assert ledger_mod.runs().empty
    assert second.exists()


def test_without_env_var_the_default_is_the_user_data_dir(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV_LEDGER, raising=False)
    path = default_path()
    assert path.name == "ledger.sqlite" and path.parent.name == "kandev-nb"
    assert resolve_url(None).database == str(path.resolve())
    monkeypatch.setenv(ENV_LEDGER, "")  # empty counts as unset
    assert resolve_url(None).database == str(path.resolve())


def test_resolve_url_forms(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert resolve_url("rel/led.sqlite").database == str(tmp_path / "rel" / "led.sqlite")
    assert resolve_url(Path("~/x.sqlite")).database == str(Path.home() / "x.sqlite")
    url = resolve_url("postgresql+psycopg://team:secret@db.internal:5432/ledger")
    assert (url.get_backend_name(), url.database, url.password) == ("postgresql", "ledger", "secret")
    assert resolve_url(url) is url


def test_a_non_default_sqlalchemy_url(tmp_path: Path) -> None:
    target = tmp_path / "by-url.db"
    with RunLedger(f"sqlite:///{target}") as ledger:
        assert repr(ledger) == f"RunLedger('sqlite:///{target}')"
        ledger_id = ledger.record(make_turn("via url"), notebook=tmp_path / "n.ipynb")
    assert target.exists()
    engine = sa.create_engine(f"sqlite:///{target}")
    with RunLedger(engine=engine) as again:  # any engine the caller made
        frame = again.runs(notebook=tmp_path / "n.ipynb")
    assert list(frame["id"]) == [ledger_id]


def test_passwords_are_masked_in_errors_and_repr() -> None:
    engine = sa.create_engine("sqlite://")
    ledger = RunLedger(engine=engine)
    assert "sqlite://" in str(ledger)
    url = resolve_url("postgresql://team:secret@localhost/ledger")
    assert "secret" not in url.render_as_string(hide_password=True)


async def test_arecord_writes_from_a_worker_thread(ledger: RunLedger) -> None:
    ledger_id = await ledger.arecord(make_turn("async"), notebook="n.ipynb", execution_count=2)
    row = ledger.runs().iloc[0]
    assert (row["id"], row["prompt"], row["notebook"], row["execution_count"]) == (ledger_id, "async", "n.ipynb", 2)


def test_a_fresh_default_ledger_is_private_to_its_user(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # issue 17, 7: another uid could read stored prompts from a 0644 ledger in a 0755 folder
    monkeypatch.delenv(ENV_LEDGER, raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("HOME", str(tmp_path))
    path = default_path()
    assert path.is_relative_to(tmp_path) and not path.parent.exists()
    with RunLedger() as ledger:
        ledger.record(make_turn("a prompt another user must not read"), execution_count=1)
        files = [path, Path(f"{path}-wal"), Path(f"{path}-shm")]
        modes = {p.name: oct(p.stat().st_mode & 0o777) for p in files}
        assert modes == {p.name: "0o600" for p in files}
    assert oct(path.parent.stat().st_mode & 0o777) == "0o700"
