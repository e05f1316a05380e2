"""HTML of a tool card: the renderer of a :class:`~kandev_nb.render.card_view.CardView`.

The live :class:`~kandev_nb.notebook.widgets.cards.ToolCard`, the approval card and the saved
rendering (:mod:`kandev_nb.render.static`) all render the view :func:`card_view` builds, and
the saved Markdown (:mod:`kandev_nb.render.card_md`) renders the same view, so they cannot
drift. What a part shows, per kind, is decided there; here only how.

Edits are shown as reviewable diffs (:mod:`kandev_nb.render.diffs`); "where" names the
Python expression that holds a full text, e.g. ``kandev_nb.tool_call('toolu_01').update.output``.
"""

from __future__ import annotations

from collections.abc import Iterable

from kandev_nb.agent import events as ev
from kandev_nb.agent import tools as t
from kandev_nb.render import card_view as cv
from kandev_nb.render import diffs, reveal
from kandev_nb.render import theme as th
from kandev_nb.render.card_view import allowed_text, decided_by_text, denied, kept_planning, tool_label, where_expr
from kandev_nb.render.html import (
    Preview,
    _block,
    _kv,
    _more_note,
    code_html,
    cut,
    details_html,
    esc,
    fmt_ms,
    markdown_html,
    strip_ansi,
)
from kandev_nb.render.questions import questions_html

__all__ = [
    "approval_note_html",
    "body_html",
    "card_body_html",
    "card_summary_html",
    "decided_by_text",
    "denied",
    "diff_is_cut",
    "figures_html",
    "inputs_html",
    "is_cut",
    "live_card_html",
    "modify_file_html",
    "parts_html",
    "remote_html",
    "saved_card_html",
    "status_icon",
    "summary_html",
    "todos_html",
    "tool_label",
    "verdict_html",
    "where_expr",
]


_ICON = {"running": "⏳", "complete": "✓", "error": "✗", "denied": "⊘"}
_COLOR = {"running": th.WARN, "complete": th.OK, "error": th.ERROR, "denied": th.WARN}


def status_icon(status: str) -> str:
    """An HTML span with the status glyph (⏳ running, ✓ complete, ✗ error, ⊘ denied)."""
    return (
        f'<span class="kandev-status kandev-status-{esc(status)}" style="color:{_COLOR.get(status, th.MUTED)}">'
        f"{_ICON.get(status, '•')}</span>"
    )


# -- the title line ---------------------------------------------------------------------


def _badge_html(badge: cv.Badge | cv.DiffStat) -> str:
    if isinstance(badge, cv.DiffStat):
        return (
            f'<span style="color:{th.OK}">+{badge.added}</span> <span style="color:{th.ERROR}">−{badge.removed}</span>'
        )
    if badge.tone == "denied":
        return f'<b style="color:{th.WARN}">{esc(badge.text)}</b> (not run)'
    return esc(badge.text)


def summary_html(view: cv.CardView) -> str:
    """The card's one-line summary: status glyph, tool label, title, badges."""
    bits = [_badge_html(b) for b in view.badges]
    meta = f' <span class="kandev-meta" style="color:{th.MUTED}">· {" · ".join(bits)}</span>' if bits else ""
    title = f" <code>{esc(view.title)}</code>" if view.title else ""
    return f"{status_icon(view.status)} <b>{esc(view.tool)}</b>{title}{meta}"


# -- the body ---------------------------------------------------------------------------


