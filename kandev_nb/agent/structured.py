"""Structured output: a Python type in, its JSON schema to the CLI, the answer validated back.

The CLI takes a JSON schema at launch (``--json-schema``; 2.1.332 has no control request to
change it): the model then answers through a `StructuredOutput` tool and the `result`
message carries `structured_output` (:attr:`kandev_nb.agent.events.TurnStats.structured_output`).

>>> from pydantic import BaseModel
>>> class Person(BaseModel):
...     name: str
...     age: int
>>> spec = OutputSpec.of(list[Person])
>>> spec.schema["properties"]["items"]["type"]
'array'
>>> spec.validate({"items": [{"name": "Ada", "age": 36}]})
[Person(name='Ada', age=36)]

A type can be a pydantic model class, a dataclass, a TypedDict, any type pydantic reads
(``list[Person]`` for a list of records), or a JSON-schema ``dict`` (then the answer is
checked with ``jsonschema`` and kept as plain JSON values). The CLI needs an object at the
root (the tool's `input_schema`), so a list is sent wrapped as ``{"items": [...]}``.
"""

from __future__ import annotations

import dataclasses
import json
import typing
from dataclasses import dataclass
from typing import Any

from kandev_nb.errors import NoStructuredOutputError, StructuredOutputError

__all__ = ["LIST_KEY", "STRUCTURED_TOOL", "OutputSpec", "field_types", "fill_output", "mark_wrapped"]

LIST_KEY = "items"
"""The property a list answer is wrapped in (``{"items": [...]}``), as the CLI needs an object."""


def _type_name(target: Any) -> str:
    if isinstance(target, dict):
        return str(target.get("title") or "schema")
    return str(getattr(target, "__name__", None) or target)


def _one_line(exc: Any, name: str) -> str:
    """pydantic's ValidationError in one line: ``N errors for NAME: loc: msg; loc: msg``."""
    errors = exc.errors(include_url=False)
    parts = [f"{'.'.join(str(p) for p in e.get('loc', ())) or '(root)'}: {e.get('msg')}" for e in errors]
    count = len(errors)
    return f"{count} validation error{'s' if count != 1 else ''} for {name}: " + "; ".join(parts)


def _is_typeddict(target: Any) -> bool:
    return isinstance(target, type) and issubclass(target, dict) and hasattr(target, "__total__")


def _for_pydantic(target: Any) -> Any:
    """`target` with any ``typing.TypedDict`` (top level or a list's item) rebuilt as a
    ``typing_extensions.TypedDict``: pydantic refuses the former on Python < 3.12."""
    import typing_extensions

    if _is_typeddict(target):  # rebuilding one that pydantic takes is harmless
        hints = typing.get_type_hints(target)
        required = getattr(target, "__required_keys__", frozenset(hints))
        fields = {k: (v if k in required else typing_extensions.NotRequired[v]) for k, v in hints.items()}
        return typing_extensions.TypedDict(target.__name__, fields)  # type: ignore[operator]
    origin = typing.get_origin(target)
    if origin in (list, tuple, set, frozenset):
        args = typing.get_args(target)
        if len(args) == 1:
            return origin[_for_pydantic(args[0])]
    return target


@dataclass(frozen=True)
class OutputSpec:
    """What one turn's answer must be.

    Attributes:
        target: the requested type (or JSON-schema dict).
        schema: the JSON schema sent as ``--json-schema`` (an object at the root).
        many: True when the answer is a list, sent wrapped in ``{"items": ...}``.
        item: the type of one record when `many` (None otherwise).
        wrapped: the property the answer was wrapped in ("items", "value"), or None.
    """

    target: Any
    schema: dict[str, Any]
    many: bool = False
    item: Any = None
    wrapped: str | None = None

    @classmethod
    def of(cls, target: Any) -> OutputSpec:
        """The spec for `target`.

        Raises:
            TypeError: `target` is neither a type pydantic can build a schema for nor a
                JSON-schema dict (the message names what was given).
        """
        if isinstance(target, OutputSpec):
            return target
        if isinstance(target, dict):
            if not target or not all(isinstance(k, str) for k in target):
                raise TypeError("a JSON-schema dict needs string keys, e.g. {'type': 'object', 'properties': {...}}")
            if target.get("type") == "array":
                return cls(target, _wrap(target), many=True, item=target.get("items"), wrapped=LIST_KEY)
            return cls(target, dict(target))
        from pydantic import TypeAdapter

        origin = typing.get_origin(target)
        many = origin in (list, tuple, set, frozenset) or target in (list, tuple)
        try:
            schema = TypeAdapter(_for_pydantic(target)).json_schema()
        except Exception as exc:  # pydantic's PydanticSchemaGenerationError, or a non-type
            raise TypeError(f"{target!r} cannot be a --schema: pydantic makes no JSON schema for it ({exc})") from exc
        item = (typing.get_args(target) or (Any,))[0] if many else None
        if many:
            return cls(target, _wrap(schema), many=True, item=item, wrapped=LIST_KEY)
        if schema.get("type") != "object":
            return cls(target, _wrap_value(schema), wrapped="value")
        return cls(target, schema)

    @property
    def name(self) -> str:
        """A readable name of the requested type ("Person", "list[Person]")."""
        if self.many and self.item is not None and not isinstance(self.target, dict):
            return f"list[{_type_name(self.item)}]"
        return _type_name(self.target)

    @property
    def schema_json(self) -> str:
        """The schema as the compact JSON text passed to ``--json-schema``."""
        return json.dumps(self.schema, sort_keys=True, separators=(",", ":"))

    def unwrap(self, raw: Any) -> Any:
        """The answer without the ``{"items": ...}`` / ``{"value": ...}`` wrapper we added."""
        if self.wrapped and isinstance(raw, dict) and self.wrapped in raw:
            return raw[self.wrapped]
        return raw

    def validate(self, raw: Any) -> Any:
        """`raw` (`result.structured_output`) validated into the requested type.

        Raises:
            StructuredOutputError: it does not validate; the message is one line.
        """
        value = self.unwrap(raw)
        if isinstance(self.target, dict):
            import jsonschema

            try:
                jsonschema.validate(value, self.target)
            except jsonschema.ValidationError as exc:
                where = ".".join(str(p) for p in exc.absolute_path) or "(root)"
                raise StructuredOutputError(
                    f"1 validation error for {self.name}: {where}: {exc.message}", raw=raw
                ) from None
            return value
        from pydantic import TypeAdapter, ValidationError

        try:
            return TypeAdapter(_for_pydantic(self.target)).validate_python(value)
        except ValidationError as exc:
            raise StructuredOutputError(_one_line(exc, self.name), raw=raw) from None


