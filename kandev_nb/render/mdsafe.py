"""Markdown that is safe to save: what a turn's ``text/markdown`` part is built from.

A saved notebook keeps a ``text/markdown`` copy of every turn beside ``text/html``; a
frontend that renders the Markdown one (JupyterLab after a reload, nbconvert, a viewer)
would interpret raw HTML in it. The ``text/html`` part renders agent text with raw HTML
shown as text (markdown-it, ``html=False``); this module gives the Markdown part the same
guarantee:

* :func:`safe_markdown` for Markdown written by the model (answers, thinking, plans,
  subagent results): outside fenced code and code spans, ``&`` and ``<`` become entities
  (no tag, comment, autolink or entity survives), link targets other than http(s), mailto,
  anchors and relative paths are replaced by ``#blocked-link``, ``$`` is ``\\$`` (a dollar
  sign, not LaTeX math, in renderers that typeset it), reference definitions
  (``[r]: url``) are escaped into text, and images become plain links (``![x](url)`` ->
  ``!\\[x](url)``), so opening the notebook fetches nothing. Lines are split where a renderer
  splits them (``\\r`` too), and only code spans a renderer surely sees are kept as they are.
* :func:`plain` for a value that is not Markdown (a todo item, a command's description):
  escaped so that it shows as the text it is.
* :func:`code_span` for a value shown as inline code (a path, a pattern).
* :func:`escape_math` for Markdown a person keeps as their own (an answer inserted as a
  Markdown cell): only ``$`` outside code is escaped (as ``\\\\$``, which JupyterLab's
  MathJax shows as a dollar), by the same reading of code blocks and spans as
  :func:`safe_markdown`.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from functools import lru_cache
from html.parser import HTMLParser

from markdown_it import MarkdownIt

__all__ = ["code_span", "escape_math", "one_line", "plain", "remote_urls", "safe_markdown"]

_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})(.*)")
_CODE_SPAN = re.compile(r"(?<![`\\])(`+)(?!`)([^|]+?)(?<!`)\1(?!`)")
"""A code span as surely as a renderer sees one (what it matches is kept as it is): a whole
run of backticks as opener (not one cut from a longer run, not an escaped ``\\```), and no
``|`` inside (a GFM table splits its cells there first). Anything else is escaped as prose."""
_INLINE_DEST = re.compile(r"(\]\(\s*)([^\s)]*)")
_REF_DEF = re.compile(r"^( {0,3}\[[^\]]+\]:\s*)(\S+)")
_SAFE_DEST = re.compile(r"^(https?://|mailto:|#|/|\./|\.\./|[^:]*$)", re.IGNORECASE)
_CONTROL = re.compile(r"[\x00-\x20\\]")
_REF_COLON = re.compile(r"(?<!\\)((?:\\\\)*)\](?=:)")  # an unescaped ] right before :
_OPEN_DEST = re.compile(r"(?<!\\)((?:\\\\)*)\]\((\s*)$")  # an unescaped ]( ending the text
_EOL = re.compile(r"\r\n?|\n")
"""A line ending as Markdown reads it: ``\\n``, ``\\r\\n`` or a lone ``\\r``."""


def _dest(url: str) -> str:
    """`url` if it is a safe link target, else ``#blocked-link`` (checked with entities
    decoded and backslashes, spaces and control characters removed, as a browser might)."""
    seen = url
    for _ in range(3):
        seen = html.unescape(seen)
    return url if _SAFE_DEST.match(_CONTROL.sub("", seen)) else "#blocked-link"


def _prose(text: str) -> str:
    text = text.replace("&", "&amp;").replace("<", "&lt;")
    text = text.replace("![", "!\\[").replace("$", "\\$")  # a dollar, never LaTeX math (issue 28.5)
    # No reference definition forms (``]`` right before ``:`` escaped): its destination may
    # be on the next line, or the definition inside a quote or list, out of _REF_DEF's sight.
    text = _REF_COLON.sub(r"\1\\]", text)
    text = _OPEN_DEST.sub(r"\1\\](\2", text)  # a destination on the next line: no link
    return _INLINE_DEST.sub(lambda m: m.group(1) + _dest(m.group(2)), text)


_DOLLAR = re.compile(r"(?<!\\)\\?\$")
"""A ``$`` after no backslash, or after one (``\\$``: a Markdown escape, not MathJax's)."""


def _dollars(text: str) -> str:
    """Prose with each ``$`` written ``\\\\$`` (see :func:`escape_math`); one written so, or
    after more backslashes, is left as it is."""
    return _DOLLAR.sub(lambda _m: "\\\\$", text)


Prose = Callable[[str], str]


def _line(line: str, spans: bool = True, prose: Prose = _prose) -> tuple[str, bool]:
    """The line with its prose made safe (`prose`: :func:`_prose`, or :func:`_dollars` for
    :func:`escape_math`), and whether a backtick was left in its prose (it may open a code
    span that a later line closes). `spans`: keep code spans as they are (else all prose)."""
    if prose is _prose:
        line = _REF_DEF.sub(lambda m: m.group(1) + _dest(m.group(2)), line)
    out: list[str] = []
    pos = 0
    left = False
    for m in _CODE_SPAN.finditer(line) if spans else ():
        left = left or "`" in line[pos : m.start()]
        out.append(prose(line[pos : m.start()]))
        out.append(m.group(0))
        pos = m.end()
    left = left or "`" in line[pos:]
    out.append(prose(line[pos:]))
    return "".join(out), left


def safe_markdown(text: str) -> str:
    """Model-written Markdown with its raw HTML, unsafe links and images made harmless.

    Fenced code blocks and code spans are kept as they are (Markdown shows them
    literally). Everything else keeps its Markdown meaning (emphasis, lists, tables,
    http(s) links), but ``<script>``, ``<img onerror=...>``, ``javascript:`` links and
    remote images do nothing when rendered.

    Which lines are code is decided by what a CommonMark parser will see in the result: a
    fence inside a list item or a quote ends with its container (``- a`` / ```` ``` ```` /
    ``- b`` closes the fence at ``- b``), so a text with both fences and containers is
    split by markdown-it-py's block parser (:func:`_by_parser`); other texts by a line scan
    that tracks top-level fences as CommonMark does.
    """
    return _scan(text, _prose)


def escape_math(text: str) -> str:
    """`text` (Markdown) with every ``$`` outside code written ``\\\\$``, so that a Markdown
    cell shows it as a dollar in JupyterLab and Notebook 7, never as LaTeX math; code blocks
    and code spans (read as :func:`safe_markdown` reads them) and nothing else change.

    For an answer inserted as a Markdown cell ("Insert as Markdown cell below"): "from $41.5k
    in July to $61k". Why two backslashes (measured in JupyterLab 4.6 in Chromium,
    tests/browser/test_answers_in_lab.py): the cell's Markdown parser turns a plain ``\\$``
    into ``$`` before MathJax reads the page, and MathJax then pairs the dollars as math;
    ``\\\\$`` reaches the page as ``\\$``, which MathJax (``processEscapes``, as JupyterLab
    configures it) shows as a dollar, and bold or links around it still render (wrapping the
    cell in a ``tex2jax_ignore`` block does not: JupyterLab cuts the text between two dollars
    out before parsing the Markdown). A renderer without MathJax shows ``\\$41.5k``.
    """
    return _scan(text, _dollars, keep_lines=True)


def _scan(text: str, prose: Prose, keep_lines: bool = False) -> str:
    """`text` with `prose` applied to what is not code (see :func:`safe_markdown`);
    `keep_lines`: keep each line's own ending (``\r\n`` too), else ``\n``."""
    if keep_lines:  # the same lines as below, with their own endings put back
        ends = _EOL.findall(text)
        lines = _scan(text, prose).split("\n")
        return "".join(line + (ends[i] if i < len(ends) else "") for i, line in enumerate(lines))
    lines = _EOL.sub("\n", text).split("\n")
    if ("```" in text or "~~~" in text) and _CONTAINER.search(text):
        return "\n".join(_by_parser(lines, prose))
    out: list[str] = []
    fence: tuple[str, int] | None = None
    # A backtick left open on an earlier line of the paragraph may pair with one on this
    # line (a code span across lines): then this line's spans are not trusted, all is prose.
    open_tick = False
    # A lone CR ends a Markdown line too: split where the renderer will, or a code span
    # seen here across "\r\r" (a blank line there) would let raw HTML through.
    for line in lines:
        m = _FENCE.match(line)
        if fence is not None:
            out.append(line)
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= fence[1] and not m.group(2).strip():
                fence = None
            continue
        if m and not (m.group(1)[0] == "`" and "`" in m.group(2)):
            fence = (m.group(1)[0], len(m.group(1)))
            out.append(line)
            open_tick = False
            continue
        if not line.strip():  # a blank line ends the paragraph
            open_tick = False
        safe, left = _line(line, spans=not open_tick, prose=prose)
        open_tick = open_tick or left
        out.append(safe)
    return "\n".join(out)


_CONTAINER = re.compile(r"^[ \t]*(>|[-*+][ \t]|\d{1,9}[.)][ \t])", re.MULTILINE)
"""A line that opens a block quote or a list item (a container a fence may sit in)."""


@lru_cache(maxsize=1)
def _blocks() -> MarkdownIt:
    """markdown-it-py's CommonMark block parser (tables on, as the renderers have them),
    without the inline pass: only which lines are code blocks is read from it."""
    md = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])
    md.core.ruler.disable(["inline", "text_join"])
    return md


