"""HTML of a tool card: its one-line summary and its body, per NormalizedPayload kind.

The live :class:`~kandev_nb.notebook.widgets.cards.ToolCard`, the approval card and the saved
rendering (:mod:`kandev_nb.render.static`) all build cards here, so they cannot drift.

A call whose approval was denied (:class:`~kandev_nb.agent.events.PermissionDecided` with
``behavior="deny"``) never ran: its card says "denied", by whom (a person, the notebook's
policy, the approval timeout, a hook, Claude Code's own settings) and why, shows what was
proposed (the command, the diff), and shows no stdout/stderr/exit code: the CLI's
`tool_result` for it only repeats the reason, with `is_error` true.

Edits are shown as reviewable diffs (:mod:`kandev_nb.render.diffs`); "where" names the
Python expression that holds a full text, e.g. ``kandev_nb.tool_call('toolu_01').update.output``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from kandev_nb.agent import events as ev
from kandev_nb.agent import tools as t
from kandev_nb.render import diffs
from kandev_nb.render import theme as th
from kandev_nb.render.html import (
    Preview,
    _block,
    _kv,
    _more_note,
    code_html,
    cut,
    esc,
    fmt_ms,
    fmt_tokens,
    markdown_html,
)
from kandev_nb.render.questions import questions_html

__all__ = [
    "approval_note_html", "card_body_html", "card_summary_html", "decided_by_text", "denied",
    "diff_is_cut", "figures_html", "is_cut", "modify_file_html", "status_icon", "todos_html", "tool_label",
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


def tool_label(tool_name: str) -> str:
    """A tool's name as shown: ``mcp__kernel__list_variables`` -> ``kernel · list_variables``.

    MCP tools reach the CLI as ``mcp__<server>__<tool>`` (the `tool_use.name`); other names
    are returned unchanged.
    """
    if tool_name.startswith("mcp__"):
        server, sep, tool = tool_name[5:].partition("__")
        if sep and server and tool:
            return f"{server} · {tool}"
    return tool_name


def where_expr(tool_use_id: str, attr: str = "update.output") -> str:
    """The Python expression that holds a call's full text, runnable as written in the
    notebook: ``kandev_nb.tool_call('<tool_use_id>').update.output``."""
    return f"kandev_nb.tool_call({tool_use_id!r}).{attr}"


_BY = {"person": "you", "policy": "policy", "timeout": "the approval timeout",
       "hook": "a hook", "settings": "Claude Code's permission settings", "cancelled": "Claude Code"}


def decided_by_text(decision: ev.PermissionDecided) -> str:
    """Who decided, in words: "you", "policy", "the approval timeout", "a hook", "hook no_rm"...

    From `decided_by` (:data:`kandev_nb.agent.permissions.DecidedBy`).
    """
    if decision.decided_by == "hook" and decision.hook:  # a kandev-nb Python hook, by its name
        return f"hook {decision.hook}"
    return _BY.get(decision.decided_by, decision.decided_by)


def denied(decision: ev.PermissionDecided | None) -> bool:
    """True when `decision` denied the call (it never ran)."""
    return decision is not None and decision.behavior == "deny"


def _denial_html(decision: ev.PermissionDecided) -> str:
    why = (f'<div class="kandev-denial-reason" style="margin-top:0.2em">reason: {esc(decision.message)}</div>'
           if decision.message else "")
    waited = f" after {fmt_ms(decision.waited_ms)}" if decision.waited_ms else ""
    return (f'<div class="kandev-denial kandev-denied-by-{esc(decision.decided_by)}" style="border-left:3px solid '
            f'{th.WARN};padding:0.2em 0.6em;margin:0.3em 0"><b>Not run</b>: denied by '
            f"<b>{esc(decided_by_text(decision))}</b>{waited}{why}</div>")


def card_summary_html(
    tool_name: str,
    title: str,
    status: str,
    payload: t.NormalizedPayload,
    duration_ms: int | None = None,
    decision: ev.PermissionDecided | None = None,
) -> str:
    """The one-line summary of a tool card: status glyph, tool name, title, key figures.

    Args:
        tool_name: the `tool_use.name` (MCP names shown as by :func:`tool_label`).
        title: the ToolCall's title; status: "running", "complete" or "error".
        payload: the latest NormalizedPayload; duration_ms: tool_use -> tool_result, ms.
        decision: the call's approval answer, if any; a deny shows "⊘ ... denied by ..."
            instead of the `tool_result` figures (exit code, match count), which describe
            nothing that ran.
    """
    bits: list[str] = []
    is_denied = denied(decision)
    match payload:
        case t.ModifyFile(mutations=mutations):
            added = sum(m.added for m in mutations)
            removed = sum(m.removed for m in mutations)
            bits.append(f'<span style="color:{th.OK}">+{added}</span> <span style="color:{th.ERROR}">−{removed}</span>')
        case t.ShellExec(output=out) if out is not None and not is_denied:
            if out.interrupted:
                bits.append("interrupted")
            elif out.exit_code is not None:
                bits.append(f"exit {out.exit_code}")
        case t.ReadFile():
            rng = _read_range(payload)
            if rng:
                bits.append(esc(rng))
        case t.CodeSearch(file_count=n) if n is not None and not is_denied:
            bits.append(f"{n} match{'es' if n != 1 else ''}")
        case t.HttpRequest(status=code) if code is not None and not is_denied:
            bits.append(f"HTTP {code}")
        case t.SubagentTask(total_tool_use_count=n, total_tokens=tok):
            if n is not None:
                bits.append(f"{n} tools")
            if tok is not None:
                bits.append(f"{fmt_tokens(tok)} tokens")
        case _:
            pass
    if decision is not None and is_denied:
        status = "denied"
        bits.insert(0, f'<b style="color:{th.WARN}">denied by {esc(decided_by_text(decision))}</b> (not run)')
    elif duration_ms is not None:
        bits.append(fmt_ms(duration_ms))
    meta = f' <span class="kandev-meta" style="color:{th.MUTED}">· {" · ".join(bits)}</span>' if bits else ""
    shown_title = title if title and title != tool_name else ""
    title_html = f" <code>{esc(shown_title[:200])}</code>" if shown_title else ""
    return f"{status_icon(status)} <b>{esc(tool_label(tool_name))}</b>{title_html}{meta}"


def _read_range(p: t.ReadFile) -> str:
    start = p.start_line or p.offset
    count = p.line_count or p.limit
    if start and count:
        rng = f"lines {start}–{start + count - 1}"
    elif start:
        rng = f"from line {start}"
    elif count:
        rng = f"lines 1–{count}"
    else:
        rng = ""
    if p.total_lines:
        rng = f"{rng} of {p.total_lines}" if rng else f"{p.total_lines} lines"
    return rng


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


def modify_file_html(payload: t.ModifyFile, *, full: bool = False, where: str = "",
                     saved: bool = False) -> str:
    """The diffs of an edit (:func:`kandev_nb.render.diffs.diff_view`, one per mutation).

    Args:
        payload: the ModifyFile payload (Edit, Write, NotebookEdit).
        full: show every row of every diff (live "Show the whole diff").
        where: the Python expression holding the payload, named under a cut preview.
        saved: for static HTML (no buttons): a cut preview is followed by a
            ``<details>`` "Show the whole diff" holding the whole diff.
    """
    parts: list[str] = []
    for i, m in enumerate(payload.mutations):
        view = diffs.diff_view(m.diff, full=full)
        parts.append(view.html)
        if view.cut:
            hidden = view.total_rows - view.shown_rows
            hint = f"; the diff text is in <code>{esc(where)}.mutations[{i}].diff</code>" if where else ""
            parts.append(f'<div class="kandev-more" style="color:{th.MUTED};font-size:90%">… {hidden:,} more diff '
                         f"lines ({view.shown_rows:,} of {view.total_rows:,} shown{hint})</div>")
            if saved:
                whole = diffs.diff_view(m.diff, full=True)
                rest = (f'<div style="color:{th.MUTED};font-size:90%">first {whole.shown_rows:,} lines; all '
                        f"{whole.total_rows:,} are in <code>{esc(where)}.mutations[{i}].diff</code></div>"
                        if whole.cut and where else "")
                parts.append(f'<details class="kandev-whole-diff"><summary style="cursor:pointer">Show the whole '
                             f"diff ({view.total_rows:,} lines)</summary>{whole.html}{rest}</details>")
    return "".join(parts)


def diff_is_cut(payload: t.NormalizedPayload) -> bool:
    """True when :func:`modify_file_html` with ``full=False`` hides rows of some diff."""
    return isinstance(payload, t.ModifyFile) and any(diffs.diff_view(m.diff).cut for m in payload.mutations)


_ERR_STYLE = f";border-left:3px solid {th.ERROR}"
"""stderr and error boxes: the code box's colours (readable in both themes), marked by a red edge."""


