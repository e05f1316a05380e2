"""issue 24, 4 and 10, the pure parts: attribute paths read without running code, refused
objects, lazy frames left uncomputed, and a bounded repr that never copies a container."""

from __future__ import annotations

import collections
import functools
import sys
import types
from typing import Any

import pytest

from kandev_nb.kernel_tools import KernelTools
from kandev_nb.kernel_tools._bounded import bounded_repr
from kandev_nb.kernel_tools._namespace import inspect_value, is_secret_name, list_variables
from kandev_nb.kernel_tools._reach import MISSING, peek, public_attributes, refusal

RAN: list[str] = []
"""Every read of a Record's computed attribute appends here."""


class Record:
    """An object whose computed attributes have side effects (appended to RAN)."""

    kind = "class attribute"

    def __init__(self) -> None:
        self.rows = [1, 2]

    @property
    def total(self) -> int:
        RAN.append("property")
        return 3

    @functools.cached_property
    def mean(self) -> float:
        RAN.append("cached_property")
        return 1.5

    def __getattr__(self, name: str) -> str:
        RAN.append(f"__getattr__ {name}")
        return name

    def __dir__(self) -> list[str]:
        RAN.append("__dir__")
        return ["rows"]


class Slotted:
    __slots__ = ("value",)

    def __init__(self) -> None:
        self.value = {"password": "pw-123", "n": 1}


Point = collections.namedtuple("Point", "x y")


def test_paths_are_read_statically_and_computed_attributes_are_refused() -> None:
    RAN.clear()
    record = Record()
    tools = KernelTools(namespace={"r": record, "s": Slotted(), "p": Point(1, 2)})
    assert "[1, 2]" in tools.inspect_variable("r.rows")
    assert "'class attribute'" in tools.inspect_variable("r.kind")
    assert "'pw-123'" not in tools.inspect_variable("s.value") and "'n': 1" in tools.inspect_variable("s.value")
    assert tools.inspect_variable("p.x").endswith("repr:\n1")
    with pytest.raises(KeyError, match="is a property of Record: reading it runs code"):
        tools.inspect_variable("r.total")
    with pytest.raises(KeyError, match="is a cached_property of Record"):
        tools.inspect_variable("r.mean")
    with pytest.raises(KeyError, match="a name only __getattr__ answers is not looked up"):
        tools.inspect_variable("r.anything")
    assert RAN == []
    assert "attributes: kind, mean, rows, total" in tools.inspect_variable("r")  # no __dir__ either
    record.__dict__["mean"] = 2.5  # a cached_property once computed is plain data
    assert tools.inspect_variable("r.mean").endswith("repr:\n2.5")
    assert RAN == []


def test_frames_generators_code_and_tracebacks_are_refused_wherever_reached() -> None:
    def gen() -> Any:
        yield 1

    try:
        raise ValueError("x")
    except ValueError as exc:
        tb = exc.__traceback__
    frame = sys._getframe()
    for value in (gen(), frame, frame.f_code, tb):
        assert refusal(value) is not None
    namespace: dict[str, Any] = {"g": gen(), "holder": types.SimpleNamespace(frame=frame)}
    namespace["me"] = namespace
    tools = KernelTools(namespace=namespace)
    for path, why in (("g", "a generator"), ("holder.frame", "a frame"), ("me", "the notebook's namespace")):
        with pytest.raises(KeyError, match=why):
            tools.inspect_variable(path)
    listing = {row.name: row.summary for row in list_variables(namespace, refused={id(namespace): "it"})}
    assert listing["g"].startswith("<not shown: a generator") and listing["me"] == "<not shown: it>"


def test_peek_and_public_attributes_run_nothing() -> None:
    RAN.clear()
    record = Record()
    assert peek(record, "rows") == [1, 2] and peek(record, "total") is MISSING
    assert public_attributes(record) == ["kind", "mean", "rows", "total"]
    assert RAN == []


def test_bounded_repr_reads_a_few_items_without_copying_or_sorting() -> None:
    big = {f"key{i}": i for i in range(1_000_000)}
    text = bounded_repr(big, items=3)
    assert text == "{'key0': 0, 'key1': 1, 'key2': 2, ...}"
    assert bounded_repr({3, 1, 2}, items=5) in ("{1, 2, 3}", "{3, 1, 2}")
    assert bounded_repr(collections.OrderedDict(a=1)) == "OrderedDict({'a': 1})"
    assert bounded_repr(Point(1, [2])) == "Point(x=1, y=[2])"
    assert bounded_repr((1,)) == "(1,)" and bounded_repr(frozenset()) == "frozenset()"
    nested = {"db": {"password": "pw", "host": "h"}}
    assert bounded_repr(nested, is_secret=is_secret_name) == "{'db': {'password': '<redacted>', 'host': 'h'}}"
    assert len(bounded_repr("x" * 10_000, chars=100)) <= 100
    text = inspect_value("big", big)
    assert "length: 1000000" in text and "(1,000,000 items; the first 30 shown)" in text and len(text) < 1500


def test_a_lazy_dask_frame_is_described_without_computing_it() -> None:
    dd = pytest.importorskip("dask.dataframe")
    import pandas as pd
    from dask.callbacks import Callback

    frame = dd.from_pandas(pd.DataFrame({"a": range(10), "b": list("abcdefghij")}), npartitions=3)
    computed: list[int] = []

    class Watch(Callback):  # type: ignore[misc]
        def _start(self, dsk: Any) -> None:
            computed.append(1)

    with Watch():
        text = inspect_value("frame", frame)
        row = list_variables({"frame": frame})[0]
    assert computed == []
    assert "lazy (dask): not computed" in text and "npartitions: 3" in text and "'a', 'b'" in text
    assert row.size_bytes is None and row.summary.startswith("lazy (dask), not computed; npartitions: 3")
