"""The cost ledger: one row per turn, kept in a database, read back as pandas DataFrames.

>>> ledger = RunLedger()                      # SQLite under the user data directory
>>> ledger_id = ledger.record(turn, notebook="analysis.ipynb", execution_count=7)  # doctest: +SKIP
>>> ledger.runs(since="2026-01-01")           # doctest: +SKIP
Where it lives (first match wins): the ``url_or_path`` argument of :class:`RunLedger`; the
``KANDEV_NB_LEDGER`` environment variable; ``platformdirs.user_data_dir("kandev-nb") /
"ledger.sqlite"``. Either a filesystem path (an SQLite file) or any SQLAlchemy URL
(``postgresql+psycopg://...`` for a team's shared ledger, ``sqlite:///path``).

Three tables (see :data:`turns_table`, :data:`tool_calls_table`, :data:`model_usage_table`):

* ``turns``: one row per turn: times, notebook and cell, session, prompt, cost (USD),
  tokens, durations (ms), tool counts, the result's subtype and error, the resume point.
* ``tool_calls``: one row per tool call of a turn, with its approval decision.
* ``model_usage``: one row per model used in a turn (the result's ``modelUsage`` deltas).

Each turn row also names its ``user`` (``JUPYTERHUB_USER``, else the OS login) and
``host``; the readers filter by user, :meth:`RunLedger.team` sums spend per user and
notebook. The schema carries an Alembic version (:mod:`kandev_nb.ledger.migrate`): opening a
ledger of an earlier release upgrades it in place, once, under a lock. A write the database
does not take (server down, file locked) goes to a local spool (:mod:`kandev_nb.ledger.spool`)
and lands once at the next write or :func:`ledger_flush`. ``str(ledger)`` and every error
show the URL with its password masked.

SQLite is opened in WAL mode with a busy timeout, and each :meth:`RunLedger.record` is one
``BEGIN IMMEDIATE`` transaction, so several kernels can write to the same file at once and
a kernel that dies mid-turn loses at most that turn's row. Timestamps are stored in UTC and
always come back timezone-aware (SQLite stores them as naive UTC text).
"""

from __future__ import annotations

import asyncio
import datetime as dt
import os
import threading
from typing import Any, Final, Self, Unpack

import pandas as pd
import sqlalchemy as sa
from sqlalchemy.engine import URL, Engine
from sqlalchemy.exc import SQLAlchemyError

from kandev_nb.agent.turn import Turn
from kandev_nb.errors import LedgerError
from kandev_nb.ledger import spool as _spool
from kandev_nb.ledger.engine import (
    ENV_LEDGER,
    default_path,
    make_engine,
    mask_secrets,
    mask_url,
    resolve_url,
)
from kandev_nb.ledger.frames import Filters, _raw, _Select, _typed, _where, period_start
from kandev_nb.ledger.migrate import upgrade
from kandev_nb.ledger.reports import LedgerReports
from kandev_nb.ledger.rows import (
    RUNS_LEAD,
    TurnRows,
    UTCDateTime,
    current_user,
    metadata,
    model_usage_table,
    tool_calls_table,
    turn_rows,
    turns_table,
)

__all__ = [
    "ENV_LEDGER",
    "Filters",
    "LedgerError",
    "RunLedger",
    "current_user",
    "default_ledger",
    "default_path",
    "ledger_flush",
    "mask_secrets",
    "mask_url",
    "metadata",
    "model_usage",
    "model_usage_table",
    "period_start",
    "record_or_spool",
    "resolve_url",
    "runs",
    "summary",
    "tool_calls",
    "tool_calls_table",
    "turns_table",
]

BUSY_TIMEOUT_S: Final = 30.0
"""How long an SQLite writer waits for another writer's lock before failing, in seconds."""


