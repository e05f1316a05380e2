"""Issue 4 in a real browser: a supervised `%%claude` cell in JupyterLab, Allow clicked in the page.

JupyterLab 4 runs in headless Chromium; the notebook's kernel runs the real Claude Code CLI
against the scripted model of this test process. The only way the approval can be answered
is the click on the card's Allow button.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from kandev_nb.ledger import RunLedger
from kandev_nb.testing import Reply, ScriptedModelServer, Usage, text, tool_use
from tests.browser import lab_page
from tests.browser.conftest import LabServer
from tests.kernel.conftest import setup_code

pytestmark = pytest.mark.timeout(300)


def test_allow_clicked_in_jupyterlab_runs_the_write_and_shows_the_footer(
    jupyter_lab: LabServer,
    page: Any,
    scripted_model: ScriptedModelServer,
    claude_env: dict[str, str],
    claude_workdir: Path,
    lab_ledger: Path,
    screenshots: Path,
) -> None:
    target = claude_workdir / "hello.txt"
    scripted_model.push(
        Reply(
            text("I will create hello.txt."),
            tool_use("Write", {"file_path": str(target), "content": "written after a click in the browser\n"}),
            usage=Usage(input_tokens=320, output_tokens=41),
        ),
        Reply(text("Created **hello.txt**."), usage=Usage(input_tokens=380, output_tokens=9)),
    )
    lab_page.write_notebook(
        jupyter_lab.root / "approve.ipynb",
        setup_code(claude_env, claude_workdir),
        "%%claude\nCreate hello.txt with a short greeting",
    )
    lab_page.open_notebook(page, jupyter_lab.notebook_url("approve.ipynb"))
    lab_page.command(page, "notebook:run-all-cells")

    claude_cell = lab_page.cell(page, 1)
    allow = claude_cell.locator(".kandev-approval button.kandev-allow")
    allow.wait_for(state="visible", timeout=120_000)
    expect(allow).to_have_text("Allow once")
    expect(claude_cell.locator(".kandev-approval")).to_contain_text("hello.txt")
    assert lab_page.is_running(page, 1), "the cell must still run while the approval waits"
    assert not target.exists()
    page.screenshot(path=str(screenshots / "approval-waiting.png"))

    allow.click()
    lab_page.wait_cell_done(page, 1)

    assert target.read_text() == "written after a click in the browser\n"
    output = claude_cell.locator(".jp-OutputArea-output").first
    expect(output).to_contain_text("Created hello.txt.")
    expect(output).to_contain_text("allowed by you")
    footer = claude_cell.locator(".kandev-footer")
    expect(footer).to_be_visible()
    expect(footer).to_contain_text("cost")
    expect(footer).to_contain_text("in 700")  # tokens: 320 + 380 input over the two API calls
    expect(footer).to_contain_text("out 50")
    page.screenshot(path=str(screenshots / "approval-allowed.png"))

    rows = RunLedger(lab_ledger).runs()
    assert len(rows) == 1 and rows.iloc[0]["input_tokens"] == 700
