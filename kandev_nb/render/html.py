"""Pure HTML/Markdown builders shared by the live widgets and the static rendering.

Nothing here imports ipywidgets or needs a kernel: every function maps values (event
payloads, stats) to a string. Live tool cards and the saved-notebook rendering use the same
builders, so a reloaded notebook looks like the run did.

Safety: agent text is Markdown rendered by markdown-it-py with ``html=False`` (raw HTML is
shown as text; markdown-it refuses ``javascript:`` links); every other value is escaped with
:func:`html.escape`. Code is coloured by Pygments, its token classes mapped to a few of ours
(``kt-k``...) and table cells aligned by class (``kandev-al-right``): no per-token or
per-cell inline styles, which sanitizers parse one by one. The colours, JupyterLab's theme
variables (light or dark theme), are in :func:`kandev_nb.render.theme.stylesheet`, which
the saved output carries once and the live widgets load with their CSS; where a sanitizer
drops ``<style>`` (an untrusted notebook), code shows uncoloured and cells in the default
alignment, the same text. Tool cards are built in :mod:`kandev_nb.render.card_html` (its names are
also reachable here: ``render.card_body_html`` and so on).
"""

from __future__ import annotations

import html
import json
import math
import re
import threading
from collections import OrderedDict
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from markdown_it import MarkdownIt
from pygments import highlight as _pyg_highlight
from pygments.formatters import HtmlFormatter
from pygments.lexer import Lexer
from pygments.lexers import get_lexer_by_name, get_lexer_for_filename
from pygments.util import ClassNotFound

from kandev_nb.agent import events as ev
from kandev_nb.render import diffs
from kandev_nb.render import theme as th

__all__ = [
    "HIGHLIGHT_MAX_CHARS",
    "PREVIEW_CHARS",
    "PREVIEW_LINES",
    "CodeWarmer",
    "Preview",
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
    "token_parts",
    "without_image_notes",
]

PREVIEW_LINES = 40
"""Lines of a long output shown before "show all"."""
PREVIEW_CHARS = 6000
"""Characters of a long output shown before "show all" (whichever limit is hit first)."""


def esc(value: object) -> str:
    """HTML-escape ``str(value)`` (quotes included)."""
    return html.escape(str(value), quote=True)


# -- numbers ----------------------------------------------------------------------------


def fmt_usd(usd: float) -> str:
    """A cost in USD: ``$0.0123`` below a dollar, ``$1.23`` above; an amount too small for
    four decimals keeps two significant digits (``$0.000042``), never reads ``$0.0000``."""
    if 0 < usd < 0.0001:
        return f"${usd:.{1 - math.floor(math.log10(usd))}f}"
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
        f'<div class="kandev-more" style="color:var(--jp-content-font-color2,#57606a);font-size:90%">'
        f"… {p.hidden_lines:,} more lines "
        f"({size[0]:,} of {size[1]:,} characters shown{hint})</div>"
    )


# -- code, diffs, Markdown --------------------------------------------------------------


@lru_cache(maxsize=1)
def _formatter() -> HtmlFormatter:
    return HtmlFormatter(nowrap=True)  # token classes, mapped to ours by theme.pygments_classes


