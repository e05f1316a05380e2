"""Characters a card must not let hide code: invisible, direction-changing, unencodable.

A tool card shows the text a tool will run or has run (a command, code, a cell's source, a
diff, a path). Some characters change what that text *looks* like without being seen:

* bidi controls (U+202A-202E, U+2066-2069, U+200E/U+200F, U+061C): "Trojan Source"
  (CVE-2021-42574), a live ``shutil.rmtree("data")`` displayed inside a string;
* zero-width and invisible characters (U+200B-200D, U+2060-2064, U+FEFF, U+00AD, U+180E,
  fillers such as U+3164, variation selectors, the Unicode "tag" characters U+E0000-E007F
  that carry hidden ASCII): Unicode's Default_Ignorable_Code_Point, whole;
* controls (C0 and C1 but TAB and LF: CR, backspace, ESC rewrite what a stream output or a
  terminal shows), the line/paragraph separators U+2028/2029, the braille blank U+2800
  (:data:`HIDDEN_RANGES`).

:func:`reveal_html` replaces each of them in rendered card HTML by a highlighted, visible
``<U+2067>`` token (text nodes) or a plain ``U+2067`` (attribute values) and counts them;
:func:`warning_html` / :func:`warning_markdown` are the card's warning line;
:func:`reveal_text` does the same for Markdown (``⟨U+2067⟩``: no HTML or Markdown meaning).
:func:`wrap_pre_html` hard-wraps long lines of ``<pre>`` blocks with a visible continuation
mark (the approval card: ``import pandas as pd`` + 220 spaces + ``;__import__(...)`` no
longer hides beyond the output's width).

:func:`displayable` is the display boundary for lone surrogates (``\\ud800``): JSON allows
them, Python keeps them in ``str``, but UTF-8 (jupyter_client's messages) cannot encode
them; the event keeps the raw text, what is displayed gets U+FFFD.

Pure functions, importable without a kernel.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable

__all__ = [
    "HIDDEN",
    "HIDDEN_RANGES",
    "WRAP_COLUMNS",
    "displayable",
    "hidden_js_class",
    "reveal_code_blocks",
    "reveal_html",
    "reveal_text",
    "warning_html",
    "warning_markdown",
    "wrap_pre_html",
]

HIDDEN_RANGES: tuple[tuple[int, int], ...] = (
    # Cc, the C0 and C1 controls, except TAB and LF: CR, backspace and ESC (ANSI escapes)
    # rewrite what a terminal or a stream output shows, NUL and the rest show nothing.
    (0x0000, 0x0008),
    (0x000B, 0x001F),
    (0x007F, 0x009F),
    # Unicode's Default_Ignorable_Code_Point (DerivedCoreProperties.txt), whole.
    (0x00AD, 0x00AD),
    (0x034F, 0x034F),
    (0x061C, 0x061C),
    (0x115F, 0x1160),
    (0x17B4, 0x17B5),
    (0x180B, 0x180F),
    (0x200B, 0x200F),
    (0x202A, 0x202E),
    (0x2060, 0x206F),
    (0x3164, 0x3164),
    (0xFE00, 0xFE0D),  # U+FE0E/U+FE0F (text/emoji presentation) are left alone: emoji use them
    (0xFEFF, 0xFEFF),
    (0xFFA0, 0xFFA0),
    (0xFFF0, 0xFFF8),
    (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A),
    (0xE0000, 0xE0FFF),
    # Zl, Zp: line and paragraph separators (a line break to some renderers, nothing to others).
    (0x2028, 0x2029),
    # Not ignorable but blank: the interlinear annotation marks, the braille blank.
    (0xFFF9, 0xFFFB),
    (0x2800, 0x2800),
)
"""The code points of :data:`HIDDEN`, as inclusive ranges (the one list: the JavaScript
copies in ``src/widgets/answer_actions.ts`` and ``stream_text.ts`` are :func:`hidden_js_class`, which a
test checks)."""


def _class_item(lo: int, hi: int, esc: Callable[[int], str]) -> str:
    return esc(lo) if lo == hi else f"{esc(lo)}-{esc(hi)}"


def _py_escape(cp: int) -> str:
    return f"\\x{cp:02x}" if cp < 0x100 else f"\\u{cp:04x}" if cp < 0x10000 else f"\\U{cp:08x}"


def hidden_js_class() -> str:
    """:data:`HIDDEN_RANGES` as the source of a JavaScript character class (for a ``u`` regex),
    as the JavaScript copies spell it: ``[\\u0000-\\u0008...\\u{e0000}-\\u{e0fff}]``."""

    def esc(cp: int) -> str:
        return f"\\u{cp:04x}" if cp < 0x10000 else f"\\u{{{cp:x}}}"

    return "[" + "".join(_class_item(lo, hi, esc) for lo, hi in HIDDEN_RANGES) + "]"


HIDDEN = re.compile("[" + "".join(_class_item(lo, hi, _py_escape) for lo, hi in HIDDEN_RANGES) + "]")
"""One invisible, direction-changing or control character (see the module's docstring):
:data:`HIDDEN_RANGES`."""

_SURROGATE = re.compile("[\ud800-\udfff]")
_TAG = re.compile(r"(<[^>]*>)")
_MARK_STYLE = (
    "background:var(--jp-warn-color3,#fff8c5);color:var(--jp-warn-color0,#7d4e00);"
    "border:1px solid var(--jp-warn-color1,#9a6700);border-radius:3px;padding:0 1px;font-weight:bold"
)


def code_name(ch: str) -> str:
    """``U+2067`` for a character (four hex digits at least)."""
    return f"U+{ord(ch):04X}"


def displayable(text: str) -> str:
    """`text` with every lone surrogate (U+D800-U+DFFF, which UTF-8 cannot encode) as U+FFFD.

    Used where text leaves the kernel for the frontend (a turn's mime bundle, a widget's
    value, a stream widget's message); events keep the text they were given.
    """
    return _SURROGATE.sub("\ufffd", text) if not text.isascii() else text


def _mark_html(ch: str) -> str:
    name = unicodedata.name(ch, "")
    title = f"{code_name(ch)} {name}".strip() + ": invisible or direction-changing character"
    return f'<span class="kandev-invisible" style="{_MARK_STYLE}" title="{title}">&lt;{code_name(ch)}&gt;</span>'


def reveal_html(html: str) -> tuple[str, list[str]]:
    """`html` (markup this package built: every ``>`` inside an attribute value is escaped)
    with each :data:`HIDDEN` character made visible.

    In text, a character becomes a highlighted ``<span class="kandev-invisible">&lt;U+2067&gt;</span>``;
    inside a tag (an attribute value: a link's href, a title) it becomes the plain text
    ``U+2067``, so no markup lands in an attribute.

    Returns:
        (the new HTML, the characters found, in order; empty when there were none).
    """
    if not HIDDEN.search(html):
        return html, []
    found: list[str] = []

    def text(m: re.Match[str]) -> str:
        found.append(m.group(0))
        return _mark_html(m.group(0))

    def attr(m: re.Match[str]) -> str:
        found.append(m.group(0))
        return code_name(m.group(0))

    pieces = _TAG.split(html)
    for i, piece in enumerate(pieces):
        if piece:
            pieces[i] = HIDDEN.sub(attr if i % 2 else text, piece)
    return "".join(pieces), found


def reveal_text(text: str) -> tuple[str, list[str]]:
    """`text` with each :data:`HIDDEN` character as ``⟨U+2067⟩`` (for Markdown: the brackets
    U+27E8/U+27E9 mean nothing to Markdown or HTML). Returns (the text, the characters found)."""
    if not HIDDEN.search(text):
        return text, []
    found: list[str] = []

    def sub(m: re.Match[str]) -> str:
        found.append(m.group(0))
        return f"⟨{code_name(m.group(0))}⟩"

    return HIDDEN.sub(sub, text), found


def _summary(found: list[str]) -> tuple[str, str]:
    """("2 invisible or direction-changing characters", "U+2067, U+2069")."""
    n = len(found)
    kinds = list(dict.fromkeys(code_name(c) for c in found))
    listed = ", ".join(kinds[:8]) + (", …" if len(kinds) > 8 else "")
    return f"{n} invisible or direction-changing character{'s' if n != 1 else ''}", listed


def warning_html(found: list[str]) -> str:
    """The card's warning line for the characters :func:`reveal_html` found ("" for none)."""
    if not found:
        return ""
    what, listed = _summary(found)
    return (
        '<div class="kandev-invisible-warning" style="color:var(--jp-error-color1,#cf222e);font-weight:bold;'
        'margin:0.2em 0">⚠ This input contains '
        f'{what}, shown as <span style="{_MARK_STYLE}">&lt;U+…&gt;</span> ({listed}). '
        "Read it as shown: the text may not do what it seems to.</div>"
    )


def warning_markdown(found: list[str]) -> str:
    """The warning line of :func:`warning_html`, as Markdown ("" for none)."""
    if not found:
        return ""
    what, listed = _summary(found)
    return f"**⚠ This input contains {what}, shown as ⟨U+…⟩ ({listed}).**\n\n"


WRAP_COLUMNS = 100
"""Approval cards break code lines longer than this many characters, with a mark."""

_PRE = re.compile(r"(<pre\b[^>]*>)(.*?)(</pre>)", re.DOTALL)
_WS_PRE = re.compile(r"white-space:\s*pre(?![-\w])")
_TOKEN = re.compile(r"<[^>]*>|&[#\w]+;|[^<&]")
_WRAP_MARK = (
    '<span class="kandev-wrap" style="color:var(--jp-warn-color1,#9a6700);user-select:none;font-weight:bold" '
    'title="the line goes on below">↩</span>\n'
    '<span class="kandev-wrap" style="color:var(--jp-warn-color1,#9a6700);user-select:none;font-weight:bold" '
    'title="continued from the line above">↪ </span>'
)


def _wrap_body(body: str, width: int) -> str:
    out: list[str] = []
    col = 0
    for tok in _TOKEN.findall(body):
        if tok.startswith("<"):
            if tok.startswith('<span class="kandev-diff-'):  # a diff row is a block: a new line
                col = 0
            out.append(tok)
            continue
        if tok == "\n":
            col = 0
            out.append(tok)
            continue
        if col >= width:  # more of this line is coming: break it here, visibly
            out.append(_WRAP_MARK)
            col = 2
        out.append(tok)
        col += 1
    return "".join(out)


def wrap_pre_html(html: str, width: int = WRAP_COLUMNS) -> str:
    """Every ``<pre>`` block of `html` with lines longer than `width` characters broken: a
    ``↩`` at the break and a ``↪`` starting the rest (spans ``kandev-wrap``, not selectable),
    and its ``white-space:pre`` made ``pre-wrap`` (with ``overflow-wrap:anywhere``) so that a
    narrower output wraps too instead of hiding the rest behind a scroll bar."""

    def one(m: re.Match[str]) -> str:
        head = _WS_PRE.sub("white-space:pre-wrap;overflow-wrap:anywhere", m.group(1))
        return head + _wrap_body(m.group(2), width) + m.group(3)

    return _PRE.sub(one, html)


_CODE_BLOCK = re.compile(r'<pre\b[^>]*\bclass="kandev-code"[^>]*>.*?</pre>', re.DOTALL)


def reveal_code_blocks(html: str) -> str:
    """Every ``<pre class="kandev-code">`` block of `html` (an answer's fenced code) with its
    :data:`HIDDEN` characters made visible (:func:`reveal_html`) under the card's warning line
    (:func:`warning_html`), as a card shows them (issue 32, point 6). The marks are
    ``span.kandev-invisible``: the tab's "Insert as code cell below" and "Copy" leave them out."""
    if not HIDDEN.search(html):
        return html

    def one(m: re.Match[str]) -> str:
        block, found = reveal_html(m.group(0))
        return warning_html(found) + block if found else block

    return _CODE_BLOCK.sub(one, html)
