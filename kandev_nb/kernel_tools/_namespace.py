"""Describing the user's namespace to the model: listings, inspections, secrets, size caps.

Pure functions over a ``dict[str, Any]`` namespace (the IPython shell's ``user_ns`` in a
kernel). Nothing here imports pandas or numpy: DataFrames and arrays are recognised by
duck typing (``dtypes``/``describe``, ``shape``/``dtype``), so listing a namespace never
imports a library the user has not imported.
"""

from __future__ import annotations

import fnmatch
import inspect
import sys
import types
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from itertools import islice
from typing import Any

from kandev_nb.kernel_tools import _reach
from kandev_nb.kernel_tools._bounded import bounded_repr, count_note
from kandev_nb.redact import (
    ENV_NOT_SECRET,
    MIN_FOUND,
    REDACTED,
    environment_secrets,
    is_secret_name,
    mask_values,
)

__all__ = [
    "HIDDEN",
    "REDACTED",
    "VariableInfo",
    "cap",
    "describe_variables",
    "format_listing",
    "inspect_value",
    "is_secret_name",
    "list_variables",
    "redact_secrets",
    "redacted_copy",
    "secret_values",
]

HIDDEN = "<hidden: secret-looking name>"
"""What stands in for the value of a variable whose name looks like a secret."""

_IPYTHON_NAMES = frozenset({"In", "Out", "exit", "quit", "get_ipython", "open"})

_WALK_BUDGET = 5000  # containers' items looked at per call, all variables together
_WALK_DEPTH = 6
_MIN_SECRET = 4  # shorter values of secret-looking names are not searched for in texts
_MIN_FOUND = MIN_FOUND  # the same for values found in the environment and in DataFrame columns
_ENV_NOT_SECRET = ENV_NOT_SECRET


def _is_frame(value: Any) -> bool:
    """An eager DataFrame of a known library (pandas...): duck typing only on trusted types, so
    no other object's ``__getattr__`` or property runs and no lazy frame is computed."""
    return _reach.trusted(value) and hasattr(value, "columns") and hasattr(value, "dtypes") and hasattr(value, "head")


def _first(items: Iterable[Any], n: int = 500) -> list[Any]:
    """The first `n` of `items`, read lazily (a 3-million-entry dict is not copied)."""
    try:
        return list(islice(items, n))
    except RuntimeError:  # changed size while read (a run_code thread): skip it this time
        return []


def _secret_columns(frame: Any) -> list[Any]:
    try:
        return [c for c in list(frame.columns) if is_secret_name(str(c))]
    except Exception:  # noqa: BLE001 - odd column objects
        return []


def secret_values(namespace: Mapping[str, Any], extra: Iterable[str] = ()) -> list[str]:
    """The text values that must never reach the model, longest first.

    - every str/bytes value (4 chars or more) of a secret-looking variable, and every text
      inside it (a list or dict held by ``passwords``);
    - at any depth of dicts, lists, tuples and sets (and one level of an object's
      attributes), everything under a secret-looking key: ``cfg["db"]["password"]``, a
      list of dicts each with a ``token``, a list held under a ``password`` key;
    - the texts (6 chars or more, first 1000 rows) of a DataFrame's secret-looking columns;
    - the values (6 chars or more, not absolute paths) of the process's secret-looking
      environment variables (``AWS_SECRET_ACCESS_KEY``, ``SERVICE_TOKEN``...; not ``PWD``);
    - `extra` (e.g. the values given to ``kandev_nb.configure(env=...)``).

    Modules and IPython's own names (``In``, ``Out``, ``_*``) are not walked. At most
    5000 items are looked at per call.
    """
    found: set[str] = set()
    budget = [_WALK_BUDGET]

    def take(value: Any, minimum: int = _MIN_SECRET) -> None:
        if isinstance(value, bytes):
            value = value.decode("utf-8", "replace")
        if isinstance(value, str) and len(value) >= minimum:
            found.add(value)

    def take_all(value: Any, depth: int = 0) -> None:
        if budget[0] <= 0 or depth > _WALK_DEPTH:
            return
        budget[0] -= 1
        if isinstance(value, Mapping):
            for key, item in _first(value.items()):
                take_all(key, depth + 1)
                take_all(item, depth + 1)
        elif isinstance(value, (list, tuple, set, frozenset)):
            for item in _first(value):
                take_all(item, depth + 1)
        else:
            take(value)

    def walk(value: Any, depth: int) -> None:
        if budget[0] <= 0 or depth > _WALK_DEPTH or isinstance(value, (types.ModuleType, type)):
            return
        budget[0] -= 1
        if isinstance(value, Mapping):
            for key, item in _first(value.items()):
                if isinstance(key, str) and is_secret_name(key):
                    take_all(item)
                else:
                    walk(item, depth + 1)
        elif isinstance(value, (list, tuple, set, frozenset)):
            for item in _first(value):
                walk(item, depth + 1)
        elif _is_frame(value):
            for column in _secret_columns(value):
                try:
                    cells = list(dict.fromkeys(value[column].head(1000).tolist()))
                except Exception:  # noqa: BLE001, S112 - duplicate column names, unhashable cells
                    continue
                for cell in cells:
                    take(cell, _MIN_FOUND)
        elif depth == 0 and isinstance(getattr(value, "__dict__", None), Mapping):
            walk(vars(value), depth + 1)

    for name, value in list(namespace.items()):
        if name.startswith("_") or name in _IPYTHON_NAMES or isinstance(value, types.ModuleType):
            continue
        if is_secret_name(name):
            take_all(value)
        walk(value, 0)
    for value in environment_secrets():
        take(value, _MIN_FOUND)
    for value in extra:
        take(value)
    return sorted(found, key=len, reverse=True)