def _pre(inner: str, cls: str = "kandev-code", extra_style: str = "") -> str:
    style = (
        "margin:0.2em 0;padding:0.4em 0.6em;overflow-x:auto;background:var(--jp-cell-editor-background,#f6f8fa);"
        "color:var(--jp-content-font-color1,#24292f);"
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
    a second per 100 KB; the text is the same). So is code with a carriage return or a
    leading BOM: Pygments would turn the CR into a line break and drop the BOM, while the
    card must mark them (:mod:`kandev_nb.render.reveal`).
    """
    plain = len(code) > HIGHLIGHT_MAX_CHARS or "\r" in code or code.startswith("\ufeff")
    lexer = None if plain else _lexer_for(language, filename)
    if lexer is None:
        return _pre(esc(code), cls)
    return _pre(th.pygments_classes(str(_pyg_highlight(code, lexer, _formatter())).rstrip("\n")), cls)


def diff_html(diff: str) -> str:
    """Unified diff text as a reviewable block: hunks, old line above new, changed words
    marked (:func:`kandev_nb.render.diffs.diff_view`, every row)."""
    return diffs.diff_view(diff, full=True).html


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
    word = lang.split()[0] if lang.strip() else ""
    if word:  # the fence's language, which "Insert as code cell" reads (src/widgets/answer_actions.ts)
        out = out.replace('<pre class="kandev-code"', f'<pre class="kandev-code" data-lang="{esc(word)}"', 1)
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
                        markdown_html(text[self._open[0] : nl + 1])
                        self._open = None
                        self.warmed += 1
            pos = nl + 1
        self.pos = pos


def _image_as_link(self: Any, tokens: Any, idx: int, options: Any, env: Any) -> str:
    """markdown-it's image rule: an inline ``data:image/...`` picture is shown (it fetches
    nothing); any other image becomes a link to it, so showing an answer (live or saved)
    never makes the browser request a URL the model chose (``![x](http://host/?k=SECRET)``)."""
    token = tokens[idx]
    src = str(token.attrGet("src") or "")
    alt = self.renderInlineAsText(token.children or [], options, env)
    if src.lower().startswith("data:image/"):
        return f'<img src="{esc(src)}" alt="{esc(alt)}">'
    return (
        f'<a class="kandev-image-link" href="{esc(src)}" target="_blank" rel="noopener noreferrer" '
        f'title="image not loaded: click to open it">🖼 {esc(alt or "image")} ({esc(src[:120])})</a>'
    )


_ALIGN_STYLE = {f"text-align:{a}": f"kandev-al-{a}" for a in th.TABLE_ALIGN}


def _align_by_class(state: Any) -> None:
    """markdown-it core rule: a table cell's ``style="text-align:..."`` becomes
    ``class="kandev-al-..."`` (:func:`kandev_nb.render.theme.stylesheet` aligns it)."""
    for token in state.tokens:
        if token.type in ("th_open", "td_open") and token.attrs:
            cls = _ALIGN_STYLE.get(str(token.attrs.get("style", "")))
            if cls is not None:
                del token.attrs["style"]
                token.attrs["class"] = cls


HEADING_SHIFT = 3
"""An answer's ``#`` is rendered ``<h4>`` (``##`` ``<h5>``, deeper ``<h6>``): smaller than the
notebook's own titles."""
HEADING_CLASSES = "kandev-heading jp-toc-ignore tocSkip"
"""Classes of an answer's headings: JupyterLab's table of contents skips ``jp-toc-ignore``
and ``tocSkip`` headings of an HTML output, so an answer's "# Summary" never becomes a
section of the user's notebook."""


def _shift_headings(state: Any) -> None:
    """markdown-it core rule: headings move :data:`HEADING_SHIFT` levels down (at most h6)
    and carry :data:`HEADING_CLASSES` and ``kandev-h<original level>``."""
    for token in state.tokens:
        if token.type in ("heading_open", "heading_close") and token.tag[1:].isdigit():
            level = int(token.tag[1:])
            token.tag = f"h{min(level + HEADING_SHIFT, 6)}"
            if token.type == "heading_open":
                token.attrSet("class", f"{HEADING_CLASSES} kandev-h{level}")


@lru_cache(maxsize=1)
def _markdown() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "highlight": _md_highlight})
    md.enable(["table", "strikethrough"])
    md.add_render_rule("image", _image_as_link)
    md.core.ruler.push("kandev_align", _align_by_class)
    md.core.ruler.push("kandev_headings", _shift_headings)
    return md


PART_LINES = 60
"""A long Markdown text (over :data:`PART_MIN_CHARS`) is rendered in parts of about this
many source lines (whole top-level blocks), each a ``<div class="kandev-part">``."""
PART_MIN_CHARS = 12_000


