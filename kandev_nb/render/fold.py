"""A long saved turn folded to a screenful, with "Show all" (issue 34, point 9).

A finished turn whose body (the answer, thinking, tool cards and notes between the header
and the footer) is estimated taller than :data:`FOLD_MIN_EM` is saved as::

    <div class="kandev-fold">
      <div class="kandev-fold-body" style="max-height:40em;overflow-y:auto;...">the whole body</div>
      <div class="kandev-fold-note" style="...">↕ Scroll the box above for the rest (612 lines · 41 KB)</div>
      <details class="kandev-fold-toggle" style="display:none"><summary>
        <span class="kandev-fold-more">Show all (612 lines · 41 KB)</span>
        <span class="kandev-fold-less">Fold</span></summary></details>
    </div>

No script runs, so the fold works wherever the saved HTML is shown, for three kinds of reader:

* where the output's ``<style>`` applies (the live tab, a trusted notebook reopened,
  nbconvert's HTML), :data:`FOLD_RULES` hide the note, show the toggle and cut the body at
  :data:`FOLD_HEIGHT_EM` (or 70 % of the window's height, if less) with a fade; "Show
  all" opens the ``<details>``, which lifts the cut (``:has(> [open])``), and "Fold" closes it;
* where JupyterLab's sanitizer drops ``<style>`` (an untrusted notebook), it keeps the inline
  ``max-height`` in ``em`` and ``overflow-y`` (:data:`FALLBACK_STYLE`): the body is a scroll
  box of the same height, as with JupyterLab's own "Enable Scrolling for Outputs", the note
  under it says so (a scroll bar that the system hides until used says nothing), and the
  toggle stays hidden;
* a viewer that drops both shows the whole body, the note and a toggle that does nothing.

The markup holds the whole body either way: nothing is cut out of the notebook file, and
copying, Ctrl+F and the tab's "Insert as code cell below" buttons see all of it. The
``text/markdown`` copy of the output is never folded (see :mod:`kandev_nb.render.static`).
"""

from __future__ import annotations

from kandev_nb.render.html import esc

__all__ = [
    "FALLBACK_STYLE",
    "FOLD_HEIGHT_EM",
    "FOLD_MIN_EM",
    "FOLD_RULES",
    "NOTE_STYLE",
    "fold_html",
    "fold_sizes",
    "text_em",
]

FOLD_HEIGHT_EM = 40
"""The height of a folded body, in ``em`` of the output's font (560 px at JupyterLab's 14 px):
about two thirds of a 1000 px browser window, or of a notebook panel on a 1080p screen. The
stylesheet also caps it at 70 % of the window's height (``vh``, which JupyterLab's sanitizer
refuses in an inline style), so a laptop's short window still sees the toggle."""

FOLD_MIN_EM = 60
"""A body is folded only when its estimated height (:func:`text_em` and friends) is above
this (1.5 × :data:`FOLD_HEIGHT_EM`), so the fold always hides something worth a click: an
answer up to about 40 lines of prose is shown whole."""

CODE_LINE_EM = 0.85 * 1.35
"""A code block line: 85 % font size, 1.35 line height (as
:func:`kandev_nb.render.html._block_em` estimates it)."""
PROSE_LINE_EM = 1.45
PROSE_LINE_CHARS = 140
"""Characters of prose on one rendered line of a wide notebook output."""

FALLBACK_STYLE = f"max-height:{FOLD_HEIGHT_EM}em;overflow-y:auto;border-bottom:1px solid rgba(128,128,128,0.4)"
"""The folded body's inline style, for where ``<style>`` is dropped (an untrusted notebook): a
scroll box with a line under it, on a light or a dark theme. JupyterLab's sanitizer keeps
each of these declarations (it drops a ``var()`` colour, or a height in ``vh``)."""

NOTE_STYLE = "font-size:85%;color:#6e7781;margin-top:0.2em"
"""The scroll box's note (``↕ Scroll the box above for the rest (612 lines · 41 KB)``): grey
that reads on a light and a dark theme, as the sanitizer would drop a ``var()`` colour."""

