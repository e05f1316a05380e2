"""Colours of the cards, as JupyterLab theme variables with light fallbacks.

Every colour in the live widgets and in the saved ``text/html`` is one of these CSS values:
``var(--jp-..., <light value>)``. Inside JupyterLab (live, or a saved notebook reopened) the
theme defines the variables, so the light and the dark theme both read well; where they are
absent (nbconvert HTML, GitHub's viewer) the light fallback applies. Diff backgrounds are
translucent, so they read on any background.

Pygments colours code by CSS class; :func:`pygments_classes` maps its token classes to a
few namespaced ones (``kt-k``: keyword, ...), coloured by :func:`stylesheet` with the
editor's own token colours (``color:var(--jp-mirror-editor-...)``). The saved HTML carries
that stylesheet once, as one ``<style>`` element per output (:func:`style_block`), not
thousands of inline ``style=`` attributes: JupyterLab's sanitizer parses every inline style
(its table of contents sanitises each new HTML output), which took about 150 ms for a
long answer. An untrusted notebook (its outputs sanitised, ``<style>`` dropped) shows the
same text in the theme's plain colours: code uncoloured, table cells in JupyterLab's
default alignment. :func:`pygments_inline` (inline styles) stays for callers that need
HTML without a stylesheet.
"""

from __future__ import annotations

import re
from functools import lru_cache

from pygments import token as tk
from pygments.token import STANDARD_TYPES

