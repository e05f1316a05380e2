"""Questions from the agent: the `AskUserQuestion` tool, answered from a card or a policy.

Measured on CLI 2.1.332 and 2.1.197 (tests/approvals/test_questions.py): an
``AskUserQuestion`` call arrives as a `can_use_tool` control_request (2.1.332 adds
``requires_user_interaction: true``) whose `input` is::

    {"questions": [{"question": str, "header": str, "multiSelect": bool,
                    "options": [{"label": str, "description": str, "preview"?: str}]}]}

The host answers ``allow`` with `updatedInput` = that input plus
``"answers": {"<question text>": "<label>"}`` (several labels of a multiSelect question
joined by ", "; free text from the "Other" box is sent as it is), and the model reads the
`tool_result` ``Your questions have been answered: "<question>"="<label>". ...``. The CLI
itself rejects a question with fewer than two or more than four options before asking
(an ``InputValidationError`` tool_result, no can_use_tool); :func:`parse_questions` checks
the same for a peer that does not.

A deny (a person's "Skip", or the approval timeout with :data:`NOBODY_ANSWERED`) reaches the
model as the error `tool_result` text.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kandev_nb.agent.permissions import Approval
from kandev_nb.errors import QuestionError

__all__ = [
    "NOBODY_ANSWERED",
    "QUESTION_TOOL",
    "AnswerPolicy",
    "Option",
    "Question",
    "QuestionError",
    "answered_pairs",
    "answers_input",
    "parse_questions",
    "prepare",
]

QUESTION_TOOL = "AskUserQuestion"
NOBODY_ANSWERED = (
    "Nobody answered these questions within {timeout:g} s (the notebook's approval timeout): "
    "the user did not see them or is away. Do not assume an answer; continue with what you "
    "can do without it, or say what you need to know."
)
"""The deny `message` the model reads when the approval timeout ends a question card."""
SKIPPED = "The user chose not to answer these questions."
MAX_QUESTIONS = 4
MIN_OPTIONS, MAX_OPTIONS = 2, 4


@dataclass(frozen=True)
class Option:
    """One choice: `label` (what the answer says), `description`, an optional `preview`
    (Markdown or code shown with the option)."""

    label: str
    description: str = ""
    preview: str = ""


@dataclass(frozen=True)
class Question:
    """One question of an AskUserQuestion input: its `question` text (the key of
    ``answers``), `header` (a short chip), `options` and `multi_select` (wire:
    ``multiSelect``)."""

    question: str
    header: str
    options: tuple[Option, ...]
    multi_select: bool = False


Answer = str | Sequence[str] | None
AnswerPolicy = Callable[[list[Question]], Sequence[Answer] | Mapping[str, Answer] | None]
"""``answer(questions) -> labels | None``: one answer per question (a label, free text, or a
list of labels for a multiSelect question), as a list in question order or a dict keyed by
the question text; None (or None for any question) leaves the card to a person."""


def parse_questions(tool_input: Mapping[str, Any]) -> list[Question]:
    """The questions of an AskUserQuestion `input` (wire: ``questions``).

    Raises:
        QuestionError: no questions, more than four, a question without text, or one with
            fewer than two or more than four options (the message names which).
    """
    raw = tool_input.get("questions")
    if not isinstance(raw, list) or not raw:
        raise QuestionError("AskUserQuestion came with no questions; there is nothing to answer")
    if len(raw) > MAX_QUESTIONS:
        raise QuestionError(f"AskUserQuestion came with {len(raw)} questions; at most {MAX_QUESTIONS} fit one card")
    out: list[Question] = []
    for n, q in enumerate(raw, 1):
        if not isinstance(q, dict) or not isinstance(q.get("question"), str) or not q["question"].strip():
            raise QuestionError(f"question {n} of AskUserQuestion has no question text")
        given = q.get("options")  # not a list (a peer that does not validate): no options
        options = [
            o
            for o in (given if isinstance(given, list) else [])
            if isinstance(o, dict) and isinstance(o.get("label"), str)
        ]
        if not MIN_OPTIONS <= len(options) <= MAX_OPTIONS:
            raise QuestionError(
                f"question {n} ({q['question']!r}) has {len(options)} options; "
                f"a question needs {MIN_OPTIONS} to {MAX_OPTIONS}"
            )
        out.append(
            Question(
                question=q["question"],
                header=str(q.get("header") or ""),
                multi_select=bool(q.get("multiSelect")),
                options=tuple(
                    Option(str(o["label"]), str(o.get("description") or ""), str(o.get("preview") or ""))
                    for o in options
                ),
            )
        )
    return out


def _one(answer: Answer) -> str | None:
    if answer is None:
        return None
    if isinstance(answer, str):
        return answer.strip() or None
    labels = [str(a).strip() for a in answer if str(a).strip()]
    return ", ".join(labels) or None


def answers_input(tool_input: Mapping[str, Any], answers: Sequence[Answer] | Mapping[str, Answer]) -> dict[str, Any]:
    """The `updatedInput` that answers `tool_input`: the input plus ``"answers": {question: label}``.

    Args:
        tool_input: the AskUserQuestion `input`.
        answers: one answer per question in order, or a dict keyed by question text; an
            answer is a label, free text ("Other"), or a list of labels (joined by ", ").

    Raises:
        QuestionError: the input is unusable (:func:`parse_questions`), the answers are
            neither a list nor a dict, a list of the wrong length, or a question is left
            without an answer.
    """
    questions = parse_questions(tool_input)
    if isinstance(answers, Mapping):
        by_text = {q.question: _one(answers.get(q.question)) for q in questions}
    elif isinstance(answers, Sequence) and not isinstance(answers, str):
        if len(answers) != len(questions):
            raise QuestionError(f"{len(answers)} answers for {len(questions)} questions")
        by_text = {q.question: _one(a) for q, a in zip(questions, answers, strict=True)}
    else:
        raise QuestionError(f"answers must be a list or a dict of labels, not {type(answers).__name__}")
    missing = [q for q, a in by_text.items() if a is None]
    if missing:
        raise QuestionError(f"no answer for {missing[0]!r}")
    return {**tool_input, "answers": by_text}


_PAIR = re.compile(r'"((?:[^"\\]|\\.)*)"="((?:[^"\\]|\\.)*)"')


def answered_pairs(tool_result_text: str) -> list[tuple[str, str]]:
    """The (question, answer) pairs in the CLI's tool_result ``Your questions have been
    answered: "<q>"="<a>", ...`` (2.1.332, 2.1.197; newer CLIs: ``The user answered: ...``),
    [] for any other text (e.g. a deny)."""
    if not tool_result_text.lstrip().startswith(("Your questions have been answered", "The user answered")):
        return []
    return _PAIR.findall(tool_result_text)


def prepare(approval: Approval, policy: AnswerPolicy | None) -> None:
    """Set up the `approval` of an AskUserQuestion can_use_tool before its card shows.

    An unusable input is denied at once (``decided_by="policy"``) with the reason, so the
    model hears why and nothing waits. Otherwise the approval timeout's deny message
    becomes :data:`NOBODY_ANSWERED`, and `policy` (``configure(answer=...)``) answers if
    it returns answers for every question; a policy that raises or returns unusable
    answers leaves the card to a person (its error is logged).
    """
    try:
        questions = parse_questions(approval.tool_input)
    except QuestionError as exc:
        approval.deny(f"kandev-nb could not show these questions: {exc}.", by="policy")
        return
    approval.timeout_message = NOBODY_ANSWERED
    if policy is None:
        return
    try:
        answers = policy(questions)
        if answers is None:
            return
        updated = answers_input(approval.tool_input, answers)
    except Exception as exc:  # noqa: BLE001 - a broken policy asks a person instead
        import logging

        logging.getLogger("kandev_nb").warning("answer policy failed (%r); asking instead", exc)
        return
    approval.allow(updated_input=updated, by="policy")
