"""Issue 27 point 5 in JupyterLab 4 in Chromium: the buttons under a finished turn.

One `%%claude` turn deletes a cell (``delete_cell``, allowed on its card) and writes a file.
Under the turn, in the page: "Turn 1 of session default · In [n]"; **Restore deleted cell**
puts the cell back where it was, **Send again** puts a copy of the `%%claude` cell below it,
**Undo this turn's file changes** removes the written file. Screenshots in the light and dark
themes: ``artifacts/screenshots/turn-actions-{light,dark}.png`` (also ``docs/screenshots/``
with ``KANDEV_NB_UPDATE_DOCS=1``).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import nbformat
import pytest
from playwright.sync_api import expect

from kandev_nb.testing import Reply, ScriptedModelServer, text, tool_use
from tests.browser import lab_page
from tests.browser.conftest import DOCS_SCREENSHOTS, LabServer
from tests.browser.test_cards_in_lab import _theme
from tests.kernel.conftest import setup_code

pytestmark = pytest.mark.timeout(300)

PROMPT = "%%claude --mode acceptEdits\nTidy up and write notes"


def _run_cell(page: Any, index: int) -> None:
    lab_page.cell(page, index).locator(".jp-InputPrompt").click()
    lab_page.command(page, "notebook:run-cell")


def _shot(page: Any, locator: Any, path: Path) -> None:
    locator.evaluate("el => el.scrollIntoView({block: 'center'})")
    page.wait_for_timeout(300)
    page.screenshot(path=str(path))
    if os.environ.get("KANDEV_NB_UPDATE_DOCS") == "1":
        DOCS_SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        shutil.copy(path, DOCS_SCREENSHOTS / path.name)


def test_restore_send_again_and_undo_from_the_turns_buttons(
    jupyter_lab: LabServer,
    page: Any,
    scripted_model: ScriptedModelServer,
    claude_env: dict[str, str],
    claude_workdir: Path,
    screenshots: Path,
) -> None:
    notes = claude_workdir / "notes.txt"
    scripted_model.push(
        Reply(tool_use("mcp__kernel__read_notebook", {})),
        Reply(tool_use("mcp__kernel__delete_cell", {"cell_id": "victim"})),
        Reply(tool_use("Write", {"file_path": str(notes), "content": "notes\n"})),
        Reply(text("Deleted the scratch cell and wrote notes.txt.")),
    )
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = dict(lab_page.KERNELSPEC)
    nb.cells = [
        nbformat.v4.new_code_cell(setup_code(claude_env, claude_workdir), id="setup"),
        nbformat.v4.new_code_cell("scratch = 1", id="victim"),
        nbformat.v4.new_code_cell(PROMPT, id="claude"),
    ]
    nbformat.write(nb, jupyter_lab.root / "actions.ipynb")
    lab_page.open_notebook(page, jupyter_lab.notebook_url("actions.ipynb"))
    _run_cell(page, 0)
    lab_page.wait_cell_done(page, 0)
    _run_cell(page, 2)

    claude_cell = lab_page.cell(page, 2)
    card = claude_cell.locator(".kandev-approval").last
    expect(card).to_contain_text("delete_cell", timeout=120_000)
    claude_cell.locator(".kandev-approval button.kandev-allow").last.click()
    expect(page.locator(".jp-NotebookPanel:visible .jp-Notebook .jp-Cell")).to_have_count(2, timeout=60_000)
    claude_cell = lab_page.cell(page, 1)
    count = lab_page.wait_cell_done(page, 1)
    bar = claude_cell.locator(".kandev-turn-actions")
    expect(bar).to_contain_text(f"Turn 1 of session default · In [{count}]", timeout=60_000)
    expect(claude_cell.locator(".kandev-run-info").first).to_contain_text("turn 1")
    assert notes.exists()
    _shot(page, bar, screenshots / "turn-actions-light.png")

    bar.locator("button.kandev-restore").click()  # the deleted cell comes back where it was
    expect(page.locator(".jp-NotebookPanel:visible .jp-Notebook .jp-Cell")).to_have_count(3, timeout=30_000)
    expect(lab_page.cell(page, 1).locator(".jp-InputArea")).to_contain_text("scratch = 1")
    claude_cell = lab_page.cell(page, 2)
    bar = claude_cell.locator(".kandev-turn-actions")
    expect(bar).to_contain_text("Restored the deleted cell")

    bar.locator("button.kandev-send-again").click()  # a copy of the cell, below it, not run
    expect(page.locator(".jp-NotebookPanel:visible .jp-Notebook .jp-Cell")).to_have_count(4, timeout=30_000)
    expect(lab_page.cell(page, 3).locator(".jp-InputArea")).to_contain_text("Tidy up and write notes")
    assert lab_page.prompt_text(page, 3) in ("[ ]:", "[ ]")

    bar.locator("button.kandev-undo").click()
    expect(bar).to_contain_text("Undid the file changes of turn 1", timeout=60_000)
    assert not notes.exists()
    expect(bar.locator("button.kandev-undo")).to_be_disabled()
    write_card = claude_cell.locator(".kandev-tool-card, details", has_text="notes.txt").first
    expect(write_card).to_contain_text("undone", timeout=30_000)  # the saved card is redrawn
    _shot(page, bar, screenshots / "turn-actions-after-light.png")
    _theme(page, "JupyterLab Dark")
    _shot(page, bar, screenshots / "turn-actions-dark.png")