class RunLedger(LedgerReports):
    """The ledger of turns, in SQLite or any SQLAlchemy database.

    Args:
        url_or_path: where it lives; see :func:`resolve_url` (None: ``KANDEV_NB_LEDGER``,
            else :func:`default_path`). Directories of an SQLite file are created.
        busy_timeout_s: SQLite only: how long a write waits for another process's lock, s.
        engine: an existing SQLAlchemy engine to use instead (``url_or_path`` is ignored).
        spool_dir: where turns wait while the database cannot be reached (default:
            :func:`kandev_nb.ledger.spool.spool_dir`, one folder per ledger).

    Opening brings the schema to the newest version (:func:`kandev_nb.ledger.migrate.upgrade`:
    an SQLite file is copied beside itself first; concurrent openers upgrade once).

    Raises:
        LedgerError: the database cannot be opened, or its schema cannot be created or
            upgraded (nothing was changed then).

    Attributes:
        url: the resolved ``sqlalchemy.URL`` (``str(ledger)`` shows it with the password masked).
        engine: the SQLAlchemy engine (for bulk work, e.g. the benchmark's executemany).
        upgraded: the schema revisions this opening applied (``[]`` if it was current).
        spool_dir: the spool folder of this ledger.
    """

    def __init__(
        self,
        url_or_path: str | os.PathLike[str] | URL | None = None,
        *,
        busy_timeout_s: float = BUSY_TIMEOUT_S,
        engine: Engine | None = None,
        spool_dir: str | os.PathLike[str] | None = None,
    ) -> None:
        self.url: URL = engine.url if engine is not None else resolve_url(url_or_path)
        self.spool_dir = _spool.spool_dir(self.url, spool_dir)
        try:
            self.engine = engine if engine is not None else make_engine(self.url, busy_timeout_s)
            self._writer = self.engine.execution_options(kandev_write=True)
            self.upgraded = upgrade(self.engine, self._writer)
        except (SQLAlchemyError, OSError) as exc:
            raise LedgerError(f"cannot open the ledger at {self}: {_masked(exc, self.url)}", url=str(self)) from exc

    def __str__(self) -> str:
        return mask_url(self.url)

    def __repr__(self) -> str:
        return f"RunLedger({str(self)!r})"

    def close(self) -> None:
        """Close every pooled connection; the ledger reopens them if used again."""
        self.engine.dispose()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- writing ----------------------------------------------------------------------------

    def record(
        self, turn: Turn, *, notebook: str | os.PathLike[str] | None = None, execution_count: int | None = None
    ) -> int:
        """Write one turn (its row, its tool calls, its model usage) in one transaction.

        Turns waiting in the spool are written first (:meth:`flush`). The row gets ``user``
        (:func:`current_user`), ``host`` and a fresh ``turn_uid``. Works for any turn: a failed,
        interrupted or unfinished one gets a row with what
        the CLI reported (stats it never sent are NULL). Values come from ``turn.stats``
        (the `result` message: ``cost_usd`` is this turn's share of the cumulative
        ``result.total_cost_usd``; tokens the sums of its ``result.modelUsage`` deltas; ``duration_ms`` and
        ``duration_api_ms`` from the result), ``turn.tools`` and the turn's approval events.
        ``is_error`` is :attr:`Turn.failed <kandev_nb.agent.turn.Turn.failed>` (a turn the user
        stopped is ``interrupted`` instead). The new id is also stored as
        ``turn.meta["ledger_id"]``.

        Args:
            turn: the :class:`~kandev_nb.agent.turn.Turn` to record.
            notebook: the notebook's path, if known.
            execution_count: the cell's execution count, if known.

        Returns:
            The ledger id of the new ``turns`` row.

        Raises:
            LedgerError: the write failed (server down, network gone, disk full, locked
                for longer than the busy timeout, ...): the turn's rows went to the spool
                (``error.spooled`` is the file) and are written, once, at the next
                :meth:`record` or :meth:`flush` that reaches the database. The cause is chained.
        """
        rows = turn_rows(turn, os.fspath(notebook) if notebook is not None else None, execution_count)
        try:
            self.flush()
            ledger_id = self._insert(rows)
        except (SQLAlchemyError, OSError) as exc:
            try:
                spooled = _spool.write(self.spool_dir, rows, str(self))
            except OSError as spool_exc:  # e.g. a spool folder that is not ours (spool.check_folder)
                raise LedgerError(
                    f"the ledger at {self} did not take the turn ({_masked(exc, self.url)}); "
                    f"and the spool cannot be written: {spool_exc}",
                    url=str(self),
                ) from exc
            raise LedgerError(
                f"the ledger at {self} did not take the turn ({_masked(exc, self.url)}); it is kept in {spooled} "
                "and written when the ledger answers again (next turn or kandev_nb.ledger_flush())",
                url=str(self),
                spooled=spooled,
            ) from exc
        turn.meta["ledger_id"] = ledger_id
        return ledger_id

    def _insert(self, rows: TurnRows) -> int:
        """Write one turn's rows in one transaction; the new ``turns.id``.

        Raises:
            sqlalchemy.exc.IntegrityError: a row with this ``turn_uid`` is already there.
            sqlalchemy.exc.SQLAlchemyError, OSError: the write failed; nothing was written.
        """
        with self._writer.begin() as conn:
            inserted = conn.execute(turns_table.insert(), rows.turn).inserted_primary_key
            assert inserted is not None
            ledger_id = int(inserted[0])
            if rows.tools:
                conn.execute(tool_calls_table.insert(), [r | {"turn_id": ledger_id} for r in rows.tools])
            if rows.usage:
                conn.execute(model_usage_table.insert(), [r | {"turn_id": ledger_id} for r in rows.usage])
        return ledger_id

    def flush(self) -> int:
        """Write the turns waiting in this ledger's spool folder, each exactly once.

        A spooled turn whose ``turn_uid`` is already in the ledger (an earlier flush that
        wrote it but could not remove the file) is not written again. Its file is removed
        once its rows are in.

        Returns:
            How many spooled turns were written now.

        Raises:
            sqlalchemy.exc.SQLAlchemyError, OSError: the ledger still cannot be written;
                the remaining turns stay in the spool.
        """
        written = 0
        for path, rows in _spool.pending(self.spool_dir):
            try:
                self._insert(rows)
                written += 1
            except sa.exc.IntegrityError:
                if not self._has_uid(rows.turn["turn_uid"]):
                    raise
            path.unlink(missing_ok=True)
        return written

    def _has_uid(self, uid: str) -> bool:
        with self.engine.connect() as conn:
            found = conn.execute(sa.select(turns_table.c.id).where(turns_table.c.turn_uid == uid)).first()
        return found is not None

    async def arecord(
        self, turn: Turn, *, notebook: str | os.PathLike[str] | None = None, execution_count: int | None = None
    ) -> int:
        """:meth:`record` in a worker thread, so a slow or locked database never blocks the event loop.

        Returns and raises as :meth:`record`.
        """
        return await asyncio.to_thread(self.record, turn, notebook=notebook, execution_count=execution_count)

    # -- reading ----------------------------------------------------------------------------

    def _read(self, stmt: _Select) -> pd.DataFrame:
        try:
            with self.engine.connect() as conn:
                frame = pd.read_sql(stmt, conn)
        except (SQLAlchemyError, OSError) as exc:
            raise LedgerError(f"could not read the ledger at {self}: {_masked(exc, self.url)}", url=str(self)) from exc
        return _typed(frame)

    def runs(self, **filters: Unpack[Filters]) -> pd.DataFrame:
        """The ``turns`` table as a DataFrame, oldest first, one row per turn.

        The columns read first come first (:data:`RUNS_LEAD`: prompt, cost_usd,
        input_tokens, output_tokens, duration_ms, tool_call_count, is_error, interrupted),
        then the rest in table order. Values keep full precision (costs are not rounded).
        ``is_error`` is False for a turn the user stopped; ``interrupted`` is True for it.

        Args:
            **filters: see :class:`Filters` (`session_id`, `notebook`, `user`, `since`, `until`).

        Returns:
            One column per ``turns`` column: ``started_at``/``ended_at`` as
            ``datetime64[ns, UTC]``; ``model``, ``result_subtype``, ``session_name`` and other
            labels as ``category``; counts, tokens and ms as nullable ``Int64``; ``cost_usd``,
            ``total_cost_usd`` as ``float64`` USD (NaN when the CLI reported none);
            ``is_error``, ``interrupted`` as ``boolean``; ``tool_calls`` as dicts
            ``{tool name: count}``; free text (prompt, paths, ids, error) as pandas' ``str``
            (``object`` before pandas 3); ``fleet_key`` as a fleet row's index value with its
            type (:func:`kandev_nb.ledger.keys.key_column`: ``Int64`` for ints, ``str``,
            ``datetime64`` for Timestamps, tuples for a MultiIndex; None outside a fleet), so
            ``runs(fleet=name).set_index("fleet_key")`` joins with the fleet's input frame.

        Raises:
            LedgerError: the database cannot be read.
        """
        stmt = _where(sa.select(*_raw(*turns_table.c)), filters)
        frame = self._read(stmt.order_by(turns_table.c.id))
        lead = [c for c in RUNS_LEAD if c in frame.columns]
        return frame[lead + [c for c in frame.columns if c not in lead]]

    def fleet_rows(self, fingerprint: str) -> pd.DataFrame:
        """The turns of fleet rows run with the fleet fingerprint `fingerprint` (the template
        and the options that change an answer, :attr:`kandev_nb.fleet.runner.Fleet.fingerprint`,
        kept in ``fleet_result.fingerprint``), any fleet name (unnamed fleets too), oldest first:
        what a dry run's cost estimate is made from. Rows recorded by releases that did not
        keep that fingerprint are not found.

        Returns:
            Columns ``fleet`` (the name, None for an unnamed fleet), ``fleet_key`` (the row's
            index value), ``status`` (that attempt's: done, error, stopped), ``cost_usd``
            (float64 USD, NaN when the CLI reported none) and ``started_at`` (UTC).

        Raises:
            LedgerError: the database cannot be read.
        """
        t = turns_table.c
        stmt = (
            sa.select(
                *_raw(t.fleet, t.fleet_key),
                t.fleet_result["status"].as_string().label("status"),
                *_raw(t.cost_usd, t.started_at),
            )
            .where(t.fleet_fingerprint.is_not(None))
            .where(t.fleet_result["fingerprint"].as_string() == fingerprint)
        )
        return self._read(stmt.order_by(t.id))

    def tool_calls(self, **filters: Unpack[Filters]) -> pd.DataFrame:
        """The ``tool_calls`` table joined with its turn, filtered as :meth:`runs`.

        Returns:
            Columns ``turn_id``, ``started_at`` (the turn's), ``session_id``, ``notebook``,
            ``user`` (the turn's), ``seq`` (0-based order in the turn), ``tool_use_id``, ``parent_tool_use_id``,
            ``tool_name``, ``kind``, ``status``, ``duration_ms`` (Int64, ms: the tool's own
            run time), ``approval_wait_ms`` (Int64, ms: how long its approval waited for an
            answer, 0 when nobody was asked; NaN for rows of releases before it), ``decision``
            ("allow"/"deny"/NaN), ``decided_by`` (person/policy/timeout/cancelled/settings/mode/
            hook/grant),
            ``decision_message`` (a denial's reason as sent to the CLI, else NaN) and
            ``edited_input`` (the input the call ran with when the person edited it, a dict, else None).

        Raises:
            LedgerError: the database cannot be read.
        """
        t, c = turns_table.c, tool_calls_table.c
        stmt = sa.select(
            *_raw(
                c.turn_id,
                t.started_at,
                t.session_id,
                t.notebook,
                t.user,
                c.seq,
                c.tool_use_id,
                c.parent_tool_use_id,
                c.tool_name,
                c.kind,
                c.status,
                c.duration_ms,
                c.approval_wait_ms,
                c.decision,
                c.decided_by,
                c.decision_message,
                c.edited_input,
            )
        ).join_from(tool_calls_table, turns_table, c.turn_id == t.id)
        stmt = _where(stmt, filters)
        return self._read(stmt.order_by(c.turn_id, c.seq))

    def model_usage(self, **filters: Unpack[Filters]) -> pd.DataFrame:
        """The ``model_usage`` table joined with its turn, filtered as :meth:`runs`.

        Returns:
            Columns ``turn_id``, ``started_at``, ``session_id``, ``notebook``, ``user``, ``model``,
            the four token counts, ``cost_usd`` (float64 USD) and ``context_window``
            (tokens; from ``result.modelUsage[model].contextWindow``).

        Raises:
            LedgerError: the database cannot be read.
        """
        t, m = turns_table.c, model_usage_table.c
        stmt = sa.select(
            *_raw(
                m.turn_id,
                t.started_at,
                t.session_id,
                t.notebook,
                t.user,
                m.model,
                m.input_tokens,
                m.output_tokens,
                m.cache_read_input_tokens,
                m.cache_creation_input_tokens,
                m.cost_usd,
                m.context_window,
            )
        ).join_from(model_usage_table, turns_table, m.turn_id == t.id)
        stmt = _where(stmt, filters)
        return self._read(stmt.order_by(m.turn_id, m.model))

    # -- summary ----------------------------------------------------------------------------

    def totals(self, **filters: Unpack[Filters]) -> dict[str, Any]:
        """Sums over the turns matching the filters (computed by the database).

        Returns:
            ``{"turns": int, "cost_usd": float (USD), "input_tokens": int,
            "output_tokens": int, "tool_calls": int, "errors": int (turns with is_error),
            "interrupted": int (turns the user stopped), "denials": int (tool calls the CLI
            reported denied, `result.permission_denials`), "first": datetime | None,
            "last": datetime | None}`` (UTC start times, timezone-aware).

        Raises:
            LedgerError: the database cannot be read.
        """
        t = turns_table.c
        stmt = sa.select(
            sa.func.count(t.id),
            sa.func.coalesce(sa.func.sum(t.cost_usd), 0.0),
            sa.func.coalesce(sa.func.sum(t.input_tokens), 0),
            sa.func.coalesce(sa.func.sum(t.output_tokens), 0),
            sa.func.coalesce(sa.func.sum(t.tool_call_count), 0),
            sa.func.coalesce(sa.func.sum(sa.case((t.is_error.is_(True), 1), else_=0)), 0),
            sa.func.coalesce(sa.func.sum(sa.case((t.interrupted.is_(True), 1), else_=0)), 0),
            sa.func.coalesce(sa.func.sum(t.permission_denials), 0),
            sa.func.min(t.started_at),
            sa.func.max(t.started_at),
        )
        stmt = _where(stmt, filters)
        try:
            with self.engine.connect() as conn:
                values = conn.execute(stmt).one()
        except (SQLAlchemyError, OSError) as exc:
            raise LedgerError(f"could not read the ledger at {self}: {_masked(exc, self.url)}", url=str(self)) from exc
        turns, cost, tokens_in, tokens_out, tools, errors, interrupted, denials, first, last = values
        stamp = UTCDateTime()
        return {
            "turns": int(turns),
            "cost_usd": float(cost),
            "input_tokens": int(tokens_in),
            "output_tokens": int(tokens_out),
            "tool_calls": int(tools),
            "errors": int(errors),
            "interrupted": int(interrupted),
            "denials": int(denials),
            "first": _as_utc(first, stamp),
            "last": _as_utc(last, stamp),
        }


