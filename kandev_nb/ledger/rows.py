"""The ledger's schema and how a :class:`~kandev_nb.agent.turn.Turn` becomes its rows.

Three tables (:data:`turns_table`, :data:`tool_calls_table`, :data:`model_usage_table`) in
one :data:`metadata`, the pandas dtypes :mod:`kandev_nb.ledger` reads them with, and the
pure functions that turn a Turn into rows. :mod:`kandev_nb.ledger` re-exports the public
names; nothing here does I/O.
"""

from __future__ import annotations

import datetime as dt
import getpass
import os
import socket
import uuid
from collections import Counter
from typing import Any, Final, NamedTuple

import pandas as pd
import sqlalchemy as sa
from sqlalchemy.engine import Dialect

from kandev_nb._version import __version__
from kandev_nb.agent import events as ev
from kandev_nb.agent.turn import Turn
from kandev_nb.ledger.engine import mask_secrets

__all__ = [
    "RUNS_LEAD",
    "TurnRows",
    "UTCDateTime",
    "current_host",
    "current_user",
    "metadata",
    "model_usage_table",
    "origin_columns",
    "session_entries_table",
    "tool_calls_table",
    "turn_rows",
    "turns_table",
]

_UTC = dt.UTC


class UTCDateTime(sa.types.TypeDecorator[dt.datetime]):
    """A timezone-aware UTC datetime on every backend.

    Binds: aware values are converted to UTC; naive ones are taken as UTC already. SQLite
    gets naive UTC (stored as sortable ISO text); other backends get the aware value
    (``TIMESTAMP WITH TIME ZONE``). Results always come back aware, in UTC.
    """

    impl = sa.DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: dt.datetime | None, dialect: Dialect) -> dt.datetime | None:
        if value is None:
            return None
        value = value.replace(tzinfo=_UTC) if value.tzinfo is None else value.astimezone(_UTC)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: dt.datetime | None, dialect: Dialect) -> dt.datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=_UTC) if value.tzinfo is None else value.astimezone(_UTC)


metadata = sa.MetaData()
"""The ledger's schema at the newest migration (:mod:`kandev_nb.ledger.migrations`); a test
checks that the migrations build exactly this."""

turns_table = sa.Table(
    "turns",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("started_at", UTCDateTime, nullable=False, index=True),
    sa.Column("ended_at", UTCDateTime),
    sa.Column("notebook", sa.Text, index=True),
    sa.Column("execution_count", sa.Integer),
    sa.Column("session_name", sa.String),
    sa.Column("session_id", sa.String, index=True),
    sa.Column("cwd", sa.Text),
    sa.Column("prompt", sa.Text),
    sa.Column("prompt_chars", sa.Integer),
    sa.Column("answer", sa.Text),
    sa.Column("model", sa.String),
    sa.Column("models", sa.String),
    sa.Column("cost_usd", sa.Float),
    sa.Column("total_cost_usd", sa.Float),
    sa.Column("input_tokens", sa.Integer),
    sa.Column("output_tokens", sa.Integer),
    sa.Column("cache_read_input_tokens", sa.Integer),
    sa.Column("cache_creation_input_tokens", sa.Integer),
    sa.Column("duration_ms", sa.Integer),
    sa.Column("duration_api_ms", sa.Integer),
    sa.Column("approval_wait_ms", sa.Integer),
    sa.Column("num_turns", sa.Integer),
    sa.Column("tool_calls", sa.JSON),
    sa.Column("tool_call_count", sa.Integer),
    sa.Column("permission_denials", sa.Integer),
    sa.Column("is_error", sa.Boolean),
    sa.Column("result_subtype", sa.String),
    sa.Column("terminal_reason", sa.String),
    sa.Column("api_error_status", sa.Integer),
    sa.Column("error", sa.Text),
    sa.Column("last_message_uuid", sa.String),
    sa.Column("interrupted", sa.Boolean),
    sa.Column("cli_version", sa.String),
    sa.Column("kandev_nb_version", sa.String),
    sa.Column("user", sa.String, index=True),
    sa.Column("host", sa.String),
    sa.Column("turn_uid", sa.String(32), index=True, unique=True),
    sa.Column("fleet", sa.String, index=True),
    sa.Column("fleet_key", sa.Text),
    sa.Column("fleet_fingerprint", sa.String),
    sa.Column("fleet_result", sa.JSON),
    sa.Column("prompt_uuid", sa.String, index=True),
    sa.Column("origin_kind", sa.String),
    sa.Column("origin", sa.JSON),
)
"""One row per turn. Costs in USD, tokens as counts, durations in ms (see :func:`_turn_row`).
A turn run as a fleet's row also has ``fleet``, ``fleet_key`` (the row's index value in a typed
encoding, :func:`kandev_nb.ledger.keys.encode_key`; read back as the value), ``fleet_fingerprint``
and ``fleet_result`` (from ``turn.meta["fleet"]``, :mod:`kandev_nb.fleet`: the row's status, error,
answer, output, position and the fleet's ``fingerprint``, which a dry run's estimate looks up);
NULL otherwise. ``prompt_uuid``, ``origin_kind`` and ``origin``: which cell, fleet row or
Python call sent the prompt, and the uuid it was sent with (:func:`origin_columns`)."""

