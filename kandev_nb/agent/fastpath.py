"""Text and thinking delta events built without validation, for the hot path.

Most lines from the CLI are `stream_event` text deltas (87% in the benchmark). Their events
are built by :func:`fast_event`, which skips pydantic's validation after the caller checked
every field's type; an import-time check (:func:`_same_as_validated`) falls back to
validating if pydantic's internals ever make the two differ.
"""

from __future__ import annotations

from kandev_nb.agent import events as ev

__all__ = ["DELTA_TEXT", "NO_EVENT_DELTAS", "fast_event"]

_new, _set = object.__new__, object.__setattr__
_TYPE = {cls: cls.model_fields["type"].default for cls in (ev.MessageChunk, ev.Reasoning)}


def _built(cls: type[ev.MessageChunk | ev.Reasoning], text: str, sid: str | None,
           parent: str | None) -> ev.MessageChunk | ev.Reasoning:
    """``cls(text=text, session_id=sid, parent_tool_use_id=parent)`` without pydantic's
    validation (about half the cost of a delta): the caller checked every type."""
    event = _new(cls)
    _set(event, "__dict__", {"session_id": sid, "parent_tool_use_id": parent, "type": _TYPE[cls], "text": text})
    _set(event, "__pydantic_fields_set__", {"text", "session_id", "parent_tool_use_id"})
    _set(event, "__pydantic_extra__", None)
    _set(event, "__pydantic_private__", None)
    return event


def _validated(cls: type[ev.MessageChunk | ev.Reasoning], text: str, sid: str | None,
               parent: str | None) -> ev.MessageChunk | ev.Reasoning:
    return cls(text=text, session_id=sid, parent_tool_use_id=parent)


def _same_as_validated() -> bool:
    """Whether :func:`_built` makes exactly what validation makes (pydantic's internals may change)."""
    for cls in (ev.MessageChunk, ev.Reasoning):
        for sid, parent in (("s", None), (None, "toolu_1")):
            built, valid = _built(cls, "x", sid, parent), _validated(cls, "x", sid, parent)
            if (built != valid or built.__dict__ != valid.__dict__ or built.model_fields_set != valid.model_fields_set
                    or repr(built) != repr(valid) or built.model_dump_json() != valid.model_dump_json()):
                return False
    return True


fast_event = _built if _same_as_validated() else _validated
"""``fast_event(cls, text, session_id, parent_tool_use_id)``: a MessageChunk or Reasoning."""
NO_EVENT_DELTAS = frozenset({"input_json_delta", "signature_delta", "citations_delta"})
"""Deltas that make no event: their content is read whole from the `assistant` line."""
DELTA_TEXT = {"text_delta": ("text", ev.MessageChunk), "thinking_delta": ("thinking", ev.Reasoning)}


"""How handle()'s fast path builds a delta's event: without validation when that is the same."""
_Chunk, _Reasoning = ev.MessageChunk, ev.Reasoning