def markdown_html(text: str) -> str:
    """Markdown -> HTML: CommonMark + tables + strikethrough; raw HTML shown as text; images
    shown as links (:func:`_image_as_link`); headings three levels down and out of
    JupyterLab's table of contents (:data:`HEADING_CLASSES`).

    A text longer than :data:`PART_MIN_CHARS` comes in parts (:data:`PART_LINES`), each a
    ``<div class="kandev-part" style="contain-intrinsic-size:auto <height>em">`` holding
    the same HTML as the whole rendering, cut between top-level blocks; the height is an
    estimate from the part's blocks (prose at about 140 characters a line, code and table
    rows one line each). In a saved output the parts away from the screen are not laid
    out (``content-visibility``, :data:`kandev_nb.render.theme.VISIBILITY_RULES`).
    """
    md = _markdown()
    if len(text) <= PART_MIN_CHARS:
        return str(md.render(text))
    env: dict[str, Any] = {}
    tokens = md.parse(text, env)
    out: list[str] = []
    start, first_line, height = 0, 0, 0.0
    for i, token in enumerate(tokens):
        if token.level == 0 and token.nesting == 1 and token.map:
            height += _block_em(token, tokens[i + 1] if i + 1 < len(tokens) else None)
        elif token.level == 0 and token.nesting == 0 and token.map:
            height += _block_em(token, None)
        if token.level != 0 or token.nesting == 1 or not token.map and token.nesting == 0:
            continue
        end_line = _end_line(tokens, i)
        if end_line - first_line >= PART_LINES or i == len(tokens) - 1:
            out.append(_part(md.renderer.render(tokens[start : i + 1], md.options, env), height))
            start, first_line, height = i + 1, end_line, 0.0
    if start < len(tokens):
        out.append(_part(md.renderer.render(tokens[start:], md.options, env), height))
    return "".join(out)


def _end_line(tokens: list[Any], i: int) -> int:
    """The source line after top-level block `i` (a closing or self-contained token)."""
    token = tokens[i]
    if token.map:
        return int(token.map[1])
    for j in range(i - 1, -1, -1):  # a closing token: its opening one has the map
        if tokens[j].level == 0 and tokens[j].nesting == 1 and tokens[j].map:
            return int(tokens[j].map[1])
    return 0


def _block_em(token: Any, inline: Any) -> float:
    """A rough rendered height (em) of the top-level block that `token` opens."""
    lines = int(token.map[1] - token.map[0])
    if token.type in ("fence", "code_block"):
        return lines * 0.85 * 1.35 + 1.2
    if token.type == "table_open":
        return lines * 1.9 + 0.5
    if token.type == "paragraph_open" and inline is not None:
        return (len(inline.content) // 140 + 1) * 1.45 + 0.6
    return lines * 1.6 + 0.6


def _part(html: str, height_em: float) -> str:
    return f'<div class="kandev-part" style="contain-intrinsic-size:auto {height_em:.0f}em">{html}</div>'


# -- tool cards -------------------------------------------------------------------------


def _kv(label: str, value: str, *, nowrap: bool = False) -> str:
    """``label value`` with the label muted; `nowrap`: kept on one line (a footer figure such as
    "model claude-opus-4-5" breaks between figures, never inside one)."""
    muted = "color:var(--jp-content-font-color2,#57606a)"
    one_line = ' style="white-space:nowrap"' if nowrap else ""
    return f'<span class="kandev-kv"{one_line}><span style="{muted}">{esc(label)}</span> {value}</span>'


_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)")


def strip_ansi(text: str) -> str:
    """`text` without terminal colour/cursor escapes (pytest, git... print them); for display only."""
    return _ANSI.sub("", text) if "\x1b" in text else text


_IMAGE_NOTE = re.compile(r"^\[(?:image: image/[\w.+-]+|Image: source: [^\n\]]+)\]\n?", re.MULTILINE)
"""A tool_result's stand-ins for its pictures: our ``[image: image/png]`` (tool_result_text)
and the CLI's ``[Image: source: <its temp file>]`` line."""


def without_image_notes(text: str, images: bool) -> str:
    """A tool's output text as a card shows it: without the pictures' stand-in lines when
    the card shows the pictures themselves (`images`)."""
    return _IMAGE_NOTE.sub("", text).rstrip("\n") if images and "[" in text else text