def _wrap(array_schema: dict[str, Any]) -> dict[str, Any]:
    """An array schema inside an object (the CLI's tool input must be an object); `$defs` go to the root."""
    inner = {k: v for k, v in array_schema.items() if k != "$defs"}
    out: dict[str, Any] = {
        "type": "object",
        "properties": {LIST_KEY: inner},
        "required": [LIST_KEY],
        "additionalProperties": False,
    }
    if "$defs" in array_schema:
        out["$defs"] = array_schema["$defs"]
    return out


def _wrap_value(schema: dict[str, Any]) -> dict[str, Any]:
    """A scalar (or union) schema inside ``{"value": ...}``."""
    inner = {k: v for k, v in schema.items() if k != "$defs"}
    out: dict[str, Any] = {"type": "object", "properties": {"value": inner}, "required": ["value"]}
    if "$defs" in schema:
        out["$defs"] = schema["$defs"]
    return out


STRUCTURED_TOOL = "StructuredOutput"
"""The CLI's tool a ``--json-schema`` turn answers through."""


def mark_wrapped(event: Any, spec: OutputSpec | None) -> Any:
    """`event` with its StructuredOutput payload marked as wrapped by `spec` (``Generic.wrapped``:
    the card then shows the answer, not ``{"items": ...}``); any other event, or a spec that
    wraps nothing, unchanged."""
    from kandev_nb.agent.tools import Generic

    payload = getattr(event, "normalized", None)
    if (
        spec is None
        or not spec.wrapped
        or getattr(event, "tool_name", None) != STRUCTURED_TOOL
        or not isinstance(payload, Generic)
    ):
        return event
    return event.model_copy(update={"normalized": payload.model_copy(update={"wrapped": spec.wrapped})})


def fill_output(turn: Any, spec: OutputSpec) -> Any:
    """Set ``turn.output_raw`` and ``turn.output`` from the turn's `result.structured_output`.

    Returns:
        The validated object (also ``turn.output``).

    Raises:
        NoStructuredOutputError: the result has no `structured_output` (the model never
            called the StructuredOutput tool, ``error_max_structured_output_retries``, or
            the turn failed or was stopped); the message says which.
        StructuredOutputError: the answer does not validate; ``turn.output_raw`` keeps it,
            ``turn.output_error`` holds the message.
    """
    stats = turn.stats
    raw = getattr(stats, "structured_output", None) if stats is not None else None
    turn.output_raw = raw
    if raw is None:
        subtype = stats.result_subtype if stats is not None else "no result"
        why = turn.error.message if turn.error is not None else f"result subtype {subtype!r}"
        if subtype == "success" and turn.error is None:
            why = "the model answered without calling the StructuredOutput tool"
        if subtype == "error_max_structured_output_retries":
            why = "the model did not give a valid StructuredOutput answer within the CLI's retries" + (
                f" ({turn.error.message})" if turn.error is not None else ""
            )
        message = f"no structured answer for {spec.name}: {why}"
        turn.output_error = message
        raise NoStructuredOutputError(message, raw=None, turn=turn)
    try:
        turn.output = spec.validate(raw)
    except StructuredOutputError as exc:
        exc.turn = turn
        turn.output_error = str(exc)
        raise
    turn.output_error = None
    return turn.output


def field_types(item: Any) -> dict[str, Any]:
    """The fields of a record type and their annotations (pydantic model, dataclass, TypedDict).

    Returns ``{}`` for anything else (a JSON-schema dict's records get inferred dtypes).
    """
    fields_of = getattr(item, "model_fields", None)
    if isinstance(fields_of, dict):
        return {name: f.annotation for name, f in fields_of.items()}
    if dataclasses.is_dataclass(item) and isinstance(item, type):
        hints = typing.get_type_hints(item)
        return {f.name: hints.get(f.name, f.type) for f in dataclasses.fields(item)}
    if _is_typeddict(item):
        return dict(typing.get_type_hints(item))
    return {}
