"""The parts a tool card is made of (:class:`CardView` and its body :data:`Part`): frozen
values that :func:`kandev_nb.render.card_view.card_view` builds and the renderers
(:mod:`~kandev_nb.render.card_html`, :mod:`~kandev_nb.render.card_md`) read."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from kandev_nb.agent import events as ev
from kandev_nb.agent import tools as t

__all__ = [
    "Badge",
    "Block",
    "CardView",
    "Code",
    "Diff",
    "DiffStat",
    "Field",
    "Fields",
    "Images",
    "Inputs",
    "Markdown",
    "Part",
    "Questions",
    "Remote",
    "Text",
    "Todos",
    "Tone",
    "Verdict",
]

Tone = Literal["", "code", "bold", "muted", "link", "ok", "error", "pre"]
"""How a :class:`Field` value is shown: plain, ``code``, bold, muted, a link (http(s) URLs
only; anything else as code), green/red (diff counts), ``pre`` (a multi-line or JSON value)."""


@dataclass(frozen=True)
class Badge:
    """One figure of the title line: "exit 0", "lines 1–3 of 3", "HTTP 200", "12.3 s",
    "background"; ``tone="denied"`` for "denied by you" (shown with "(not run)")."""

    text: str
    tone: Literal["", "denied"] = ""


@dataclass(frozen=True)
class DiffStat:
    """An edit's line counts in the title line: ``+added −removed``."""

    added: int
    removed: int


@dataclass(frozen=True)
class Field:
    """One value of a :class:`Fields` line or an :class:`Inputs` table, with its `key` label
    ("" for none); `dangerous` marks an input that widens what a tool may do (red)."""

    value: str
    key: str = ""
    tone: Tone = ""
    dangerous: bool = False


@dataclass(frozen=True)
class Fields:
    """One line of values joined by `sep` (``path /p/a.py · lines 1–2``)."""

    items: tuple[Field, ...]
    cls: str = ""
    sep: str = " · "


@dataclass(frozen=True)
class Inputs:
    """A tool input's fields as a two-column table (the approval card's "other inputs")."""

    items: tuple[Field, ...]
    label: str = "inputs"


@dataclass(frozen=True)
class Text:
    """A line of plain text (a command's description, a task's description)."""

    text: str
    muted: bool = False


@dataclass(frozen=True)
class Code:
    """Source code, coloured by `lang` or `filename`; `cut`: shown as a preview."""

    text: str
    lang: str = ""
    filename: str = ""
    cls: str = "kandev-code"
    cut: bool = False


@dataclass(frozen=True)
class Block:
    """A tool's output text (stdout, stderr, a response), terminal escapes stripped, cut to a
    preview under `label`; ``tone="error"``: a red edge, ``"error_text"``: red text; `lang`:
    the Markdown fence's language."""

    label: str
    text: str
    cls: str
    tone: Literal["", "error", "error_text"] = ""
    lang: str = ""


@dataclass(frozen=True)
class Markdown:
    """Agent-written Markdown (a plan, a subagent's answer); `fold`: under a ``<details>``
    with this label; `limits`: (lines, characters) of the preview, None for whole."""

    text: str
    cls: str = ""
    fold: str = ""
    limits: tuple[int, int] | None = None


@dataclass(frozen=True)
class Diff:
    """One unified diff (:mod:`kandev_nb.render.diffs`); `where`: the expression holding its
    text (named when the preview is cut); `whole`: always every row."""

    diff: str
    where: str = ""
    whole: bool = False
    proposed: bool = False
    """A denied (or stopped) call's edit: shown muted under "Proposed, not written", never as applied."""


@dataclass(frozen=True)
class Todos:
    """The agent's task list (TodoWrite items)."""

    items: tuple[t.TodoItem, ...]


@dataclass(frozen=True)
class Questions:
    """AskUserQuestion: the tool_use `input` (its ``questions``) and the `tool_result` text
    the answers are read from."""

    input: Mapping[str, Any]
    output: str


@dataclass(frozen=True)
class Images:
    """The ToolUpdate's pictures, ``data:image/...`` URIs (anything else is never shown)."""

    sources: tuple[str, ...]


@dataclass(frozen=True)
class Verdict:
    """How the call's approval ended (a PermissionDecided): allowed by whom after how long,
    or "Not run: denied by ..." with the reason; and its `note`."""

    decision: ev.PermissionDecided


@dataclass(frozen=True)
class Remote:
    """The remote URLs a Markdown cell's new source loads when JupyterLab renders it (images,
    iframes: requested on insert and at every reopen), listed on the card (issue 23.8)."""

    urls: tuple[str, ...]


Part = Fields | Inputs | Text | Code | Block | Markdown | Diff | Todos | Questions | Images | Remote | Verdict
"""One piece of a card's body."""


@dataclass(frozen=True)
class CardView:
    """What a tool card shows, for every renderer.

    Attributes:
        kind: the NormalizedPayload kind (``shell_exec``...), the ``kandev-kind-<kind>`` class.
        tool: the tool label (:func:`tool_label` of the `tool_use.name`).
        title: the ToolCall's title when it says more than the name (at most 200 chars), or "".
        status: "running", "complete", "error" or "denied".
        badges: the title line's figures, in order.
        parts: the body.
        where: the expression holding the call's whole output (:func:`where_expr`).
    """

    kind: str
    tool: str
    title: str
    status: str
    badges: tuple[Badge | DiffStat, ...]
    parts: tuple[Part, ...]
    where: str = ""

    def open_by_default(self, *, live: bool) -> bool:
        """Whether the card shows its body unfolded: errors and denials, task lists, plans,
        and a turn's results (an edit's or a cell's diff, figures, answers to questions)
        always, live and saved; live also commands and subagents (saved copies stay short)."""
        if self.status in ("error", "denied") or self.kind in ("manage_todos", "plan", "modify_file"):
            return True
        if any(isinstance(p, Diff | Images | Questions) for p in self.parts):
            return True
        return live and self.kind in ("shell_exec", "subagent_task")
