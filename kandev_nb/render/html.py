"""Pure HTML/Markdown builders shared by the live widgets and the static rendering.

Nothing here imports ipywidgets or needs a kernel: every function maps values (event
payloads, stats) to a string. Live tool cards and the saved-notebook rendering use the same
builders, so a reloaded notebook looks like the run did.

Safety: agent text is Markdown rendered by markdown-it-py with ``html=False`` (raw HTML is
shown as text; markdown-it refuses ``javascript:`` links); every other value is escaped with
:func:`html.escape`. Code and diffs are coloured by Pygments with inline styles
(``noclasses=True``), so the HTML needs no stylesheet and survives sanitizers that drop
``<style>`` elements.
"""

from __future__ import annotations

import html
import json
import re
import threading
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, ClassVar

from markdown_it import MarkdownIt
from pygments import highlight as _pyg_highlight
from pygments.formatters import HtmlFormatter
from pygments.lexer import Lexer
from pygments.lexers import DiffLexer, get_lexer_by_name, get_lexer_for_filename
from pygments.styles.default import DefaultStyle
from pygments.token import Whitespace
from pygments.util import ClassNotFound

from kandev_nb.agent import events as ev
from kandev_nb.agent import tools as t

__all__ = [
    "HIGHLIGHT_MAX_CHARS",
    "PREVIEW_CHARS",
    "PREVIEW_LINES",
    "CodeWarmer",
    "Preview",
    "card_body_html",
    "card_summary_html",
    "code_html",
    "context_html",
    "cut",
    "diff_html",
    "esc",
    "fmt_ms",
    "fmt_tokens",
    "fmt_usd",
    "markdown_html",
    "stats_html",
    "status_icon",
    "todos_html",
]

PREVIEW_LINES = 40
"""Lines of a long output shown before "show all"."""
PREVIEW_CHARS = 6000
"""Characters of a long output shown before "show all" (whichever limit is hit first)."""



class _Style(DefaultStyle):  # type: ignore[misc]
    """Pygments' default colours, without colouring whitespace (fewer spans, cleaner text)."""

    styles: ClassVar[dict[Any, str]] = {**DefaultStyle.styles, Whitespace: ""}


_STYLE = _Style


def esc(value: object) -> str:
    """HTML-escape ``str(value)`` (quotes included)."""
    return html.escape(str(value), quote=True)


# -- numbers ----------------------------------------------------------------------------


def fmt_usd(usd: float) -> str:
    """A cost in USD: ``$0.0123`` below a dollar, ``$1.23`` above."""
    return f"${usd:.4f}" if usd < 1 else f"${usd:,.2f}"


def fmt_ms(ms: float | None) -> str:
    """A duration given in milliseconds: ``850 ms``, ``12.3 s``, ``4 min 05 s``."""
    if ms is None:
        return "–"
    if ms < 1000:
        return f"{ms:.0f} ms"
    s = ms / 1000
    if s < 60:
        return f"{s:.1f} s"
    return f"{int(s // 60)} min {int(s % 60):02d} s"


def fmt_tokens(n: int) -> str:
    """A token count: ``950``, ``12.3k``, ``1.20M``."""
    if n < 1000:
        return str(n)
    if n < 1_000_000:
        return f"{n / 1000:.1f}k"
    return f"{n / 1_000_000:.2f}M"


# -- cutting long text ------------------------------------------------------------------


@dataclass(frozen=True)
class Preview:
    """The visible part of a text: `shown` (a prefix), and how much was left out."""

    shown: str
    total_chars: int
    total_lines: int
    hidden_lines: int

    @property
    def cut(self) -> bool:
        """True when part of the text is hidden."""
        return len(self.shown) < self.total_chars


def cut(text: str, max_lines: int = PREVIEW_LINES, max_chars: int = PREVIEW_CHARS) -> Preview:
    """The first `max_lines` lines / `max_chars` characters of `text` (whole lines if possible)."""
    total_lines = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
    shown = text[:max_chars]
    lines = shown.split("\n")
    if len(lines) > max_lines:
        shown = "\n".join(lines[:max_lines])
    elif len(shown) < len(text) and "\n" in shown:
        shown = shown[: shown.rfind("\n")]
    shown_lines = shown.count("\n") + (1 if shown else 0)
    return Preview(shown, len(text), total_lines, max(total_lines - shown_lines, 0))


