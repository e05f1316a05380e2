"""Issue 5 in a real browser: the quickstart notebook in JupyterLab, screenshots, save, reload.

The quickstart starts its own scripted model inside the kernel, so this test only opens it
in JupyterLab, runs all cells, clicks Allow on its approval card, and photographs a
streaming turn, the approval card, a diff card and the finished turns. Then it saves with
Ctrl+S, reloads the page and checks that the static rendering of the turns (the cell
outputs that replace the live widgets when a turn ends) is still shown, without re-running;
last, an unsigned copy (untrusted, so its HTML is sanitized) shows it too. Meanwhile the same
notebook runs headless (``jupyter execute``): what it writes is within 20% of what Lab saved
(issue 37: no widget state a headless run does not need).

Screenshots go to ``artifacts/screenshots/quickstart-*.png``; with ``KANDEV_NB_UPDATE_DOCS=1``
they are also copied to ``docs/screenshots/`` for the README.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import nbformat
import pytest
from playwright.sync_api import expect

from tests.browser import lab_page
from tests.browser.conftest import DOCS_SCREENSHOTS, REPO, LabServer

pytestmark = pytest.mark.timeout(300)

QUICKSTART = REPO / "notebooks" / "quickstart.ipynb"
FIRST, APPROVAL, EDIT, FILES, LEDGER = 4, 6, 8, 10, 12
"""Indices of the quickstart's code cells (markdown cells count too)."""
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"


def _cell_ids() -> list[str]:
    return [c.get("id", "") for c in nbformat.read(QUICKSTART, as_version=4).cells]


def _shot(page: Any, cell: Any, path: Path) -> None:
    """Scroll `cell` to the top of the notebook and screenshot the page."""
    cell.evaluate("el => el.scrollIntoView({block: 'start'})")
    page.screenshot(path=str(path))


