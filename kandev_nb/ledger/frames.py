"""Reading the ledger into DataFrames: the filters, and the bulk conversion to ledger dtypes.

:class:`Filters` are the keyword arguments of every reader of :class:`~kandev_nb.ledger.RunLedger`;
:func:`_typed` gives each column its dtype (:data:`kandev_nb.ledger.rows._DTYPES`) in bulk.
"""

from __future__ import annotations

import datetime as dt
import json
import os
from typing import Any, TypeAlias, TypedDict

import pandas as pd
import sqlalchemy as sa

from kandev_nb.ledger.keys import decode_key, key_column
from kandev_nb.ledger.rows import _DTYPES, _TS, UTCDateTime, turns_table

__all__ = ["Filters", "TimeLike", "period_start"]

TimeLike: TypeAlias = "dt.datetime | dt.date | pd.Timestamp | str"
"""A point in time for the filters; naive values are local time (as ``datetime.astimezone``)."""

_UTC = dt.UTC
_Select: TypeAlias = "sa.Select[*tuple[Any, ...]]"


def _utc(value: TimeLike) -> dt.datetime:
    stamp = pd.Timestamp(value)
    if stamp is pd.NaT:
        raise ValueError(f"not a point in time: {value!r}")
    moment: dt.datetime = stamp.to_pydatetime()
    if moment.tzinfo is None:
        moment = moment.astimezone()  # naive means local time
    return moment.astimezone(_UTC)


class Filters(TypedDict, total=False):
    """Which turns to read (keyword arguments of the readers); given keys must all match.

    Attributes:
        session_id: only this CLI session (`system/init.session_id`).
        notebook: only this notebook path, as recorded.
        user: only this user's turns (``turns.user``: ``JUPYTERHUB_USER`` or the OS login
            of the kernel that recorded it; rows of releases before it have none).
        since, until: only turns started at or after `since` and before `until`;
            datetimes, dates, pandas Timestamps or ISO strings; naive values are local time.
        fleet: only the rows of this fleet (``turns.fleet``, :mod:`kandev_nb.fleet`).
    """

    session_id: str | None
    notebook: str | os.PathLike[str] | None
    user: str | None
    since: TimeLike | None
    until: TimeLike | None
    fleet: str | None


def _where(stmt: _Select, filters: Filters) -> _Select:
    """`stmt` restricted to the turns matching `filters`.

    Raises:
        TypeError: an unknown filter name.
        ValueError: a time that is not one (e.g. "NaT").
    """
    unknown = set(filters) - set(Filters.__annotations__)
    if unknown:
        raise TypeError(f"unknown ledger filter(s) {sorted(unknown)}; expected {sorted(Filters.__annotations__)}")
    t = turns_table.c
    if (session_id := filters.get("session_id")) is not None:
        stmt = stmt.where(t.session_id == session_id)
    if (notebook := filters.get("notebook")) is not None:
        stmt = stmt.where(t.notebook == os.fspath(notebook))
    if (user := filters.get("user")) is not None:
        stmt = stmt.where(t.user == user)
    if (fleet := filters.get("fleet")) is not None:
        stmt = stmt.where(t.fleet == fleet)
    if (since := filters.get("since")) is not None:
        stmt = stmt.where(t.started_at >= _utc(since))
    if (until := filters.get("until")) is not None:
        stmt = stmt.where(t.started_at < _utc(until))
    return stmt


def _raw(*columns: sa.ColumnElement[Any]) -> list[sa.ColumnElement[Any]]:
    """`columns` for a bulk read: times and JSON come back as the driver gives them.

    Per-row conversion in Python (SQLAlchemy's result processors) is most of the time of a
    large read; :func:`_typed` converts these columns in bulk instead.
    """
    return [
        sa.type_coerce(c, sa.String()).label(c.name)
        if isinstance(c, sa.Column) and isinstance(c.type, UTCDateTime | sa.JSON)
        else c
        for c in columns
    ]


def _json_values(values: pd.Series) -> list[Any]:
    """Decode a column of JSON text in one call (missing values become None; values the
    driver already decoded, as PostgreSQL's do, are kept)."""
    items = [None if missing else v for v, missing in zip(values.tolist(), values.isna().tolist(), strict=True)]
    if all(v is None or isinstance(v, str) for v in items):
        decoded: list[Any] = json.loads("[" + ",".join("null" if v is None else v for v in items) + "]")
        return decoded
    return [json.loads(v) if isinstance(v, str) else v for v in items]


def _typed(frame: pd.DataFrame) -> pd.DataFrame:
    """Give every known column its ledger dtype (also on an empty frame)."""
    for column in frame.columns:
        dtype = _DTYPES.get(str(column))
        if column == "fleet_key":  # the row's index value with its type (kandev_nb.ledger.keys)
            frame[column] = key_column([decode_key(v) for v in frame[column].tolist()], frame.index)
        elif dtype == _TS:
            frame[column] = pd.to_datetime(frame[column], utc=True, format="ISO8601").astype(_TS)
        elif dtype == "json":
            frame[column] = pd.Series(_json_values(frame[column]), index=frame.index, dtype=object)
        elif dtype is not None:
            frame[column] = frame[column].astype(dtype)
    return frame


def period_start(period: str, now: dt.datetime | None = None) -> dt.datetime:
    """When the budget or stats `period` began, local time: ``"day"`` at midnight,
    ``"month"`` on the 1st at midnight (aware datetime).

    Raises:
        ValueError: another period.
    """
    now = (now or dt.datetime.now()).astimezone()
    midnight = now.replace(hour=0, minute=0, second=0, microsecond=0)
    if period == "day":
        return midnight
    if period == "month":
        return midnight.replace(day=1)
    raise ValueError(f"budget_period must be 'day' or 'month', not {period!r}")