def todos_html(items: Iterable[t.TodoItem]) -> str:
    """The agent's task list as a checklist (☐ pending, ◐ in progress, ☑ completed)."""
    rows = []
    for item in items:
        glyph = {"pending": "☐", "in_progress": "◐", "completed": "☑"}[item.status]
        text = esc(item.active_form if item.status == "in_progress" and item.active_form else item.description)
        if item.status == "completed":
            text = f'<s style="color:var(--jp-content-font-color2,#57606a)">{text}</s>'
        elif item.status == "in_progress":
            text = f"<b>{text}</b>"
        rows.append(f'<li class="kandev-todo kandev-todo-{item.status}" style="list-style:none">{glyph} {text}</li>')
    if not rows:
        return '<div class="kandev-todos" style="color:var(--jp-content-font-color2,#57606a)">(no tasks)</div>'
    return f'<ul class="kandev-todos" style="margin:0.2em 0;padding-left:0.5em">{"".join(rows)}</ul>'


def figures_html(images: tuple[str, ...]) -> str:
    """``<img>`` elements for ``data:image/...`` URIs (anything else is skipped: no fetch)."""
    shown = [
        f'<img class="kandev-figure" src="{esc(src)}" alt="figure {i + 1}" style="max-width:100%;'
        f'display:block;margin:0.3em 0">'
        for i, src in enumerate(images)
        if src.startswith("data:image/")
    ]
    return f'<div class="kandev-figures">{"".join(shown)}</div>' if shown else ""


def _diff_html(part: cv.Diff, *, full: bool, saved: bool) -> str:
    """One diff (:func:`kandev_nb.render.diffs.diff_view`); a cut preview says how much is
    hidden and where the text is; `saved` (static HTML, no buttons) adds a ``<details>``
    "Show the whole diff" holding the whole diff."""
    view = diffs.diff_view(part.diff, full=full or part.whole)
    if not view.cut or part.whole:
        return view.html
    hidden = view.total_rows - view.shown_rows
    hint = f"; the diff text is in <code>{esc(part.where)}</code>" if part.where else ""
    out = (
        view.html + f'<div class="kandev-more" style="color:{th.MUTED};font-size:90%">… {hidden:,} more diff '
        f"lines ({view.shown_rows:,} of {view.total_rows:,} shown{hint})</div>"
    )
    if saved:
        whole = diffs.diff_view(part.diff, full=True)
        rest = (
            f'<div style="color:{th.MUTED};font-size:90%">first {whole.shown_rows:,} lines; all '
            f"{whole.total_rows:,} are in <code>{esc(part.where)}</code></div>"
            if whole.cut and part.where
            else ""
        )
        out += (
            f'<details class="kandev-whole-diff"><summary style="cursor:pointer">Show the whole '
            f"diff ({view.total_rows:,} lines)</summary>{whole.html}{rest}</details>"
        )
    return out


def modify_file_html(payload: t.ModifyFile, *, full: bool = False, where: str = "", saved: bool = False) -> str:
    """The diffs of an edit, one per mutation (Edit, Write, NotebookEdit).

    Args:
        payload: the ModifyFile payload; full: every row of every diff.
        where: the Python expression holding the payload; a cut preview names
            ``<where>.mutations[i].diff``.
        saved: a cut preview is followed by a ``<details>`` holding the whole diff.
    """
    return "".join(
        _diff_html(cv.Diff(m.diff, f"{where}.mutations[{i}].diff" if where else ""), full=full, saved=saved)
        for i, m in enumerate(payload.mutations)
    )


_ERR_STYLE = f";border-left:3px solid {th.ERROR}"
"""stderr and error boxes: the code box's colours (readable in both themes), marked by a red edge."""
_TONE_STYLE = {"": "", "error": _ERR_STYLE, "error_text": ";color:var(--jp-error-color1,#cf222e)"}
_MUTED_DIV = '<div style="color:var(--jp-content-font-color2,#57606a)">'
_FIELD_CHARS = 4000  # an input field longer than this is cut (the approval card's Edit shows it whole)
_WARN = "var(--jp-error-color1, #cf222e)"
_MUTED = "var(--jp-ui-font-color2, #57606a)"