tool_calls_table = sa.Table(
    "tool_calls",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("turn_id", sa.Integer, sa.ForeignKey("turns.id", ondelete="CASCADE"), nullable=False, index=True),
    sa.Column("seq", sa.Integer, nullable=False),
    sa.Column("tool_use_id", sa.String),
    sa.Column("parent_tool_use_id", sa.String),
    sa.Column("tool_name", sa.String),
    sa.Column("kind", sa.String),
    sa.Column("status", sa.String),
    sa.Column("duration_ms", sa.Integer),
    sa.Column("approval_wait_ms", sa.Integer),
    sa.Column("decision", sa.String),
    sa.Column("decided_by", sa.String),
    sa.Column("decision_message", sa.Text),
    sa.Column("edited_input", sa.JSON),
)
"""One row per tool call; `duration_ms` is the tool's own run time (tool_use to tool_result
less `approval_wait_ms`, the time its approval waited for an answer, 0 when nobody was asked);
`decision` is "allow", "deny" or NULL (no approval was asked);
`decision_message` is the deny `message` sent to the CLI (the person's reason), else NULL;
`edited_input` the input the call ran with when the person edited it before allowing, else NULL."""

model_usage_table = sa.Table(
    "model_usage",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("turn_id", sa.Integer, sa.ForeignKey("turns.id", ondelete="CASCADE"), nullable=False, index=True),
    sa.Column("model", sa.String),
    sa.Column("input_tokens", sa.Integer),
    sa.Column("output_tokens", sa.Integer),
    sa.Column("cache_read_input_tokens", sa.Integer),
    sa.Column("cache_creation_input_tokens", sa.Integer),
    sa.Column("cost_usd", sa.Float),
    sa.Column("context_window", sa.Integer),
)
"""One row per model per turn (deltas of the CLI's cumulative ``result.modelUsage``)."""

session_entries_table = sa.Table(
    "session_entries",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("project_key", sa.String, nullable=False),
    sa.Column("session_id", sa.String, nullable=False, index=True),
    sa.Column("subpath", sa.String, nullable=False, server_default=""),
    sa.Column("uuid", sa.String),
    sa.Column("entry", sa.JSON, nullable=False),
    sa.Column("stored_at", UTCDateTime, nullable=False),
    sa.Index("ux_session_entries_uuid", "project_key", "session_id", "subpath", "uuid", unique=True),
)
"""Transcripts mirrored to the ledger's database, one row per entry, read in ``id`` order
(:class:`kandev_nb.ledger.session_store.LedgerSessionStore`); `subpath` is "" for a session's
own transcript."""

RUNS_LEAD: Final = (
    "prompt",
    "answer",
    "cost_usd",
    "input_tokens",
    "output_tokens",
    "duration_ms",
    "tool_call_count",
    "is_error",
    "interrupted",
    "started_at",
)
"""The first columns of :meth:`RunLedger.runs`, in this order."""

