"""Issue 37 (first slice) in headless Chromium: kandev-nb's prebuilt extension in JupyterLab 4,
started as a person starts it (no ``window.jupyterapp``), and in Notebook 7.

- the settings "Claude (kandev-nb)" (REST API and the Settings Editor);
- the palette's "Claude" commands; "Insert a %%claude cell below" inserts without running;
- "Ask Claude about this error" (the cell's context menu) on a ZeroDivisionError inserts a
  %%claude cell citing it, not run;
- a saved %%claude cell reads as Markdown from page load, before any cell ran;
- Notebook 7 loads the extension (the page's marker) and highlights the same way.

Screenshots: ``extension-*.png`` in artifacts/screenshots/.
"""

from __future__ import annotations

import json
import re
import time
import urllib.error
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser import lab_page, notebook7
from tests.browser.conftest import LabServer

pytestmark = pytest.mark.timeout(300)

REPO = Path(__file__).resolve().parents[2]
VERSION = json.loads((REPO / "package.json").read_text())["version"]
PROMPT = "%%claude\n# Revenue by month\n\nIt's a **bold** ask: plot `df` with *care*."
_MARKER = "() => document.body.dataset.kandevNbExtension || null"
_SPANS = """el => [...el.querySelectorAll('.cm-line span')].map(s => {
  const st = getComputedStyle(s);
  return [s.textContent, Number(st.fontWeight), st.fontStyle];
})"""
_HEADING_BOLD = """el => [...el.querySelectorAll('.cm-line span')].some(s =>
  s.textContent.includes('Revenue by month') && Number(getComputedStyle(s).fontWeight) >= 600)"""


INSERT_ITEM = '.lm-CommandPalette-item[data-command="kandev-nb:insert-claude-cell"]'
ASK_ITEM = '.lm-CommandPalette-item[data-command="kandev-nb:ask-about-error"]'


def _cells(page: Any) -> Any:
    return page.locator(".jp-NotebookPanel:visible .jp-Notebook .jp-Cell")


def _open(page: Any, url: str) -> None:
    """Load a notebook page and wait for its cells and the extension's marker."""
    page.goto(url)
    _cells(page).first.wait_for(timeout=120_000)
    page.wait_for_function(_MARKER, timeout=60_000)


def _wait_kernel_idle(server: LabServer, timeout: float = 120.0) -> None:
    """Wait until the server's kernels (there is one) report idle, through the REST API.

    While a kernel starts, jupyter_server lists it before it has ``last_activity``, and
    ``GET /api/kernels`` answers 500 (an AttributeError in ``kernel_model``): that answer
    means "starting", so the wait goes on.
    """
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            kernels = server.api("GET", "/api/kernels") or []
        except urllib.error.HTTPError as error:
            if error.code != 500:
                raise
            time.sleep(0.25)
            continue
        if kernels and all(k.get("execution_state") == "idle" for k in kernels):
            return
        time.sleep(0.25)
    raise AssertionError(f"no idle kernel in {timeout} s: {server.api('GET', '/api/kernels')}")


def _text(cell: Any) -> str:
    return str(cell.locator(".cm-content").inner_text())


def _prompt(cell: Any) -> str:
    return str(cell.locator(".jp-InputPrompt").inner_text()).strip()


def _heading_is_bold(cell: Any) -> bool:
    return any("Revenue by month" in t and w >= 600 for t, w, _f in cell.locator(".cm-content").evaluate(_SPANS))


def _open_palette(page: Any, query: str) -> Any:
    page.keyboard.press("Control+Shift+C")
    palette = page.locator(".lm-CommandPalette:visible").first
    palette.locator(".lm-CommandPalette-input").fill(query)
    return palette


