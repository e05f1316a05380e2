"""A fleet row's key (the input frame's index value) as the ledger keeps it, with its type.

``turns.fleet_key`` holds :func:`encode_key`'s text: compact JSON of a one-entry object
naming the value's type, so reading it back gives the same value of the same type:

>>> encode_key(4), encode_key("f04"), encode_key(("north", 3))
('{"int":4}', '{"str":"f04"}', '{"tuple":[{"str":"north"},{"int":3}]}')
>>> decode_key(encode_key(pd.Timestamp("2026-01-02 03:04", tz="UTC")))
Timestamp('2026-01-02 03:04:00+0000', tz='UTC')

Rows written before this encoding hold plain JSON text of the value (``"f04"`` with its
quotes, ``4``, ``["north", 3]``; a Timestamp as its ``str``): :func:`decode_key` reads those
too (a JSON list as a tuple), and :func:`legacy_key_text` gives that old text for a key, so a
rerun still finds the rows an older release recorded. No old text starts with ``{`` (an
index value is never a dict), which is how the two are told apart.
"""

from __future__ import annotations

import datetime as dt
import json
import math
from typing import Any, Final

import pandas as pd

__all__ = ["decode_key", "encode_key", "key_column", "legacy_key_text"]

_COMPACT: Final = {"separators": (",", ":"), "sort_keys": True, "ensure_ascii": False}


def _plain(key: Any) -> Any:
    """A numpy scalar as its Python value (``np.int64(4)`` -> 4); anything else as it is."""
    item = getattr(key, "item", None)
    if callable(item) and not isinstance(key, (str, bytes, pd.Timestamp, pd.Timedelta, pd.Period)):
        try:
            return item()
        except (TypeError, ValueError):
            return key
    return key


def _tagged(key: Any) -> dict[str, Any]:
    key = _plain(key)
    if key is None or key is pd.NA:
        return {"none": None}
    if isinstance(key, bool):
        return {"bool": key}
    if isinstance(key, int):
        return {"int": key}
    if isinstance(key, float):
        return {"float": repr(key)}  # NaN and inf are not JSON numbers
    if isinstance(key, str):
        return {"str": key}
    if key is pd.NaT:
        return {"nat": None}
    if isinstance(key, pd.Timestamp | dt.datetime):
        stamp = pd.Timestamp(key)
        return {"timestamp": stamp.isoformat(), "tz": str(stamp.tz) if stamp.tz is not None else None}
    if isinstance(key, dt.date):
        return {"date": key.isoformat()}
    if isinstance(key, pd.Timedelta | dt.timedelta):
        return {"timedelta": pd.Timedelta(key).value}
    if isinstance(key, pd.Period):
        return {"period": str(key), "freq": key.freqstr}
    if isinstance(key, tuple):
        return {"tuple": [_tagged(k) for k in key]}
    return {"text": str(key)}  # anything else (a Decimal, an Interval...): its text


def encode_key(key: Any) -> str:
    """The ledger's text of row key `key`: ``{"int":4}``, ``{"str":"f04"}``,
    ``{"timestamp":"2026-01-02T00:00:00","tz":null}``, ``{"tuple":[...]}`` for a MultiIndex
    key; also bool, float, date, Timedelta, Period, None; any other value as its ``str``
    (``{"text":...}``, read back as a string)."""
    return json.dumps(_tagged(key), **_COMPACT)  # type: ignore[arg-type]


def _untagged(value: Any) -> Any:
    if not isinstance(value, dict) or len(value) not in (1, 2):
        raise ValueError(f"not a tagged fleet key: {value!r}")
    if "tuple" in value:
        return tuple(_untagged(v) for v in value["tuple"])
    if "timestamp" in value:
        stamp = pd.Timestamp(value["timestamp"])
        tz = value.get("tz")
        return stamp.tz_convert(tz) if tz is not None and stamp.tz is not None else stamp
    if "int" in value:
        return int(value["int"])
    if "str" in value:
        return str(value["str"])
    if "float" in value:
        return float(value["float"])
    if "bool" in value:
        return bool(value["bool"])
    if "none" in value:
        return None
    if "nat" in value:
        return pd.NaT
    if "date" in value:
        return dt.date.fromisoformat(value["date"])
    if "timedelta" in value:
        return pd.Timedelta(int(value["timedelta"]))
    if "period" in value:
        return pd.Period(value["period"], freq=value.get("freq"))
    if "text" in value:
        return str(value["text"])
    raise ValueError(f"not a tagged fleet key: {value!r}")


def _lists_as_tuples(value: Any) -> Any:
    return tuple(_lists_as_tuples(v) for v in value) if isinstance(value, list) else value


def decode_key(text: Any) -> Any:
    """The key :func:`encode_key` wrote, with its type; an older row's plain JSON text as its
    JSON value (a list as a tuple); None (NULL, a turn outside a fleet) as None. Text that is
    not JSON comes back as it is."""
    if text is None or (isinstance(text, float) and math.isnan(text)) or text is pd.NA:
        return None
    if not isinstance(text, str):
        return text
    try:
        value = json.loads(text)
    except ValueError:
        return text
    if text.startswith("{"):
        try:
            return _untagged(value)
        except (ValueError, TypeError, KeyError):
            return text
    return _lists_as_tuples(value)


def legacy_key_text(key: Any) -> str:
    """The text releases before the typed encoding wrote for `key` (and the name the
    fleet's messages and worktrees still use): JSON of the value (numpy scalars as their
    Python value, a tuple as a list, anything else as its ``str``)."""
    key = _plain(key)
    if isinstance(key, tuple):
        key = [json.loads(legacy_key_text(k)) for k in key]
    return json.dumps(key, default=str, sort_keys=True)


def key_column(values: list[Any], index: pd.Index | None = None) -> pd.Series:
    """A column of decoded keys `values` (None for a turn outside a fleet), typed when every
    key has one type: ``Int64`` for ints, pandas' string dtype for strings, ``boolean``,
    ``float64``, ``datetime64`` for Timestamps of one time zone; else objects (tuples of a
    MultiIndex, a mix of types)."""
    kinds = {type(v) for v in values if v is not None}
    column = pd.Series(values, index=index, dtype=object)
    dtype = {
        frozenset({int}): "Int64",
        frozenset({str}): "str" if int(pd.__version__.split(".")[0]) >= 3 else "object",
        frozenset({bool}): "boolean",
        frozenset({float}): "float64",
    }.get(frozenset(kinds))
    if dtype is not None:
        return column.astype(dtype)
    if kinds == {pd.Timestamp} and len({v.tz for v in values if v is not None}) == 1:
        return pd.Series(pd.to_datetime(column), index=index)
    return column