def _pre_value_html(text: str) -> str:
    if len(text) > _FIELD_CHARS:
        note = (
            f'<div style="color:{_MUTED};font-size:85%">… {len(text) - _FIELD_CHARS:,} more characters '
            "(Edit shows the whole input)</div>"
        )
        return f'<pre class="kandev-code" style="white-space:pre-wrap">{esc(text[:_FIELD_CHARS])}</pre>{note}'
    return f'<pre class="kandev-code" style="white-space:pre-wrap;margin:0">{esc(text)}</pre>'


def _value_html(f: cv.Field) -> str:
    v = esc(f.value)
    match f.tone:
        case "code":
            return f"<code>{v}</code>"
        case "bold":
            return f"<b>{v}</b>"
        case "muted":
            return f'<span style="color:var(--jp-content-font-color2,#57606a)">{v}</span>'
        case "ok" | "error":
            return f'<span style="color:{th.OK if f.tone == "ok" else th.ERROR}">{v}</span>'
        case "link" if f.value.startswith(("http://", "https://")):
            return f'<a href="{v}" target="_blank" rel="noopener noreferrer">{v}</a>'
        case "link":
            return f"<code>{v}</code>"
        case "pre":
            return _pre_value_html(f.value)
        case _:
            return v


def inputs_html(part: cv.Inputs) -> str:
    """A tool input's fields as a two-column table; dangerous ones (``dangerouslyDisableSandbox``,
    ``run_in_background`` when set) in red."""
    rows = []
    for f in part.items:
        style = f";color:{_WARN};font-weight:bold" if f.dangerous else ""
        rows.append(
            f'<tr><td style="vertical-align:top;padding-right:0.8em{style}">{esc(f.key)}</td>'
            f"<td>{_value_html(f)}</td></tr>"
        )
    return (
        f'<table class="kandev-inputs" style="border-collapse:collapse;margin-top:0.2em">'
        f'<caption style="text-align:left;color:{_MUTED};font-size:85%">{esc(part.label)}</caption>'
        + "".join(rows)
        + "</table>"
    )


def _denial_html(decision: ev.PermissionDecided) -> str:
    if kept_planning(decision) and decision.decided_by == "person":
        feedback = decision.message.removeprefix("The user wants you to keep planning").lstrip(":. ")
        said = f": {esc(feedback)}" if feedback else ""
        return (
            f'<div class="kandev-denial kandev-kept-planning" style="margin:0.3em 0">'
            f"You asked to keep planning{said}</div>"
        )
    why = (
        f'<div class="kandev-denial-reason" style="margin-top:0.2em">reason: {esc(decision.message)}</div>'
        if decision.message
        else ""
    )
    waited = f" after {fmt_ms(decision.waited_ms)}" if decision.waited_ms else ""
    return (
        f'<div class="kandev-denial kandev-denied-by-{esc(decision.decided_by)}" style="border-left:3px solid '
        f'{th.WARN};padding:0.2em 0.6em;margin:0.3em 0"><b>Not run</b>: denied by '
        f"<b>{esc(decided_by_text(decision))}</b>{waited}{why}</div>"
    )


def verdict_html(decision: ev.PermissionDecided) -> str:
    """How an approval ended: "allowed by <who> after <waited_ms>", or a deny's "Not run:
    denied by ..." box with its reason (`message`); then its `note`, if any."""
    note = f'<div class="kandev-decision-note">{esc(decision.note)}</div>' if decision.note else ""
    if denied(decision):
        return _denial_html(decision) + note
    # neutral, not green: the call may still fail (its ✗ above says so); nobody waited for an
    # answer the CLI's settings, its mode or a grant gave unasked: no "after 0 ms"
    waited = f" after {fmt_ms(decision.waited_ms)}" if decision.waited_ms else ""
    return f'<div class="kandev-decision" style="color:{th.MUTED}">{esc(allowed_text(decision))}{waited}</div>{note}'


