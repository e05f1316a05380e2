"""Where the ledger lives and how its engine is made: paths, URLs (passwords masked), SQLite's
WAL mode and locks. :mod:`kandev_nb.ledger` re-exports the public names.
"""

from __future__ import annotations

import contextlib
import os
import re
from pathlib import Path
from typing import Any, Final

import platformdirs
import sqlalchemy as sa
from sqlalchemy.engine import URL, Connection, Engine

from kandev_nb.redact import environment_secrets, is_secret_name, mask_credentials, mask_values

__all__ = ["ENV_LEDGER", "default_path", "make_engine", "mask_secrets", "mask_url", "resolve_url", "url_secrets"]

ENV_LEDGER: Final = "KANDEV_NB_LEDGER"
"""Environment variable naming the ledger: a filesystem path or an SQLAlchemy URL."""

_URL_RE = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*://")


def url_secrets(url: str | URL | None) -> list[str]:
    """The secret parts of a ledger URL: its password and every password-like query
    parameter's value (``?password=...``, which psycopg accepts), as given and percent-decoded.
    Nothing for None or text that is not a URL."""
    if url is None:
        return []
    if not isinstance(url, URL):
        text = url
        if not _URL_RE.match(text):
            return []
        try:
            url = sa.make_url(text)
        except (sa.exc.ArgumentError, ValueError):
            return environment_secrets({"url": text})
    found = [str(url.password)] if url.password else []
    for key, value in url.query.items():
        if is_secret_name(key):
            found.extend([value] if isinstance(value, str) else list(value))
    return [s for s in found if s]


def mask_secrets(text: str, url: str | URL | None = None) -> str:
    """`text` (an error message, a log line, a repr) with every credential in it as ``***``:
    the password of every URL (through its last raw ``@``), password-like query parameters,
    and the known secrets of `url` (default: the ``KANDEV_NB_LEDGER`` URL), wherever they
    appear (:func:`kandev_nb.redact.mask_credentials`)."""
    known = url_secrets(url if url is not None else os.environ.get(ENV_LEDGER))
    return mask_values(mask_credentials(text, "***"), known, "***")


def mask_url(url: str | URL) -> str:
    """`url` with its password and password-like query parameters shown as ``***`` (also for
    text that is not a valid URL)."""
    if isinstance(url, URL):
        return mask_values(mask_credentials(url.render_as_string(hide_password=True), "***"), url_secrets(url), "***")
    return mask_credentials(url, "***")


# -- where the ledger lives -----------------------------------------------------------------


def default_path() -> Path:
    """The default SQLite file: ``platformdirs.user_data_dir("kandev-nb") / "ledger.sqlite"``."""
    return Path(platformdirs.user_data_dir("kandev-nb")) / "ledger.sqlite"


def resolve_url(url_or_path: str | os.PathLike[str] | URL | None = None) -> URL:
    """The SQLAlchemy URL of a ledger.

    Args:
        url_or_path: an SQLAlchemy URL (a string with ``scheme://``, or a ``URL``), or a
            filesystem path of an SQLite file (``~`` expanded, made absolute). None means
            the ``KANDEV_NB_LEDGER`` environment variable if set and non-empty, else
            :func:`default_path`.

    Raises:
        sqlalchemy.exc.ArgumentError: a string that looks like a URL but is not one (the
            message shows it with the password masked).
    """
    if url_or_path is None:
        url_or_path = os.environ.get(ENV_LEDGER) or default_path()
    if isinstance(url_or_path, URL):
        return url_or_path
    text = os.fspath(url_or_path)
    if _URL_RE.match(text):
        try:
            return sa.make_url(text)
        except (sa.exc.ArgumentError, ValueError):  # their messages may quote the password
            raise sa.exc.ArgumentError(f"not a database URL: {mask_url(text)!r}") from None
    return URL.create("sqlite", database=str(Path(text).expanduser().resolve()))


def _private_sqlite_file(database: str) -> None:
    """Create `database` (and its folder) readable by this user only, if they do not exist.

    A new folder is made 0700 and a new file 0600; SQLite gives the ``-wal`` and ``-shm``
    files it adds the database file's mode, so they are 0600 too. The default ledger's
    folder (:func:`default_path`) is made 0700 even if it already existed. Existing files
    keep their mode (a shared ledger's owner chose it).
    """
    path = Path(database)
    folder = path.parent
    if not folder.exists():
        folder.mkdir(parents=True, mode=0o700, exist_ok=True)
        with contextlib.suppress(OSError):
            folder.chmod(0o700)
    elif folder == default_path().parent.resolve():
        with contextlib.suppress(OSError):
            folder.chmod(0o700)
    with contextlib.suppress(FileExistsError):
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))


def make_engine(url: URL, busy_timeout_s: float) -> Engine:
    """The engine of the ledger at `url`: SQLite as :func:`_sqlite_engine`, else pooled
    with ``pool_pre_ping`` (a connection the server dropped is replaced, not used); on
    PostgreSQL a connection attempt gives up after `busy_timeout_s` (``connect_timeout``),
    so a server behind a dead network fails the write (and the turn is spooled) instead
    of hanging the kernel."""
    if url.get_backend_name() == "sqlite":
        return _sqlite_engine(url, busy_timeout_s)
    connect_args = {"connect_timeout": max(1, int(busy_timeout_s))} if url.get_backend_name() == "postgresql" else {}
    return sa.create_engine(url, pool_pre_ping=True, connect_args=connect_args)


def _sqlite_engine(url: URL, busy_timeout_s: float) -> Engine:
    database = url.database or ""
    if database and database != ":memory:" and not database.startswith("file:"):
        _private_sqlite_file(database)
    engine = sa.create_engine(url, connect_args={"timeout": busy_timeout_s})

    @sa.event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None  # the driver must not BEGIN on its own: we do
        cursor = dbapi_connection.cursor()
        cursor.execute(f"PRAGMA busy_timeout = {int(busy_timeout_s * 1000)}")
        cursor.execute("PRAGMA journal_mode = WAL")
        cursor.execute("PRAGMA synchronous = NORMAL")
        cursor.execute("PRAGMA foreign_keys = ON")
        cursor.close()

    @sa.event.listens_for(engine, "begin")
    def _on_begin(conn: Connection) -> None:
        # A writer takes the write lock at BEGIN (waiting up to the busy timeout), so it can
        # never fail half-way on a lock upgrade; readers use a plain deferred BEGIN.
        write = conn.get_execution_options().get("kandev_write", False)
        conn.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")

    return engine
