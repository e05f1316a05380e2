"""The messages between kandev_nb's anywidgets and their page code, declared once.

Each anywidget's module (``src/widgets/*.ts``, built into ``kandev_nb/static/``) and its
kernel side talk over the widget's comm with custom messages (``model.send`` / ``msg:custom``).
Each message is a pydantic model here; their JSON Schema (``python -m
kandev_nb.notebook.widget_messages``) is turned into the TypeScript types the page code is
checked against (``src/widgets/messages.ts``, ``jlpm build:messages``; a test regenerates it and
compares). The kernel builds what it sends from these models and reads what the page sends
through them (:func:`read`): a message out of shape is dropped with a warning in the log.

- the notebook bridge (:mod:`kandev_nb.notebook.bridge`, ``bridge.ts``): kernel -> tab
  :class:`BridgeRequest`; tab -> kernel :class:`BridgePresent` (``bridge_stub.ts``),
  :class:`BridgeHello`, :class:`BridgeAnswer`,
  :class:`BridgeGoodbye` and a header chip's :class:`ChipNext` (``answer_actions.ts``);
- the approval toasts (:mod:`kandev_nb.notebook.notify`, ``notify.ts``): :class:`ToastAnswer`,
  answered by :class:`ToastAnswered`;
- streaming text (:mod:`kandev_nb.notebook.widgets.stream`, ``kandev_lib.ts``):
  :class:`StreamAppend`, :class:`StreamReset`; the view's :class:`StreamSync`;
- the controls' clicks: :class:`ApprovalPress` (``approval.ts``), :class:`QuestionPress`
  (``questions.ts``), :class:`RevokePress` (``permissions_panel.ts``), :class:`TurnPress`
  (``turn_actions.ts``).
"""

from __future__ import annotations

import json
import logging
import sys
from typing import Annotated, Any, Literal, TypeVar, cast

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, model_validator

__all__ = [
    "ApprovalAction",
    "ApprovalPress",
    "BridgeAnswer",
    "BridgeGoodbye",
    "BridgeHello",
    "BridgePresent",
    "BridgeRequest",
    "ChipNext",
    "FromTab",
    "QuestionPress",
    "RevokePress",
    "StreamAppend",
    "StreamReset",
    "StreamSync",
    "ToastAnswer",
    "ToastAnswered",
    "TurnPress",
    "json_schema",
    "read",
    "read_from_tab",
]

log = logging.getLogger("kandev_nb")


class _Message(BaseModel):
    # What the kernel sends carries every field (its defaults too): required in the TypeScript types.
    model_config = ConfigDict(extra="forbid", frozen=True, json_schema_serialization_defaults_required=True)


_FIELD_ADAPTERS: dict[tuple[type[BaseModel], str], TypeAdapter[Any]] = {}