def remote_html(urls: tuple[str, ...]) -> str:
    """The warning of a Markdown cell that loads remote resources (:class:`~kandev_nb.render.card_view.Remote`)."""
    n = len(urls)
    items = "".join(f"<li><code>{esc(u)}</code></li>" for u in urls)
    return (
        f'<div class="kandev-remote-warning" style="color:{th.ERROR};margin:0.2em 0"><b>⚠ Shown in the notebook, '
        f"this Markdown cell loads {n} remote resource{'s' if n != 1 else ''}</b> (when it is inserted and every "
        f'time the notebook is opened; the site sees each request):<ul style="margin:0.1em 0">{items}</ul></div>'
    )


def _preview(text: str, full: bool, limits: tuple[int, int] | None = None) -> Preview:
    if full:
        return Preview(text, len(text), 0, 0)
    return cut(text, *limits) if limits else cut(text)


def _part_html(part: cv.Part, where: str, full: bool, saved: bool) -> str:
    match part:
        case cv.Fields():
            items = part.sep.join(_kv(f.key, _value_html(f)) if f.key else _value_html(f) for f in part.items)
            return (f'<div class="{part.cls}">' if part.cls else "<div>") + items + "</div>"
        case cv.Inputs():
            return inputs_html(part)
        case cv.Text():
            return (_MUTED_DIV if part.muted else "<div>") + esc(part.text) + "</div>"
        case cv.Code():
            p = _preview(part.text, full or not part.cut)
            return code_html(p.shown, part.lang or None, part.filename or None, cls=part.cls) + _more_note(p, where)
        case cv.Block():
            return _block(part.label, part.text, full=full, where=where, cls=part.cls, style=_TONE_STYLE[part.tone])
        case cv.Markdown():
            p = _preview(part.text, full or part.limits is None, part.limits)
            html = markdown_html(p.shown)
            if part.fold:
                return f"<details><summary>{esc(part.fold)}</summary>{html}</details>"
            return (f'<div class="{part.cls}">{html}</div>' if part.cls else html) + _more_note(p, where)
        case cv.Diff() if part.proposed:
            return (
                f'<div class="kandev-proposed"><div style="color:{th.MUTED};font-size:90%">Proposed, not written:</div>'
                f'<div style="opacity:0.55">{_diff_html(part, full=full, saved=saved)}</div></div>'
            )
        case cv.Diff():
            return _diff_html(part, full=full, saved=saved)
        case cv.Todos():
            return todos_html(part.items)
        case cv.Questions():
            return questions_html(part.input, part.output)
        case cv.Images():
            return figures_html(part.sources)
        case cv.Remote():
            return remote_html(part.urls)
        case cv.Verdict():
            return verdict_html(part.decision)


def parts_html(
    parts: Iterable[cv.Part], *, where: str = "", full: bool = False, saved: bool = False, wrap: bool = False
) -> str:
    """Body parts as HTML, every invisible or direction-changing character shown as a
    highlighted ``<U+2067>`` under a warning line (:mod:`kandev_nb.render.reveal`).

    Args:
        parts: :class:`~kandev_nb.render.card_view.CardView` parts.
        where: the expression holding the whole output, named under a cut preview.
        full: every text whole (live "Show all"); saved: static HTML (a cut diff gets a
            ``<details>`` with the whole diff, as there is no button).
        wrap: code and diff lines longer than :data:`~kandev_nb.render.reveal.WRAP_COLUMNS`
            broken with a visible ``↩``/``↪`` mark (the approval card: nothing hides beyond
            the output's width).
    """
    body = _parts_raw(parts, where, full, saved)
    if wrap:
        body = reveal.wrap_pre_html(body)
    body, found = reveal.reveal_html(body)
    return reveal.warning_html(found) + body


def _parts_raw(parts: Iterable[cv.Part], where: str, full: bool, saved: bool) -> str:
    return "".join(_part_html(p, where, full, saved) for p in parts)


