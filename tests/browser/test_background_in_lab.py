"""Issue 27, points 1 and 7 in JupyterLab in Chromium: a `%%claude --background` cell returns
at once, its turn keeps streaming in that cell while another cell runs, and when it ends the
cell shows what ``-o months`` got ("→ months: DataFrame 4 × 3 (...)" and the first rows), in
the light and the dark theme."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from kandev_nb.testing import Reply, ScriptedModelServer, text, tool_use
from tests.browser import lab_page
from tests.browser.conftest import DOCS_SCREENSHOTS, LabServer
from tests.kernel.conftest import setup_code

pytestmark = pytest.mark.timeout(300)

TYPES = """
from pydantic import BaseModel

class Month(BaseModel):
    month: str
    revenue: float
    customers: int
"""
MONTHS = [{"month": f"2026-0{i}", "revenue": 10.5 * i, "customers": 2 * i} for i in range(1, 5)]
LINE = "→ months: DataFrame 4 × 3 (month string, revenue Float64, customers Int64)"


def _run_cell(page: Any, index: int) -> None:
    page.evaluate(f"() => {{ window.jupyterapp.shell.currentWidget.content.activeCellIndex = {index}; }}")
    lab_page.command(page, "notebook:run-cell")


def _theme(page: Any, name: str) -> None:
    lab_page.command(page, "apputils:change-theme", {"theme": name})
    page.wait_for_function(f"() => document.body.dataset.jpThemeName === {name!r}", timeout=30_000)
    page.wait_for_timeout(500)


def test_background_cell_streams_while_another_cell_runs_then_shows_the_frame(
    jupyter_lab: LabServer,
    page: Any,
    scripted_model: ScriptedModelServer,
    claude_env: dict[str, str],
    claude_workdir: Path,
    screenshots: Path,
) -> None:
    scripted_model.push(
        Reply(
            text("Reading the sales table month by month. " * 12, chunk_size=3, delay=0.05),
            tool_use("StructuredOutput", {"items": MONTHS}),
        )
    )
    lab_page.write_notebook(
        jupyter_lab.root / "background.ipynb",
        setup_code(claude_env, claude_workdir) + TYPES,
        "%%claude --background --schema Month --frame -o months\nRevenue by month",
        "import asyncio\nfor i in range(20):\n    await asyncio.sleep(0.1)\n"
        "print('other cell done', 'months' in globals())",
    )
    lab_page.open_notebook(page, jupyter_lab.notebook_url("background.ipynb"))
    _run_cell(page, 0)
    lab_page.wait_cell_done(page, 0)
    _run_cell(page, 1)
    lab_page.wait_cell_done(page, 1)  # returned at once: it has its execution count...
    claude_cell = lab_page.cell(page, 1)
    claude_cell.locator(".kandev-text", has_text="month by month").first.wait_for(state="visible", timeout=120_000)
    _run_cell(page, 2)  # ... and another cell runs while the turn streams
    lab_page.wait_cell_done(page, 2)
    other = lab_page.cell(page, 2).locator(".jp-OutputArea-output")
    expect(other).to_contain_text("other cell done False")  # months comes when the turn ends
    expect(claude_cell.locator(".kandev-activity")).to_be_visible()  # the live view was still there
    claude_cell.evaluate("el => el.scrollIntoView({block: 'start'})")
    page.screenshot(path=str(screenshots / "background-1-streaming-light.png"))

    summary = claude_cell.locator(".kandev-output-summary")
    expect(summary).to_contain_text(LINE, timeout=120_000)
    expect(summary.locator("table td", has_text="2026-04")).to_have_count(1)
    output = claude_cell.locator(".jp-OutputArea")
    expect(output).not_to_contain_text('{"items"')
    expect(output.locator(".kandev-footer")).to_be_visible()  # the turn's saved rendering replaced the view
    claude_cell.evaluate("el => el.scrollIntoView({block: 'start'})")
    page.screenshot(path=str(screenshots / "background-2-frame-light.png"))
    _theme(page, "JupyterLab Dark")
    page.screenshot(path=str(screenshots / "background-3-frame-dark.png"))
    if os.environ.get("KANDEV_NB_UPDATE_DOCS") == "1":
        shutil.copy(
            screenshots / "background-1-streaming-light.png",
            DOCS_SCREENSHOTS / "background-streaming-while-another-cell-ran.png",
        )
        shutil.copy(screenshots / "background-3-frame-dark.png", DOCS_SCREENSHOTS / "background-frame-summary-dark.png")


def test_run_all_keeps_background_cells_blocking_so_later_cells_see_the_answer(
    jupyter_lab: LabServer,
    page: Any,
    scripted_model: ScriptedModelServer,
    claude_env: dict[str, str],
    claude_workdir: Path,
) -> None:
    """JupyterLab's Run All sends every execute request at once: the cells queued behind a
    background cell make it block (configure(background=True) and --background alike)."""
    scripted_model.push(
        Reply(text("First answer.", delay=0.05)), Reply(tool_use("StructuredOutput", {"items": MONTHS}))
    )
    lab_page.write_notebook(
        jupyter_lab.root / "run_all.ipynb",
        setup_code(claude_env, claude_workdir, background=True) + TYPES,
        "%%claude\nFirst",
        "print('seen:', kandev_nb.last_turn().text)",
        "%%claude --background --schema Month --frame -o months\nRevenue by month",
        "print('rows:', len(months))",
    )
    lab_page.open_notebook(page, jupyter_lab.notebook_url("run_all.ipynb"))
    lab_page.command(page, "notebook:run-all-cells")
    lab_page.wait_cell_done(page, 4)
    expect(lab_page.cell(page, 2).locator(".jp-OutputArea-output")).to_contain_text("seen: First answer.")
    expect(lab_page.cell(page, 4).locator(".jp-OutputArea-output")).to_contain_text("rows: 4")
    expect(lab_page.cell(page, 3).locator(".kandev-output-summary")).to_contain_text(LINE)