def _as_utc(value: Any, stamp: UTCDateTime) -> dt.datetime | None:
    """An aggregate's time (SQLite gives ISO text for MIN/MAX) as an aware UTC datetime."""
    if value is None:
        return None
    if isinstance(value, str):
        value = dt.datetime.fromisoformat(value)
    return stamp.process_result_value(value, sa.engine.default.DefaultDialect())


def _masked(exc: BaseException, url: URL | None = None) -> str:
    """An error's message for ours, passwords of URLs in it and the secrets of `url` masked
    (:func:`mask_secrets`)."""
    text = mask_secrets(str(exc))
    return mask_secrets(text, url) if url is not None else text


# -- the default ledger ---------------------------------------------------------------------

_defaults: dict[str, RunLedger] = {}
_defaults_lock = threading.Lock()


def default_ledger() -> RunLedger:
    """The process's ledger at ``KANDEV_NB_LEDGER`` (else :func:`default_path`), made once.

    The environment variable is read at every call: a changed value gives (and keeps) the
    ledger at the new location.

    Raises:
        LedgerError: the ledger cannot be opened.
    """
    url = resolve_url(None)
    key = url.render_as_string(hide_password=False)
    with _defaults_lock:
        ledger = _defaults.get(key)
        if ledger is None:
            ledger = _defaults[key] = RunLedger(url)
        return ledger


