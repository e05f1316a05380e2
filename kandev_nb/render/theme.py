"""Colours of the cards, as JupyterLab theme variables with light fallbacks.

Every colour in the live widgets and in the saved ``text/html`` is one of these CSS values:
``var(--jp-..., <light value>)``. Inside JupyterLab (live, or a saved notebook reopened) the
theme defines the variables, so the light and the dark theme both read well; where they are
absent (nbconvert HTML, GitHub's viewer) the light fallback applies. Diff backgrounds are
translucent, so they read on any background.

Pygments colours code by CSS class; :func:`pygments_inline` turns its classes into inline
``color:var(--jp-mirror-editor-...)`` styles (the editor's own token colours), so saved
HTML needs no ``<style>`` element.
"""

from __future__ import annotations

import re
from functools import lru_cache

from pygments import token as tk
from pygments.token import STANDARD_TYPES

__all__ = [
    "ADD_BG", "ADD_WORD_BG", "BORDER", "CODE_BG", "CODE_FG", "DEL_BG", "DEL_WORD_BG", "ERROR",
    "ERROR_BG", "FG", "GAUGE_BG", "MUTED", "OK", "WARN", "pygments_inline",
]

FG = "var(--jp-content-font-color1,#24292f)"
MUTED = "var(--jp-content-font-color2,#57606a)"
OK = "var(--jp-success-color1,#1a7f37)"
WARN = "var(--jp-warn-color1,#9a6700)"
ERROR = "var(--jp-error-color1,#cf222e)"
BORDER = "var(--jp-border-color2,#d0d7de)"
CODE_BG = "var(--jp-cell-editor-background,#f6f8fa)"
CODE_FG = FG
ERROR_BG = "var(--jp-rendermime-error-background,#fff5f5)"
GAUGE_BG = "var(--jp-layout-color3,#eaeef2)"
ADD_BG = "rgba(46,160,67,0.15)"
DEL_BG = "rgba(248,81,73,0.15)"
ADD_WORD_BG = "rgba(46,160,67,0.40)"
DEL_WORD_BG = "rgba(248,81,73,0.40)"

# Token type -> (JupyterLab CodeMirror variable, light fallback); the most specific wins.
_TOKEN_VARS: list[tuple[object, str, str]] = [
    (tk.Comment, "comment", "#408080"),
    (tk.Keyword, "keyword", "#008000"),
    (tk.Operator.Word, "keyword", "#008000"),
    (tk.Operator, "operator", "#aa22ff"),
    (tk.Name.Builtin, "builtin", "#008000"),
    (tk.Name.Function, "def", "#0000ff"),
    (tk.Name.Class, "def", "#0000ff"),
    (tk.Name.Decorator, "meta", "#aa22ff"),
    (tk.Name.Tag, "tag", "#008000"),
    (tk.Name.Attribute, "attribute", "#7d9029"),
    (tk.Name.Variable, "variable-2", "#05a"),
    (tk.Literal.String, "string", "#ba2121"),
    (tk.Literal.Number, "number", "#080"),
    (tk.Generic.Heading, "header", "blue"),
    (tk.Generic.Subheading, "header", "blue"),
    (tk.Generic.Inserted, "string", "#008000"),
    (tk.Generic.Deleted, "keyword", "#a11"),
    (tk.Generic.Error, "error", "#f00"),
]


@lru_cache(maxsize=1)
def _class_styles() -> dict[str, str]:
    out: dict[str, str] = {}
    for ttype, short in STANDARD_TYPES.items():
        best: tuple[int, str, str] | None = None
        for base, var, light in _TOKEN_VARS:
            if ttype in base:  # type: ignore[operator]  # pygments' _TokenType supports `in`
                depth = len(base)  # type: ignore[arg-type]
                if best is None or depth > best[0]:
                    best = (depth, var, light)
        if best is not None and short:
            out[short] = f"color:var(--jp-mirror-editor-{best[1]}-color,{best[2]})"
    return out


_SPAN = re.compile(r'<span class="([\w-]+)">([^<]*)</span>')


def pygments_inline(html: str) -> str:
    """Pygments ``HtmlFormatter(nowrap=True)`` output with its token classes made inline styles.

    ``<span class="k">`` becomes ``<span style="color:var(--jp-mirror-editor-keyword-color,
    #008000)">``; tokens without a colour lose their span (Pygments does not nest spans).
    """
    styles = _class_styles()

    def sub(m: re.Match[str]) -> str:
        style = styles.get(m.group(1))
        return f'<span style="{style}">{m.group(2)}</span>' if style else m.group(2)

    return _SPAN.sub(sub, html)
