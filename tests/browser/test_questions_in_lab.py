"""Issue 19 in JupyterLab/Chromium: the AskUserQuestion card clicked (an option, toggles, an
"Other" text, Submit) and a permission-suggestion button clicked."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from kandev_nb.testing import Reply, ScriptedModelServer, text, tool_use
from tests.browser import lab_page
from tests.browser.conftest import LabServer
from tests.kernel.conftest import setup_code

pytestmark = pytest.mark.timeout(400)

QUESTIONS = {
    "questions": [
        {
            "question": "Which colour?",
            "header": "Colour",
            "multiSelect": False,
            "options": [
                {"label": "Red", "description": "warm"},
                {"label": "Blue", "description": "cool", "preview": "color: #0000ff"},
            ],
        },
        {
            "question": "Which sides?",
            "header": "Sides",
            "multiSelect": True,
            "options": [
                {"label": "Fries", "description": "salted"},
                {"label": "Salad", "description": "green"},
                {"label": "Soup", "description": "hot"},
            ],
        },
        {
            "question": "Anything else?",
            "header": "Notes",
            "multiSelect": False,
            "options": [{"label": "No", "description": ""}, {"label": "Yes", "description": ""}],
        },
    ]
}


def test_the_question_card_is_answered_with_clicks_and_typed_text(
    jupyter_lab: LabServer,
    page: Any,
    scripted_model: ScriptedModelServer,
    claude_env: dict[str, str],
    claude_workdir: Path,
    screenshots: Path,
) -> None:
    scripted_model.push(Reply(tool_use("AskUserQuestion", QUESTIONS)), Reply(text("Blue it is, with fries and soup.")))
    lab_page.write_notebook(
        jupyter_lab.root / "ask.ipynb", setup_code(claude_env, claude_workdir), "%%claude\nAsk me about lunch"
    )
    lab_page.open_notebook(page, jupyter_lab.notebook_url("ask.ipynb"))
    lab_page.command(page, "notebook:run-all-cells")
    cell = lab_page.cell(page, 1)
    card = cell.locator(".kandev-question-card:not(.kandev-decided)")
    card.locator(".kandev-question-submit").wait_for(state="visible", timeout=120_000)
    expect(card.locator(".kandev-question-chip")).to_have_text(["Colour", "Sides", "Notes"])
    card.locator('.kandev-question-option[data-label="Blue"]').focus()
    expect(card.locator(".kandev-question-preview").first).to_have_text("color: #0000ff")
    card.locator('.kandev-question-option[data-label="Blue"]').click()
    card.locator('.kandev-question-option[data-label="Fries"]').click()
    card.locator('.kandev-question-option[data-label="Soup"]').click()
    other = card.locator(".kandev-question-other").nth(2)
    other.click()
    other.press_sequentially("Bring napkins", delay=30)
    page.screenshot(path=str(screenshots / "question-card-chosen.png"))
    card.locator(".kandev-question-submit").click()
    lab_page.wait_cell_done(page, 1)
    sent = json.dumps([r.messages for r in scripted_model.main_requests])
    assert (
        '\\"Which colour?\\"=\\"Blue\\", \\"Which sides?\\"=\\"Fries, Soup\\", '
        '\\"Anything else?\\"=\\"Bring napkins\\"' in sent
    ), sent[-1500:]
    output = cell.locator(".jp-OutputArea-output").first
    expect(output).to_contain_text("Answer: Fries, Soup")
    expect(output).to_contain_text("Answer: Bring napkins")
    page.screenshot(path=str(screenshots / "question-card-answered.png"))


def test_a_permission_suggestion_button_saves_its_rule(
    jupyter_lab: LabServer,
    page: Any,
    scripted_model: ScriptedModelServer,
    claude_env: dict[str, str],
    claude_workdir: Path,
    screenshots: Path,
) -> None:
    npm = {"command": "npm test -- --watch=false", "description": "run the tests"}
    scripted_model.push(Reply(tool_use("Bash", npm)), Reply(text("Tests ran.")))
    lab_page.write_notebook(
        jupyter_lab.root / "rule.ipynb", setup_code(claude_env, claude_workdir), "%%claude\nRun the tests"
    )
    lab_page.open_notebook(page, jupyter_lab.notebook_url("rule.ipynb"))
    lab_page.command(page, "notebook:run-all-cells")
    cell = lab_page.cell(page, 1)
    button = cell.locator("button.kandev-allow-suggestion")
    button.wait_for(state="visible", timeout=120_000)
    expect(button).to_have_text("Always allow Bash(npm test *) in this project (.claude/settings.local.json)")
    page.screenshot(path=str(screenshots / "approval-suggestion-button.png"))
    button.click()
    lab_page.wait_cell_done(page, 1)
    local = json.loads((claude_workdir / ".claude" / "settings.local.json").read_text())
    assert "Bash(npm test *)" in local["permissions"]["allow"]
    expect(cell.locator(".jp-OutputArea-output").first).to_contain_text(
        "Saved by the CLI: Always allow Bash(npm test *) in this project"
    )
    page.screenshot(path=str(screenshots / "approval-suggestion-saved.png"))