def _code_lines(text: str) -> tuple[set[int], bool]:
    """The 0-based line numbers that a CommonMark parser reads as code (fenced or indented
    code blocks, inside any list or quote), fence lines included; and whether the text has
    blocks that escaping its prose can remove (an HTML block, a link reference definition),
    which may change what the lines around them are."""
    lines: set[int] = set()
    env: dict[str, object] = {}
    fragile = False
    for token in _blocks().parse(text, env):
        if token.type in ("fence", "code_block") and token.map:
            lines.update(range(token.map[0], token.map[1]))
        fragile = fragile or token.type == "html_block"
    return lines, fragile or bool(env.get("references"))


def _escape_lines(lines: list[str], code: set[int], prose: Prose = _prose) -> list[str]:
    """`lines` with every line outside `code` made safe prose (code spans kept when sure)."""
    out: list[str] = []
    open_tick = False
    for i, line in enumerate(lines):
        if i in code:
            out.append(line)
            open_tick = False
            continue
        if not line.strip():
            open_tick = False
        safe, left = _line(line, spans=not open_tick, prose=prose)
        open_tick = open_tick or left
        out.append(safe)
    return out


def _by_parser(lines: list[str], prose: Prose = _prose) -> list[str]:
    """The lines made safe, keeping as they are only lines the parser reads as code in the
    *result*. Escaping prose can change the blocks around it only where it removes an HTML
    block or a reference definition (a paragraph then swallows an indented line that was
    code): then the result is parsed again, the kept set shrinks to what it still reads as
    code, and is checked again; an empty set keeps nothing."""
    code, fragile = _code_lines("\n".join(lines))
    if not fragile or prose is not _prose:  # escaping prose creates or removes no block here
        return _escape_lines(lines, code, prose)
    for _ in range(4):
        out = _escape_lines(lines, code)
        seen, _fragile = _code_lines("\n".join(out))
        if code <= seen:
            return out
        code &= seen
    return _escape_lines(lines, set())