def redacted_copy(value: Any, depth: int = 0) -> Any:
    """`value` with whatever sits under a secret-looking key replaced by ``<redacted>``, at
    any depth of dicts (and other mappings, e.g. ``os.environ``), lists, tuples and sets.
    Other values come back as they are; a mapping comes back as a plain dict."""
    if depth > _WALK_DEPTH:
        return value
    if isinstance(value, Mapping) and not isinstance(value, types.ModuleType):
        try:
            items = list(value.items())
        except Exception:  # noqa: BLE001 - a mapping that cannot list itself
            return value
        return {
            key: REDACTED if isinstance(key, str) and is_secret_name(key) else redacted_copy(item, depth + 1)
            for key, item in items
        }
    if isinstance(value, (list, tuple, set, frozenset)) and len(value) <= 100_000:
        items = [redacted_copy(item, depth + 1) for item in value]
        if isinstance(value, list):
            return items
        if isinstance(value, tuple) and type(value) is tuple:
            return tuple(items)
        if type(value) in (set, frozenset):
            try:
                return type(value)(items)
            except TypeError:  # an unhashable redacted item
                return items
    return value


def redact_secrets(text: str, secrets: Iterable[str]) -> str:
    """`text` with every occurrence of each of `secrets` replaced by ``<redacted>``
    (:func:`kandev_nb.redact.mask_values`; the kernel tools' answers go through
    :func:`kandev_nb.redact.redact_text`, which also masks credentials by their shape)."""
    return mask_values(text, secrets)


def cap(text: str, limit: int, what: str = "output") -> str:
    """`text` cut to at most `limit` characters, ending with a note that says so.

    >>> cap("abcdef", 3)
    'abc\\n[output cut: 3 of 6 characters shown]'
    """
    if len(text) <= limit:
        return text
    return f"{text[:limit]}\n[{what} cut: {limit} of {len(text)} characters shown]"


def _short_repr(value: Any, limit: int = 80, reveal_secrets: bool = False) -> str:
    """A one-line repr in `limit` characters: at most 10 items per container, read without a copy
    (:func:`~kandev_nb.kernel_tools._bounded.bounded_repr`), secret-looking keys redacted."""
    text = bounded_repr(value, chars=limit * 2, items=10, is_secret=None if reveal_secrets else is_secret_name)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _type_name(value: Any) -> str:
    cls = type(value)
    module = cls.__module__
    if module in ("builtins", "__main__"):
        return cls.__qualname__
    return f"{module.split('.')[0]}.{cls.__qualname__}"


def _shape(value: Any) -> str:
    if _reach.lazy_kind(value):
        return ""  # a lazy frame's length is a computation
    shape = getattr(value, "shape", None) if _reach.trusted(value) else _reach.peek(value, "shape")
    if isinstance(shape, tuple) and not isinstance(value, type):
        return "(" + ", ".join(str(n) for n in shape) + ("," if len(shape) == 1 else "") + ")"
    if isinstance(value, (str, bytes, list, tuple, dict, set, frozenset, range)):
        return f"len {len(value)}"
    return ""


