"""Markdown that is safe to save: what a turn's ``text/markdown`` part is built from.

A saved notebook keeps a ``text/markdown`` copy of every turn beside ``text/html``; a
frontend that renders the Markdown one (JupyterLab after a reload, nbconvert, a viewer)
would interpret raw HTML in it. The ``text/html`` part renders agent text with raw HTML
shown as text (markdown-it, ``html=False``); this module gives the Markdown part the same
guarantee:

* :func:`safe_markdown` for Markdown written by the model (answers, thinking, plans,
  subagent results): outside fenced code and code spans, ``&`` and ``<`` become entities
  (no tag, comment, autolink or entity survives), link targets other than http(s), mailto,
  anchors and relative paths are replaced by ``#blocked-link``, and images become plain
  links (``![x](url)`` -> ``!\\[x](url)``), so opening the notebook fetches nothing.
* :func:`plain` for a value that is not Markdown (a todo item, a command's description):
  escaped so that it shows as the text it is.
* :func:`code_span` for a value shown as inline code (a path, a pattern).
"""

from __future__ import annotations

import html
import re

__all__ = ["code_span", "plain", "safe_markdown"]

_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})(.*)")
_CODE_SPAN = re.compile(r"(`+)(.+?)(?<!`)\1(?!`)")
_INLINE_DEST = re.compile(r"(\]\(\s*)([^\s)]*)")
_REF_DEF = re.compile(r"^( {0,3}\[[^\]]+\]:\s*)(\S+)")
_SAFE_DEST = re.compile(r"^(https?://|mailto:|#|/|\./|\.\./|[^:]*$)", re.IGNORECASE)
_CONTROL = re.compile(r"[\x00-\x20\\]")


def _dest(url: str) -> str:
    """`url` if it is a safe link target, else ``#blocked-link`` (checked with entities
    decoded and backslashes, spaces and control characters removed, as a browser might)."""
    seen = url
    for _ in range(3):
        seen = html.unescape(seen)
    return url if _SAFE_DEST.match(_CONTROL.sub("", seen)) else "#blocked-link"


def _prose(text: str) -> str:
    text = text.replace("&", "&amp;").replace("<", "&lt;")
    text = text.replace("![", "!\\[")
    return _INLINE_DEST.sub(lambda m: m.group(1) + _dest(m.group(2)), text)


def _line(line: str) -> str:
    line = _REF_DEF.sub(lambda m: m.group(1) + _dest(m.group(2)), line)
    out: list[str] = []
    pos = 0
    for m in _CODE_SPAN.finditer(line):
        out.append(_prose(line[pos : m.start()]))
        out.append(m.group(0))
        pos = m.end()
    out.append(_prose(line[pos:]))
    return "".join(out)


def safe_markdown(text: str) -> str:
    """Model-written Markdown with its raw HTML, unsafe links and images made harmless.

    Fenced code blocks and code spans are kept as they are (Markdown shows them
    literally). Everything else keeps its Markdown meaning (emphasis, lists, tables,
    http(s) links), but ``<script>``, ``<img onerror=...>``, ``javascript:`` links and
    remote images do nothing when rendered.
    """
    out: list[str] = []
    fence: tuple[str, int] | None = None
    for line in text.split("\n"):
        m = _FENCE.match(line)
        if fence is not None:
            out.append(line)
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= fence[1] and not m.group(2).strip():
                fence = None
            continue
        if m and not (m.group(1)[0] == "`" and "`" in m.group(2)):
            fence = (m.group(1)[0], len(m.group(1)))
            out.append(line)
            continue
        out.append(_line(line))
    return "\n".join(out)


_PLAIN = re.compile(r"([\\`*_{}\[\]()#+\-.!|~>])")


def plain(text: str) -> str:
    """`text` as literal Markdown text: HTML-escaped, Markdown punctuation backslashed,
    newlines as spaces (for one-line values: todo items, descriptions, URLs)."""
    text = " ".join(text.split("\n"))
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _PLAIN.sub(r"\\\1", text)


def code_span(text: str) -> str:
    """`text` as one inline code span that no backtick in it can close early."""
    text = " ".join(text.split("\n"))
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    ticks = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or not text.strip() else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"
