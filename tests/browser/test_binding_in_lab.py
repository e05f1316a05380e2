"""Issue 23 point 1 in a real browser: two subagents race on one cell of the open tab.

JupyterLab 4 in headless Chromium, the real CLI, the scripted model, the real bridge. The main
agent reads the notebook and starts two subagents in one message: one asks to ``run_cell`` the
``target`` cell (its card shows ``print('hello')``); the other, once that card is on the page,
``edit_cell``s the same cell, allowed by a ``Rules`` policy. The edit shows in the tab; then
Allow is clicked on the run card. The edited code must not run: the call is refused, the tool
card says the cell changed after Claude asked, and the cell's output area stays empty.

On the old main the edited code ran (``EDITED CODE RAN`` in the cell's output area).
Screenshot: ``artifacts/screenshots/binding-refused-after-edit.png``.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import nbformat
import pytest
from playwright.sync_api import expect

from kandev_nb.testing import Reply, ScriptedModelServer, tool_use
from tests.browser import lab_page
from tests.browser.conftest import LabServer
from tests.kernel.conftest import setup_code
from tests.kernel_tools.test_binding_races import EDIT, RUN, WAIT_S, agent, reply, router

pytestmark = pytest.mark.timeout(300)

EDITED = "print('EDITED CODE RAN')"


def test_an_edit_after_the_run_card_is_refused_in_the_tab(
    jupyter_lab: LabServer,
    page: Any,
    scripted_model: ScriptedModelServer,
    claude_env: dict[str, str],
    claude_workdir: Path,
    screenshots: Path,
) -> None:
    card_on_page = threading.Event()

    def edit_after_the_card() -> Reply:
        card_on_page.wait(WAIT_S)  # the model server's worker thread
        return Reply(tool_use(EDIT, {"cell_id": "target", "source": EDITED}))

    route = router(
        {
            "MAIN": [
                reply(tool_use("mcp__kernel__read_notebook", {})),
                reply(agent("SUB-RUN"), agent("SUB-EDIT")),
            ],
            "SUB-RUN": [reply(tool_use(RUN, {"cell_id": "target"}))],
            "SUB-EDIT": [edit_after_the_card],
        }
    )
    scripted_model.push(*[route] * 12)
    setup = setup_code(claude_env, claude_workdir) + f"kandev_nb.configure(approve=kandev_nb.Rules(allow=['{EDIT}']))\n"
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = dict(lab_page.KERNELSPEC)
    nb.cells = [
        nbformat.v4.new_code_cell(setup, id="setup"),
        nbformat.v4.new_code_cell("print('hello')", id="target"),
        nbformat.v4.new_code_cell("%%claude\nMAIN: run the target cell and fix it, with two subagents", id="claude"),
    ]
    nbformat.write(nb, jupyter_lab.root / "race.ipynb")

    lab_page.open_notebook(page, jupyter_lab.notebook_url("race.ipynb"))
    for index in (0, 2):
        lab_page.cell(page, index).locator(".jp-InputPrompt").click()
        lab_page.command(page, "notebook:run-cell")
        if index == 0:
            lab_page.wait_cell_done(page, 0)
    try:
        claude_cell = lab_page.cell(page, 2)
        card = claude_cell.locator(".kandev-approval", has_text="run_cell").last
        expect(card.locator(".kandev-code")).to_contain_text("print('hello')", timeout=120_000)
        card_on_page.set()
        target = lab_page.cell(page, 1)
        expect(target.locator(".jp-InputArea")).to_contain_text("EDITED CODE RAN", timeout=60_000)  # the edit landed
        card.evaluate("el => el.scrollIntoView({block: 'center'})")
        page.screenshot(path=str(screenshots / "binding-card-waits-after-edit.png"))
        card.locator("button.kandev-allow").click()
        lab_page.wait_cell_done(page, 2)
    finally:
        card_on_page.set()

    subagent = claude_cell.locator("details", has_text="SUB-RUN").first  # its calls fold into its card
    subagent.locator("summary").first.click()
    expect(subagent).to_contain_text("run_cell refused: cell 1 (id target) changed after you asked")
    refusal = subagent
    expect(target.locator(".jp-OutputArea")).not_to_contain_text("EDITED CODE RAN")
    assert target.locator(".jp-InputPrompt").inner_text().strip() in ("[ ]:", "[]:", ""), "the cell never ran"
    refusal.evaluate("el => el.scrollIntoView({block: 'center'})")
    page.screenshot(path=str(screenshots / "binding-refused-after-edit.png"))