def runs(**filters: Unpack[Filters]) -> pd.DataFrame:
    """:meth:`RunLedger.runs` of :func:`default_ledger` (``kandev_nb.runs()``)."""
    return default_ledger().runs(**filters)


def tool_calls(**filters: Unpack[Filters]) -> pd.DataFrame:
    """:meth:`RunLedger.tool_calls` of :func:`default_ledger` (``kandev_nb.tool_calls()``)."""
    return default_ledger().tool_calls(**filters)


def model_usage(**filters: Unpack[Filters]) -> pd.DataFrame:
    """:meth:`RunLedger.model_usage` of :func:`default_ledger`."""
    return default_ledger().model_usage(**filters)


def summary(**options: Any) -> dict[str, Any]:
    """:meth:`RunLedger.summary` of :func:`default_ledger`; same keyword arguments."""
    return default_ledger().summary(**options)


def ledger_flush() -> int:
    """Write the turns waiting in the default ledger's spool (``kandev_nb.ledger_flush()``).

    Returns:
        How many spooled turns were written (each lands once).

    Raises:
        LedgerError: the ledger still cannot be reached; the turns stay spooled.
    """
    ledger = default_ledger()
    try:
        return ledger.flush()
    except (SQLAlchemyError, OSError) as exc:
        raise LedgerError(
            f"the ledger at {ledger} still does not answer: {_masked(exc, ledger.url)}; "
            f"the turns stay in {ledger.spool_dir}",
            url=str(ledger),
        ) from exc