_TS = "datetime64[ns, UTC]"
_COUNT_COLUMNS = (
    "input_tokens",
    "output_tokens",
    "cache_read_input_tokens",
    "cache_creation_input_tokens",
    "duration_ms",
    "duration_api_ms",
    "approval_wait_ms",
    "num_turns",
    "tool_call_count",
    "permission_denials",
    "api_error_status",
    "execution_count",
    "prompt_chars",
    "context_window",
    "id",
    "turn_id",
    "seq",
    "turns",
    "calls",
    "errors",
    "denied",
)
_CATEGORY_COLUMNS = (
    "model",
    "result_subtype",
    "session_name",
    "terminal_reason",
    "cli_version",
    "kandev_nb_version",
    "tool_name",
    "kind",
    "status",
    "decision",
    "decided_by",
    "user",
    "host",
    "origin_kind",
)
_TEXT_COLUMNS = (
    "notebook",
    "session_id",
    "cwd",
    "prompt",
    "answer",
    "models",
    "error",
    "last_message_uuid",
    "tool_use_id",
    "parent_tool_use_id",
    "decision_message",
    "turn_uid",
    "fleet",
    "fleet_key",
    "fleet_fingerprint",
    "prompt_uuid",
)
_TEXT = "str" if int(pd.__version__.split(".")[0]) >= 3 else "object"
"""pandas 3's string dtype (missing values are NaN); plain object columns before it."""
_DTYPES: dict[str, str] = {
    **dict.fromkeys(_TEXT_COLUMNS, _TEXT),
    **dict.fromkeys(_COUNT_COLUMNS, "Int64"),
    **dict.fromkeys(_CATEGORY_COLUMNS, "category"),
    "started_at": _TS,
    "ended_at": _TS,
    "cost_usd": "float64",
    "total_cost_usd": "float64",
    "mean_duration_ms": "float64",
    "is_error": "boolean",
    "interrupted": "boolean",
    "tool_calls": "json",
    "edited_input": "json",
    "fleet_result": "json",
    "origin": "json",
}


# -- turn -> rows ---------------------------------------------------------------------------


def _decisions(turn: Turn) -> dict[str, ev.PermissionDecided]:
    """Approval decisions by `tool_use_id`, matched through the request's `request_id`."""
    tool_use_of = {
        e.request_id: e.tool_use_id for e in turn.events if isinstance(e, ev.PermissionRequest) and e.tool_use_id
    }
    return {
        tool_use_of[e.request_id]: e
        for e in turn.events
        if isinstance(e, ev.PermissionDecided) and e.request_id in tool_use_of
    }


def current_user() -> str:
    """Whose turn it is: ``JUPYTERHUB_USER`` (set by JupyterHub's spawner), else the OS login
    (``getpass.getuser()``), else ``uid<N>`` when the uid has no name."""
    hub = os.environ.get("JUPYTERHUB_USER")
    if hub:
        return hub
    try:
        return getpass.getuser()
    except (OSError, KeyError):
        return f"uid{os.getuid()}"


def current_host() -> str:
    """Where the kernel runs: ``socket.gethostname()``."""
    return socket.gethostname()


class TurnRows(NamedTuple):
    """The rows one turn writes: its ``turns`` row (with a fresh ``turn_uid``, the key that
    makes a spooled turn land once) and its ``tool_calls`` and ``model_usage`` rows
    (without ``turn_id``)."""

    turn: dict[str, Any]
    tools: list[dict[str, Any]]
    usage: list[dict[str, Any]]


def turn_rows(turn: Turn, notebook: str | None, execution_count: int | None) -> TurnRows:
    """All the rows of `turn`, with ``user`` (:func:`current_user`) and ``host`` (the kernel's,
    or ``turn.meta["host"]``: the Dask worker's host of a fleet row run on a cluster)."""
    row = _turn_row(turn, notebook, execution_count) | {
        "user": current_user(),
        "host": turn.meta.get("host") or current_host(),
        "turn_uid": uuid.uuid4().hex,
    }
    return TurnRows(row, _tool_rows(turn), _usage_rows(turn))


