"""Records into a DataFrame whose dtypes come from the record type's fields (``--frame``,
and the typed columns of a fleet's result, :mod:`kandev_nb.fleet`)."""

from __future__ import annotations

import dataclasses
import datetime as dt
import enum
import types
import typing
from typing import Any

from kandev_nb.agent.structured import field_types

if typing.TYPE_CHECKING:
    import pandas as pd

__all__ = ["to_frame"]


def _dtype(annotation: Any) -> str | None:
    """The pandas dtype for a field annotation (nullable ones for Optional)."""
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        rest = [a for a in typing.get_args(annotation) if a is not type(None)]
        return _dtype(rest[0]) if len(rest) == 1 else None
    if origin is typing.Literal:
        return "category"
    if not isinstance(annotation, type):
        return None
    if issubclass(annotation, bool):
        return "boolean"
    if issubclass(annotation, enum.Enum):
        return "category"
    if issubclass(annotation, int):
        return "Int64"
    if issubclass(annotation, float):
        return "Float64"
    if issubclass(annotation, str):
        return "string"
    if issubclass(annotation, dt.datetime | dt.date):
        return "datetime64[ns]"
    return None


def _record(value: Any) -> dict[str, Any]:
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return dict(dump())
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    return dict(value) if isinstance(value, dict) else {"value": value}


def to_frame(records: list[Any], item: Any = None) -> pd.DataFrame:
    """A DataFrame of `records` (pydantic models, dataclasses, dicts), one column per field
    of `item`, in field order, with dtypes from the fields: int -> Int64, float -> Float64,
    bool -> boolean, str -> string, datetime/date -> datetime64[ns], Literal/Enum ->
    category (nullable dtypes, so a missing value is <NA>); other fields stay object.
    Without `item` (a JSON-schema dict), pandas infers the dtypes.
    """
    import pandas as pd

    fields = field_types(item) if item is not None else {}
    rows = [_record(r) for r in records]
    frame = pd.DataFrame(rows, columns=list(fields) or None)
    for name, annotation in fields.items():
        dtype = _dtype(annotation)
        if dtype == "datetime64[ns]":
            frame[name] = pd.to_datetime(frame[name]).astype("datetime64[ns]")
        elif dtype is not None:
            frame[name] = frame[name].astype(dtype)
    return frame