def _block(label: str, text: str, *, full: bool, where: str, cls: str, style: str = "") -> str:
    text = strip_ansi(text)
    if not text:
        return ""
    p = cut(text) if not full else Preview(text, len(text), 0, 0)
    head = f'<div style="color:var(--jp-content-font-color2,#57606a);font-size:90%">{esc(label)}</div>' if label else ""
    return head + _pre(esc(p.shown), cls, style) + _more_note(p, where)


def details_html(summary: str, body: str, *, open_: bool = False, cls: str = "", inner_style: str = "") -> str:
    """A ``<details>`` element with an HTML `summary` and `body`."""
    attr = " open" if open_ else ""
    return (
        f'<details class="{esc(cls)}"{attr} style="margin:0.3em 0;'
        f"border:1px solid var(--jp-border-color2,#d0d7de);border-radius:6px;"
        f'padding:0.2em 0.6em"><summary style="cursor:pointer">{summary}</summary>'
        f'<div style="{inner_style}">{body}</div></details>'
    )


# -- footer and gauges ------------------------------------------------------------------


_NOWRAP = ' style="white-space:nowrap"'
"""The context gauge stays on one line: bar, figures and percentage (it wrapped in a narrow header)."""


def context_html(ctx: ev.ContextWindow | None) -> str:
    """The context-window gauge: a bar and ``used / size tokens (pct)``; "" if unknown."""
    if ctx is None or not ctx.size:
        return ""
    if not ctx.size_known:  # no result has said the window's size yet: never a guessed "/ 200.0k"
        return f'<span class="kandev-context" title="context window"{_NOWRAP}>context {fmt_tokens(ctx.used)}</span>'
    frac = min(ctx.used / ctx.size, 1.0)
    color = (
        "var(--jp-success-color1,#1a7f37)"
        if frac < 0.6
        else "var(--jp-warn-color1,#9a6700)"
        if frac < 0.85
        else "var(--jp-error-color1,#cf222e)"
    )
    return (
        f'<span class="kandev-context" title="context window"{_NOWRAP}>'
        f'<span style="display:inline-block;width:80px;height:8px;'
        f"background:var(--jp-layout-color3,#eaeef2);border-radius:4px;"
        f'vertical-align:middle;overflow:hidden"><span style="display:block;height:8px;width:{frac * 100:.1f}%;'
        f'background:{color}"></span></span> context {fmt_tokens(ctx.used)} / {fmt_tokens(ctx.size)} '
        f"({frac:.0%})</span>"
    )


def token_parts(stats: ev.TurnStats) -> list[str]:
    """``["in 1.2k", "out 300", "cache read 12.0k", "cache write 800"]``: the turn's tokens by
    kind, the cache figures only when not 0 (most turns without prompt caching have none)."""
    parts = [f"in {fmt_tokens(stats.input_tokens)}", f"out {fmt_tokens(stats.output_tokens)}"]
    if stats.cache_read_input_tokens:
        parts.append(f"cache read {fmt_tokens(stats.cache_read_input_tokens)}")
    if stats.cache_creation_input_tokens:
        parts.append(f"cache write {fmt_tokens(stats.cache_creation_input_tokens)}")
    return parts


def stats_html(stats: ev.TurnStats, ctx: ev.ContextWindow | None = None, *, interrupted: bool = False) -> str:
    """The footer: cost (USD), tokens (input, output, cache read, cache creation), durations
    (ms from `result.duration_ms` / `duration_api_ms`), API turns (`num_turns`), context gauge."""
    items = [
        _kv("cost", f"<b>{fmt_usd(stats.cost_usd)}</b>", nowrap=True),
        _kv("tokens", " · ".join(token_parts(stats)), nowrap=True),
        _kv("time", f"{fmt_ms(stats.duration_ms)} (API {fmt_ms(stats.duration_api_ms)})", nowrap=True),
        _kv("API turns", str(stats.num_turns), nowrap=True),
    ]
    if stats.model:
        items.append(_kv("model", esc(stats.model), nowrap=True))
    gauge = context_html(ctx)
    if gauge:
        items.append(gauge)
    state = ""
    if interrupted:
        state = '<b class="kandev-stopped" style="color:var(--jp-warn-color1,#9a6700)">■ stopped by you</b> · '
    elif stats.is_error:
        head, said, advice = failure_parts(stats)
        state = (
            f'<b class="kandev-failed" style="color:var(--jp-error-color1,#cf222e)">✗ {esc(head)}</b>'
            + (f": {esc(said)}" if said else "")
            + f" · {esc(advice)} · "
        )
    return (
        f'<div class="kandev-footer" style="color:var(--jp-content-font-color2,#57606a);font-size:90%;'
        f"border-top:1px solid var(--jp-border-color2,#d0d7de);"
        f'padding-top:0.3em;margin-top:0.3em">{state}{" · ".join(items)}</div>'
    )


