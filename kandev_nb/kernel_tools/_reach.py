"""What the read-only kernel tools may reach, and how they read it without running code.

``inspect_variable`` takes a dotted path (``model.coef_``). Each step is read statically
(:func:`inspect.getattr_static`): an instance's ``__dict__`` entry, a ``__slots__`` member, a
plain class attribute, a function as defined. A ``property``, a ``cached_property`` not yet
computed, any other Python descriptor and ``__getattr__`` are never run: the step is refused
with a message that says so, and the model can ask for ``run_code`` (which a person approves).

Some objects are refused wherever they are reached, by name or by path (``ip.user_ns``,
``ip.history_manager.input_hist_raw``, ``gen.gi_frame.f_globals``): frames, code objects,
generators, coroutines, async generators, tracebacks, IPython's shell and its managers (any
traitlets ``Configurable`` of IPython or ipykernel), and the objects behind IPython's own names
(``In``, ``Out``, ``_ih``, the history lists, the user namespace itself).

Lazy frames (dask, polars ``LazyFrame``, pyspark, ibis, duckdb) are recognised by their type's
module and described from metadata only (:func:`lazy_kind`); eager data libraries (pandas,
numpy, ...) are :func:`trusted` to describe themselves (``head()``, ``describe()``).
"""

from __future__ import annotations

import collections
import inspect
import sys
import types
from collections.abc import Mapping
from typing import Any

__all__ = [
    "MISSING",
    "lazy_kind",
    "peek",
    "public_attributes",
    "refusal",
    "refused_ids",
    "step",
    "trusted",
]

MISSING: Any = object()
"""What :func:`peek` returns for an attribute it cannot read without running code."""


_TUPLEGETTER: type = type(vars(collections.namedtuple("_P", "a"))["a"])
_SAFE_DESCRIPTORS: tuple[type, ...] = (types.MemberDescriptorType, _TUPLEGETTER)
"""Descriptors that only read a slot (``__slots__`` members, namedtuple fields): no Python code runs."""

_REFUSED_TYPES: tuple[type, ...] = (
    types.FrameType,
    types.CodeType,
    types.GeneratorType,
    types.CoroutineType,
    types.AsyncGeneratorType,
    types.TracebackType,
)
_REFUSED_WORDS = {
    types.FrameType: "a frame (its globals and locals are the notebook's namespace)",
    types.CodeType: "a code object",
    types.GeneratorType: "a generator (its frame holds the notebook's namespace)",
    types.CoroutineType: "a coroutine (its frame holds the notebook's namespace)",
    types.AsyncGeneratorType: "an async generator (its frame holds the notebook's namespace)",
    types.TracebackType: "a traceback (its frames hold the notebook's namespace)",
}
_SHELL_MODULES = ("IPython", "ipykernel", "jupyter_client", "ipywidgets", "comm")

_TRUSTED = frozenset(
    {"pandas", "numpy", "polars", "modin", "cudf", "geopandas", "xarray", "pyarrow", "torch", "jax", "jaxlib"}
)
"""Top-level packages whose eager objects may run their own ``head()``/``describe()``/``shape``."""

_LAZY_ROOTS = frozenset({"dask", "dask_expr", "pyspark", "ibis", "duckdb", "vaex", "daft"})
_LAZY_POLARS = frozenset({"LazyFrame", "Expr", "LazyGroupBy"})


def _roots(value: Any) -> list[tuple[str, str]]:
    return [((cls.__module__ or "").split(".")[0], cls.__name__) for cls in type(value).__mro__]


def trusted(value: Any) -> bool:
    """Whether `value` is an eager object of a known data library (pandas, numpy, polars'
    ``DataFrame``...), whose properties and ``head()``/``describe()`` read data already in
    memory. A user's subclass counts (its MRO is read). Lazy frames are never trusted."""
    return lazy_kind(value) is None and any(root in _TRUSTED for root, _ in _roots(value))


def lazy_kind(value: Any) -> str | None:
    """The library of a lazy frame or array (``"dask"``, ``"polars"``, ``"pyspark"``...), whose
    ``head()``, ``describe()``, ``len()`` or ``nbytes`` would start real work; None otherwise."""
    for root, name in _roots(value):
        if root in _LAZY_ROOTS:
            return root
        if root == "polars" and name in _LAZY_POLARS:
            return root
    return None


def refusal(value: Any) -> str | None:
    """Why the read-only tools refuse `value` wherever it is reached (a phrase such as "a
    frame (...)"), or None when it may be described."""
    for kind, words in _REFUSED_WORDS.items():
        if isinstance(value, kind):
            return words
    module = (type(value).__module__ or "").split(".")[0]
    if module in _SHELL_MODULES:
        configurable = sys.modules.get("traitlets.config.configurable")
        base = getattr(configurable, "Configurable", None)
        if isinstance(base, type) and isinstance(value, base):
            return f"IPython's own {type(value).__name__} (the shell and its managers hold every cell's source)"
    return None