def _proposed(payload: t.NormalizedPayload) -> t.NormalizedPayload:
    """`payload` without the fields a `tool_result` filled in (for a call that never ran)."""
    match payload:
        case t.ShellExec() | t.Generic():
            return payload.model_copy(update={"output": None})
        case t.CodeSearch():
            return payload.model_copy(update={"files": (), "file_count": None, "text": None})
        case t.HttpRequest():
            return payload.model_copy(update={"status": None, "response": None})
        case t.ReadFile():
            return payload.model_copy(update={"content": None})
        case t.ModifyFile() | t.ManageTodos() | t.Plan() | t.SubagentTask():
            return payload.model_copy(update={"result": None})
        case _:
            return payload


def card_body_html(payload: t.NormalizedPayload, output: str = "", *, status: str = "complete",
                   full: bool = False, where: str = "", decision: ev.PermissionDecided | None = None,
                   saved: bool = False, images: tuple[str, ...] = ()) -> str:
    """The body of a tool card for one NormalizedPayload kind.

    Args:
        payload: the latest payload for the call (ToolCall's, or the ToolUpdate's enriched one).
        output: the ToolUpdate's full `output` text ("" while running).
        status: "running", "complete" or "error" (an error shows `output` as the error).
        full: False cuts long texts to :func:`cut`'s preview; True shows everything.
        where: a Python expression naming the full text, shown in the "more lines" note
            (see :func:`where_expr`).
        decision: the call's approval answer; a deny shows what was proposed and a "Not
            run: denied by ..." box with the reason, and no result (nothing ran).
        saved: static HTML: a cut diff gets a ``<details>`` with the whole diff.
        images: the ToolUpdate's pictures (``data:`` URIs, e.g. `run_code`'s figures),
            shown at the end of the body, so a figure stays with the call that made it.
    """
    if decision is not None and denied(decision):
        proposed = _proposed(payload)
        body = card_body_html(proposed, "", status="running", full=full, where=where, saved=saved)
        return body + _denial_html(decision)
    parts: list[str] = []
    match payload:
        case t.ModifyFile():
            base = where.removesuffix(".output") + ".normalized" if where.endswith(".output") else where
            parts.append(modify_file_html(payload, full=full, where=base, saved=saved))
            if status == "error" and (payload.result or output):
                parts.append(_block("error", payload.result or output, full=full, where=where, cls="kandev-stderr",
                                    style=_ERR_STYLE))
        case t.ShellExec():
            if payload.description:
                parts.append(f'<div style="color:var(--jp-content-font-color2,#57606a)">{esc(payload.description)}</div>')
            parts.append(code_html(payload.command, "bash", cls="kandev-command"))
            out = payload.output
            if out is not None:
                parts.append(_block("stdout", out.stdout, full=full, where=where, cls="kandev-stdout"))
                parts.append(_block("stderr", out.stderr, full=full, where=where, cls="kandev-stderr",
                                    style=_ERR_STYLE))
                figs = []
                if out.exit_code is not None:
                    figs.append(_kv("exit code", f"<b>{out.exit_code}</b>"))
                if out.interrupted:
                    figs.append("<b>interrupted</b>")
                if payload.background:
                    figs.append("background")
                if figs:
                    parts.append(f'<div class="kandev-exit">{" · ".join(figs)}</div>')
            elif status == "error" and output:
                parts.append(_block("error", output, full=full, where=where, cls="kandev-stderr", style=_ERR_STYLE))
        case t.ReadFile():
            rng = _read_range(payload)
            parts.append(f"<div>{_kv('path', f'<code>{esc(payload.file_path)}</code>')}"
                         + (f" · {esc(rng)}" if rng else "") + "</div>")
            body = payload.content if payload.content is not None else output
            if body:
                p = cut(body) if not full else Preview(body, len(body), 0, 0)
                parts.append(code_html(p.shown, filename=payload.file_path))
                parts.append(_more_note(p, where))
        case t.CodeSearch():
            scope = " ".join(x for x in (payload.path or "", payload.glob or "") if x)
            parts.append(f"<div>{_kv('pattern', f'<code>{esc(payload.pattern)}</code>')}"
                         + (f" · {_kv('in', f'<code>{esc(scope)}</code>')}" if scope else "")
                         + (f" · {payload.file_count} found" if payload.file_count is not None else "")
                         + ("(truncated)" if payload.truncated else "") + "</div>")
            listing = "\n".join(payload.files) if payload.files else (payload.text or output)
            parts.append(_block("", listing, full=full, where=where, cls="kandev-matches"))
        case t.HttpRequest():
            target = payload.url or payload.query or ""
            label = "url" if payload.url else "query"
            link = (f'<a href="{esc(target)}" target="_blank" rel="noopener noreferrer">{esc(target)}</a>'
                    if payload.url and payload.url.startswith(("http://", "https://")) else f"<code>{esc(target)}</code>")
            parts.append(f"<div>{_kv(label, link)}"
                         + (f" · {_kv('status', str(payload.status))}" if payload.status is not None else "") + "</div>")
            parts.append(_block("", payload.response or output, full=full, where=where, cls="kandev-response"))
        case t.SubagentTask():
            if payload.subagent_type:
                parts.append(f"<div>{_kv('agent', esc(payload.subagent_type))}</div>")
            if payload.prompt:
                parts.append(f"<details><summary>prompt</summary>{markdown_html(payload.prompt)}</details>")
            totals = []
            if payload.total_duration_ms is not None:
                totals.append(_kv("duration", fmt_ms(payload.total_duration_ms)))
            if payload.total_tokens is not None:
                totals.append(_kv("tokens", fmt_tokens(payload.total_tokens)))
            if payload.total_tool_use_count is not None:
                totals.append(_kv("tool uses", str(payload.total_tool_use_count)))
            if totals:
                parts.append(f'<div class="kandev-totals">{" · ".join(totals)}</div>')
            if payload.result:
                p = cut(payload.result, 200, 20000) if not full else Preview(payload.result, len(payload.result), 0, 0)
                parts.append(f'<div class="kandev-result">{markdown_html(p.shown)}</div>{_more_note(p, where)}')
        case t.ManageTodos():
            if payload.items:
                parts.append(todos_html(payload.items))
            elif payload.result:
                parts.append(_block("", payload.result, full=full, where=where, cls="kandev-output"))
        case t.CreateTask():
            parts.append(f"<div><b>{esc(payload.title)}</b>" + (f" <span style='color:var(--jp-content-font-color2,#57606a)'>#{esc(payload.task_id)}</span>"
                                                               if payload.task_id else "") + "</div>")
            if payload.description:
                parts.append(f"<div>{esc(payload.description)}</div>")
        case t.Plan():
            parts.append(f'<div class="kandev-plan">{markdown_html(payload.plan)}</div>')
        case t.NotebookCell():
            from kandev_nb.render.cells import notebook_cell_html

            parts.append(notebook_cell_html(payload, output, status=status, full=full, where=where))
        case t.Generic(name="AskUserQuestion"):  # issue 19: the questions and the answers given
            parts.append(questions_html(payload.input, payload.output or output))
        case t.Generic():
            if payload.input:
                parts.append(_block("input", json.dumps(payload.input, indent=2, ensure_ascii=False, default=str),
                                    full=full, where=where, cls="kandev-input"))
            parts.append(_block("output", payload.output or output, full=full, where=where, cls="kandev-output"))
    parts.append(figures_html(images))
    return "".join(parts)


