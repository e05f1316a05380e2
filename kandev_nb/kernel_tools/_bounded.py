"""A repr bounded by items and characters, with secret-looking keys redacted, that never copies.

The read-only tools describe the user's containers, which may hold millions of items: a
3-million-entry dict copied and ``repr``-ed whole blocked the kernel's event loop for seconds
(the Stop and approval buttons froze meanwhile) and took hundreds of MB. :func:`bounded_repr`
walks at most ``maxdict``/``maxlist`` items per container and ``maxlevel`` levels deep
(:class:`reprlib.Repr`), reading items with :func:`itertools.islice` over the live container
(no ``list(...)``, no ``sorted(...)``: :mod:`reprlib` sorts a dict's keys and a set, which is a
full copy), and cuts every string. Values under a secret-looking key show ``<redacted>``.
"""

from __future__ import annotations

import reprlib
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from itertools import islice
from typing import Any

__all__ = ["ShortRepr", "bounded_repr", "count_note"]


class ShortRepr(reprlib.Repr):
    """:class:`reprlib.Repr` that never sorts or copies a container, handles every ``dict``,
    ``Mapping``, ``list``/``tuple``/``set``/``deque`` subclass by kind (not by type name), and
    shows `redacted` (quoted, as the string it stands for) for the value under any string key
    `is_secret` says is secret.

    Limits (items per container, levels, characters): ``maxdict``/``maxlist``... as in
    :mod:`reprlib`; ``maxother`` cuts the repr of any other object.
    """

    def __init__(
        self,
        *,
        items: int = 30,
        level: int = 4,
        string: int = 200,
        is_secret: Callable[[str], bool] | None = None,
        redacted: str = "<redacted>",
    ) -> None:
        super().__init__()
        self.maxdict = self.maxlist = self.maxtuple = self.maxset = self.maxfrozenset = self.maxdeque = items
        self.maxarray = items
        self.maxlevel = level
        self.maxstring = self.maxother = string
        self.maxlong = 80
        self.is_secret = is_secret
        self.redacted = redacted

    def repr1(self, x: Any, level: int) -> str:
        """The repr of `x` with `level` levels left (reprlib's dispatch, by kind first)."""
        if isinstance(x, (str, bytes, int, float, complex, bool)) or x is None:
            return super().repr1(x, level)
        if isinstance(x, Mapping):
            return self._mapping(x, level)
        if isinstance(x, (list, tuple, set, frozenset, deque)):
            return self._sequence(x, level)
        return self.repr_instance(x, level)

    def _items(self, items: Iterable[Any], limit: int) -> list[Any]:
        try:
            return list(islice(items, limit))
        except RuntimeError:  # changed size while read (another thread): show what was read
            return []

    def _mapping(self, x: Mapping[Any, Any], level: int) -> str:
        n = _len(x)
        name = "" if type(x) is dict else f"{type(x).__name__}("
        close = "" if type(x) is dict else ")"
        if n == 0:
            return f"{name}{{}}{close}"
        if level <= 0:
            return f"{name}{{...}}{close}"
        shown = []
        for key, value in self._items(_mapping_items(x), self.maxdict):
            secret = self.is_secret is not None and isinstance(key, str) and self.is_secret(key)
            shown.append(
                f"{self.repr1(key, level - 1)}: {repr(self.redacted) if secret else self.repr1(value, level - 1)}"
            )
        if n is None or n > len(shown):
            shown.append("...")
        return f"{name}{{{', '.join(shown)}}}{close}"

    def _sequence(self, x: Any, level: int) -> str:
        n = _len(x)
        base = next(b for b in (list, tuple, deque, frozenset, set) if isinstance(x, b))
        left, right = _BRACKETS[base]
        if n == 0 and base in (set, frozenset):
            left, right = f"{base.__name__}(", ")"
        if type(x) is not base:
            left, right = f"{type(x).__name__}({left}", f"{right})"
        if level <= 0 and n != 0:
            return f"{left}...{right}"
        fields = getattr(type(x), "_fields", None) if base is tuple else None
        if isinstance(fields, tuple) and n == len(fields):  # a namedtuple: Point(x=1, y=2)
            named = zip(fields, self._items(iter(x), self.maxtuple), strict=False)
            return f"{type(x).__name__}(" + ", ".join(f"{f}={self.repr1(v, level - 1)}" for f, v in named) + ")"
        shown = [self.repr1(item, level - 1) for item in self._items(iter(x), self.maxlist)]
        if n is None or n > len(shown):
            shown.append("...")
        comma = "," if base is tuple and len(shown) == 1 else ""
        return left + ", ".join(shown) + comma + right


_BRACKETS: dict[type, tuple[str, str]] = {
    list: ("[", "]"),
    tuple: ("(", ")"),
    deque: ("deque([", "])"),
    set: ("{", "}"),
    frozenset: ("frozenset({", "})"),
}


def _len(x: Any) -> int | None:
    try:
        n = len(x)
    except Exception:  # noqa: BLE001 - a container that cannot say its length
        return None
    return n if isinstance(n, int) else None


def _mapping_items(x: Mapping[Any, Any]) -> Iterable[tuple[Any, Any]]:
    if isinstance(x, dict):
        return iter(dict.items(x))
    return iter(x.items())


def bounded_repr(
    value: Any, *, chars: int = 2000, items: int = 30, is_secret: Callable[[str], bool] | None = None
) -> str:
    """The repr of `value` in at most `chars` characters (plus an ellipsis), at most `items`
    items per container and 4 levels deep, the values under keys `is_secret` flags shown as
    ``<redacted>``. Builtin containers are read lazily (no copy); another object's own
    ``__repr__`` runs once and its text is cut. Never raises: a failing ``__repr__`` reads
    ``<repr failed: TypeName>``.

    >>> bounded_repr({f"k{i}": i for i in range(100)}, items=3)
    "{'k0': 0, 'k1': 1, 'k2': 2, ...}"
    """
    try:
        text = ShortRepr(items=items, string=max(40, chars // 4), is_secret=is_secret).repr(value)
    except Exception as exc:  # noqa: BLE001 - a broken __repr__ must not break the tool
        return f"<repr failed: {type(exc).__name__}>"
    return text if len(text) <= chars else text[: chars - 1] + "…"


def count_note(value: Any, items: int = 30) -> str:
    """``"(3,000,000 items; the first 30 shown)"`` for a builtin container longer than `items`, else ""."""
    if not isinstance(value, (Mapping, list, tuple, set, frozenset, deque)):
        return ""
    n = _len(value)
    if n is None or n <= items:
        return ""
    return f"({n:,} items; the first {items} shown)"