def _turn_row(turn: Turn, notebook: str | None, execution_count: int | None) -> dict[str, Any]:
    """The ``turns`` row of `turn`; stats the CLI did not report are NULL."""
    stats = turn.stats
    denied = sum(1 for e in turn.events if isinstance(e, ev.PermissionDecided) and e.behavior == "deny")
    by_tool = Counter(record.call.tool_name for record in turn.tools.values())
    error = turn.error.message if turn.error else ("\n".join(stats.errors) if stats and stats.errors else None)
    row: dict[str, Any] = {
        "started_at": turn.started_at,
        "ended_at": turn.ended_at,
        "notebook": notebook,
        "execution_count": execution_count,
        "session_name": turn.session_name,
        "session_id": turn.session_id or (stats.session_id if stats else None),
        "cwd": turn.cwd,
        "prompt": turn.prompt,
        "prompt_chars": len(turn.prompt),
        "answer": mask_secrets(turn.text) if turn.text else None,
        "approval_wait_ms": turn.approval_wait_ms,
        "tool_calls": dict(by_tool),
        "tool_call_count": len(turn.tools),
        "permission_denials": len(stats.permission_denials) if stats else denied,
        "is_error": turn.failed,  # a stop by the user is `interrupted`, not an error
        "error": error,
        "last_message_uuid": turn.last_message_uuid,
        "interrupted": turn.interrupted or turn.stopped,
        "cli_version": turn.cli_version,
        "kandev_nb_version": __version__,
        **_fleet_columns(turn),
        **origin_columns(turn),
    }
    if stats is None:
        return row
    return row | {
        "model": stats.model,
        "models": ",".join(sorted(stats.model_usage)) or None,
        "cost_usd": stats.cost_usd,
        "total_cost_usd": stats.total_cost_usd,
        "input_tokens": stats.input_tokens,
        "output_tokens": stats.output_tokens,
        "cache_read_input_tokens": stats.cache_read_input_tokens,
        "cache_creation_input_tokens": stats.cache_creation_input_tokens,
        "duration_ms": stats.duration_ms,
        "duration_api_ms": stats.duration_api_ms,
        "num_turns": stats.num_turns,
        "result_subtype": stats.result_subtype,
        "terminal_reason": stats.terminal_reason,
        "api_error_status": stats.api_error_status,
    }


_FLEET_COLUMNS: Final = ("fleet", "fleet_key", "fleet_fingerprint", "fleet_result")


def _fleet_columns(turn: Turn) -> dict[str, Any]:
    """The fleet columns of a fleet row's turn (``turn.meta["fleet"]``), else {}."""
    meta = turn.meta.get("fleet")
    return {k: meta.get(k) for k in _FLEET_COLUMNS} if isinstance(meta, dict) else {}


def origin_columns(turn: Turn) -> dict[str, Any]:
    """``prompt_uuid``, ``origin_kind`` and ``origin`` of `turn` ({} for a turn sent without a
    stamp, e.g. one read back from an older release): ``origin`` is
    :meth:`Origin.as_dict <kandev_nb.agent.origin.Origin.as_dict>` plus ``echoed`` (the result
    named the prompt's uuid, :attr:`Turn.origin_echoed`) and ``result_origin`` (the result's own
    `origin`, ``{"kind": "human"}``; absent when the CLI sent none)."""
    if turn.origin is None and turn.prompt_uuid is None:
        return {}
    stamp = turn.origin.as_dict() if turn.origin is not None else {}
    stamp["echoed"] = turn.origin_echoed
    if turn.stats is not None and turn.stats.result_origin is not None:
        stamp["result_origin"] = turn.stats.result_origin
    return {"prompt_uuid": turn.prompt_uuid, "origin_kind": stamp.get("kind"), "origin": stamp}


def _tool_rows(turn: Turn) -> list[dict[str, Any]]:
    """The ``tool_calls`` rows of `turn` (without `turn_id`), in call order."""
    decisions = _decisions(turn)
    rows = []
    for seq, (tool_use_id, record) in enumerate(turn.tools.items()):
        decision = decisions.get(tool_use_id) or record.decision
        payload = record.update.normalized if record.update else record.call.normalized
        rows.append(
            {
                "seq": seq,
                "tool_use_id": tool_use_id,
                "parent_tool_use_id": record.call.parent_tool_use_id,
                "tool_name": record.call.tool_name,
                "kind": payload.kind,
                "status": record.status,
                "duration_ms": record.duration_ms,
                "approval_wait_ms": record.approval_wait_ms,
                "decision": decision.behavior if decision else None,
                "decided_by": decision.decided_by if decision else None,
                "decision_message": decision.message or None if decision and decision.behavior == "deny" else None,
                "edited_input": record.call.input if record.edited else None,
            }
        )
    return rows


def _usage_rows(turn: Turn) -> list[dict[str, Any]]:
    """The ``model_usage`` rows of `turn` (without `turn_id`), one per model."""
    if turn.stats is None:
        return []
    return [{"model": model, **usage.model_dump()} for model, usage in sorted(turn.stats.model_usage.items())]
