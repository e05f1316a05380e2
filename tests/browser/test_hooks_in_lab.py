"""Issue 14 in JupyterLab: a Python hook's deny on the tool card ("denied by hook no_rm") and
a structured answer as a DataFrame, with the real CLI in the notebook's kernel against the
scripted model. Screenshots go to ``artifacts/screenshots/hooks-*``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from kandev_nb.testing import Reply, ScriptedModelServer, text, tool_use
from tests.browser import lab_page
from tests.browser.conftest import LabServer
from tests.kernel.conftest import setup_code

pytestmark = pytest.mark.timeout(420)

HOOKS = """from pydantic import BaseModel

class City(BaseModel):
    name: str
    population: int

def no_rm(input_data, tool_use_id, context):
    if input_data["tool_input"].get("command", "").startswith("rm "):
        return {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                "permissionDecisionReason": "deleting files is not allowed here"}}
    return {}

guard = {"PreToolUse": [kandev_nb.HookMatcher(matcher="Bash", hooks=[no_rm])]}"""


def test_hook_denial_on_the_card_and_a_frame_in_jupyterlab(
    jupyter_lab: LabServer,
    page: Any,
    scripted_model: ScriptedModelServer,
    claude_env: dict[str, str],
    claude_workdir: Path,
    screenshots: Path,
) -> None:
    (claude_workdir / "data").mkdir()
    scripted_model.push(
        Reply(tool_use("Bash", {"command": "rm -rf data", "description": "Delete raw data"})),
        Reply(text("The hook refused; I left `data/` alone.")),
        Reply(
            tool_use(
                "StructuredOutput",
                {"items": [{"name": "Lyon", "population": 520000}, {"name": "Nice", "population": 340000}]},
            )
        ),
    )
    lab_page.write_notebook(
        jupyter_lab.root / "hooks.ipynb",
        setup_code(claude_env, claude_workdir),
        HOOKS,
        "%%claude --hooks guard\nClean up data/",
        "%%claude --schema City --frame -o cities\nTwo French cities",
        "cities",
    )
    lab_page.open_notebook(page, jupyter_lab.notebook_url("hooks.ipynb"))
    lab_page.command(page, "notebook:run-all-cells")
    lab_page.wait_cell_done(page, 4)
    assert (claude_workdir / "data").is_dir()

    output = lab_page.cell(page, 2).locator(".jp-OutputArea-output").first
    denied = output.locator("details.kandev-tool-card.kandev-status-denied")
    expect(denied).to_have_count(1)
    expect(denied).to_contain_text("denied by hook no_rm")
    denied.locator("summary").first.click()
    expect(denied).to_contain_text("deleting files is not allowed here")
    lab_page.cell(page, 2).evaluate("el => el.scrollIntoView({block: 'start'})")
    page.screenshot(path=str(screenshots / "hooks-1-denied-by-hook.png"))

    table = lab_page.cell(page, 4).locator(".jp-OutputArea-output table")
    expect(table).to_contain_text("Lyon")
    expect(table).to_contain_text("340000")
    lab_page.cell(page, 3).evaluate("el => el.scrollIntoView({block: 'start'})")
    page.screenshot(path=str(screenshots / "hooks-2-frame.png"))