_WHY = {
    "error_max_turns": ("the turn limit", "raise --max-turns and send it again"),
    "error_max_budget_usd": ("the budget", "raise --budget and send it again"),
    "cli_exited": ("Claude Code exited", "%%claude --retry sends it again"),
    "inactivity_timeout": ("no message from Claude Code", "%%claude --retry sends it again"),
    "interrupt_timeout": ("no answer to the interrupt", "%%claude --retry sends it again"),
    "unreadable_result": ("an unreadable result", "%%claude --retry sends it again"),
}
_API_STATUS = re.compile(r"API Error: (\d{3})")


def failure_parts(stats: ev.TurnStats) -> tuple[str, str, str]:
    """What a failed turn's footer says: ``("failed (API 529)", the CLI's text, what to do)``.
    The reason is the HTTP status of `result.api_error_status` (or the "API Error: NNN" of
    `result.result`), else the `result.subtype`; the CLI's text is the first line of
    `result.result` or `result.errors` (at most 200 characters); a failed `result` whose
    subtype says "success" (an API error) never reads "success"."""
    said = (stats.result_text or "\n".join(stats.errors) or "").strip().split("\n", 1)[0]
    said = said if len(said) <= 200 else said[:199] + "…"
    found = _API_STATUS.search(stats.result_text or "")
    status = stats.api_error_status or (int(found.group(1)) if found else None)
    subtype = stats.result_subtype or ""
    if status:
        return f"failed (API {status})", said, "%%claude --retry sends it again"
    why, advice = _WHY.get(subtype, ("" if subtype in ("", "success", "error_during_execution") else subtype, ""))
    return (f"failed ({why})" if why else "failed"), said, advice or "%%claude --retry sends it again"


def budget_html(spent_usd: float, budget_usd: float, scope: str | None = None) -> str:
    """One line: the spend (USD, this turn included) against the budget (USD) of `scope` ("user ana, today")."""
    whose = f" of {esc(scope)}" if scope else ""  # MathJax (3: mathjax_ignore, 2: tex2jax_ignore) would typeset "$..$"
    return (
        '<div class="kandev-budget tex2jax_ignore mathjax_ignore" '
        'style="color:var(--jp-content-font-color2,#57606a);font-size:85%">'
        f"spent {fmt_usd(spent_usd)} of the "
        f"{fmt_usd(budget_usd)} budget{whose} ({spent_usd / budget_usd:.1%})</div>"
    )


def json_html(value: Any, *, full: bool = True) -> str:
    """A JSON value pretty-printed and coloured."""
    text = json.dumps(value, indent=2, ensure_ascii=False, default=str)
    return code_html(text if full else cut(text).shown, "json")


_CARD_NAMES = frozenset(
    {
        "approval_note_html",
        "card_body_html",
        "card_summary_html",
        "decided_by_text",
        "diff_is_cut",
        "is_cut",
        "modify_file_html",
        "status_icon",
        "todos_html",
        "tool_label",
        "where_expr",
    }
)


def __getattr__(name: str) -> Any:
    """The tool-card builders of :mod:`kandev_nb.render.card_html`, under their old home."""
    if name in _CARD_NAMES:
        from kandev_nb.render import card_html

        return getattr(card_html, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
