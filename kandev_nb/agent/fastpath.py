"""Events built without pydantic's validation, for the hot path.

Validating an event costs more than reading its line (about 1.5 µs of a 2.4 µs
:class:`~kandev_nb.agent.events.ToolUpdate`). The adapter builds its commonest events from
values that are typed already (the wire views' typed reads, our own payloads), so it builds
them with :func:`trusted`: to the type checker ``trusted(ev.ToolUpdate)`` *is* the class, so
every keyword is checked against the fields as for ``ev.ToolUpdate(...)``; at run time it
is a builder that fills the same ``__dict__`` (in field order, defaults and default
factories included) and fields-set without validating. Text and thinking deltas, most
lines of all, are built by :func:`fast_event`.

An import-time check (:func:`_same_as_validated`) compares built and validated events
field by field (in order), fields-set, repr and JSON; if pydantic's internals ever make
them differ, :func:`trusted` returns the class itself. :data:`VALIDATE` (tests set it) does
the same.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from pydantic import BaseModel
from pydantic_core import PydanticUndefined

from kandev_nb.agent import events as ev
from kandev_nb.agent.tools import ShellExec

__all__ = ["NO_EVENT_DELTAS", "VALIDATE", "fast_event", "trusted"]

_M = TypeVar("_M", bound=BaseModel)
_new, _set = object.__new__, object.__setattr__
_UNSET: Any = object()  # a field's place in __dict__ until the call or a default factory fills it

VALIDATE = False
"""True: :func:`trusted` returns the class itself, so every event is validated."""
NO_EVENT_DELTAS = frozenset({"input_json_delta", "signature_delta", "citations_delta"})
"""Deltas that make no event: their content is read whole from the `assistant` line."""


def _builder(cls: type[_M]) -> Callable[..., _M]:
    """``build(**fields)``: `cls` with `fields` set, as validation makes it from typed values."""
    template: dict[str, Any] = {}
    factories: list[tuple[str, Callable[[], Any]]] = []
    for name, info in cls.model_fields.items():
        if info.default_factory is not None:
            factories.append((name, info.default_factory))  # type: ignore[arg-type]  # no-argument factories
            template[name] = _UNSET
        else:
            template[name] = _UNSET if info.default is PydanticUndefined else info.default

    def build(**fields: Any) -> _M:
        values = template.copy()
        values.update(fields)  # keys keep the fields' order
        for name, factory in factories:
            if values[name] is _UNSET:
                values[name] = factory()
        event = _new(cls)
        _set(event, "__dict__", values)
        _set(event, "__pydantic_fields_set__", set(fields))
        _set(event, "__pydantic_extra__", None)
        _set(event, "__pydantic_private__", None)
        return event

    return build


_builders: dict[type[BaseModel], Callable[..., Any]] = {}


def trusted(cls: type[_M]) -> type[_M]:
    """`cls`, to be called with values of exactly its fields' types: built without validation.

    Use only where every value is typed already (mypy checks the keywords, since the
    result is typed as `cls`). A required field left out is not reported at run time.
    """
    if VALIDATE or not _BUILT_OK:
        return cls
    builder = _builders.get(cls)
    if builder is None:
        builder = _builders[cls] = _builder(cls)
    return builder  # type: ignore[return-value]  # called like cls, returns a cls


def fast_event(
    cls: type[ev.MessageChunk | ev.Reasoning], text: str, sid: str | None, parent: str | None
) -> ev.MessageChunk | ev.Reasoning:
    """``cls(text=text, session_id=sid, parent_tool_use_id=parent)``, built (:func:`trusted`)."""
    return trusted(cls)(text=text, session_id=sid, parent_tool_use_id=parent)


def _same_as_validated() -> bool:
    """Whether a built event is exactly the validated one (pydantic's internals may change)."""
    samples: list[tuple[type[BaseModel], dict[str, Any]]] = [
        (ev.MessageChunk, {"text": "x", "session_id": "s"}),
        (ev.Reasoning, {"text": "x", "parent_tool_use_id": "toolu_1"}),
        (
            ev.ToolCall,
            {
                "tool_call_id": "toolu_1",
                "tool_name": "Bash",
                "title": "ls",  # a default factory
                "normalized": ShellExec(command="ls"),
            },
        ),
        (ev.ModelUsage, {"input_tokens": 3, "cost_usd": 0.5}),
    ]
    for cls, fields in samples:
        built, valid = _builder(cls)(**fields), cls(**fields)
        if (
            built != valid
            or list(built.__dict__.items()) != list(valid.__dict__.items())
            or built.model_fields_set != valid.model_fields_set
            or repr(built) != repr(valid)
            or built.model_dump_json() != valid.model_dump_json()
        ):
            return False
    return True


_BUILT_OK = _same_as_validated()