def _more_note(p: Preview, where: str = "") -> str:
    if not p.cut:
        return ""
    size = len(p.shown), p.total_chars
    hint = f"; full text in {esc(where)}" if where else ""
    return (
        f'<div class="kandev-more" style="color:#888;font-size:90%">… {p.hidden_lines:,} more lines '
        f"({size[0]:,} of {size[1]:,} characters shown{hint})</div>"
    )


# -- code, diffs, Markdown --------------------------------------------------------------


@lru_cache(maxsize=4)
def _formatter(wrap: bool) -> HtmlFormatter:
    return HtmlFormatter(noclasses=True, style=_STYLE, nowrap=True) if wrap else HtmlFormatter(noclasses=True)


def _pre(inner: str, cls: str = "kandev-code", extra_style: str = "") -> str:
    style = (
        "margin:0.2em 0;padding:0.4em 0.6em;overflow-x:auto;background:#f6f8fa;color:#24292f;"
        "border-radius:4px;font-size:85%;line-height:1.35;white-space:pre" + extra_style
    )
    return f'<pre class="{cls}" style="{style}">{inner}</pre>'


def _lexer_for(language: str | None = None, filename: str | None = None) -> Lexer | None:
    try:
        if language:
            return get_lexer_by_name(language.split()[0])
        if filename:
            return get_lexer_for_filename(filename)
    except ClassNotFound:
        return None
    return None


def code_html(code: str, language: str | None = None, filename: str | None = None, cls: str = "kandev-code") -> str:
    """A ``<pre>`` block of `code`, coloured by Pygments when the language/filename is known.

    Code longer than :data:`HIGHLIGHT_MAX_CHARS` is shown uncoloured (Pygments needs about
    a second per 100 KB; the text is the same).
    """
    lexer = _lexer_for(language, filename) if len(code) <= HIGHLIGHT_MAX_CHARS else None
    if lexer is None:
        return _pre(esc(code), cls)
    return _pre(str(_pyg_highlight(code, lexer, _formatter(True))).rstrip("\n"), cls)


def diff_html(diff: str) -> str:
    """A unified diff coloured by Pygments' DiffLexer (additions green, removals red)."""
    if len(diff) > HIGHLIGHT_MAX_CHARS:
        return _pre(esc(diff), "kandev-diff")
    return _pre(str(_pyg_highlight(diff, DiffLexer(), _formatter(True))).rstrip("\n"), "kandev-diff")


HIGHLIGHT_MAX_CHARS = 200_000
"""Longer code blocks and diffs are shown without colours."""

_CODE_CACHE_CHARS = 4_000_000
_code_cache: OrderedDict[tuple[str, str], str] = OrderedDict()
_code_cache_size = 0
_code_cache_lock = threading.Lock()


def _md_highlight(code: str, lang: str, _attrs: str) -> str:
    """markdown-it's highlight hook: :func:`code_html`, memoised by (code, language).

    The memo lets :class:`CodeWarmer` colour each fenced block while the answer streams,
    so the static rendering at the end of a turn only parses (same output, less waiting).
    Bounded to about :data:`_CODE_CACHE_CHARS` characters of HTML, least recently used out.
    """
    global _code_cache_size
    key = (code, lang)
    with _code_cache_lock:
        hit = _code_cache.get(key)
        if hit is not None:
            _code_cache.move_to_end(key)
            return hit
    out = code_html(code.rstrip("\n"), lang or None)
    size = len(out) + len(code)
    if size <= _CODE_CACHE_CHARS // 8:
        with _code_cache_lock:
            if key not in _code_cache:
                _code_cache[key] = out
                _code_cache_size += size
            while _code_cache_size > _CODE_CACHE_CHARS and _code_cache:
                (old_code, _lang), old = _code_cache.popitem(last=False)
                _code_cache_size -= len(old) + len(old_code)
    return out


_FENCE_LINE = re.compile(r" {0,3}(`{3,}|~{3,})(.*)")


