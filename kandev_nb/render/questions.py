"""HTML of AskUserQuestion: the questions with their options, and the answers given.

Pure functions of the tool_use `input` and the CLI's `tool_result` text (``Your questions
have been answered: "<q>"="<a>"``), so the live tool card and the saved rendering show the
same thing (the card view's ``Questions`` part is rendered by :func:`questions_html`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from kandev_nb.agent.questions import answered_pairs
from kandev_nb.render.html import esc

__all__ = ["answers_html", "list_items", "questions_html"]

_MUTED = "var(--jp-ui-font-color2, #57606a)"


def list_items(value: Any) -> list[Any]:
    """`value` if it is a JSON array, else [] (an AskUserQuestion `questions` or `options`
    the model wrote as another type: nothing to show, never an error)."""
    return value if isinstance(value, list) else []


def answers_html(pairs: Iterable[tuple[str, str]]) -> str:
    """A table of (question, answer) pairs (class ``kandev-answers``); "" for none."""
    rows = "".join(
        f'<tr><td style="padding-right:1em;color:{_MUTED}">{esc(q)}</td><td><b>{esc(a)}</b></td></tr>' for q, a in pairs
    )
    return f'<table class="kandev-answers" style="border-collapse:collapse">{rows}</table>' if rows else ""


def questions_html(tool_input: Mapping[str, Any], output: str = "") -> str:
    """Each question (header chip, text, options with descriptions) and its answer.

    Args:
        tool_input: the AskUserQuestion `input` (wire: ``questions``).
        output: the `tool_result` text: the answers are read from it; any other text (a
            deny: nobody answered, skipped) is shown as it is.
    """
    answered = dict(answered_pairs(output))
    parts = []
    for q in list_items(tool_input.get("questions")):
        if not isinstance(q, dict):
            continue
        text = str(q.get("question", ""))
        chip = (
            f'<span class="kandev-question-chip" style="border:1px solid {_MUTED};border-radius:0.8em;'
            f'padding:0 0.4em;font-size:85%">{esc(q.get("header", ""))}</span> '
            if q.get("header")
            else ""
        )
        options = "".join(
            f"<li><b>{esc(o.get('label', ''))}</b>"
            + (
                f' <span style="color:{_MUTED}">— {esc(o.get("description", ""))}</span>'
                if o.get("description")
                else ""
            )
            + "</li>"
            for o in list_items(q.get("options"))
            if isinstance(o, dict)
        )
        answer = answered.get(text)
        given = f'<div class="kandev-answer">Answer: <b>{esc(answer)}</b></div>' if answer is not None else ""
        parts.append(
            f'<div class="kandev-question">{chip}<b>{esc(text)}</b>'
            f'<ul style="margin:0.2em 0">{options}</ul>{given}</div>'
        )
    if output and not answered:
        parts.append(f'<div class="kandev-answer" style="color:{_MUTED}">{esc(output)}</div>')
    return "".join(parts)
