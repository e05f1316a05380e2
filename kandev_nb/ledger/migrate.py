"""Schema versions: bring a ledger to the newest Alembic revision, once, under a lock.

:class:`~kandev_nb.ledger.RunLedger` calls :func:`upgrade` when it opens a ledger. A new
database gets every revision; a ledger of the releases before Alembic (tables, but no
``alembic_version``) is stamped ``0001`` and upgraded from there; a current one is left
alone after one cheap read. Before an SQLite file's schema changes, a copy of it is kept
beside it (``ledger.sqlite.schema-0001.bak``), made with SQLite's online backup.

Two kernels opening an old ledger at once upgrade it once: the upgrade runs in one
transaction that first takes a lock (SQLite: ``BEGIN IMMEDIATE``, the file's write lock;
PostgreSQL: ``pg_advisory_xact_lock``), then reads the version again. DDL is
transactional on both, so a failed upgrade leaves the old schema and every row.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import Any, Final

import sqlalchemy as sa
from alembic.config import Config
from alembic.runtime.environment import EnvironmentContext
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy.engine import URL, Connection, Engine

from kandev_nb.ledger.rows import metadata

__all__ = ["BEFORE_ALEMBIC", "MIGRATIONS", "backup_path", "head", "schema_version", "upgrade"]

MIGRATIONS: Final = Path(__file__).parent / "migrations"
"""The Alembic script directory shipped in the package."""
BEFORE_ALEMBIC: Final = "0001"
"""The revision a ledger written before Alembic is at."""
ADVISORY_LOCK_KEY: Final = 0x6B_616E_6476  # "kandv"
"""The PostgreSQL advisory lock id the upgrade holds (``pg_advisory_xact_lock``)."""


def _script() -> ScriptDirectory:
    return ScriptDirectory(str(MIGRATIONS))


def head() -> str:
    """The newest revision id shipped with this release (e.g. ``"0003"``)."""
    revision = _script().get_current_head()
    assert revision is not None
    return revision


def schema_version(conn: Connection) -> str | None:
    """The ledger's revision: ``alembic_version``'s, :data:`BEFORE_ALEMBIC` for a ledger
    with a ``turns`` table and no version, None for an empty database."""
    current = MigrationContext.configure(conn).get_current_revision()
    if current is None and sa.inspect(conn).has_table("turns"):
        return BEFORE_ALEMBIC
    return current


def backup_path(database: str | os.PathLike[str], revision: str) -> Path:
    """Where the copy of an SQLite ledger at `revision` is kept: beside it, ``<name>.schema-<rev>.bak``
    (``.1``, ``.2``... appended when that name is taken)."""
    base = Path(f"{os.fspath(database)}.schema-{revision}.bak")
    candidate, n = base, 0
    while candidate.exists():
        n += 1
        candidate = base.with_name(f"{base.name}.{n}")
    return candidate


def _backup_sqlite(database: str, revision: str) -> Path:
    """Copy the SQLite file (its last committed state, WAL included) beside it, mode 0600."""
    target = backup_path(database, revision)
    os.close(os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    source = sqlite3.connect(f"file:{database}?mode=ro", uri=True)
    try:
        copy = sqlite3.connect(target)
        try:
            source.backup(copy)
        finally:
            copy.close()
    finally:
        source.close()
    return target


def _newer(revision: str | None) -> bool:
    """Whether `revision` is one this release does not ship (a later release upgraded the
    ledger): it is used as it is, never downgraded; new columns stay NULL in our rows."""
    if revision is None:
        return False
    try:
        return _script().get_revision(revision) is None
    except Exception:  # noqa: BLE001 - alembic raises several kinds for an unknown id
        return True


def _file_database(url: URL) -> str | None:
    database = url.database or ""
    if url.get_backend_name() != "sqlite" or not database or database == ":memory:" or database.startswith("file:"):
        return None
    return database


def upgrade(engine: Engine, writer: Engine) -> list[str]:
    """Bring the ledger to :func:`head`; nothing to do costs one read.

    Args:
        engine: the ledger's engine (for the lock-free check).
        writer: the same engine with the option that makes SQLite's ``BEGIN`` immediate.

    Returns:
        The revisions applied, oldest first (``[]`` when the schema was already current,
        also when another process upgraded it while this one waited for the lock, and when
        a later release's revision is there: that ledger is used as it is).

    Raises:
        sqlalchemy.exc.SQLAlchemyError, OSError: the database cannot be reached or changed,
            or the backup cannot be written; nothing was changed.
    """
    target = head()
    with engine.connect() as conn:
        current = schema_version(conn)
    if current == target or _newer(current):
        return []
    with writer.begin() as conn:
        if conn.dialect.name == "postgresql":
            conn.execute(sa.text("SELECT pg_advisory_xact_lock(:key)"), {"key": ADVISORY_LOCK_KEY})
        current = schema_version(conn)
        if current == target or _newer(current):
            return []
        database = _file_database(engine.url)
        if current is not None and database is not None:
            _backup_sqlite(database, current)
        return _run(conn, current, target)


def _run(conn: Connection, current: str | None, target: str) -> list[str]:
    """Apply the revisions after `current` up to `target` on `conn` (inside its transaction)."""
    script = _script()
    if current is not None and MigrationContext.configure(conn).get_current_revision() is None:
        MigrationContext.configure(conn).stamp(script, current)  # a ledger from before Alembic
    applied: list[str] = []

    def steps(revision: Any, _context: Any) -> Any:
        migrations = script._upgrade_revs(target, revision)
        applied.extend(m.revision.revision for m in migrations)
        return migrations

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    with EnvironmentContext(config, script, fn=steps, destination_rev=target) as env:
        env.configure(connection=conn, target_metadata=metadata)
        env.run_migrations()
    return applied