class CodeWarmer:
    """Colours the fenced code blocks of a growing Markdown text as soon as each one closes.

    Feed it the whole text so far (:meth:`feed`, e.g. at every streamed update); it scans
    only the new complete lines and renders each finished top-level fenced block once,
    which fills the highlight memo of :func:`markdown_html`. What the static rendering
    shows does not depend on it: a block rendered differently here (inside a list, say) is
    only a memo miss.
    """

    def __init__(self) -> None:
        self.pos = 0  # start of the first line not scanned yet
        self._open: tuple[int, str, int] | None = None  # (offset of the opening line, fence char, length)
        self.warmed = 0

    def feed(self, text: str) -> None:
        """Scan `text` (the previous text plus more) from where the last call stopped."""
        pos = self.pos
        find = text.find
        while (nl := find("\n", pos)) >= 0:
            if text.startswith(("```", "~~~", " "), pos):  # cheap pre-check: most lines are prose
                m = _FENCE_LINE.match(text, pos, nl)
                if m is not None:
                    fence = m.group(1)
                    if self._open is None:
                        if not (fence[0] == "`" and "`" in m.group(2)):
                            self._open = (pos, fence[0], len(fence))
                    elif fence[0] == self._open[1] and len(fence) >= self._open[2] and not m.group(2).strip():
                        markdown_html(text[self._open[0]:nl + 1])
                        self._open = None
                        self.warmed += 1
            pos = nl + 1
        self.pos = pos


@lru_cache(maxsize=1)
def _markdown() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "highlight": _md_highlight})
    md.enable(["table", "strikethrough"])
    return md


def markdown_html(text: str) -> str:
    """Markdown -> HTML: CommonMark + tables + strikethrough; raw HTML shown as text."""
    return str(_markdown().render(text))


# -- tool cards -------------------------------------------------------------------------

_ICON = {"running": "⏳", "complete": "✓", "error": "✗"}
_COLOR = {"running": "#b08800", "complete": "#1a7f37", "error": "#cf222e"}


def status_icon(status: str) -> str:
    """An HTML span with the status glyph (⏳ running, ✓ complete, ✗ error)."""
    return (
        f'<span class="kandev-status kandev-status-{esc(status)}" style="color:{_COLOR.get(status, "#888")}">'
        f"{_ICON.get(status, '•')}</span>"
    )


def _kv(label: str, value: str) -> str:
    return f'<span class="kandev-kv"><span style="color:#888">{esc(label)}</span> {value}</span>'


_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)")


def strip_ansi(text: str) -> str:
    """`text` without terminal colour/cursor escapes (pytest, git... print them); for display only."""
    return _ANSI.sub("", text) if "\x1b" in text else text


def _block(label: str, text: str, *, full: bool, where: str, cls: str, style: str = "") -> str:
    text = strip_ansi(text)
    if not text:
        return ""
    p = cut(text) if not full else Preview(text, len(text), 0, 0)
    head = f'<div style="color:#888;font-size:90%">{esc(label)}</div>' if label else ""
    return head + _pre(esc(p.shown), cls, style) + _more_note(p, where)


def card_summary_html(
    tool_name: str,
    title: str,
    status: str,
    payload: t.NormalizedPayload,
    duration_ms: int | None = None,
) -> str:
    """The one-line summary of a tool card: status glyph, tool name, title, key figures."""
    bits: list[str] = []
    match payload:
        case t.ModifyFile(mutations=mutations):
            added = sum(m.added for m in mutations)
            removed = sum(m.removed for m in mutations)
            bits.append(f'<span style="color:#1a7f37">+{added}</span> <span style="color:#cf222e">−{removed}</span>')
        case t.ShellExec(output=out) if out is not None:
            if out.interrupted:
                bits.append("interrupted")
            elif out.exit_code is not None:
                bits.append(f"exit {out.exit_code}")
        case t.ReadFile():
            rng = _read_range(payload)
            if rng:
                bits.append(esc(rng))
        case t.CodeSearch(file_count=n) if n is not None:
            bits.append(f"{n} match{'es' if n != 1 else ''}")
        case t.HttpRequest(status=code) if code is not None:
            bits.append(f"HTTP {code}")
        case t.SubagentTask(total_tool_use_count=n, total_tokens=tok):
            if n is not None:
                bits.append(f"{n} tools")
            if tok is not None:
                bits.append(f"{fmt_tokens(tok)} tokens")
        case _:
            pass
    if duration_ms is not None:
        bits.append(fmt_ms(duration_ms))
    meta = f' <span class="kandev-meta" style="color:#888">· {" · ".join(bits)}</span>' if bits else ""
    shown_title = title if title and title != tool_name else ""
    title_html = f" <code>{esc(shown_title[:200])}</code>" if shown_title else ""
    return f"{status_icon(status)} <b>{esc(tool_name)}</b>{title_html}{meta}"


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
            text = f'<s style="color:#888">{text}</s>'
        elif item.status == "in_progress":
            text = f"<b>{text}</b>"
        rows.append(f'<li class="kandev-todo kandev-todo-{item.status}" style="list-style:none">{glyph} {text}</li>')
    if not rows:
        return '<div class="kandev-todos" style="color:#888">(no tasks)</div>'
    return f'<ul class="kandev-todos" style="margin:0.2em 0;padding-left:0.5em">{"".join(rows)}</ul>'


