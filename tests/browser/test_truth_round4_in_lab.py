"""Issue 34 in JupyterLab 4 in headless Chromium, with the real CLI: what acceptEdits ran says
so on its card ("allowed by acceptEdits mode", point 4), the StructuredOutput card shows the
records, not the ``{"items": ...}`` wrapper (point 7), the footer has no "cache read 0", and its
context gauge and each of its figures stay on one line in a narrow window (point 8).

Screenshot: ``truth-round4-accept-edits.png``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from kandev_nb.testing import Reply, ScriptedModelServer, text, tool_use
from tests.browser import lab_page
from tests.browser.conftest import LabServer
from tests.kernel.conftest import setup_code

pytestmark = pytest.mark.timeout(400)

ONE_LINE = "el => new Set([...el.getClientRects()].map(r => Math.round(r.bottom))).size"
"""How many lines an inline element's boxes sit on (1: it did not wrap)."""

MONTHS = """
from pydantic import BaseModel

class Month(BaseModel):
    month: str
    revenue: float
"""


def test_accept_edits_cards_a_schema_card_and_a_one_line_gauge_in_jupyterlab(
    jupyter_lab: LabServer,
    page: Any,
    scripted_model: ScriptedModelServer,
    claude_env: dict[str, str],
    claude_workdir: Path,
    screenshots: Path,
) -> None:
    (claude_workdir / "old.txt").write_text("old\n")
    scripted_model.push(
        Reply(text("Removing the old file."), tool_use("Bash", {"command": "rm old.txt", "description": "Remove"})),
        Reply(text("Removed `old.txt`; revenue rose from $41.5k to $61k.")),
        Reply(tool_use("StructuredOutput", {"items": [{"month": "2026-07", "revenue": 41.5}]})),
    )
    lab_page.write_notebook(
        jupyter_lab.root / "round4.ipynb",
        setup_code(claude_env, claude_workdir),
        "%%claude --mode acceptEdits\nRemove old.txt",
        MONTHS,
        "%%claude --schema Month --frame -o months\nThe months",
    )
    page.set_viewport_size({"width": 760, "height": 1000})  # a narrow window: the header and footer are tight
    lab_page.open_notebook(page, jupyter_lab.notebook_url("round4.ipynb"))
    lab_page.command(page, "notebook:run-all-cells")
    lab_page.wait_cell_done(page, 3)
    assert not (claude_workdir / "old.txt").exists()

    output = lab_page.cell(page, 1).locator(".jp-OutputArea-output").first
    expect(output).to_contain_text("allowed by acceptEdits mode")
    expect(output).not_to_contain_text("permission settings")
    footer = output.locator(".kandev-footer")
    expect(footer).to_contain_text("in ")
    expect(footer).not_to_contain_text("cache read 0")
    gauge = footer.locator(".kandev-context")
    expect(gauge).to_have_count(1)
    assert gauge.evaluate(ONE_LINE) == 1  # it does not wrap
    figures = footer.locator(".kandev-kv")
    assert figures.evaluate_all(f"els => els.map({ONE_LINE})") == [1] * figures.count()  # "model claude-…" whole
    output.evaluate("el => el.scrollIntoView({block: 'start'})")
    output.screenshot(path=str(screenshots / "truth-round4-accept-edits.png"))

    schema = lab_page.cell(page, 3).locator(".jp-OutputArea")
    expect(schema).to_contain_text("→ months: DataFrame 1 × 2")
    card = schema.locator(".kandev-tool-card").first
    expect(card).to_contain_text("StructuredOutput")
    card.locator("summary").first.click()  # folded when the turn ended: open it
    expect(card).to_contain_text("1 record")
    expect(card).to_contain_text('"month": "2026-07"')
    expect(card).not_to_contain_text('"items"')
    expect(card).not_to_contain_text("permission settings")  # an answer, not a permission matter
    expect(schema.locator("button.kandev-insert-markdown")).to_have_count(0)  # no answer text to insert
    expect(lab_page.cell(page, 1).locator("button.kandev-insert-markdown")).to_have_count(1)
    card.screenshot(path=str(screenshots / "truth-round4-structured-card.png"))
