"""The messages between a kernel and kandev-nb's JupyterLab extension, declared once.

The extension's Claude panel and its notifications talk to every kernel of the server that
has kandev_nb loaded over one comm per kernel, target :data:`TARGET` (see
:mod:`kandev_nb.notebook.lab_channel`). Each message is a pydantic model here; their JSON
Schema (``python -m kandev_nb.notebook.lab_messages``) is turned into the TypeScript types
the extension's build checks against (``src/messages.ts``, ``jlpm build:messages``; a test
regenerates it and compares).

Page -> kernel (``comm_open`` data, then ``comm_msg`` data): :class:`Hello`,
:class:`Answer`, :class:`Stop`, :class:`StopFleet`, :class:`Settings`. Kernel -> page: :class:`State` (sent
when what the panel shows changed), :class:`Answered`, :class:`Mismatch`.

A message the kernel cannot read is dropped with a warning in the kernel's log; nothing
it carries is acted on.
"""

from __future__ import annotations

import json
import sys
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

__all__ = [
    "PROTOCOL",
    "TARGET",
    "Answer",
    "Answered",
    "FromPage",
    "Hello",
    "LabSettings",
    "Mismatch",
    "RunningFleet",
    "RunningTurn",
    "SessionCost",
    "Settings",
    "State",
    "Stop",
    "StopFleet",
    "Waiting",
    "read_from_page",
]

TARGET = "kandev_nb.lab"
"""The comm target the kernel registers at ``%load_ext kandev_nb``."""

PROTOCOL = 2
"""The version of these messages; a page and a kernel of different protocols do not talk
(the kernel answers :class:`Mismatch` and the panel says which side to upgrade).
2: :attr:`State.fleets` and :class:`StopFleet`."""


