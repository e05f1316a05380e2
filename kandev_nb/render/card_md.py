"""Markdown of a tool card: the second renderer of a :class:`~kandev_nb.render.card_view.CardView`.

The saved notebook's ``text/markdown`` shows each tool call as a ``<details>`` block whose
summary and body carry the same title, badges and texts as the HTML card
(:mod:`kandev_nb.render.card_html`), since both render the one view :func:`card_view` built.
Agent text goes through :mod:`kandev_nb.render.mdsafe` (no raw HTML, no remote images);
long outputs are cut to the same previews as in the HTML, with the expression holding the
whole text.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

from pygments.lexers import get_lexer_for_filename
from pygments.util import ClassNotFound

from kandev_nb.agent import events as ev
from kandev_nb.agent import tools as t
from kandev_nb.agent.questions import answered_pairs
from kandev_nb.render import card_view as cv
from kandev_nb.render import diffs, reveal
from kandev_nb.render import html as r
from kandev_nb.render import mdsafe as ms
from kandev_nb.render.questions import list_items

__all__ = ["body_markdown", "fence", "parts_markdown", "saved_card_markdown", "summary_markdown", "todos_markdown"]

_GLYPH = {"running": "⏳", "complete": "✓", "error": "✗", "denied": "⊘"}


def fence(text: str, lang: str = "") -> str:
    """`text` in a fenced code block no backtick run inside it can close."""
    longest = max((len(m) for m in re.findall(r"`{3,}", text)), default=2)
    ticks = "`" * (longest + 1)
    return f"{ticks}{lang}\n{text.rstrip(chr(10))}\n{ticks}\n"


def _note(p: r.Preview, where: str) -> str:
    if not p.cut:
        return ""
    size = f"{p.hidden_lines:,} more lines ({len(p.shown):,} of {p.total_chars:,} characters shown)"
    return f"\n*… {size}; full text in* {ms.code_span(where)}\n" if where else f"\n*… {size}*\n"


@lru_cache(maxsize=256)
def _language_of(filename: str) -> str:
    """The fence language for a file name (``a.py`` -> ``python``), "" when unknown."""
    try:
        aliases = get_lexer_for_filename(filename).aliases
    except ClassNotFound:
        return ""
    return str(aliases[0]) if aliases else ""


def _preview(text: str, limits: tuple[int, int] | None = None) -> r.Preview:
    return r.cut(text, *limits) if limits else r.cut(text)


def todos_markdown(items: Iterable[t.TodoItem]) -> str:
    """The agent's task list as a Markdown checklist (``- [x]`` done, ``- [ ] ◐`` in progress)."""
    mark = {"pending": "[ ]", "in_progress": "[ ] ◐", "completed": "[x]"}
    return "".join(f"- {mark[i.status]} {ms.plain(_todo_text(i))}\n" for i in items)


def _todo_text(item: t.TodoItem) -> str:
    """What a task says: its active form while in progress (when it has one), else its description."""
    return item.active_form if item.status == "in_progress" and item.active_form else item.description


def _badge(badge: cv.Badge | cv.DiffStat) -> str:
    if isinstance(badge, cv.DiffStat):
        return f"+{badge.added} −{badge.removed}"
    return f"{badge.text} (not run)" if badge.tone == "denied" else badge.text


def summary_markdown(view: cv.CardView) -> str:
    """The ``<summary>`` text (HTML-escaped, on one line: a blank line in a title would end
    the HTML block and let the rest be read as Markdown): glyph, tool label, ": title", " · badges"."""
    text = f"{_GLYPH.get(view.status, '•')} {view.tool}" + (f": {view.title}" if view.title else "")
    if view.badges:
        text += " · " + " · ".join(_badge(b) for b in view.badges)
    return r.esc(ms.one_line(text))


def _value(f: cv.Field) -> str:
    match f.tone:
        case "code" | "link":
            return ms.code_span(f.value)
        case "bold":
            return f"**{ms.plain(f.value)}**"
        case "pre":
            return "\n\n" + fence(f.value)
        case _:
            return ms.plain(f.value)


def _diff(part: cv.Diff) -> str:
    view = diffs.diff_view(part.diff)
    if part.whole or not view.cut:
        return fence(part.diff, "diff")
    lines = part.diff.split("\n")
    where = f"\n*the diff text is in* {ms.code_span(part.where)}\n" if part.where else ""
    return (
        fence("\n".join(lines[: diffs.DIFF_PREVIEW_ROWS]), "diff")
        + f"\n<details><summary>Show the whole diff ({view.total_rows:,} lines)</summary>\n\n"
        + fence(part.diff, "diff")
        + "\n</details>\n"
        + where
    )