def refused_ids(namespace: Mapping[str, Any], shell: Any) -> dict[int, str]:
    """``id()`` of each object the tools refuse by identity, with what it is: the user namespace,
    IPython's hidden names' objects (``In``, ``Out``, ``_ih``, ``_oh``, ``_dh``...), and the shell's
    history lists (``history_manager.input_hist_raw``/``input_hist_parsed``/``output_hist``).
    Read with plain dict lookups and ``vars()``: nothing here runs user code."""
    found: dict[int, str] = {id(namespace): "the notebook's namespace itself"}
    for name in ("In", "Out", "_ih", "_oh", "_dh", "exit", "quit", "get_ipython"):
        if name in namespace:
            found[id(namespace[name])] = f"IPython's {name} (cell history and outputs)"
    if shell is not None:
        own = _state(shell)
        for name in ("user_ns", "user_global_ns", "user_ns_hidden"):
            if name in own:
                found[id(own[name])] = "the notebook's namespace itself"
        history = _state(own.get("history_manager"))
        for name in ("input_hist_raw", "input_hist_parsed", "output_hist", "output_hist_reprs", "dir_hist"):
            if name in history:
                found[id(history[name])] = f"IPython's history ({name}: every cell's source or result)"
    return found


def _state(value: Any) -> dict[str, Any]:
    """`value`'s instance ``__dict__`` merged with its traitlets' values (``_trait_values``, where
    IPython's shell keeps ``history_manager`` and the history lists), read without running code."""
    own = _instance_dict(value)
    traits = own.get("_trait_values")
    return {**own, **traits} if isinstance(traits, dict) else own


def _instance_dict(value: Any) -> dict[str, Any]:
    if value is None:
        return {}
    try:
        own = object.__getattribute__(value, "__dict__")
    except (AttributeError, TypeError):
        return {}
    return own if isinstance(own, dict) else {}


def peek(value: Any, name: str) -> Any:
    """`value`'s attribute `name` read without running code, else :data:`MISSING`.

    Found: an instance ``__dict__`` entry (a computed ``cached_property`` included), a
    ``__slots__`` member or namedtuple field, a plain class attribute, a function or class as
    defined on the class (unbound). Not read (``MISSING``): a ``property``, any other descriptor,
    a name only ``__getattr__`` would produce, and a missing name."""
    try:
        found = inspect.getattr_static(value, name)
    except AttributeError:
        return MISSING
    if isinstance(found, _SAFE_DESCRIPTORS):
        try:
            return found.__get__(value, type(value))  # type: ignore[attr-defined]
        except AttributeError:  # an unset slot
            return MISSING
    if isinstance(found, (types.FunctionType, types.BuiltinFunctionType, staticmethod, classmethod, type)):
        return found.__func__ if isinstance(found, (staticmethod, classmethod)) else found
    if hasattr(type(found), "__get__") and not isinstance(value, type):
        return MISSING  # a property, cached_property not yet computed, or another descriptor
    return found


def step(value: Any, attr: str, path: str) -> Any:
    """One step of a dotted path: `value`'s public attribute `attr`, read by :func:`peek`.

    Raises:
        KeyError: `attr` is private (``_x``), missing, or only reachable by running code (a
            property, a descriptor, ``__getattr__``); ``args[0]`` names `path` and the reason,
            in words for the model.
    """
    if attr.startswith("_"):
        raise KeyError(f"{path}.{attr!s}: private attributes (_x) are not read")
    try:
        found = inspect.getattr_static(value, attr)
    except AttributeError:
        raise KeyError(
            f"{path!r} has no attribute {attr!r} that can be read without running code "
            "(a name only __getattr__ answers is not looked up); run_code can compute it, with approval"
        ) from None
    result = peek(value, attr)
    if result is MISSING:
        kind = type(found).__name__
        raise KeyError(
            f"{path}.{attr} is a {kind} of {type(value).__name__}: reading it runs code (a lazy load, a "
            f"query, a computation), which inspect_variable never does; inspect {path!r} itself, or use "
            "run_code (the user approves it)"
        )
    return result


def public_attributes(value: Any, limit: int = 60) -> list[str]:
    """Up to `limit` public attribute names of `value`, sorted: its instance ``__dict__`` keys and
    the names its class defines, read without calling ``__dir__`` or ``__getattr__``."""
    names: set[str] = {k for k in _instance_dict(value) if isinstance(k, str)}
    for cls in type(value).__mro__:
        if cls is object:
            continue
        names.update(k for k in vars(cls) if isinstance(k, str))
    return sorted(n for n in names if not n.startswith("_"))[:limit]