_DEEP_ROWS = 100_000
"""Up to this many rows, a DataFrame's size counts its strings (``memory_usage(deep=True)``);
beyond, its buffers only: measuring every string of a big frame would block the kernel."""


def _size_bytes(value: Any) -> int | None:
    if _reach.lazy_kind(value):
        return None  # not in memory; measuring would compute it
    try:
        if not _reach.trusted(value):
            return sys.getsizeof(value)
        if hasattr(value, "memory_usage") and hasattr(value, "dtypes"):  # pandas
            usage = value.memory_usage(deep=len(value) <= _DEEP_ROWS)
            return int(usage.sum() if hasattr(usage, "sum") else usage)
        nbytes = getattr(value, "nbytes", None)
        if isinstance(nbytes, int):
            return nbytes
        return sys.getsizeof(value)
    except Exception:  # noqa: BLE001 - size is best effort
        return None


def _human(n: int | None) -> str:
    if n is None:
        return "?"
    size = float(n)
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} GB"


def _summary(value: Any, reveal_secrets: bool = False) -> str:
    kind = _reach.lazy_kind(value)
    if kind:
        return f"lazy ({kind}), not computed; " + "; ".join(_lazy_fields(value, kind, 60))
    if _reach.trusted(value) and hasattr(value, "columns") and hasattr(value, "dtypes"):  # a DataFrame
        cols = [str(c) for c in list(value.columns)[:12]]
        more = f", … (+{len(value.columns) - 12})" if len(value.columns) > 12 else ""
        return "columns: " + ", ".join(cols) + more
    if _reach.trusted(value) and hasattr(value, "dtype") and hasattr(value, "shape"):  # arrays, Series
        return f"dtype {value.dtype}"
    return _short_repr(value, reveal_secrets=reveal_secrets)


_LAZY_FIELDS = {
    "dask": ("npartitions", "columns", "dtypes", "dtype", "chunksize"),
    "dask_expr": ("npartitions", "columns", "dtypes"),
    "pyspark": ("columns", "dtypes"),
    "polars": ("collect_schema",),
    "ibis": ("columns",),
    "duckdb": ("columns", "types"),
    "vaex": ("column_names",),
    "daft": ("column_names",),
}
"""Per library, the metadata of a lazy frame that is read without computing it (a schema, a
partition count); a method named here is called with no arguments (polars resolves its plan's
schema, no data is read)."""


def _lazy_fields(value: Any, kind: str, chars: int = 400) -> list[str]:
    fields = []
    for field in _LAZY_FIELDS.get(kind, ()):
        if _reach.peek(type(value), field) is _reach.MISSING:
            continue  # not this type's (e.g. dtypes on a dask array)
        try:
            found = getattr(value, field)
            if field == "collect_schema":
                found, field = dict(found()), "schema"
        except Exception:  # noqa: BLE001, S112 - metadata is best effort
            continue
        fields.append(f"{field}: {_short_repr(found, chars)}")
    return fields


def _inspect_lazy(value: Any, kind: str) -> list[str]:
    return [
        (
            f"lazy ({kind}): not computed. head(), describe(), len() and sizes would start real work on "
            "the data, so they are not run here; run_code can compute them (the user approves it)"
        ),
        *_lazy_fields(value, kind),
    ]


@dataclass(frozen=True)
class VariableInfo:
    """One row of :func:`list_variables`.

    Attributes:
        name: the variable's name in the user namespace.
        type: its type, ``module.QualName`` for non-builtins (``pandas.DataFrame``).
        shape: ``(rows, cols)`` for anything with a tuple ``shape``, ``len N`` for
            sized builtins, else "".
        size_bytes: memory size in bytes (deep for pandas, ``nbytes`` for arrays,
            ``sys.getsizeof`` otherwise); None if it could not be measured.
        summary: columns for a DataFrame, dtype for an array, else a short repr (80 chars);
            :data:`HIDDEN` for a secret-looking name.
    """

    name: str
    type: str
    shape: str
    size_bytes: int | None
    summary: str


def _is_user_variable(name: str, value: Any, hidden: Mapping[str, Any] | None) -> bool:
    if name.startswith("_") or name in _IPYTHON_NAMES:
        return False
    if hidden is not None and name in hidden and hidden[name] is value:
        return False
    return not isinstance(value, types.ModuleType)