def test_the_settings_are_in_the_registry_and_the_settings_editor(
    user_lab: LabServer, page: Any, screenshots: Path
) -> None:
    answer = user_lab.api("GET", "/lab/api/settings/kandev-nb:plugin")
    schema = answer["schema"]
    assert schema["title"] == "Claude (kandev-nb)"
    props = schema["properties"]
    assert props["defaultMode"]["enum"] == ["supervised", "plan", "acceptEdits", "autonomous"]
    assert props["unansweredCard"]["enum"] == ["wait", "deny-after"]
    assert props["denyAfterSeconds"]["type"] == "number"
    assert props["notifications"] == props["notifications"] | {"type": "boolean", "default": True}

    lab_page.write_notebook(user_lab.root / "empty.ipynb", "x = 1")
    _open(page, user_lab.notebook_url("empty.ipynb"))
    assert page.evaluate(_MARKER) == VERSION
    _cells(page).first.locator(".jp-InputPrompt").click()
    page.keyboard.press("Control+,")  # Settings > Settings Editor
    entry = page.get_by_text("Claude (kandev-nb)", exact=True).first
    entry.click()
    expect(page.get_by_text("Default permission mode").first).to_be_visible(timeout=30_000)
    expect(page.get_by_text("Unanswered approval cards").first).to_be_visible()
    page.screenshot(path=str(screenshots / "extension-settings-editor.png"))


def test_the_palette_lists_the_claude_commands_and_inserts_a_cell(
    user_lab: LabServer, page: Any, screenshots: Path
) -> None:
    lab_page.write_notebook(user_lab.root / "insert.ipynb", "x = 1")
    _open(page, user_lab.notebook_url("insert.ipynb"))
    _wait_kernel_idle(user_lab)  # a kernel coming up takes the focus, which closes the palette
    _cells(page).first.locator(".jp-InputPrompt").click()
    palette = _open_palette(page, "claude")
    headers = [h.strip().lower() for h in palette.locator(".lm-CommandPalette-header").all_inner_texts()]
    assert "claude" in headers, headers
    insert = palette.locator(INSERT_ITEM)
    ask = palette.locator(ASK_ITEM)
    expect(insert).to_have_count(1)
    expect(insert.locator(".lm-CommandPalette-itemLabel")).to_have_text("Insert a %%claude cell below")
    expect(ask).to_have_count(1)
    expect(ask).to_have_class(re.compile(r"\blm-mod-disabled\b"))  # the active cell holds no error: Lab hides it

    insert.click()
    expect(_cells(page)).to_have_count(2)
    new = _cells(page).nth(1)
    assert _text(new).strip() == "%%claude"
    expect(new).to_have_class(re.compile(r"\bjp-mod-active\b"))
    expect(page.locator(".jp-Notebook.jp-mod-editMode")).to_have_count(1)
    page.keyboard.type("hello")  # the cursor is on the line below %%claude
    expect(new.locator(".cm-content")).to_have_text("%%claudehello")  # two .cm-line, no newline in text
    assert [line.strip() for line in new.locator(".cm-line").all_inner_texts()] == ["%%claude", "hello"]
    assert _prompt(new) in ("[ ]:", "[ ]")  # not run
    assert _prompt(_cells(page).first) in ("[ ]:", "[ ]")


