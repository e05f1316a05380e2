"""Issue 18.1 and 18.7 in a real browser: a cell's header names its mode and model, and a
turn stopped with the Stop button in the page says "stopped by you", not an error, with the
tokens its cost paid for."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from kandev_nb.ledger import RunLedger
from kandev_nb.testing import Reply, ScriptedModelServer, text
from tests.browser import lab_page
from tests.browser.conftest import LabServer
from tests.kernel.conftest import setup_code

pytestmark = pytest.mark.timeout(300)


def test_stop_clicked_in_jupyterlab_says_stopped_by_you(
    jupyter_lab: LabServer,
    page: Any,
    scripted_model: ScriptedModelServer,
    claude_env: dict[str, str],
    claude_workdir: Path,
    lab_ledger: Path,
    screenshots: Path,
) -> None:
    scripted_model.push(Reply(text("A long answer, word by word. " * 40, chunk_size=3, delay=0.05)))
    lab_page.write_notebook(
        jupyter_lab.root / "stop.ipynb",
        setup_code(claude_env, claude_workdir),
        "%%claude --mode plan\nWrite a long answer",
        "%claude_stats",
    )
    lab_page.open_notebook(page, jupyter_lab.notebook_url("stop.ipynb"))
    lab_page.command(page, "notebook:run-all-cells")
    claude_cell = lab_page.cell(page, 1)
    claude_cell.locator(".kandev-text", has_text="word by word").first.wait_for(state="visible", timeout=120_000)
    expect(claude_cell.locator(".kandev-run-info").first).to_contain_text("claude · default · turn 1 · plan")
    claude_cell.locator("button.kandev-stop").click()
    lab_page.wait_cell_done(page, 1)
    footer = claude_cell.locator(".kandev-footer")
    expect(footer).to_contain_text("stopped by you")
    # the live tab makes mode and model chips ("plan ▾ · claude-… ▾")
    expect(claude_cell.locator(".kandev-header")).to_contain_text(re.compile(r"turn 1 · plan( ▾)? · claude-"))
    output = claude_cell.locator(".jp-OutputArea-output").first
    expect(output).not_to_contain_text("error")
    expect(output).not_to_contain_text("Request interrupted")
    page.screenshot(path=str(screenshots / "stop-stopped-by-you.png"))
    row = RunLedger(lab_ledger).runs().iloc[0]
    assert (bool(row["is_error"]), bool(row["interrupted"])) == (False, True)
    assert row["input_tokens"] > 0 and row["cost_usd"] > 0
    expect(footer).to_contain_text(f"in {row['input_tokens']}")

    # %claude_stats: rendered tables, the stop counted apart from errors.
    lab_page.wait_cell_done(page, 2)
    stats = lab_page.cell(page, 2).locator(".kandev-stats")
    expect(stats.locator("table")).to_have_count(2)  # totals, by model (no tool calls: no tools table)
    expect(stats).to_contain_text("all time")
    expect(stats).not_to_contain_text("datetime")
    lab_page.cell(page, 2).evaluate("el => el.scrollIntoView({block: 'start'})")
    page.screenshot(path=str(screenshots / "stop-claude-stats.png"))
