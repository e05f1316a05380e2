"""A :class:`~kandev_nb.agent.session_store.SessionStore` in the ledger's database: the team
ledger's PostgreSQL (or an SQLite file), table ``session_entries``.

Every kernel, and every Dask worker, that points at the same ledger resumes each other's
sessions: ``configure(session_store=LedgerSessionStore())`` in a notebook,
``SessionConfig(session_store=...)`` elsewhere.

>>> store = LedgerSessionStore("postgresql+psycopg://team@db/ledger")  # doctest: +SKIP
"""

from __future__ import annotations

import datetime as dt
import os
import threading
from collections.abc import Mapping, Sequence
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import URL

from kandev_nb.agent.session_store import SessionKey, check_key
from kandev_nb.ledger.engine import mask_url, resolve_url, url_secrets
from kandev_nb.ledger.rows import session_entries_table as _t

__all__ = ["LedgerSessionStore"]


class LedgerSessionStore:
    """Transcripts in the ledger's database (opened, and its schema brought up to date, on
    first use; one connection pool per store object and process).

    Args:
        url_or_path: the ledger (see :func:`kandev_nb.ledger.resolve_url`); None: the
            ``KANDEV_NB_LEDGER`` of the process that uses it, read when first used, so a
            store sent to Dask workers reaches the workers' own ledger setting.

    A store given a URL with a password does not pickle (a fleet row would carry it to its
    worker; pass None and set ``KANDEV_NB_LEDGER`` on the workers instead): TypeError.

    Entries are appended in one transaction per batch; an entry whose ``uuid`` the transcript
    already holds is skipped (a retried batch), entries without a ``uuid`` are always added.
    Errors are the database's (``sqlalchemy.exc.SQLAlchemyError``) or
    :class:`~kandev_nb.errors.LedgerError` when the ledger cannot be opened.
    """

    def __init__(self, url_or_path: str | os.PathLike[str] | URL | None = None) -> None:
        self._given = url_or_path if url_or_path is None or isinstance(url_or_path, URL) else os.fspath(url_or_path)
        self._ledger: Any = None
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        if self._given is None:
            return "LedgerSessionStore('KANDEV_NB_LEDGER')"
        try:
            where = mask_url(resolve_url(self._given))
        except Exception:  # noqa: BLE001 - a malformed URL: its text, password masked
            where = mask_url(str(self._given))
        return f"LedgerSessionStore({where!r})"

    def __getstate__(self) -> dict[str, Any]:
        if url_secrets(self._given):
            raise TypeError(
                "a LedgerSessionStore whose URL holds a password is not sent to other processes; "
                "use LedgerSessionStore() and set KANDEV_NB_LEDGER where it runs"
            )
        return {"given": self._given}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self._given, self._ledger, self._lock = state["given"], None, threading.Lock()

    def _open(self) -> Any:
        with self._lock:
            if self._ledger is None:
                from kandev_nb.ledger import RunLedger

                self._ledger = RunLedger(self._given)  # creates / upgrades the schema (0008)
            return self._ledger

    def append(self, key: SessionKey, entries: Sequence[Mapping[str, Any]]) -> None:
        """Store `entries` after the transcript's others (one transaction).

        Raises:
            ValueError: `key` would name a path outside its folder when written back
                (:func:`~kandev_nb.agent.session_store.check_key`).
        """
        check_key(key)
        if not entries:
            return
        ledger = self._open()
        subpath = key.subpath or ""
        where = (_t.c.project_key == key.project_key) & (_t.c.session_id == key.session_id) & (_t.c.subpath == subpath)
        uuids = [e["uuid"] for e in entries if isinstance(e.get("uuid"), str)]
        now = dt.datetime.now(dt.UTC)
        with ledger._writer.begin() as conn:
            held = set(conn.scalars(sa.select(_t.c.uuid).where(where & _t.c.uuid.in_(uuids)))) if uuids else set()
            rows = []
            for entry in entries:
                uuid = entry.get("uuid") if isinstance(entry.get("uuid"), str) else None
                if uuid is not None and uuid in held:
                    continue
                if uuid is not None:
                    held.add(uuid)
                rows.append(
                    {
                        "project_key": key.project_key,
                        "session_id": key.session_id,
                        "subpath": subpath,
                        "uuid": uuid,
                        "entry": dict(entry),
                        "stored_at": now,
                    }
                )
            if rows:
                conn.execute(sa.insert(_t), rows)

    def load(self, key: SessionKey) -> list[dict[str, Any]] | None:
        """The transcript's entries in the order they were stored; None if it has none."""
        ledger = self._open()
        query = (
            sa.select(_t.c.entry)
            .where(_t.c.project_key == key.project_key)
            .where(_t.c.session_id == key.session_id)
            .where(_t.c.subpath == (key.subpath or ""))
            .order_by(_t.c.id)
        )
        with ledger.engine.connect() as conn:
            entries = [dict(e) for e in conn.scalars(query)]
        return entries or None

    def list_subkeys(self, key: SessionKey) -> list[str]:
        """The subpaths stored for session `key` (its subagents' transcripts), sorted."""
        ledger = self._open()
        query = (
            sa.select(_t.c.subpath)
            .distinct()
            .where(_t.c.project_key == key.project_key)
            .where(_t.c.session_id == key.session_id)
            .where(_t.c.subpath != "")
        )
        with ledger.engine.connect() as conn:
            return sorted(conn.scalars(query))

    def find(self, session_id: str) -> list[str]:
        """The project keys session `session_id` is stored under (a session begun in another
        folder or on another machine; :func:`~kandev_nb.agent.session_store.materialize`)."""
        ledger = self._open()
        query = sa.select(_t.c.project_key).distinct().where(_t.c.session_id == session_id).where(_t.c.subpath == "")
        with ledger.engine.connect() as conn:
            return sorted(conn.scalars(query))
