"""Issue 13's guards in a real browser: a stale read, denied cards, two tabs, a reload.

JupyterLab 4 in headless Chromium, the real CLI, the scripted model. The notebook is open in
two browser tabs (two frontends of one kernel, without real-time collaboration); the turn runs
in the first, although the second said hello to the bridge last. Between the agent's read and
its edit, the user types into the cell: the edit is refused and the user's text kept. An
insert, a delete, a run and an edit denied on their cards change nothing. The second tab is
never touched. Last, a page reload during an approval gets the running turn back.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import nbformat
import pytest
from playwright.sync_api import expect

from kandev_nb.testing import RecordedRequest, Reply, ScriptedModelServer, text, tool_use
from tests.browser import lab_page
from tests.browser.conftest import LabServer
from tests.kernel.conftest import setup_code
from tests.kernel_tools.conftest import result_text, tool_results

pytestmark = pytest.mark.timeout(300)

CELLS = ".jp-NotebookPanel:visible .jp-Notebook .jp-Cell"
PROBE = """import asyncio, kandev_nb.notebook.bridge as nbb
while len(nbb.bridge().views) < 2:  # the second tab's hello arrives once it restored the widgets
    await asyncio.sleep(0.1)
views = nbb.bridge().views
print('views:', len(views), 'latest is the other tab:', nbb.bridge().current_view != list(views)[0])"""


def _last_result(request: RecordedRequest) -> str:
    results = tool_results(request)
    return result_text(results[-1]) if results else ""


def _run_cell(page: Any, index: int) -> None:
    lab_page.cell(page, index).locator(".jp-InputPrompt").click()
    lab_page.command(page, "notebook:run-cell")


def test_a_user_edit_after_the_read_refuses_the_edit_and_a_denied_insert_changes_nothing(
    jupyter_lab: LabServer,
    page: Any,
    scripted_model: ScriptedModelServer,
    claude_env: dict[str, str],
    claude_workdir: Path,
    screenshots: Path,
) -> None:
    read_done, user_edited = threading.Event(), threading.Event()
    seen: dict[str, str] = {}

    def edit_once_the_user_typed(request: RecordedRequest) -> Reply:
        seen["read"] = _last_result(request)
        read_done.set()
        user_edited.wait(90)
        return Reply(tool_use("mcp__kernel__edit_cell", {"cell_id": "data", "source": "x = 0"}))

    def insert_after_refusal(request: RecordedRequest) -> Reply:
        seen["edit"] = _last_result(request)
        return Reply(tool_use("mcp__kernel__insert_cell", {"source": "print('never')"}))

    def delete_after_insert(request: RecordedRequest) -> Reply:
        seen["insert"] = _last_result(request)
        return Reply(
            tool_use("mcp__kernel__read_notebook", {}), tool_use("mcp__kernel__delete_cell", {"cell_id": "data"})
        )

    def run_after_delete(request: RecordedRequest) -> Reply:
        seen["delete"] = _last_result(request)
        return Reply(tool_use("mcp__kernel__run_cell", {"cell_id": "data"}))

    def edit_after_run(request: RecordedRequest) -> Reply:
        seen["run"] = _last_result(request)
        return Reply(tool_use("mcp__kernel__edit_cell", {"cell_id": "data", "source": "x = 0"}))

    def finish(request: RecordedRequest) -> Reply:
        seen["edit again"] = _last_result(request)
        return Reply(text("Understood, I leave your cell as it is."))

    scripted_model.push(
        Reply(tool_use("mcp__kernel__read_notebook", {})),
        edit_once_the_user_typed,
        insert_after_refusal,
        delete_after_insert,
        run_after_delete,
        edit_after_run,
        finish,
    )
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = dict(lab_page.KERNELSPEC)
    nb.cells = [
        nbformat.v4.new_code_cell(setup_code(claude_env, claude_workdir), id="setup"),
        nbformat.v4.new_code_cell("x = 41", id="data"),
        nbformat.v4.new_code_cell("%%claude\nSet x to zero", id="claude"),
        nbformat.v4.new_code_cell(PROBE, id="probe"),
    ]
    nbformat.write(nb, jupyter_lab.root / "guards.ipynb")

    lab_page.open_notebook(page, jupyter_lab.notebook_url("guards.ipynb"))
    _run_cell(page, 0)  # %load_ext creates the bridge: this tab says hello
    lab_page.wait_cell_done(page, 0)
    other = page.context.new_page()  # a second tab on the same notebook and kernel: it says hello last
    lab_page.open_notebook(other, jupyter_lab.notebook_url("guards.ipynb"))
    page.bring_to_front()
    _run_cell(page, 3)
    lab_page.wait_cell_done(page, 3)
    expect(lab_page.cell(page, 3).locator(".jp-OutputArea")).to_contain_text("views: 2 latest is the other tab: True")
    _run_cell(page, 2)

    assert read_done.wait(120), "the agent never read the notebook"
    editor = lab_page.cell(page, 1).locator(".cm-content")
    editor.click()
    page.keyboard.press("Control+End")
    page.keyboard.type("  # mine")
    expect(editor).to_contain_text("x = 41  # mine")
    user_edited.set()

    claude_cell = lab_page.cell(page, 2)
    claude_cell.locator(".kandev-approval button.kandev-allow").first.click(timeout=120_000)  # the edit's card
    cards = claude_cell.locator(".kandev-approval")
    for number in (1, 2, 3, 4):  # insert, delete, run, edit (after a fresh read): each denied
        cards.nth(number).locator("button.kandev-deny").click(timeout=120_000)
    lab_page.wait_cell_done(page, 2)
    expect(claude_cell.locator(".jp-OutputArea")).to_contain_text("I leave your cell as it is")
    page.screenshot(path=str(screenshots / "notebook-tools-stale-edit-refused.png"))

    assert "changed since you last read it" in seen["edit"] and "x = 41  # mine" in seen["edit"]
    assert seen["insert"] and "inserted a" not in seen["insert"]  # the denial, not an insert
    expect(lab_page.cell(page, 1).locator(".cm-content")).to_have_text("x = 41  # mine")
    for step in ("insert", "delete", "run", "edit again"):  # the CLI's denial, not the tool's answer
        assert seen[step] and not seen[step].startswith(("inserted", "deleted", "ran", "cell ")), (step, seen[step])
    expect(lab_page.cell(page, 1).locator(".jp-OutputArea")).to_have_text("")  # the denied run ran nothing
    expect(page.locator(CELLS)).to_have_count(4)  # the denied insert added nothing, the delete removed nothing
    expect(other.locator(CELLS)).to_have_count(4)  # and the other tab was not acted in
    expect(lab_page.cell(other, 1).locator(".cm-content")).to_have_text("x = 41")


def test_a_reload_during_an_approval_gets_the_running_turn_back(
    jupyter_lab: LabServer,
    page: Any,
    scripted_model: ScriptedModelServer,
    claude_env: dict[str, str],
    claude_workdir: Path,
    screenshots: Path,
) -> None:
    """Reload the page (unsaved) while the insert's card waits: the live view comes back into the
    cell, Allow clicked after the reload inserts the cell, the turn's text shows, and after
    saving the file holds the static rendering, not a dead widget reference."""
    scripted_model.push(
        Reply(text("One cell coming."), tool_use("mcp__kernel__insert_cell", {"source": "z = 1"})),
        Reply(text("Inserted after your reload.")),
    )
    lab_page.write_notebook(
        jupyter_lab.root / "reload.ipynb", setup_code(claude_env, claude_workdir), "%%claude\nAdd a cell"
    )
    lab_page.open_notebook(page, jupyter_lab.notebook_url("reload.ipynb"))
    _run_cell(page, 0)
    lab_page.wait_cell_done(page, 0)
    _run_cell(page, 1)
    lab_page.cell(page, 1).locator(".kandev-approval button.kandev-allow").wait_for(timeout=120_000)

    page.on("dialog", lambda dialog: dialog.accept())  # "leave the page with unsaved changes?"
    page.reload()
    page.wait_for_selector(".jp-NotebookPanel .jp-Cell", timeout=120_000)
    claude_cell = lab_page.cell(page, 1)
    allow = claude_cell.locator(".kandev-approval button.kandev-allow")
    allow.wait_for(state="visible", timeout=120_000)  # the widget models came back, then the hello
    page.screenshot(path=str(screenshots / "notebook-tools-after-reload.png"))
    allow.click()

    expect(lab_page.cell(page, 2).locator(".jp-InputArea")).to_contain_text("z = 1", timeout=60_000)
    output = claude_cell.locator(".jp-OutputArea")
    expect(output).to_contain_text("Inserted after your reload.", timeout=60_000)
    expect(claude_cell.locator(".kandev-footer")).to_be_visible(timeout=60_000)  # the static rendering
    lab_page.save(page)
    saved = nbformat.read(jupyter_lab.root / "reload.ipynb", as_version=4)
    mimes = [m for o in saved.cells[1].outputs for m in o.get("data", {})]
    assert "text/html" in mimes and "application/vnd.jupyter.widget-view+json" not in mimes
    assert saved.cells[2].source == "z = 1"


def test_a_tab_opened_while_the_turn_runs_gets_the_live_view_and_can_allow(
    jupyter_lab: LabServer,
    page: Any,
    scripted_model: ScriptedModelServer,
    claude_env: dict[str, str],
    claude_workdir: Path,
    screenshots: Path,
) -> None:
    """A second tab opened on the notebook while the insert's card waits shows the live turn;
    Allow clicked there runs the insert (in the running cell's own tab), and both tabs see the
    turn end."""
    scripted_model.push(
        Reply(tool_use("mcp__kernel__insert_cell", {"source": "w = 2"})), Reply(text("Allowed from the other tab."))
    )
    lab_page.write_notebook(
        jupyter_lab.root / "late.ipynb", setup_code(claude_env, claude_workdir), "%%claude\nAdd a cell"
    )
    lab_page.open_notebook(page, jupyter_lab.notebook_url("late.ipynb"))
    _run_cell(page, 0)
    lab_page.wait_cell_done(page, 0)
    _run_cell(page, 1)
    lab_page.cell(page, 1).locator(".kandev-approval button.kandev-allow").wait_for(timeout=120_000)

    late = page.context.new_page()
    late.goto(jupyter_lab.notebook_url("late.ipynb"))
    allow = lab_page.cell(late, 1).locator(".kandev-approval button.kandev-allow")
    allow.wait_for(state="visible", timeout=120_000)
    late.screenshot(path=str(screenshots / "notebook-tools-opened-during-turn.png"))
    allow.click()

    expect(lab_page.cell(page, 2).locator(".jp-InputArea")).to_contain_text("w = 2", timeout=60_000)
    expect(lab_page.cell(page, 1).locator(".jp-OutputArea")).to_contain_text("Allowed from the other tab.")
    expect(lab_page.cell(late, 1).locator(".jp-OutputArea")).to_contain_text(
        "Allowed from the other tab.", timeout=60_000
    )
    expect(late.locator(CELLS)).to_have_count(2)  # the insert went to the running cell's tab only