FOLD_RULES = (
    ".kandev-fold:has(>.kandev-fold-toggle)>.kandev-fold-toggle{display:block!important;margin-top:0.2em}"
    ".kandev-fold:has(>.kandev-fold-toggle)>.kandev-fold-body{border-bottom:0!important}"
    ".kandev-fold:has(>.kandev-fold-toggle)>.kandev-fold-note{display:none!important}"
    ".kandev-fold:has(>.kandev-fold-toggle:not([open]))>.kandev-fold-body{"
    f"max-height:min({FOLD_HEIGHT_EM}em,70vh)!important;overflow:hidden!important;overflow-anchor:none;"
    "-webkit-mask-image:linear-gradient(to bottom,#000 calc(100% - 5em),transparent);"
    "mask-image:linear-gradient(to bottom,#000 calc(100% - 5em),transparent)}"
    ".kandev-fold:has(>.kandev-fold-toggle[open])>.kandev-fold-body{max-height:none!important;"
    "overflow:visible!important}"
    ".kandev-fold-toggle>summary{display:inline-block;list-style:none;cursor:pointer;user-select:none;"
    "font-size:90%;padding:0.15em 0.7em;border-radius:4px;"
    "border:1px solid var(--jp-border-color1,#bdbdbd);background:var(--jp-layout-color2,#f6f8fa);"
    "color:var(--jp-ui-font-color1,#1f2328)}"
    ".kandev-fold-toggle>summary:hover{border-color:var(--jp-brand-color1,#1976d2)}"
    ".kandev-fold-toggle>summary::-webkit-details-marker{display:none}"
    ".kandev-fold-toggle[open] .kandev-fold-more,.kandev-fold-toggle:not([open]) .kandev-fold-less{display:none}"
    ".jp-Cell-outputWrapper:has(.kandev-fold)>.jp-Cell-outputCollapser,"
    ".jp-OutputArea-child:has(.kandev-fold)>.jp-OutputArea-prompt{overflow-anchor:none}"
)
"""The rules of a folded body, in the output's ``<style>`` (:func:`kandev_nb.render.theme.style_block`).
Every selector that folds starts with ``.kandev-fold:has(...)``: a browser without ``:has()``
drops those rules and shows the inline scroll box with no toggle, never a toggle that does
nothing. ``!important`` lets the rules override the inline fallback styles.

"Fold" clicked at the end of a long answer keeps the toggle where it was on the screen (the
browser's scroll anchoring), so you are not left far below the answer; "Show all" keeps the
text where it was, so you read on from the fade. For that the folded body (the browser picks
its anchor with the new styles: the toggle on folding, the text on unfolding) and, in a cell
that holds a fold, JupyterLab's output prompt and collapser (tall boxes whose top does not
move, which the browser would anchor to) are ``overflow-anchor:none``: the only rule here
that touches an element not ours."""


def text_em(text: str) -> float:
    """A rough rendered height, in ``em``, of the Markdown `text`: prose at
    :data:`PROSE_LINE_CHARS` characters a line, each code line :data:`CODE_LINE_EM`, a table
    row 1.9 em, a heading 2 em, a blank line (the gap between blocks) 0.6 em. No parsing, so
    it costs about a millisecond per 100 KB."""
    em = 0.0
    fence = ""
    for line in text.splitlines():
        s = line.strip()
        if fence:
            if s.startswith(fence):
                fence = ""
                em += 1.2  # the block's padding and margin
            else:
                em += CODE_LINE_EM
        elif s.startswith(("```", "~~~")):
            fence = s[:3]
        elif not s:
            em += 0.6
        elif s.startswith("#"):
            em += 2.0
        elif s.startswith("|"):
            em += 1.9
        else:
            em += (len(s) // PROSE_LINE_CHARS + 1) * PROSE_LINE_EM
    return em


def _size(size_bytes: int) -> str:
    kb = size_bytes / 1024
    if kb < 1:
        return f"{size_bytes} bytes"
    return f"{kb:.1f} KB" if kb < 10 else f"{kb:,.0f} KB"


def fold_sizes(lines: int, size_bytes: int, tool_calls: int = 0) -> str:
    """What the fold holds, as the toggle and the note say it: ``612 lines · 41 KB``, and
    ``· 12 tool calls`` when there are any; `lines` and `size_bytes` are the answer text's
    (UTF-8), left out when there is none (``8 tool calls``)."""
    bits = [f"{lines:,} line{'s' if lines != 1 else ''}", _size(size_bytes)] if lines else []
    if tool_calls:
        bits.append(f"{tool_calls:,} tool call{'s' if tool_calls != 1 else ''}")
    return " · ".join(bits)


def fold_html(body: str, sizes: str) -> str:
    """`body` (HTML) in a fold: see the module's docstring for the markup and how each reader
    shows it. `sizes` (:func:`fold_sizes`) is said on the toggle, ``Show all (<sizes>)`` while
    folded and "Fold" once open, and in the note under the scroll box. The output's
    ``<style>`` must carry :data:`FOLD_RULES`."""
    return (
        f'<div class="kandev-fold">'
        f'<div class="kandev-fold-body" style="{FALLBACK_STYLE}">{body}</div>'
        f'<div class="kandev-fold-note" style="{NOTE_STYLE}">↕ Scroll the box above for the rest ({esc(sizes)})</div>'
        f'<details class="kandev-fold-toggle" style="display:none"><summary>'
        f'<span class="kandev-fold-more">▾ Show all ({esc(sizes)})</span><span class="kandev-fold-less">▴ Fold</span>'
        f"</summary></details></div>"
    )