_PLAIN = re.compile(r"([\\`*_{}\[\]()#+\-.!|~>$])")


def one_line(text: str) -> str:
    """`text` with each line ending (``\\n``, ``\\r\\n``, ``\\r``: all three end a Markdown line) as a space."""
    return _EOL.sub(" ", text)


def plain(text: str) -> str:
    """`text` as literal Markdown text: HTML-escaped, Markdown punctuation backslashed,
    line endings (``\\n``, ``\\r``) as spaces (for one-line values: todo items, descriptions, URLs)."""
    text = one_line(text)
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _PLAIN.sub(r"\\\1", text)


def code_span(text: str) -> str:
    """`text` as one inline code span that no backtick in it can close early (line endings
    as spaces: a blank line would end the span's paragraph)."""
    text = one_line(text)
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    ticks = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or not text.strip() else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


_REMOTE = re.compile(r"^\s*(https?:)?//", re.IGNORECASE)
_CSS_URL = re.compile(r"url\(\s*['\"]?([^'\")]+)", re.IGNORECASE)
_LOADING_ATTRS = frozenset({"src", "srcset", "poster", "data", "background", "lowsrc", "dynsrc", "xlink:href"})


class _Loads(HTMLParser):
    """Collects the URLs raw HTML would make a browser fetch (``src``, ``srcset``, ``poster``,
    ``<link href>``, CSS ``url(...)`` in ``style``)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.urls: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if not value:
                continue
            if name in _LOADING_ATTRS or (tag == "link" and name == "href"):
                self.urls += [part.strip().split(" ")[0] for part in value.split(",")] if name == "srcset" else [value]
            elif name == "style":
                self.urls += _CSS_URL.findall(value)

    def handle_data(self, data: str) -> None:  # a <style> element's text
        if self.lasttag == "style":
            self.urls += _CSS_URL.findall(data)


def remote_urls(markdown: str) -> tuple[str, ...]:
    """The remote URLs (``http(s)://`` or ``//host``) that rendering `markdown` with raw HTML
    allowed would load by itself: Markdown images (``![x](http://...)``) and the loading
    attributes of raw HTML (``<img src>``, ``srcset``, ``<iframe>``, ``<video poster>``,
    ``<link href>``, CSS ``url()``). JupyterLab renders a Markdown *cell* so, with remote
    images kept by its sanitizer: the tab requests each of them when the cell is rendered,
    and again whenever the notebook is opened. Links (``[x](url)``) load nothing and are
    not listed. In order of appearance, each once."""
    md = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])
    found: list[str] = []
    loads = _Loads()
    stack = list(md.parse(markdown))
    while stack:
        token = stack.pop(0)
        if token.type == "image":
            found.append(str(token.attrGet("src") or ""))
        elif token.type in ("html_block", "html_inline"):
            loads.feed(token.content)
        if token.children:
            stack[0:0] = token.children
    loads.close()
    found += loads.urls
    return tuple(dict.fromkeys(u for u in found if _REMOTE.match(u)))