def record_or_spool(
    turn: Turn, *, notebook: str | os.PathLike[str] | None = None, execution_count: int | None = None
) -> int | None:
    """Record `turn` in :func:`default_ledger`, or keep it in the spool: never raises for
    a database that is away (what ``%%claude`` calls after each turn).

    Even a ledger that cannot be opened (server down when the kernel starts) keeps the turn
    in its spool folder, written at the next turn that reaches it.

    Returns:
        The new ``turns.id``, or None when the turn was spooled.

    Raises:
        LedgerError: only when the spool itself cannot be written (``spooled`` is None).
    """
    url = resolve_url(None)
    try:
        ledger = default_ledger()
    except LedgerError as exc:
        rows = turn_rows(turn, os.fspath(notebook) if notebook is not None else None, execution_count)
        try:
            spooled = _spool.write(_spool.spool_dir(url), rows, mask_url(url))
        except OSError as spool_exc:
            raise LedgerError(f"{exc}; and the spool cannot be written: {spool_exc}", url=exc.url) from exc
        turn.meta["ledger_spooled"] = str(spooled)
        return None
    try:
        return ledger.record(turn, notebook=notebook, execution_count=execution_count)
    except LedgerError as exc:
        if exc.spooled is None:
            raise
        turn.meta["ledger_spooled"] = str(exc.spooled)
        return None
