"""The fleet's board in JupyterLab 4 in Chromium: the queue card naming its row, "Allow for
all rows", and the saved board (screenshots fleet-board-*.png)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from kandev_nb.testing import ScriptedModelServer
from tests.browser import lab_page
from tests.browser.conftest import LabServer
from tests.fleet.conftest import answer_per_row
from tests.fleet.test_fleet_queue_budget import touch_then_answer
from tests.kernel.conftest import setup_code

pytestmark = pytest.mark.timeout(400)


def test_the_board_queues_rows_and_allow_for_all_rows_answers_them(
    jupyter_lab: LabServer,
    page: Any,
    scripted_model: ScriptedModelServer,
    claude_env: dict[str, str],
    claude_workdir: Path,
    screenshots: Path,
) -> None:
    scripted_model.push(*[answer_per_row(touch_then_answer)] * 20)
    lab_page.write_notebook(
        jupyter_lab.root / "fleet.ipynb",
        setup_code(claude_env, claude_workdir) + "import pandas as pd\nrows = pd.DataFrame({'id': [1, 2, 3]})",
        "%%claude --over rows -o out --concurrency 2 --fleet lab\nHandle ticket {id}.",
    )
    lab_page.open_notebook(page, jupyter_lab.notebook_url("fleet.ipynb"))
    lab_page.command(page, "notebook:run-all-cells")
    cell = lab_page.cell(page, 1)
    allow_all = cell.locator("button.kandev-fleet-allow-all")
    allow_all.wait_for(state="visible", timeout=120_000)
    expect(cell.locator(".kandev-fleet-queue")).to_contain_text(" of 3 · Bash · touch out-")
    # the rows waiting for a person come first, with the command they ask for (issue 33 point 7)
    expect(cell.locator(".kandev-fleet-table")).to_contain_text("waiting · Bash · touch out-")
    expect(allow_all).to_contain_text("for all rows")
    page.screenshot(path=str(screenshots / "fleet-board-1-queue.png"))
    allow_all.click()
    lab_page.wait_cell_done(page, 1)
    output = cell.locator(".jp-OutputArea-output")
    expect(output).to_contain_text("3 done of 3")
    expect(output).to_contain_text("allow for all rows: Bash(touch:*)")
    page.screenshot(path=str(screenshots / "fleet-board-2-done.png"))
    assert sorted(p.name for p in claude_workdir.glob("out-*.txt")) == ["out-1.txt", "out-2.txt", "out-3.txt"]