__all__ = [
    "ADD_BG",
    "ADD_WORD_BG",
    "BORDER",
    "CODE_BG",
    "CODE_FG",
    "DEL_BG",
    "DEL_WORD_BG",
    "ERROR",
    "ERROR_BG",
    "FG",
    "GAUGE_BG",
    "MUTED",
    "NO_MATH",
    "OK",
    "WARN",
    "pygments_classes",
    "pygments_inline",
    "style_block",
    "stylesheet",
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
# Symbolic operators (= + * ...) stay uncoloured, as the live view's highlight.js leaves them
# (style/widgets/kandev.css): no colour changes when the live view becomes this rendering, and
# a long code block carries a third fewer spans for JupyterLab's table of contents to sanitize
# (issue 35: its heading scan of a 112 KB answer was the page's longest task).
_TOKEN_VARS: list[tuple[object, str, str]] = [
    (tk.Comment, "comment", "#408080"),
    (tk.Keyword, "keyword", "#008000"),
    (tk.Operator.Word, "keyword", "#008000"),
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
def _class_colours() -> dict[str, tuple[str, str]]:
    """Pygments short class ("kd") -> (CodeMirror variable, light fallback) of its token type."""
    out: dict[str, tuple[str, str]] = {}
    for ttype, short in STANDARD_TYPES.items():
        best: tuple[int, str, str] | None = None
        for base, var, light in _TOKEN_VARS:
            if ttype in base:  # type: ignore[operator]  # pygments' _TokenType supports `in`
                depth = len(base)  # type: ignore[arg-type]
                if best is None or depth > best[0]:
                    best = (depth, var, light)
        if best is not None and short:
            out[short] = (best[1], best[2])
    return out


@lru_cache(maxsize=1)
def _class_styles() -> dict[str, str]:
    return {
        short: f"color:var(--jp-mirror-editor-{var}-color,{light})" for short, (var, light) in _class_colours().items()
    }


@lru_cache(maxsize=1)
def _colour_classes() -> dict[tuple[str, str], str]:
    """(variable, fallback) -> our class: ``kt-`` + the Pygments class of its first token type."""
    out: dict[tuple[str, str], str] = {}
    for base, var, light in _TOKEN_VARS:
        out.setdefault((var, light), "kt-" + STANDARD_TYPES[base])
    return out


@lru_cache(maxsize=1)
def _short_to_class() -> dict[str, str]:
    colour_classes = _colour_classes()
    return {short: colour_classes[colour] for short, colour in _class_colours().items()}


NO_MATH = "mathjax_ignore tex2jax_ignore"
"""Classes that keep MathJax away from an element and everything in it: JupyterLab 4's
typesetter (MathJax 3, ``@jupyterlab/mathjax-extension``, with MathJax's default
``ignoreHtmlClass: "mathjax_ignore"``) and MathJax 2 frontends (``tex2jax_ignore``, classic
Notebook, nbconvert's HTML). Every element kandev-nb renders carries them, so a ``$`` in an
answer ("from $41.5k to $61k") is a dollar sign, never the start of LaTeX math."""

TABLE_ALIGN = ("left", "center", "right")
"""Table cell alignments, each a class ``kandev-al-<alignment>`` (see :func:`stylesheet`)."""


@lru_cache(maxsize=1)
def _rules() -> dict[str, str]:
    """Our class -> its CSS rule (see :func:`stylesheet`)."""
    rules = {
        cls: f".{cls}{{color:var(--jp-mirror-editor-{var}-color,{light})}}"
        for (var, light), cls in _colour_classes().items()
    }
    rules.update(
        {f"kandev-al-{a}": f".kandev-al-{a}.kandev-al-{a}.kandev-al-{a}{{text-align:{a}}}" for a in TABLE_ALIGN}
    )
    return rules


def stylesheet() -> str:
    """The CSS that the class-based markup of :mod:`kandev_nb.render.html` needs.

    One rule per token colour (``.kt-k{color:var(--jp-mirror-editor-keyword-color,
    #008000)}``, the classes :func:`pygments_classes` writes) and one per table alignment
    (``.kandev-al-left.kandev-al-left.kandev-al-left{text-align:left}``: the class three
    times is more specific than JupyterLab's own
    ``:not(.jp-RenderedMarkdown).jp-RenderedHTMLCommon td`` rule, which right-aligns). Every selector is
    one of our own class names, so the rules touch nothing else on the page and adding the
    sheet restyles only our elements.
    """
    return "".join(_rules().values())


_USED = re.compile(r'class="(kt-[a-z]+|kandev-al-[a-z]+)"')


VISIBILITY_RULES = ".kandev-static .kandev-part{content-visibility:auto}"
"""``content-visibility:auto`` on each part of a long saved answer
(:func:`kandev_nb.render.html.markdown_html` cuts it into parts of whole blocks, each with
an estimated ``contain-intrinsic-size``): the browser lays out and paints only the parts
near the screen. When the live view is swapped for the saved rendering at the end of a
turn, JupyterLab measures the new output at once (a forced layout); this keeps that from
laying out the whole answer. Find-in-page still finds the hidden parts."""


def style_block(html: str, extra: str = "") -> str:
    """The ``<style>`` element for `html` (an output's markup): the rules of
    :func:`stylesheet` for the classes `html` uses, in their order,
    :data:`VISIBILITY_RULES` if it has parts, then `extra` (rules the caller's markup needs,
    such as :data:`kandev_nb.render.fold.FOLD_RULES`); "" when none apply (a short answer in
    prose). About a millisecond per 100 KB of `html`."""
    used = set(_USED.findall(html))
    rules = "".join(rule for cls, rule in _rules().items() if cls in used)
    if 'class="kandev-part"' in html:
        rules += VISIBILITY_RULES
    rules += extra
    return f'<style class="kandev-style">{rules}</style>' if rules else ""


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


def pygments_classes(html: str) -> str:
    """Pygments ``HtmlFormatter(nowrap=True)`` output with our token classes.

    ``<span class="kd">`` becomes ``<span class="kt-k">`` (the class of its colour, see
    :func:`stylesheet`); tokens without a colour lose their span (Pygments does not nest
    spans). No inline styles: the output is cheap for sanitizers to parse.
    """
    classes = _short_to_class()

    def sub(m: re.Match[str]) -> str:
        cls = classes.get(m.group(1))
        return f'<span class="{cls}">{m.group(2)}</span>' if cls else m.group(2)

    return _SPAN.sub(sub, html)