def _execute_headless(tmp_path: Path) -> tuple[subprocess.Popen[str], Path]:
    """Start ``jupyter execute`` of a copy of the quickstart (its own ledger); returns the
    process and the file it writes."""
    copy = tmp_path / "headless"
    shutil.copytree(REPO / "notebooks", copy, ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    env = dict(os.environ, KANDEV_NB_LEDGER=str(tmp_path / "headless.sqlite"), IPYTHONDIR=str(tmp_path / "ipython"))
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "KANDEV_NB_APPROVAL_TIMEOUT"):
        env.pop(name, None)
    command = [sys.executable, "-m", "jupyter", "execute", "quickstart.ipynb", "--output", "quickstart-run"]
    process = subprocess.Popen(command, cwd=copy, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return process, copy / "quickstart-run.ipynb"


def test_quickstart_in_jupyterlab_screenshots_and_survives_a_reload(
    jupyter_lab: LabServer, page: Any, screenshots: Path, tmp_path: Path
) -> None:
    assert _cell_ids()[FIRST] == "turn1" and _cell_ids()[APPROVAL] == "approval" and _cell_ids()[EDIT] == "edit"
    shutil.copy(QUICKSTART, jupyter_lab.root / "quickstart.ipynb")
    headless = _execute_headless(tmp_path)
    lab_page.open_notebook(page, jupyter_lab.notebook_url("quickstart.ipynb"))
    lab_page.command(page, "notebook:run-all-cells")
    shots: dict[str, Path] = {}

    # A running turn: the answer streams in (the scripted reply has 50 ms between deltas).
    first = lab_page.cell(page, FIRST)
    streaming = first.locator(".kandev-turn .kandev-text", has_text="defines one function")
    streaming.first.wait_for(state="visible", timeout=120_000)
    shots["running"] = screenshots / "quickstart-1-running-turn.png"
    _shot(page, first, shots["running"])

    # The approval card of the Write, and a real click on Allow.
    approval = lab_page.cell(page, APPROVAL)
    allow = approval.locator(".kandev-approval button.kandev-allow")
    allow.wait_for(state="visible", timeout=120_000)
    expect(approval.locator(".kandev-approval")).to_contain_text("test_greet.py")
    shots["approval"] = screenshots / "quickstart-2-approval-card.png"
    _shot(page, approval, shots["approval"])
    allow.click()
    lab_page.wait_cell_done(page, APPROVAL)
    expect(approval.locator(".jp-OutputArea-output").first).to_contain_text("Added test_greet.py")

    # The Edit's card: open in the finished output, its diff shown (issue 28.11: it was folded).
    edit = lab_page.cell(page, EDIT)
    lab_page.wait_cell_done(page, EDIT)
    edit_card = edit.locator("details.kandev-kind-modify_file")
    expect(edit_card).to_have_attribute("open", "")
    diff = edit_card.locator(".kandev-diff")
    expect(diff).to_be_visible()
    expect(diff).to_contain_text('return f"Hello, {name}"')
    shots["diff"] = screenshots / "quickstart-3-diff-card.png"
    _shot(page, edit, shots["diff"])

    # The finished notebook: every cell ran, the files cell shows the agent's work.
    counts = {i: lab_page.wait_cell_done(page, i) for i in (FIRST, APPROVAL, EDIT, FILES, LEDGER)}
    expect(lab_page.cell(page, FILES).locator(".jp-OutputArea-output").first).to_contain_text('assert greet("Ada")')
    expect(lab_page.cell(page, LEDGER).locator(".jp-OutputArea-output table")).to_contain_text("Add a test for greet.")
    expect(first.locator(".kandev-footer")).to_contain_text("cost")
    shots["finished"] = screenshots / "quickstart-4-finished-turn.png"
    _shot(page, first, shots["finished"])

    # Save as a person would; the file holds the static rendering, not widget views.
    lab_page.save(page)
    saved = nbformat.read(jupyter_lab.root / "quickstart.ipynb", as_version=4)
    for index in (FIRST, APPROVAL, EDIT):
        outputs = [  # the turn's buttons (issue 27.5) stay a widget: kandev_nb/notebook/turn_actions.py
            o for o in saved.cells[index].outputs if not o.get("data", {}).get("text/plain", "").startswith("Turn ")
        ]
        assert outputs and all(WIDGET_MIME not in o.get("data", {}) for o in outputs)
        assert any("kandev-footer" in o.get("data", {}).get("text/html", "") for o in outputs)

    # Headless, the same notebook writes what Lab saved, give or take 20% (it has no widget
    # state but the bridge's first lines; Lab saves none); 124 KB against 30 KB before.
    process, executed = headless
    log, _ = process.communicate(timeout=240)
    assert process.returncode == 0, log[-3000:]
    lab_size, headless_size = (jupyter_lab.root / "quickstart.ipynb").stat().st_size, executed.stat().st_size
    widgets = json.loads(executed.read_text())["metadata"].get("widgets", {})
    print(f"quickstart: saved from JupyterLab {lab_size:,} B, jupyter execute {headless_size:,} B")
    assert headless_size <= 1.2 * lab_size, (headless_size, lab_size, json.dumps(widgets)[:2000])

    # Reload the page: the saved outputs are shown again, nothing is re-run.
    page.reload()
    page.wait_for_selector(".jp-NotebookPanel .jp-Cell")
    lab_page.wait_kernel_idle(page)
    first = lab_page.cell(page, FIRST)
    expect(first.locator(".jp-OutputArea-output").first).to_contain_text("defines one function")
    expect(first.locator(".kandev-footer")).to_be_visible()
    expect(lab_page.cell(page, APPROVAL).locator(".jp-OutputArea-output").first).to_contain_text("Added test_greet.py")
    expect(lab_page.cell(page, EDIT).locator(".kandev-footer")).to_be_visible()
    assert {i: lab_page.wait_cell_done(page, i, timeout_ms=5_000) for i in counts} == counts
    shots["reloaded"] = screenshots / "quickstart-5-after-reload.png"
    _shot(page, first, shots["reloaded"])

    # Opened elsewhere: a copy this server never signed is untrusted, so JupyterLab shows
    # its HTML sanitized. The static rendering needs no script, so it still reads well.
    saved.metadata["opened_elsewhere"] = True
    nbformat.write(saved, jupyter_lab.root / "elsewhere.ipynb")
    lab_page.open_notebook(page, jupyter_lab.notebook_url("elsewhere.ipynb"))
    first = lab_page.cell(page, FIRST)
    expect(first.locator(".jp-OutputArea-output").first).to_contain_text("defines one function")
    expect(first.locator(".kandev-footer")).to_contain_text("cost")
    edit_card = lab_page.cell(page, EDIT).locator("details.kandev-kind-modify_file")
    expect(edit_card).to_have_attribute("open", "")  # the sanitizer keeps it open
    expect(edit_card.locator(".kandev-diff")).to_contain_text('return f"Hello, {name}"')
    shots["untrusted"] = screenshots / "quickstart-6-opened-elsewhere.png"
    _shot(page, first, shots["untrusted"])

    if os.environ.get("KANDEV_NB_UPDATE_DOCS") == "1":
        DOCS_SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        for path in shots.values():
            shutil.copy(path, DOCS_SCREENSHOTS / path.name)
