"""Unified diffs as reviewable HTML: hunks with context, each old line next to its new one,
word-level changes marked.

The input is the unified diff text a :class:`~kandev_nb.agent.tools.FileMutation` carries
(`diff`, from :func:`kandev_nb.agent.tools.unified_diff`, three lines of context). Inside a hunk,
difflib writes a changed block as all its removed lines and then all its added lines; here
the i-th removed line is shown right above the i-th added line, and when the two are alike
(difflib ratio >= 0.5) the words that changed are highlighted. Rows carry the old and new
line numbers read from each ``@@ -a,b +c,d @@`` header.

A preview shows the first :data:`DIFF_PREVIEW_ROWS` rows; ``full=True`` shows every row.
Pure functions, no ipywidgets: the live card, the approval card and the saved rendering
all call :func:`diff_view`.
"""

from __future__ import annotations

import difflib
import html
import re
from dataclasses import dataclass

from kandev_nb.render import theme as th

__all__ = ["DIFF_FULL_MAX_ROWS", "DIFF_PREVIEW_ROWS", "DiffView", "diff_rows", "diff_view"]

DIFF_PREVIEW_ROWS = 60
"""Rows (diff lines, hunk headers included) of a diff shown before "Show the whole diff"."""
DIFF_FULL_MAX_ROWS = 5000
"""Rows of "the whole diff" sent to the browser or saved (about 2 MB of HTML); a longer diff
says where its full text is (the card's Python path)."""
_WORD_DIFF_MAX_CHARS = 400
"""Longer lines are marked as wholly changed (word matching them is slow and unreadable)."""

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@(.*)$")
_WORD = re.compile(r"\w+|\s+|[^\w\s]")


@dataclass(frozen=True)
class Row:
    """One row: `kind` is "hunk", "ctx", "del", "add" or "note"; line numbers may be None.

    `parts` is ``[(text, changed)]``: pieces of the line, `changed` True for the words that
    differ from its paired line.
    """

    kind: str
    old_no: int | None
    new_no: int | None
    parts: tuple[tuple[str, bool], ...]


def _word_parts(a: str, b: str) -> tuple[tuple[tuple[str, bool], ...], tuple[tuple[str, bool], ...]] | None:
    if len(a) > _WORD_DIFF_MAX_CHARS or len(b) > _WORD_DIFF_MAX_CHARS:
        return None
    ta, tb = _WORD.findall(a), _WORD.findall(b)
    sm = difflib.SequenceMatcher(None, ta, tb, autojunk=False)
    if sm.ratio() < 0.5:
        return None
    pa: list[tuple[str, bool]] = []
    pb: list[tuple[str, bool]] = []
    for op, i1, i2, j1, j2 in sm.get_opcodes():
        if i2 > i1:
            pa.append(("".join(ta[i1:i2]), op != "equal"))
        if j2 > j1:
            pb.append(("".join(tb[j1:j2]), op != "equal"))
    return tuple(pa), tuple(pb)


def _flush(dels: list[tuple[int, str]], adds: list[tuple[int, str]], rows: list[Row], word_rows: int) -> None:
    for i in range(max(len(dels), len(adds))):
        d = dels[i] if i < len(dels) else None
        a = adds[i] if i < len(adds) else None
        words = _word_parts(d[1], a[1]) if d is not None and a is not None and len(rows) < word_rows else None
        if d is not None:
            rows.append(Row("del", d[0], None, words[0] if words else ((d[1], False),)))
        if a is not None:
            rows.append(Row("add", None, a[0], words[1] if words else ((a[1], False),)))
    dels.clear()
    adds.clear()