def _questions(part: cv.Questions) -> str:
    answered = dict(answered_pairs(part.output))
    out = []
    for q in list_items(part.input.get("questions")):
        if not isinstance(q, dict):
            continue
        text = str(q.get("question", ""))
        chip = f"{ms.code_span(str(q['header']))} " if q.get("header") else ""
        lines = [f"{chip}**{ms.plain(text)}**\n"]
        lines += [
            f"- **{ms.plain(str(o.get('label', '')))}**"
            + (f" — {ms.plain(str(o['description']))}" if o.get("description") else "")
            + "\n"
            for o in list_items(q.get("options"))
            if isinstance(o, dict)
        ]
        if text in answered:
            lines.append(f"\nAnswer: **{ms.plain(answered[text])}**\n")
        out.append("".join(lines))
    if part.output and not answered:
        out.append(ms.plain(part.output) + "\n")
    return "\n".join(out)


def _verdict(d: ev.PermissionDecided) -> str:
    who = ms.plain(cv.decided_by_text(d))
    note = f"\n{ms.plain(d.note)}\n" if d.note else ""
    if not cv.denied(d):
        after = f" after {r.fmt_ms(d.waited_ms)}" if d.waited_ms else ""
        return f"\n*{ms.plain(cv.allowed_text(d))}{after}*\n{note}"
    if cv.kept_planning(d) and d.decided_by == "person":
        feedback = d.message.removeprefix("The user wants you to keep planning").lstrip(":. ")
        return "\nYou asked to keep planning" + (f": {ms.plain(feedback)}" if feedback else "") + f"\n{note}"
    waited = f" after {r.fmt_ms(d.waited_ms)}" if d.waited_ms else ""
    why = f"\nreason: {ms.plain(d.message)}\n" if d.message else ""
    return f"\n**Not run**: denied by **{who}**{waited}\n{why}{note}"


def _part(part: cv.Part, where: str) -> str:
    match part:
        case cv.Fields():
            return part.sep.join((f"{f.key} " if f.key else "") + _value(f) for f in part.items) + "\n"
        case cv.Inputs():
            rows = "".join(f"- {f'**{f.key}**' if f.dangerous else ms.plain(f.key)}: {_value(f)}\n" for f in part.items)
            return f"{part.label}:\n\n{rows}"
        case cv.Text():
            return f"*{ms.plain(part.text)}*\n" if part.muted else f"{ms.plain(part.text)}\n"
        case cv.Code():
            p = _preview(part.text) if part.cut else r.Preview(part.text, len(part.text), 0, 0)
            return fence(p.shown, part.lang or (_language_of(part.filename) if part.filename else "")) + _note(p, where)
        case cv.Block():
            text = r.strip_ansi(part.text)
            if not text:
                return ""
            p = _preview(text)
            return (f"{part.label}:\n" if part.label else "") + fence(p.shown, part.lang) + _note(p, where)
        case cv.Markdown():
            p = _preview(part.text, part.limits) if part.limits else r.Preview(part.text, len(part.text), 0, 0)
            text = ms.safe_markdown(p.shown) + "\n" + _note(p, where)
            return f"<details><summary>{r.esc(part.fold)}</summary>\n\n{text}\n</details>\n" if part.fold else text
        case cv.Diff():
            return ("*Proposed, not written:*\n\n" if part.proposed else "") + _diff(part)
        case cv.Todos():
            return todos_markdown(part.items)
        case cv.Questions():
            return _questions(part)
        case cv.Images():
            shown = [f"figure {i + 1}" for i, src in enumerate(part.sources) if src.startswith("data:image/")]
            return f"*{' · '.join(shown)}: the pictures are in the HTML copy*\n" if shown else ""
        case cv.Remote():
            n = len(part.urls)
            items = "".join(f"- {ms.code_span(u)}\n" for u in part.urls)
            what = f"{n} remote resource{'s' if n != 1 else ''}"
            return f"**⚠ Shown in the notebook, this Markdown cell loads {what}:**\n\n{items}"
        case cv.Verdict():
            return _verdict(part.decision)


def parts_markdown(parts: Iterable[cv.Part], where: str = "") -> str:
    """Body parts as Markdown blocks (`where`: the expression named under a cut preview)."""
    return "\n".join(x for x in (_part(p, where) for p in parts) if x)


def body_markdown(view: cv.CardView) -> str:
    """The card's body as Markdown."""
    return parts_markdown(view.parts, view.where)


def saved_card_markdown(view: cv.CardView, nested: str = "") -> str:
    """The card as a Markdown ``<details>`` block; `nested`: its subagent's items, at the end."""
    summary, in_summary = reveal.reveal_text(summary_markdown(view))
    body, in_body = reveal.reveal_text(body_markdown(view))
    body = reveal.warning_markdown(in_body or in_summary) + body + (f"\n{nested}" if nested else "")
    return f"<details><summary>{summary}</summary>\n\n{body}\n</details>\n"
