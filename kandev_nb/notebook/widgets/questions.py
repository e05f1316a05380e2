"""The question card: an `AskUserQuestion` can_use_tool answered with buttons.

Built like the approval card (:mod:`kandev_nb.notebook.widgets.approval`): the controls are
one anywidget, :class:`QuestionControls` (``src/widgets/questions.ts``), and each answer is ONE
custom message from the browser carrying what was chosen and typed with the click:
``{"action": "answer", "answers": {"<question>": "<label>" | ["<label>", ...] | "<typed>"}}``
or ``{"action": "skip"}``. :meth:`QuestionCard.press` turns it into
``approval.allow(updated_input=<input + answers>)`` (:func:`kandev_nb.agent.questions.answers_input`)
or a deny that tells the model the user chose not to answer. The approval timeout denies
with :data:`~kandev_nb.agent.questions.NOBODY_ANSWERED`.

Each question shows its `header` as a chip, each option as a button (its label, its
description under it, its preview shown on focus/hover), multiSelect questions as toggle
buttons with "Submit answers", and an "Other" box whose text becomes the answer. A card with
one single-choice question answers on the option's click.

Class names tests and Playwright look for: ``kandev-question-card`` (with
``kandev-approval``), ``kandev-question-controls``, ``kandev-question``,
``kandev-question-chip``, ``kandev-question-option`` (``data-label``),
``kandev-question-other``, ``kandev-question-submit``, ``kandev-question-skip``,
``kandev-decision``.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import Any

import anywidget
import traitlets

from kandev_nb.agent import events as ev
from kandev_nb.agent.permissions import Decision
from kandev_nb.agent.questions import (
    QUESTION_TOOL,
    SKIPPED,
    Question,
    QuestionError,
    answers_input,
    parse_questions,
)
from kandev_nb.notebook.page_code import page_file
from kandev_nb.notebook.widget_messages import QuestionPress, read
from kandev_nb.notebook.widgets.approval import ApprovalCard
from kandev_nb.notebook.widgets.cards import WidgetFactory
from kandev_nb.render import html as r
from kandev_nb.render.questions import answers_html

__all__ = ["QuestionCard", "QuestionControls", "card_for"]


def _wire(q: Question) -> dict[str, Any]:
    return {
        "question": q.question,
        "header": q.header,
        "multiSelect": q.multi_select,
        "options": [asdict(o) for o in q.options],
    }


class QuestionControls(anywidget.AnyWidget):
    """The option buttons, "Other" boxes, Submit and Skip of one question card.

    Traits: `questions` (JSON text of the questions, wire names), `pending` (False disables
    every control), `error` (a message under the controls).
    """

    _esm = page_file("questions.js")  # src/widgets/questions.ts
    _css = page_file("questions.css")  # style/widgets/questions.css
    questions = traitlets.Unicode("[]").tag(sync=True)
    pending = traitlets.Bool(True).tag(sync=True)
    error = traitlets.Unicode("").tag(sync=True)


class QuestionCard(ApprovalCard):
    """The live card of one AskUserQuestion PermissionRequest (same interface as
    :class:`~kandev_nb.notebook.widgets.approval.ApprovalCard`: `box`, `outcome`, `tick`,
    `decided`, `handle`); `answers` holds the answers sent (question -> answer text)."""

    def __init__(self, event: ev.PermissionRequest, factory: WidgetFactory, *, attached: bool = False) -> None:
        self.event = event
        self.approval = event.approval
        self.attached = attached
        self.plan = False
        self.rows = None  # answered row by row in a fleet: no "for all rows"
        self.rule_text, self.armed = None, ""
        self.outcome: tuple[str, str, int, str] | None = None
        self.answers: dict[str, str] = {}
        try:
            self.questions = parse_questions(event.input)
            problem = ""
        except QuestionError as exc:
            self.questions, problem = [], str(exc)
        head = "<div><b>❓ Claude asks you</b></div>"
        if problem:
            head += f'<div style="color:var(--jp-error-color1,#cf222e)">{r.esc(problem)}</div>'
        self.what = factory.html(head, "kandev-approval-what")
        self.controls = factory.track(
            QuestionControls(
                questions=json.dumps([_wire(q) for q in self.questions], ensure_ascii=False),
                _dom_classes=("kandev-question-controls",),
            )
        )
        self.countdown = factory.html("", "kandev-approval-countdown")
        self.status = factory.html("", "kandev-decision")
        self.box = factory.vbox(
            (self.what, self.controls, self.countdown, self.status), "kandev-approval", "kandev-question-card"
        )
        self.controls.on_msg(self._on_view_msg)
        self.tick()
        self.approval.on_decided(self._on_decided)

    def _on_view_msg(self, _widget: Any, content: Any, _buffers: Any) -> None:
        if not isinstance(content, dict):
            return
        pressed = read(QuestionPress, content)
        if pressed is None:  # an unknown action: the card says so
            self.press(str(content.get("action", "")))
        else:
            self.press(pressed.action, answers=pressed.answers)

    def press(
        self,
        action: str,
        *,
        answers: Any = None,
        reason: str = "",
        input_text: str | None = None,
        index: int | None = None,
        rule: str | None = None,
    ) -> bool:
        """Answer as the controls' message would (`rule`, a fleet's "for all rows", does not
        apply: a question is answered row by row).

        Args:
            action: "answer" (with `answers`: a dict question -> label, list of labels or
                typed text, or a list in question order) or "skip" (deny: the model reads
                that the user chose not to answer).

        Returns:
            True if this call decided the request. Missing or unusable answers decide
            nothing; the card says why under the controls.
        """
        if action == "skip":
            return self._answer(self.approval.deny(SKIPPED))
        if action != "answer":
            self.controls.error = f"unknown action {action!r}"
            return False
        try:
            updated = answers_input(self.event.input, answers if answers is not None else {})
        except QuestionError as exc:
            self.controls.error = f"{exc}: choose an option or type an answer"
            return False
        self.controls.error = ""
        return self._answer(self.approval.allow(updated_input=updated))

    def _on_decided(self, decision: Decision) -> None:
        given = (decision.updated_input or {}).get("answers")
        if isinstance(given, dict):
            self.answers = {str(k): str(v) for k, v in given.items()}
        self.decided(decision.behavior, decision.decided_by, decision.waited_ms, decision.message)

    def decided(
        self,
        behavior: str,
        decided_by: str,
        waited_ms: int,
        message: str = "",
        *,
        edited: bool = False,
        always: str = "",
    ) -> None:
        """Show the answers (or why there are none) and disable the controls; idempotent."""
        if self.outcome is not None:
            return
        self.outcome = (behavior, decided_by, waited_ms, message)
        self.controls.pending = False
        who = {
            "person": "you",
            "policy": "the answer policy",
            "timeout": "nobody (timeout)",
            "cancelled": "the CLI",
        }.get(decided_by, decided_by)
        if behavior == "allow":
            line = f'<span style="color:#1a7f37"><b>Answered</b> by {r.esc(who)} after {r.fmt_ms(waited_ms)}</span>'
            line += answers_html([(q.question, self.answers.get(q.question, "")) for q in self.questions])
        elif decided_by == "cancelled":
            line = '<span style="color:#888"><b>Withdrawn by Claude Code</b></span>'
        else:
            line = (
                f'<span style="color:#cf222e"><b>Not answered</b> ({r.esc(who)}, after '
                f"{r.fmt_ms(waited_ms)})</span> — {r.esc(message)}"
            )
        self.status.value = line
        self.box.children = (self.status,) if self.attached else (self.what, self.status)
        self.box._dom_classes = (*self.box._dom_classes, "kandev-decided")

    def handle(self, event: ev.PermissionDecided | ev.PermissionCancelled) -> None:
        """Apply a PermissionDecided / PermissionCancelled event for this request."""
        decision = self.approval.decision
        if decision is not None:
            self._on_decided(decision)
        elif isinstance(event, ev.PermissionDecided):
            self.decided(event.behavior, event.decided_by, event.waited_ms, event.message)
        else:
            self.decided("deny", "cancelled", 0)


def card_for(event: ev.PermissionRequest, factory: WidgetFactory, *, attached: bool = False) -> ApprovalCard:
    """The card of a PermissionRequest: a :class:`QuestionCard` for AskUserQuestion, else
    an :class:`~kandev_nb.notebook.widgets.approval.ApprovalCard`."""
    cls = QuestionCard if event.tool_name == QUESTION_TOOL else ApprovalCard
    return cls(event, factory, attached=attached)