class _FromPage(_Message):
    """A message the page sends, read as the kernel always read them: a key it does not know is
    ignored, and an optional field of the wrong type is dropped (its default is used), not the
    whole message; a required field out of shape still drops the message. Types are strict (no
    "1" for an int, no 1.0 or True for an id)."""

    model_config = ConfigDict(extra="ignore", strict=True)  # "1" is not an index, 1.0 not an id

    @model_validator(mode="before")
    @classmethod
    def _drop_mistyped(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        kept = dict(data)
        for name, field in cls.model_fields.items():
            if name not in kept or field.is_required():
                continue
            adapter = _FIELD_ADAPTERS.get((cls, name))
            if adapter is None:
                adapter = _FIELD_ADAPTERS[(cls, name)] = TypeAdapter(
                    cast(Any, field.annotation), config=ConfigDict(strict=True)
                )
            try:
                adapter.validate_python(kept[name])
            except ValidationError:
                del kept[name]
        return kept


# --- the notebook bridge ----------------------------------------------------------------------


class BridgeRequest(_Message):
    """Kernel -> tab: act on the tab's notebook. `view` None: every view answers (``op``
    ``"hello"``: say hello again); `op` one of ``hello``, ``ping``, ``read``, ``cells``,
    ``insert``, ``edit``, ``delete``, ``attach``, ``set_outputs`` (another is answered with an
    error); `args` the op's arguments."""

    kind: Literal["request"] = "request"
    id: int
    view: str | None
    op: str
    args: dict[str, Any] = {}


class BridgePresent(_FromPage):
    """Tab -> kernel: a page holds the bridge's model (the one message of its first page code,
    ``bridge_stub.ts``); the kernel answers by sending the whole bridge as the widget's `_esm`."""

    kind: Literal["present"] = "present"


class BridgeHello(_FromPage):
    """Tab -> kernel: a view of the notebook (one per open tab of it) is there. `ok` False: this
    frontend gives widgets no notebook document (`reason`). `path`: the notebook's path from the
    server's root; `client`: the kernel connection's client id (the `session` of the tab's
    execute requests); `via`: how the view reached the notebook."""

    kind: Literal["hello"] = "hello"
    view: str
    ok: bool
    path: str | None = None
    client: str | None = None
    via: Literal["extension", "widget manager"] | None = None
    reason: str | None = None


class BridgeAnswer(_FromPage):
    """Tab -> kernel: the answer to the :class:`BridgeRequest` `id`: its `result`, or `error`."""

    kind: Literal["answer"] = "answer"
    id: int
    view: str
    ok: bool
    result: dict[str, Any] | None = None
    error: str | None = None


class BridgeGoodbye(_FromPage):
    """Tab -> kernel: the view is going (a reload, a closed tab): stop addressing it."""

    kind: Literal["goodbye"] = "goodbye"
    view: str


class ChipNext(_FromPage):
    """Tab -> kernel: a header chip chose the `mode` or the `model` of `session`'s next turn
    (:mod:`kandev_nb.notebook.answers`, which checks them)."""

    kind: Literal["next"] = "next"
    session: str
    mode: str | None = None
    model: str | None = None


FromTab = Annotated[BridgePresent | BridgeHello | BridgeAnswer | BridgeGoodbye | ChipNext, Field(discriminator="kind")]
"""What a tab sends the bridge."""


# --- the approval toasts ----------------------------------------------------------------------


class ToastAnswer(_FromPage):
    """Page -> kernel: a toast's Allow or Deny of the waiting approval `id`; `digest` is that of
    the line the toast showed (an Allow is refused unless it was the whole payload)."""

    kind: Literal["answer"]  # required: a message of another kind is never read as an answer
    id: str
    action: Literal["allow", "deny"]
    reason: str = ""
    digest: str | None = None


class ToastAnswered(_Message):
    """Kernel -> page: the result of a :class:`ToastAnswer` (`error` says why it was refused)."""

    kind: Literal["answered"] = "answered"
    id: str
    ok: bool
    error: str = ""


# --- streaming text ---------------------------------------------------------------------------


class StreamAppend(_Message):
    """Kernel -> view: `text` continues the text at offset `at`."""

    type: Literal["append"] = "append"
    at: int
    text: str


class StreamReset(_Message):
    """Kernel -> view: the whole text sent so far (the answer to a :class:`StreamSync` that
    named another length)."""

    type: Literal["reset"] = "reset"
    text: str


class StreamSync(_FromPage):
    """View -> kernel: the view has `have` characters (it mounted, or saw a gap)."""

    type: Literal["sync"] = "sync"
    have: int


# --- the controls' clicks ---------------------------------------------------------------------


ApprovalAction = Literal[
    "allow",
    "allow_always",
    "allow_tool",
    "deny",
    "edit",
    "allow_edited",
    "allow_suggestion",
    "preview",
    "approve_accept_edits",
    "approve_keep_asking",
    "allow_all",
    "deny_all",
    "rule_preview",
]
"""The `action` of an :class:`ApprovalPress` (``approve_*``: the CLI's own choices on a plan's card)."""


class ApprovalPress(_FromPage):
    """Page -> kernel: one answer on an approval card (see
    :mod:`kandev_nb.notebook.widgets.approval`): `reason` of a deny, `input` (JSON object text)
    of ``allow_edited`` and ``preview``, `index` of ``allow_suggestion``, `rule` of a fleet's
    ``allow_all`` / ``deny_all`` / ``rule_preview``."""

    action: ApprovalAction
    reason: str | None = None
    input: str | None = None
    index: int | None = None
    rule: str | None = None


class QuestionPress(_FromPage):
    """Page -> kernel: a question card's answers (by question: a label, labels or typed text; the
    kernel also takes them as a list in question order), or ``skip``."""

    action: Literal["answer", "skip"]
    answers: dict[str, str | list[str]] | list[str | list[str]] | None = None


class RevokePress(_FromPage):
    """Page -> kernel: revoke the session grant `rule` (the permissions panel)."""

    action: Literal["revoke"]
    rule: str


class TurnPress(_FromPage):
    """Page -> kernel: a turn's footer button; `id` names the deleted cell of ``restore``."""

    action: Literal["retry", "permissions", "send_again", "undo", "restore"]
    id: str | None = None


M = TypeVar("M", bound=BaseModel)
FromTabMessage = BridgePresent | BridgeHello | BridgeAnswer | BridgeGoodbye | ChipNext
_ADAPTERS: dict[Any, TypeAdapter[Any]] = {}


def _read(kind: Any, data: object) -> Any:
    adapter = _ADAPTERS.get(kind)
    if adapter is None:
        adapter = _ADAPTERS[kind] = TypeAdapter(kind)
    try:
        return adapter.validate_python(data)
    except ValidationError as exc:
        log.warning("kandev-nb: a widget message out of shape was dropped: %s", exc.errors(include_url=False)[:3])
        return None


def read(model: type[M], data: object) -> M | None:
    """`data` (a custom message's content) as `model`, or None (logged) when it is out of shape."""
    result: M | None = _read(model, data)
    return result


def read_from_tab(data: object) -> FromTabMessage | None:
    """What a tab sent the bridge (:data:`FromTab`), or None (logged) when it is out of shape."""
    result: FromTabMessage | None = _read(FromTab, data)
    return result


TO_PAGE: list[type[BaseModel]] = [BridgeRequest, ToastAnswered, StreamAppend, StreamReset]
FROM_PAGE: list[type[BaseModel]] = [
    BridgePresent,
    BridgeHello,
    BridgeAnswer,
    BridgeGoodbye,
    ChipNext,
    ToastAnswer,
    StreamSync,
    ApprovalPress,
    QuestionPress,
    RevokePress,
    TurnPress,
]


def json_schema() -> dict[str, object]:
    """One JSON Schema document whose ``$defs`` hold every message (for the TypeScript types):
    what the kernel sends as it serializes it, what the page sends as the kernel reads it."""
    defs: dict[str, dict[str, Any]] = {}
    for models, mode in ((TO_PAGE, "serialization"), (FROM_PAGE, "validation")):
        for model in models:
            schema = model.model_json_schema(ref_template="#/$defs/{model}", mode=mode)  # type: ignore[arg-type]
            defs.update(schema.pop("$defs", {}))
            defs[model.__name__] = schema
    for schema in defs.values():  # a field's title would become a TypeScript type of its own
        for prop in schema.get("properties", {}).values():
            prop.pop("title", None)
    names = sorted(m.__name__ for m in TO_PAGE + FROM_PAGE)
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "KandevNbWidgetMessages",
        "description": (
            "Messages between kandev_nb's anywidgets and their page code (kandev_nb/notebook/widget_messages.py)."
        ),
        "type": "object",
        "properties": {name: {"$ref": f"#/$defs/{name}"} for name in names},
        "$defs": defs,
    }


if __name__ == "__main__":  # python -m kandev_nb.notebook.widget_messages > schema file
    json.dump(json_schema(), sys.stdout, indent=2, sort_keys=True)
    sys.stdout.write("\n")