def list_variables(
    namespace: Mapping[str, Any],
    *,
    hidden: Mapping[str, Any] | None = None,
    type_filter: str | None = None,
    name_pattern: str | None = None,
    reveal_secrets: bool = False,
    refused: Mapping[int, str] | None = None,
) -> list[VariableInfo]:
    """The user's variables, sorted by name.

    Args:
        namespace: the user namespace (``shell.user_ns``).
        hidden: names IPython put there itself (``shell.user_ns_hidden``); skipped while
            they still hold the same object.
        type_filter: keep variables whose type name contains this (case-insensitive), e.g.
            "DataFrame", "ndarray", "function".
        name_pattern: keep names matching this glob (``df_*``); a plain word matches as a
            substring.
        reveal_secrets: show the summary of secret-looking names too.
        refused: ``id()`` -> what it is, of objects never shown (:func:`_reach.refused_ids`:
            the namespace itself, IPython's history lists); their summary says what they are.

    Private names (``_x``), modules and IPython's own names are never listed. Nothing runs
    but eager data libraries' own ``shape``/``dtypes``/``memory_usage`` and an object's
    ``__repr__``: no property, ``__getattr__`` or lazy frame's computation; a container's summary
    reads at most 10 of its items (no copy).
    """
    rows = []
    pattern = (
        name_pattern
        if name_pattern and any(c in name_pattern for c in "*?[")
        else (f"*{name_pattern}*" if name_pattern else None)
    )
    for name, value in sorted(namespace.items()):
        if not _is_user_variable(name, value, hidden):
            continue
        if pattern and not fnmatch.fnmatchcase(name, pattern):
            continue
        type_name = _type_name(value)
        if type_filter and type_filter.lower() not in type_name.lower():
            continue
        secret = is_secret_name(name) and not reveal_secrets
        why = _reach.refusal(value) or (refused or {}).get(id(value))
        summary = HIDDEN if secret else (f"<not shown: {why}>" if why else _summary(value, reveal_secrets))
        rows.append(
            VariableInfo(
                name=name,
                type=type_name,
                shape="" if why else _shape(value),
                size_bytes=_size_bytes(value),
                summary=summary,
            )
        )
    return rows