def figures_html(images: tuple[str, ...]) -> str:
    """``<img>`` elements for ``data:image/...`` URIs (anything else is skipped: no fetch)."""
    shown = [f'<img class="kandev-figure" src="{esc(src)}" alt="figure {i + 1}" style="max-width:100%;'
             f'display:block;margin:0.3em 0">' for i, src in enumerate(images) if src.startswith("data:image/")]
    return f'<div class="kandev-figures">{"".join(shown)}</div>' if shown else ""


def approval_note_html(decision: ev.PermissionDecided) -> str:
    """One line saying how an approval ended: behaviour, by whom (:func:`decided_by_text`),
    after how long (`waited_ms`); a deny also says the call was not run and why."""
    if denied(decision):
        return _denial_html(decision)
    note = f'<div class="kandev-decision-note">{esc(decision.note)}</div>' if decision.note else ""
    return (f'<div class="kandev-decision" style="color:{th.OK}">allowed by {esc(decided_by_text(decision))} '
            f"after {fmt_ms(decision.waited_ms)}</div>{note}")


def _texts(payload: t.NormalizedPayload, output: str) -> list[str]:
    texts = [output]
    match payload:
        case t.ShellExec(output=out) if out is not None:
            texts += [out.stdout, out.stderr]
        case t.ReadFile(content=content):
            texts.append(content or "")
        case t.CodeSearch():
            texts += ["\n".join(payload.files), payload.text or ""]
        case t.HttpRequest(response=resp):
            texts.append(resp or "")
        case t.ModifyFile():
            texts.append(payload.result or "")
        case t.ManageTodos(result=res) | t.Plan(result=res):
            texts.append(res or "")
        case t.Generic(name="AskUserQuestion"):
            pass  # shown whole by questions_html
        case t.Generic():
            texts += [payload.output or "", json.dumps(payload.input, indent=2, ensure_ascii=False, default=str)]
        case _:
            pass
    return texts


def is_cut(payload: t.NormalizedPayload, output: str = "") -> bool:
    """True when :func:`card_body_html` with ``full=False`` hides part of some text."""
    if diff_is_cut(payload):
        return True
    if isinstance(payload, t.SubagentTask) and payload.result and cut(payload.result, 200, 20000).cut:
        return True
    return any(cut(x).cut for x in _texts(payload, output) if x)

