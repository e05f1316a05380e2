"""Issue 27 point 8 in JupyterLab 4 and Notebook 7 in headless Chromium: the ``%%claude`` cell
body is highlighted as Markdown once kandev_nb is loaded, read from CodeMirror's DOM token
classes. Before ``%load_ext`` (and on the old code) it is Python: the apostrophe of "It's"
opens a string (``.cm-string``) that runs to the end of the line.

These tests cover the kernel-injected fallback (``src/widgets/cell_language.ts``), for frontends without
kandev-nb's extension: the servers start with the extension disabled. With the extension the
body is Markdown from page load (tests/extension/test_extension_in_lab.py).

Screenshots (light and dark): ``prompt-highlight-*.png``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser import lab_page, notebook7, theme_shots
from tests.browser.conftest import LabServer, disable_extensions, start_lab

pytestmark = pytest.mark.timeout(300)

PROMPT = "%%claude\n# Revenue by month\n\nIt's a **bold** ask: plot `df` with *care*.\n\n```python\nx = 'code'\n```"
_TOKENS = """el => [...el.querySelectorAll('.cm-line span')].map(s => {
  const st = getComputedStyle(s);
  return [s.className, s.textContent, st.fontWeight, st.fontStyle];
})"""
_MARKDOWN = """el => [...el.querySelectorAll('.cm-line span')].some(s =>
  s.textContent.includes('bold') && Number(getComputedStyle(s).fontWeight) >= 600)"""
PROSE = "'s a **bold** ask: plot `df` with *care*."
"""What Python's tokenizer makes one string of: from the apostrophe of "It's" to the line's end."""


def _tokens(cell: Any) -> list[tuple[str, str, str, str]]:
    """CodeMirror's highlighted spans of `cell`: (generated class, text, font-weight, font-style).
    JupyterLab 4.6's highlight style has generated class names (``ͼ12``), so the kind of token is
    read from its style (bold, italic) and by comparing classes with known tokens."""
    return [(str(c), str(t), str(w), str(f)) for c, t, w, f in cell.locator(".cm-content").evaluate(_TOKENS)]


def _as_markdown(tokens: list[tuple[str, str, str, str]]) -> bool:
    bold = any("bold" in t and int(w) >= 600 for _c, t, w, _f in tokens)
    italic = any("care" in t and f == "italic" for _c, t, _w, f in tokens)
    return bold and italic and not any(t == PROSE for _c, t, _w, _f in tokens)


def _notebook(lab: LabServer, name: str) -> None:
    lab_page.write_notebook(lab.root / name, "%load_ext kandev_nb", PROMPT, 'x = "it\'s python here"')


def test_the_prompt_reads_as_markdown_in_lab(tmp_path: Path, lab_ledger: Path, page: Any, screenshots: Path) -> None:
    disable_extensions(tmp_path / "lab", "kandev-nb")
    jupyter_lab = start_lab(tmp_path / "lab", lab_ledger)
    try:
        _the_prompt_reads_as_markdown_in_lab(jupyter_lab, page, screenshots)
    finally:
        jupyter_lab.stop()


def _the_prompt_reads_as_markdown_in_lab(jupyter_lab: LabServer, page: Any, screenshots: Path) -> None:
    _notebook(jupyter_lab, "prompt.ipynb")
    lab_page.open_notebook(page, jupyter_lab.notebook_url("prompt.ipynb"))
    assert page.evaluate("() => document.body.dataset.kandevNbExtension") is None  # disabled
    claude_cell = lab_page.cell(page, 1)
    expect(claude_cell.locator(".cm-content")).to_contain_text("It's a **bold**")
    before = _tokens(claude_cell)
    assert any(t == PROSE for _c, t, _w, _f in before) and not _as_markdown(before), before  # Python: a string
    lab_page.cell(page, 0).locator(".jp-InputPrompt").click()
    lab_page.command(page, "notebook:run-cell")
    lab_page.wait_cell_done(page, 0)
    page.wait_for_function(_MARKDOWN, arg=claude_cell.locator(".cm-content").element_handle(), timeout=30_000)
    after = _tokens(claude_cell)
    assert _as_markdown(after), after
    python_string = [c for c, t, _w, _f in _tokens(lab_page.cell(page, 2)) if t == '"it\'s python here"']
    assert python_string, "the other cells stay Python"
    for _ in range(100):  # the fenced block gets Python tokens of its own once that language has loaded
        if any(t == "'code'" for _c, t, _w, _f in after):
            break
        page.wait_for_timeout(100)
        after = _tokens(claude_cell)
    assert any(t == "'code'" for _c, t, _w, _f in after), after
    theme_shots.shot_both(page, screenshots, "prompt-highlight", claude_cell)

    # Typing %%claude away gives the cell back its Python highlighting.
    claude_cell.locator(".cm-content").click()
    page.keyboard.press("Control+Home")
    page.keyboard.press("Delete")
    page.keyboard.press("Delete")
    page.wait_for_function(
        f"el => [...el.querySelectorAll('.cm-line span')].some(s => s.textContent === {PROSE!r})",
        arg=claude_cell.locator(".cm-content").element_handle(),
        timeout=30_000,
    )


def test_the_prompt_reads_as_markdown_in_notebook7(
    tmp_path: Path, lab_ledger: Path, page: Any, screenshots: Path
) -> None:
    notebook7.require_notebook7()
    disable_extensions(tmp_path / "nb7", "kandev-nb")
    server = notebook7.start_notebook7(tmp_path / "nb7", lab_ledger)
    try:
        _notebook(server, "prompt7.ipynb")
        page.goto(notebook7.notebook_url(server, "prompt7.ipynb"))
        cells = page.locator(".jp-Notebook .jp-Cell")
        claude_cell = cells.nth(1)
        expect(claude_cell.locator(".cm-content")).to_contain_text("It's a **bold**", timeout=120_000)
        assert not _as_markdown(_tokens(claude_cell)), "Python before kandev_nb is loaded"
        lab_page.wait_kernel_idle(page)
        cells.nth(0).locator(".jp-InputPrompt").click()
        lab_page.command(page, "notebook:run-cell")
        page.wait_for_function(_MARKDOWN, arg=claude_cell.locator(".cm-content").element_handle(), timeout=60_000)
        assert _as_markdown(_tokens(claude_cell))
        claude_cell.evaluate("el => el.scrollIntoView({block: 'center'})")
        page.screenshot(path=str(screenshots / "prompt-highlight-notebook7.png"))
    finally:
        server.stop()