def diff_rows(diff: str, word_rows: int | None = None) -> list[Row]:
    """The rows of unified diff text `diff` (file headers ``---``/``+++`` dropped).

    Removed and added lines of one changed block are interleaved (old above new), with
    word-level parts when a pair is alike (only within the first `word_rows` rows when
    given: matching words is the slow part). Text that is not a unified diff comes back as
    context rows without line numbers (nothing is dropped).
    """
    limit = len(diff) if word_rows is None else word_rows
    rows: list[Row] = []
    dels: list[tuple[int, str]] = []
    adds: list[tuple[int, str]] = []
    old_no = new_no = 0
    in_hunk = False
    for line in diff.split("\n"):
        m = _HUNK.match(line)
        if m:
            _flush(dels, adds, rows, limit)
            old_no, new_no = int(m.group(1)), int(m.group(3))
            in_hunk = True
            rows.append(Row("hunk", None, None, ((line, False),)))
        elif not in_hunk:
            if line.startswith(("--- ", "+++ ")) or not line:
                continue
            rows.append(Row("ctx", None, None, ((line, False),)))
        elif line.startswith("-"):
            dels.append((old_no, line[1:]))
            old_no += 1
        elif line.startswith("+"):
            adds.append((new_no, line[1:]))
            new_no += 1
        elif line.startswith("\\"):
            _flush(dels, adds, rows, limit)
            rows.append(Row("note", None, None, ((line[1:].strip(), False),)))
        elif line == "":
            continue  # the split after the last newline
        elif line.startswith(" "):
            _flush(dels, adds, rows, limit)
            rows.append(Row("ctx", old_no, new_no, ((line[1:], False),)))
            old_no += 1
            new_no += 1
        else:
            _flush(dels, adds, rows, limit)
            rows.append(Row("ctx", None, None, ((line, False),)))
    _flush(dels, adds, rows, limit)
    while rows and rows[-1].kind == "ctx" and rows[-1].old_no is None and not rows[-1].parts[0][0]:
        rows.pop()
    return rows


_SIGN = {"del": "-", "add": "+", "ctx": " ", "hunk": "", "note": ""}
_BG = {"del": th.DEL_BG, "add": th.ADD_BG}
_WORD_BG = {"del": th.DEL_WORD_BG, "add": th.ADD_WORD_BG}


def _row_html(row: Row) -> str:
    esc = html.escape
    if row.kind == "hunk":
        return (
            f'<span class="kandev-diff-hunk" style="display:block;color:{th.MUTED};'
            f'background:{th.GAUGE_BG}">{esc(row.parts[0][0])}</span>'
        )
    if row.kind == "note":
        return f'<span style="display:block;color:{th.MUTED};font-style:italic">{esc(row.parts[0][0])}</span>'
    nums = (
        f'<span class="kandev-diff-no" style="color:{th.MUTED};user-select:none">'
        f"{'' if row.old_no is None else row.old_no:>5} {'' if row.new_no is None else row.new_no:>5} </span>"
    )
    word_bg = _WORD_BG.get(row.kind)
    text = "".join(
        f'<span style="background:{word_bg};border-radius:2px">{esc(s)}</span>' if changed and word_bg else esc(s)
        for s, changed in row.parts
    )
    bg = _BG.get(row.kind)
    style = "display:block" + (f";background:{bg}" if bg else "")
    return f'<span class="kandev-diff-{row.kind}" style="{style}">{nums}{_SIGN[row.kind]} {text}</span>'


@dataclass(frozen=True)
class DiffView:
    """:func:`diff_view`'s answer: the `html` block, rows shown and in total."""

    html: str
    shown_rows: int
    total_rows: int

    @property
    def cut(self) -> bool:
        """True when rows are hidden."""
        return self.shown_rows < self.total_rows


def diff_view(diff: str, *, full: bool = False, max_rows: int = DIFF_PREVIEW_ROWS) -> DiffView:
    """A ``<pre class="kandev-diff">`` of unified diff text `diff` (see :func:`diff_rows`).

    Args:
        diff: unified diff text (a FileMutation's `diff`).
        full: show every row (at most :data:`DIFF_FULL_MAX_ROWS`); else the first `max_rows`.
        max_rows: rows of the preview.
    """
    limit = DIFF_FULL_MAX_ROWS if full else max_rows
    rows = diff_rows(diff, word_rows=limit)
    shown = rows[:limit]
    style = (
        f"margin:0.2em 0;padding:0.3em 0;overflow-x:auto;background:{th.CODE_BG};color:{th.CODE_FG};"
        "border-radius:4px;font-size:85%;line-height:1.35;white-space:pre"
    )
    body = "".join(_row_html(row) for row in shown)
    return DiffView(f'<pre class="kandev-diff" style="{style}">{body}</pre>', len(shown), len(rows))