def card_body_html(payload: t.NormalizedPayload, output: str = "", *, status: str = "complete",
                   full: bool = False, where: str = "") -> str:
    """The body of a tool card for one NormalizedPayload kind.

    Args:
        payload: the latest payload for the call (ToolCall's, or the ToolUpdate's enriched one).
        output: the ToolUpdate's full `output` text ("" while running).
        status: "running", "complete" or "error" (an error shows `output` as the error).
        full: False cuts long texts to :func:`cut`'s preview; True shows everything.
        where: a Python expression naming the full text, shown in the "more lines" note.
    """
    parts: list[str] = []
    match payload:
        case t.ModifyFile():
            for m in payload.mutations:
                parts.append(diff_html(m.diff if full else cut(m.diff, 200, 20000).shown))
                if not full:
                    parts.append(_more_note(cut(m.diff, 200, 20000), where))
            if status == "error" and (payload.result or output):
                parts.append(_block("error", payload.result or output, full=full, where=where, cls="kandev-stderr",
                                    style=";color:#cf222e"))
        case t.ShellExec():
            if payload.description:
                parts.append(f'<div style="color:#888">{esc(payload.description)}</div>')
            parts.append(code_html(payload.command, "bash", cls="kandev-command"))
            out = payload.output
            if out is not None:
                parts.append(_block("stdout", out.stdout, full=full, where=where, cls="kandev-stdout"))
                parts.append(_block("stderr", out.stderr, full=full, where=where, cls="kandev-stderr",
                                    style=";color:#cf222e;background:#fff5f5"))
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
                parts.append(_block("error", output, full=full, where=where, cls="kandev-stderr", style=";color:#cf222e"))
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
            parts.append(f"<div><b>{esc(payload.title)}</b>" + (f" <span style='color:#888'>#{esc(payload.task_id)}</span>"
                                                               if payload.task_id else "") + "</div>")
            if payload.description:
                parts.append(f"<div>{esc(payload.description)}</div>")
        case t.Plan():
            parts.append(f'<div class="kandev-plan">{markdown_html(payload.plan)}</div>')
        case t.NotebookCell():
            from kandev_nb.render.cells import notebook_cell_html
            parts.append(notebook_cell_html(payload, output, status=status, full=full, where=where))
        case t.Generic():
            if payload.input:
                parts.append(_block("input", json.dumps(payload.input, indent=2, ensure_ascii=False, default=str),
                                    full=full, where=where, cls="kandev-input"))
            parts.append(_block("output", payload.output or output, full=full, where=where, cls="kandev-output"))
    return "".join(parts)


def details_html(summary: str, body: str, *, open_: bool = False, cls: str = "", inner_style: str = "") -> str:
    """A ``<details>`` element with an HTML `summary` and `body`."""
    attr = " open" if open_ else ""
    return (f'<details class="{esc(cls)}"{attr} style="margin:0.3em 0;border:1px solid #d0d7de;border-radius:6px;'
            f'padding:0.2em 0.6em"><summary style="cursor:pointer">{summary}</summary>'
            f'<div style="{inner_style}">{body}</div></details>')


# -- footer and gauges ------------------------------------------------------------------


