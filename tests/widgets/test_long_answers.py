"""Issue 34 point 9: a long saved turn is folded to a screenful with "Show all"; a short one
is not; the fold hides nothing from the notebook file (the whole body is in the markup)."""

from __future__ import annotations

import re

import nbformat
import pytest
from nbconvert import HTMLExporter

from kandev_nb.agent import events as ev
from kandev_nb.agent.turn import Turn
from kandev_nb.notebook.widgets import mime_bundle
from kandev_nb.render import fold
from tests.widgets.widget_events import call, complete, result


def sections(n: int) -> str:
    """A report of `n` sections: a heading, a paragraph and three points each, and a short
    Python block every tenth section (the issue's "150-section answer")."""
    out = []
    for i in range(1, n + 1):
        out.append(
            f"## {i}. Section {i}\n\n"
            f"Section {i} looks at the figures for region {i % 7} over the last quarter: revenue, "
            f"returns and the share of orders that shipped late, with what changed since the "
            f"previous review and what the team should watch next.\n\n"
            f"- revenue moved by {i % 9 - 4} %\n- returns stayed near {i % 5 + 1} %\n- late orders: {i % 11}\n"
        )
        if i % 10 == 0:
            out.append(f"```python\ntotal_{i} = sum(orders)\nprint(total_{i})\n```\n")
    return "\n".join(out)


def _turn(text: str) -> Turn:
    turn = Turn(prompt="Write the report", session_name="default")
    turn.add(ev.MessageChunk(text=text), 0.0)
    turn.add(complete(), 0.0)
    return turn


def _html(turn: Turn) -> str:
    return str(mime_bundle(turn)["text/html"])


def _unfolded(turn: Turn, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setattr(fold, "FOLD_MIN_EM", float("inf"))
    try:
        return _html(turn)
    finally:
        monkeypatch.undo()


_BODY = re.compile(r'<div class="kandev-fold-body" style="([^"]*)">(.*)</div><div class="kandev-fold-note"', re.DOTALL)


def test_a_long_answer_is_folded_with_the_whole_answer_inside(monkeypatch: pytest.MonkeyPatch) -> None:
    answer = sections(150)
    turn = _turn(answer)
    page = _html(turn)
    assert page.count('class="kandev-fold"') == 1
    m = _BODY.search(page)
    assert m is not None
    style, body = m.groups()
    assert (
        style
        == fold.FALLBACK_STYLE
        == (  # what JupyterLab's sanitizer keeps (untrusted)
            f"max-height:{fold.FOLD_HEIGHT_EM}em;overflow-y:auto;border-bottom:1px solid rgba(128,128,128,0.4)"
        )
    )
    for i in (1, 75, 150):
        assert f"Section {i}</h5>" in body
    assert body.count("<h5") == 150 and body.count('<pre class="kandev-code') == 15
    # nothing lost: the same markup as without the fold, only wrapped
    whole = _unfolded(turn, monkeypatch)
    assert 'class="kandev-fold' not in whole
    assert body in whole
    unwrapped = re.sub(r'<div class="kandev-fold"><div class="kandev-fold-body" style="[^"]*">', "", page)
    unwrapped = re.sub(r'</div><div class="kandev-fold-note".*?</details></div>', "", unwrapped)
    assert unwrapped.replace(fold.FOLD_RULES, "") == whole
    # header before the fold, footer (cost) after it, both in view
    assert page.index('class="kandev-header"') < page.index('class="kandev-fold"') < page.index("kandev-footer")
    assert fold.FOLD_RULES in page and page.count("<style") == 1
    lines = len(answer.splitlines())
    kb = len(answer.encode()) / 1024
    sizes = f"{lines:,} lines · {kb:,.0f} KB"
    assert (
        f'<span class="kandev-fold-more">▾ Show all ({sizes})</span><span class="kandev-fold-less">▴ Fold</span>'
        in page
    )
    assert f">↕ Scroll the box above for the rest ({sizes})</div>" in page  # hidden by FOLD_RULES
    assert '<details class="kandev-fold-toggle" style="display:none">' in page  # shown by FOLD_RULES only


def test_a_short_answer_is_not_folded() -> None:
    for text in ("Just **words**.", sections(3), "\n".join(f"Line {i} of a list." for i in range(30))):
        page = _html(_turn(text))
        assert "kandev-fold" not in page, text[:40]
    assert "kandev-fold" in _html(_turn("\n\n".join(f"Paragraph {i} of a longer answer." for i in range(80))))


def test_many_tool_cards_fold_the_turn_and_the_label_counts_them() -> None:
    turn = Turn(prompt="Look around", session_name="default")
    for i in range(40):
        c = call(f"t{i}", "Read", {"file_path": f"/p/f{i}.py"})
        turn.add(c, 0.0)
        turn.add(result(c, "x = 1\n"), 0.0)
    turn.add(ev.MessageChunk(text="Read them all.\nDone."), 0.0)
    turn.add(complete(), 0.0)
    page = _html(turn)
    assert "▾ Show all (2 lines · 20 bytes · 40 tool calls)" in page
    assert page.count('<details class="kandev-tool-card') == 40
    few = Turn(prompt="Look", session_name="default")
    for i in range(5):
        c = call(f"t{i}", "Read", {"file_path": f"/p/f{i}.py"})
        few.add(c, 0.0)
        few.add(result(c, "x = 1\n"), 0.0)
    assert "kandev-fold" not in _html(few)
    edits = Turn(prompt="Edit", session_name="default")
    for i in range(8):  # edit cards are saved open, with their diff: taller than a line each
        c = call(f"e{i}", "Edit", {"file_path": f"/p/f{i}.py", "old_string": "a\nb\nc", "new_string": "x\ny\nz"})
        edits.add(c, 0.0)
        edits.add(result(c, "ok"), 0.0)
    assert "▾ Show all (8 tool calls)" in _html(edits)


def test_the_markdown_copy_is_never_folded() -> None:
    answer = sections(150)
    md = str(mime_bundle(_turn(answer))["text/markdown"])
    assert "Show all" not in md and "<details" not in md
    assert "## 150. Section 150" in md and md.count("\n## ") == 149


def test_the_fold_works_in_nbconvert_html_without_a_script() -> None:
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("%%claude\nWrite the report")
    cell.outputs = [nbformat.v4.new_output("display_data", data=mime_bundle(_turn(sections(150))))]
    nb.cells.append(cell)
    body, _ = HTMLExporter().from_notebook_node(nb)
    assert '<details class="kandev-fold-toggle"' in body and ".kandev-fold:has(" in body
    assert "Section 150</h5>" in body


def test_labels_and_estimates() -> None:
    assert fold.fold_sizes(1, 900) == "1 line · 900 bytes"
    assert fold.fold_sizes(1234, 5 * 1024, 1) == "1,234 lines · 5.0 KB · 1 tool call"
    assert fold.fold_sizes(2000, 150 * 1024) == "2,000 lines · 150 KB"
    assert fold.fold_sizes(0, 0, 8) == "8 tool calls"
    prose = "word " * 56  # 280 characters: two rendered lines
    assert fold.text_em(prose) == 2 * fold.PROSE_LINE_EM
    code = "```python\n" + "x = 1\n" * 10 + "```\n"
    assert fold.text_em(code) == pytest.approx(10 * fold.CODE_LINE_EM + 1.2)
    assert fold.FOLD_MIN_EM > fold.FOLD_HEIGHT_EM