class _Message(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


# --- page -> kernel ---------------------------------------------------------------------------


class LabSettings(_Message):
    """The user's settings from Lab's settings registry (schema/plugin.json), as composed."""

    defaultMode: Literal["supervised", "plan", "acceptEdits", "autonomous"] = "supervised"
    unansweredCard: Literal["wait", "deny-after"] = "wait"
    denyAfterSeconds: float = Field(default=300, ge=1)
    notifications: bool = True


class Hello(_Message):
    """The ``comm_open`` data: the extension's version and protocol, and the settings."""

    kind: Literal["hello"] = "hello"
    protocol: int
    version: str
    settings: LabSettings = LabSettings()


class Answer(_Message):
    """Allow or deny one waiting approval. `digest` is the
    :attr:`~kandev_nb.agent.surface.SurfaceText.digest` of the text the page showed (the
    panel: the whole payload; a notification: its one line); the broker allows only when that
    text was the whole payload."""

    kind: Literal["answer"] = "answer"
    id: str
    action: Literal["allow", "deny"]
    digest: str | None = None
    reason: str = ""


class Stop(_Message):
    """Stop a running turn (`session` named) or every running turn of the kernel (None),
    each running fleet's rows included (as its board's Stop all)."""

    kind: Literal["stop"] = "stop"
    session: str | None = None


class StopFleet(_Message):
    """Stop every row of the running fleet `id` (:attr:`RunningFleet.id`), as its board's
    Stop all: running rows get the protocol's interrupt and end "stopped", rows not started
    end "skipped"."""

    kind: Literal["stop_fleet"] = "stop_fleet"
    id: str


class Settings(_Message):
    """New settings from the settings registry (the person changed them in Lab)."""

    kind: Literal["settings"] = "settings"
    settings: LabSettings


FromPage = Annotated[Hello | Answer | Stop | StopFleet | Settings, Field(discriminator="kind")]
_FROM_PAGE: TypeAdapter[Hello | Answer | Stop | StopFleet | Settings] = TypeAdapter(FromPage)


def read_from_page(data: object) -> Hello | Answer | Stop | StopFleet | Settings:
    """The message `data` (a comm's ``data`` dict) as its model.

    Raises:
        pydantic.ValidationError: not one of the page's messages, or a field out of shape.
    """
    return _FROM_PAGE.validate_python(data)


# --- kernel -> page ---------------------------------------------------------------------------


class Waiting(_Message):
    """One waiting approval or question, as the panel and the notifications show it.

    `whole` is the whole payload as the card shows it (every input field verbatim, hidden
    characters as ``⟨U+…⟩``), `whole_digest` the digest an Allow from the panel sends;
    `line` the one line a notification shows, `complete` whether that line is the whole
    payload (then a notification may offer Allow, sending `line_digest`). `reminded`: it
    has waited past the reminder time of "wait and remind" (half the approval timeout).
    `row`: the fleet row that asks ("row 6 of 50") and `fleet` its fleet's
    :attr:`RunningFleet.id`, both None outside a fleet.
    """

    id: str
    session: str
    tool: str
    full_tool: str
    cell: int | None
    age_s: float
    left_s: float | None
    question: bool
    line: str
    complete: bool
    line_digest: str | None
    whole: str
    whole_digest: str | None
    warning: str
    reminded: bool = False
    row: str | None = None
    fleet: str | None = None


class RunningTurn(_Message):
    """A turn that runs now: its session, cell (``In [n]``), seconds since it started, the
    context it uses (tokens, from the latest assistant message's `message.usage`) and its tool
    calls so far. Its cost is known only from the turn's `result` (`total_cost_usd`)."""

    session: str
    cell: int | None
    elapsed_s: float
    context_tokens: int
    tools: int


class SessionCost(_Message):
    """One `%%claude` session of the kernel: its turns and their cost (USD) since midnight UTC,
    from each turn's `result.total_cost_usd` difference."""

    session: str
    session_id: str | None
    turns_today: int
    cost_today_usd: float
    running: bool


class RunningFleet(_Message):
    """A fleet running in the kernel (``kandev_nb.fleet(...)``, ``%%claude --over``): its rows
    by status, what it spent, Stop all (:class:`StopFleet` with its `id`).

    `id` names it while it runs (two fleets may share a `name`, or have none); `name` is its
    ledger name (None: unnamed); `cell` the execution count of the cell that shows its board
    (``In [n]``; its notebook is :attr:`State.notebook`). The counts add up to `total`
    (done + error + stopped + skipped + running + pending); `waiting` of the running rows wait
    for a person (their approvals are in :attr:`State.waiting`, named by row). `spent_usd`:
    the finished rows' cost this run (USD), of `budget_usd` (None: no budget); `elapsed_s`
    since it started (the page counts on from the State's arrival). `stopping`: why it was stopped (Stop
    all, the budget, the kernel's interrupt) while its rows end, else None."""

    id: str
    name: str | None
    cell: int | None
    total: int
    done: int
    error: int
    stopped: int
    skipped: int
    running: int
    pending: int
    waiting: int
    spent_usd: float
    budget_usd: float | None
    elapsed_s: float
    stopping: str | None


class State(_Message):
    """What the panel shows of one kernel, sent when it changed (not for the seconds: the page
    counts them on from the State's arrival)."""

    kind: Literal["state"] = "state"
    protocol: int = PROTOCOL
    version: str
    notebook: str | None
    waiting: list[Waiting]
    turns: list[RunningTurn]
    fleets: list[RunningFleet]
    sessions: list[SessionCost]


class Answered(_Message):
    """The result of an :class:`Answer` (`error` says why it was refused)."""

    kind: Literal["answered"] = "answered"
    id: str
    ok: bool
    error: str = ""


class Mismatch(_Message):
    """The page speaks another protocol: nothing it sends is acted on."""

    kind: Literal["mismatch"] = "mismatch"
    protocol: int = PROTOCOL
    version: str
    error: str


def json_schema() -> dict[str, object]:
    """One JSON Schema document whose ``$defs`` hold every message (for the TypeScript types)."""
    models: list[type[BaseModel]] = [Hello, Answer, Stop, StopFleet, Settings, State, Answered, Mismatch]
    defs: dict[str, dict[str, Any]] = {}
    for model in models:
        schema = model.model_json_schema(ref_template="#/$defs/{model}")
        defs.update(schema.pop("$defs", {}))
        defs[model.__name__] = schema
    for schema in defs.values():  # a field's title would become a TypeScript type of its own
        for prop in schema.get("properties", {}).values():
            prop.pop("title", None)
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "KandevNbLabMessages",
        "description": (
            "Messages between a kernel and kandev-nb's JupyterLab extension (kandev_nb/notebook/lab_messages.py)."
        ),
        "type": "object",
        "properties": {name: {"$ref": f"#/$defs/{name}"} for name in (m.__name__ for m in models)},
        "$defs": defs,
    }


if __name__ == "__main__":  # python -m kandev_nb.notebook.lab_messages > schema file
    json.dump(json_schema(), sys.stdout, indent=2, sort_keys=True)
    sys.stdout.write("\n")