def context_html(ctx: ev.ContextWindow | None) -> str:
    """The context-window gauge: a bar and ``used / size tokens (pct)``; "" if unknown."""
    if ctx is None or not ctx.size:
        return ""
    frac = min(ctx.used / ctx.size, 1.0)
    color = "#1a7f37" if frac < 0.6 else "#bf8700" if frac < 0.85 else "#cf222e"
    return (
        f'<span class="kandev-context" title="context window">'
        f'<span style="display:inline-block;width:80px;height:8px;background:#eaeef2;border-radius:4px;'
        f'vertical-align:middle;overflow:hidden"><span style="display:block;height:8px;width:{frac * 100:.1f}%;'
        f'background:{color}"></span></span> context {fmt_tokens(ctx.used)} / {fmt_tokens(ctx.size)} '
        f"({frac:.0%})</span>"
    )


def stats_html(stats: ev.TurnStats, ctx: ev.ContextWindow | None = None, *, interrupted: bool = False) -> str:
    """The footer: cost (USD), tokens (input, output, cache read, cache creation), durations
    (ms from `result.duration_ms` / `duration_api_ms`), API turns (`num_turns`), context gauge."""
    items = [
        _kv("cost", f"<b>{fmt_usd(stats.cost_usd)}</b>"),
        _kv("tokens", f"in {fmt_tokens(stats.input_tokens)} · out {fmt_tokens(stats.output_tokens)} · "
                      f"cache read {fmt_tokens(stats.cache_read_input_tokens)} · "
                      f"cache write {fmt_tokens(stats.cache_creation_input_tokens)}"),
        _kv("time", f"{fmt_ms(stats.duration_ms)} (API {fmt_ms(stats.duration_api_ms)})"),
        _kv("API turns", str(stats.num_turns)),
    ]
    if stats.model:
        items.append(_kv("model", esc(stats.model)))
    gauge = context_html(ctx)
    if gauge:
        items.append(gauge)
    state = ""
    if interrupted:
        state = '<b style="color:#bf8700">interrupted</b> · '
    elif stats.is_error:
        state = f'<b style="color:#cf222e">{esc(stats.result_subtype)}</b> · '
    return (f'<div class="kandev-footer" style="color:#57606a;font-size:90%;border-top:1px solid #d0d7de;'
            f'padding-top:0.3em;margin-top:0.3em">{state}{" · ".join(items)}</div>')


def budget_html(spent_usd: float, budget_usd: float) -> str:
    """One line: the notebook's spend (USD, this turn included) against its budget (USD)."""
    return (f'<div class="kandev-budget" style="color:#888;font-size:85%">spent {fmt_usd(spent_usd)} of the '
            f"{fmt_usd(budget_usd)} budget ({spent_usd / budget_usd:.1%})</div>")


def approval_note_html(decision: ev.PermissionDecided) -> str:
    """One line saying how an approval ended: behaviour, by whom, after how long."""
    verb = "allowed" if decision.behavior == "allow" else "denied"
    color = "#1a7f37" if decision.behavior == "allow" else "#cf222e"
    reason = f": {esc(decision.message)}" if decision.message and decision.behavior == "deny" else ""
    return (f'<div class="kandev-decision" style="color:{color}">{verb} by {esc(decision.decided_by)} after '
            f"{fmt_ms(decision.waited_ms)}{reason}</div>")


def json_html(value: Any, *, full: bool = True) -> str:
    """A JSON value pretty-printed and coloured."""
    text = json.dumps(value, indent=2, ensure_ascii=False, default=str)
    return code_html(text if full else cut(text).shown, "json")


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
        case t.Generic():
            texts += [payload.output or "", json.dumps(payload.input, indent=2, ensure_ascii=False, default=str)]
        case _:
            pass
    return texts


def is_cut(payload: t.NormalizedPayload, output: str = "") -> bool:
    """True when :func:`card_body_html` with ``full=False`` hides part of some text."""
    if isinstance(payload, t.ModifyFile) and any(cut(m.diff, 200, 20000).cut for m in payload.mutations):
        return True
    if isinstance(payload, t.SubagentTask) and payload.result and cut(payload.result, 200, 20000).cut:
        return True
    return any(cut(x).cut for x in _texts(payload, output) if x)