def test_ask_claude_about_an_error_from_the_cell_menu(user_lab: LabServer, page: Any, screenshots: Path) -> None:
    lab_page.write_notebook(user_lab.root / "error.ipynb", "total = 10\ncount = 0\ntotal / count")
    _open(page, user_lab.notebook_url("error.ipynb"))
    _wait_kernel_idle(user_lab)
    first = _cells(page).first
    first.locator(".jp-InputPrompt").click()
    page.keyboard.press("Control+Enter")
    expect(first.locator(".jp-OutputArea-output")).to_contain_text("ZeroDivisionError", timeout=60_000)
    _wait_kernel_idle(user_lab)

    # The palette: both commands under Claude, "Ask Claude about this error" enabled here.
    first.locator(".jp-InputPrompt").click()
    palette = _open_palette(page, "claude")
    expect(palette.locator(ASK_ITEM)).to_be_visible()
    expect(palette.locator(ASK_ITEM)).not_to_have_class(re.compile(r"\blm-mod-disabled\b"))
    expect(palette.locator(INSERT_ITEM)).to_be_visible()
    expect(palette.locator(ASK_ITEM).locator(".lm-CommandPalette-itemLabel")).to_have_text(
        "Ask Claude about this error"
    )
    page.screenshot(path=str(screenshots / "extension-palette.png"))
    page.keyboard.press("Escape")
    expect(palette).to_be_hidden()

    first.locator(".jp-InputPrompt").click(button="right")
    item = page.locator(".lm-Menu-item", has_text="Ask Claude about this error")
    expect(item).to_have_count(1)
    expect(item).not_to_have_class(re.compile(r"\blm-mod-disabled\b"))
    page.screenshot(path=str(screenshots / "extension-context-menu.png"))
    item.click()

    expect(_cells(page)).to_have_count(2)
    asked = _cells(page).nth(1)
    lines = [line.rstrip() for line in asked.locator(".cm-line").all_inner_texts()]
    text = "\n".join(lines)
    assert lines[0] == "%%claude", lines
    assert "Cell [1] (cell 1 of the notebook) raised ZeroDivisionError: division by zero" in text, text
    assert "total / count" in text  # the cell's source
    assert "\x1b" not in text and "[0;31m" not in text, text  # ANSI colours stripped
    assert any(line.startswith("ZeroDivisionError") for line in lines), text  # the traceback's last line
    page.wait_for_timeout(1500)
    assert _prompt(asked) in ("[ ]:", "[ ]"), "the inserted cell is not run"
    assert _prompt(first) == "[1]:"
    assert _heading_is_bold(asked) is False  # (no heading here; the body is Markdown, see below)
    page.screenshot(path=str(screenshots / "extension-ask-about-error.png"))

    # the same action on the error output itself: a button under the traceback
    button = first.locator(".jp-OutputArea button.kandev-ask-error")
    expect(button).to_have_count(1)
    expect(button).to_have_text("Ask Claude about this error")
    button.click()
    expect(_cells(page)).to_have_count(3)
    again = "\n".join(line.rstrip() for line in _cells(page).nth(1).locator(".cm-line").all_inner_texts())
    assert again == text, again  # inserted below the failed cell, citing it the same way
    assert _prompt(_cells(page).nth(1)) in ("[ ]:", "[ ]"), "not run"
    expect(_cells(page).nth(1).locator("button.kandev-ask-error")).to_have_count(0)  # no error there


def test_a_saved_claude_cell_reads_as_markdown_from_page_load(user_lab: LabServer, page: Any) -> None:
    lab_page.write_notebook(user_lab.root / "saved.ipynb", PROMPT, "# Revenue by month\nx = 1")
    _open(page, user_lab.notebook_url("saved.ipynb"))
    claude, python = _cells(page).nth(0), _cells(page).nth(1)
    expect(claude.locator(".cm-content")).to_contain_text("It's a **bold**")
    page.wait_for_function(_HEADING_BOLD, arg=claude.locator(".cm-content").element_handle(), timeout=30_000)
    assert _heading_is_bold(claude)
    spans = claude.locator(".cm-content").evaluate(_SPANS)
    assert any("care" in t and f == "italic" for t, _w, f in spans), spans
    assert not _heading_is_bold(python), "a Python cell's comment stays a comment"
    assert _prompt(claude) in ("[ ]:", "[ ]") and _prompt(python) in ("[ ]:", "[ ]"), "nothing ran"

    # Typing %%claude away gives the cell back its Python highlighting; typing it back, Markdown.
    claude.locator(".cm-content").click()
    page.keyboard.press("Control+Home")
    page.keyboard.press("Delete")
    page.wait_for_function(
        f"el => !({_HEADING_BOLD})(el)", arg=claude.locator(".cm-content").element_handle(), timeout=30_000
    )
    page.keyboard.type("%")
    page.wait_for_function(_HEADING_BOLD, arg=claude.locator(".cm-content").element_handle(), timeout=30_000)


def test_notebook7_loads_the_extension(tmp_path: Path, lab_ledger: Path, page: Any, screenshots: Path) -> None:
    notebook7.require_notebook7()
    server = notebook7.start_notebook7(tmp_path / "nb7", lab_ledger)
    try:
        lab_page.write_notebook(server.root / "saved7.ipynb", PROMPT)
        page.goto(notebook7.notebook_url(server, "saved7.ipynb"))
        page.wait_for_function(_MARKER, timeout=120_000)
        assert page.evaluate(_MARKER) == VERSION
        claude = page.locator(".jp-Notebook .jp-Cell").first
        expect(claude.locator(".cm-content")).to_contain_text("It's a **bold**", timeout=60_000)
        page.wait_for_function(_HEADING_BOLD, arg=claude.locator(".cm-content").element_handle(), timeout=30_000)
        page.screenshot(path=str(screenshots / "extension-notebook7.png"))
    finally:
        server.stop()