def format_listing(rows: list[VariableInfo]) -> str:
    """The rows as a plain-text table: name, type, shape, size, summary."""
    if not rows:
        return "No user variables match."
    table = [("name", "type", "shape", "size", "summary")]
    table += [(r.name, r.type, r.shape, _human(r.size_bytes), r.summary) for r in rows]
    widths = [max(len(row[i]) for row in table) for i in range(4)]
    lines = ["  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row[:4])) + "  " + row[4] for row in table]
    return "\n".join(line.rstrip() for line in lines)


def describe_variables(namespace: Mapping[str, Any], **kwargs: Any) -> str:
    """:func:`format_listing` of :func:`list_variables` (same keyword arguments)."""
    return format_listing(list_variables(namespace, **kwargs))


def _safe(label: str, fn: Any) -> str:
    try:
        return f"{label}:\n{fn()}"
    except Exception as exc:  # noqa: BLE001 - one failing section must not hide the rest
        return f"{label}: <failed: {type(exc).__name__}: {exc}>"


def _inspect_frame(value: Any, reveal_secrets: bool = False) -> list[str]:
    parts = [f"shape: {value.shape}"]
    hidden = [] if reveal_secrets else _secret_columns(value)
    shown = value
    if hidden:
        shown = value.head(5).copy()
        for column in hidden:
            shown[column] = REDACTED
        names = ", ".join(str(c) for c in hidden)
        parts.append(f"redacted columns (secret-looking names): {names}; their values are not shown")
    parts.append(_safe("dtypes", lambda: value.dtypes.to_string()))
    parts.append(_safe("head(5)", lambda: shown.head(5).to_string(max_cols=30)))
    parts.append(_safe("null counts", lambda: value.isna().sum().to_string()))
    described = value.drop(columns=hidden) if hidden else value
    parts.append(_safe("describe()", lambda: described.describe().to_string(max_cols=30)))
    return parts


def _inspect_series(value: Any) -> list[str]:
    parts = [f"shape: {value.shape}", f"dtype: {value.dtype}", f"name: {value.name!r}"]
    parts.append(_safe("head(5)", lambda: value.head(5).to_string()))
    parts.append(_safe("null count", lambda: int(value.isna().sum())))
    parts.append(_safe("describe()", lambda: value.describe().to_string()))
    return parts


def _inspect_array(value: Any) -> list[str]:
    parts = [f"shape: {tuple(value.shape)}", f"dtype: {value.dtype}", f"size: {getattr(value, 'size', '?')}"]
    kind = getattr(value.dtype, "kind", "")
    if kind in "biufc" and int(getattr(value, "size", 0) or 0) > 0:
        import numpy as np

        arr = np.asarray(value)
        stats = {
            "min": np.nanmin(arr),
            "max": np.nanmax(arr),
            "mean": np.nanmean(arr),
            "std": np.nanstd(arr),
            "nan count": int(np.isnan(arr).sum()) if kind in "fc" else 0,
        }
        parts.append("stats: " + ", ".join(f"{k}={v}" for k, v in stats.items()))
    parts.append(_safe("values", lambda: _short_repr(value, 1500)))
    return parts


def inspect_value(
    name: str,
    value: Any,
    *,
    reveal_secrets: bool = False,
    repr_chars: int = 2000,
    refused: Mapping[int, str] | None = None,
) -> str:
    """A description of one variable for the model.

    DataFrame: shape, dtypes, head(5), null counts, describe(). Series: the same for one
    column. Arrays: shape, dtype, min/max/mean/std and NaN count (these only for eager data
    libraries, :func:`_reach.trusted`). A lazy frame (dask, polars ``LazyFrame``, pyspark...):
    its type and metadata (columns, npartitions), nothing computed. Anything else: its type,
    a repr of at most `repr_chars` characters and 30 items per container (read without a copy,
    saying how many items there are), its length and its public attributes (read statically,
    no ``__dir__``/``__getattr__``). Unless `reveal_secrets`: a secret-looking `name` (or Series
    name) shows the type only, a DataFrame's secret-looking columns show ``<redacted>`` in
    head(5) and are left out of describe(), and values under secret-looking keys at any depth
    show ``<redacted>``. Frames, generators, tracebacks, IPython's shell and the objects in
    `refused` show only what they are (:func:`_reach.refusal`).
    """
    head = f"{name}: {_type_name(value)}"
    if is_secret_name(name) and not reveal_secrets:
        return (
            f"{head}\nvalue: {HIDDEN} (the user can opt in with kandev_nb.kernel_tools.options.reveal_secrets = True)"
        )
    why = _reach.refusal(value) or (refused or {}).get(id(value))
    if why:
        return f"{head}\nnot shown: {name} is {why}; inspect_variable does not read it"
    kind = _reach.lazy_kind(value)
    if kind:
        parts = _inspect_lazy(value, kind)
    elif _is_frame(value):
        parts = _inspect_frame(value, reveal_secrets)
    elif _reach.trusted(value) and hasattr(value, "dtype") and hasattr(value, "head") and hasattr(value, "isna"):
        if is_secret_name(str(getattr(value, "name", "") or "")) and not reveal_secrets:
            return f"{head}\nvalue: {HIDDEN} (a Series with a secret-looking name)"
        parts = _inspect_series(value)
    elif _reach.trusted(value) and hasattr(value, "dtype") and isinstance(getattr(value, "shape", None), tuple):
        parts = _inspect_array(value)
    else:
        parts = _inspect_object(name, value, reveal_secrets, repr_chars)
    return "\n".join([head, *parts])


_CALLABLES = (types.FunctionType, types.BuiltinFunctionType, types.MethodType, type)


def _inspect_object(name: str, value: Any, reveal_secrets: bool, repr_chars: int) -> list[str]:
    parts = []
    if isinstance(value, (str, bytes, list, tuple, dict, set, frozenset)):
        parts.append(f"length: {len(value)}")
    if isinstance(value, _CALLABLES):  # not any callable: inspect.signature reads attributes
        try:
            parts.append(f"signature: {name}{inspect.signature(value)}")
        except (TypeError, ValueError):
            pass
        doc = value.__doc__ if isinstance(value.__doc__, str) else ""
        if doc.strip():
            parts.append(f"doc: {doc.strip().splitlines()[0]}")
    if isinstance(value, (str, bytes)):
        text = repr(value[:repr_chars])
        if len(value) > repr_chars:
            text += f"\n[repr cut: the first {repr_chars} of {len(value)} characters shown]"
    else:
        secret = None if reveal_secrets else is_secret_name
        text = bounded_repr(value, chars=repr_chars, is_secret=secret)
        note = count_note(value)
        if note:
            text += f"\n{note}"
    parts.append("repr:\n" + text)
    attrs = _reach.public_attributes(value)
    if attrs and not isinstance(value, (str, bytes, int, float, list, tuple, dict, set)):
        parts.append("attributes: " + ", ".join(attrs))
    return parts