def body_html(view: cv.CardView, *, full: bool = False, saved: bool = False) -> str:
    """The card's body (see :func:`parts_html`)."""
    return parts_html(view.parts, where=view.where, full=full, saved=saved)


def _card_html(view: cv.CardView, *, full: bool, saved: bool) -> tuple[str, str]:
    """(summary, body) of `view` with hidden characters revealed in both; the warning line,
    counting both, opens the body."""
    summary, in_summary = reveal.reveal_html(summary_html(view))
    body, in_body = reveal.reveal_html(_parts_raw(view.parts, view.where, full, saved))
    return summary, reveal.warning_html(in_body or in_summary) + body  # the title repeats the input


def live_card_html(view: cv.CardView, *, open_: bool, full: bool = False) -> str:
    """The live card's ``<details>``: class ``kandev-tool-details kandev-kind-<kind>`` (and
    ``kandev-denied``); the widget box around it carries ``kandev-tool-card``."""
    cls = f"kandev-tool-details kandev-kind-{view.kind}" + (" kandev-denied" if view.status == "denied" else "")
    summary, body = _card_html(view, full=full, saved=False)
    return details_html(summary, body, open_=open_, cls=cls)


def saved_card_html(view: cv.CardView, nested: str = "") -> str:
    """The saved card's ``<details>``: class ``kandev-tool-card kandev-kind-<kind>
    kandev-status-<status>``, folded as :meth:`CardView.open_by_default` says for saved
    copies, cut diffs with a whole-diff ``<details>``, `nested` (subagent cards) at the end."""
    cls = f"kandev-tool-card kandev-kind-{view.kind} kandev-status-{view.status}"
    summary, body = _card_html(view, full=False, saved=True)
    return details_html(summary, body + nested, cls=cls, open_=view.open_by_default(live=False))


def diff_is_cut(view: cv.CardView | t.NormalizedPayload) -> bool:
    """True when some diff of `view` (or of an edit payload) is shown as a cut preview."""
    if not isinstance(view, cv.CardView):
        return isinstance(view, t.ModifyFile) and any(diffs.diff_view(m.diff).cut for m in view.mutations)
    return any(isinstance(p, cv.Diff) and not p.whole and diffs.diff_view(p.diff).cut for p in view.parts)


def is_cut(view: cv.CardView) -> bool:
    """True when :func:`body_html` with ``full=False`` hides part of some text."""
    for p in view.parts:
        match p:
            case cv.Block() if cut(strip_ansi(p.text)).cut:
                return True
            case cv.Code(cut=True) if cut(p.text).cut:
                return True
            case cv.Markdown(limits=(lines, chars)) if cut(p.text, lines, chars).cut:
                return True
            case _:
                pass
    return diff_is_cut(view)


def card_summary_html(
    tool_name: str,
    title: str,
    status: str,
    payload: t.NormalizedPayload,
    duration_ms: int | None = None,
    decision: ev.PermissionDecided | None = None,
) -> str:
    """:func:`summary_html` of the :func:`~kandev_nb.render.card_view.card_view` of these values
    (`tool_use.name`, title, status, payload, duration in ms, the approval decision)."""
    return summary_html(
        cv.card_view(tool_name, title, payload, status=status, duration_ms=duration_ms, decision=decision)
    )


def card_body_html(
    payload: t.NormalizedPayload,
    output: str = "",
    *,
    status: str = "complete",
    full: bool = False,
    where: str = "",
    decision: ev.PermissionDecided | None = None,
    saved: bool = False,
    images: tuple[str, ...] = (),
) -> str:
    """The body of the :func:`~kandev_nb.render.card_view.card_view` of `payload` and `output`
    (:func:`parts_html` with `where`, `full`, `saved`); the decision and images as there."""
    view = cv.card_view("", "", payload, output, status=status, decision=decision, images=images)
    return parts_html(view.parts, where=where, full=full, saved=saved)


approval_note_html = verdict_html
"""The old name of :func:`verdict_html`."""
