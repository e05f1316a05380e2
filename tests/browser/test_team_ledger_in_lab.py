"""Issue 15 in a real browser: the footer shows the spend against the user's daily budget,
and ``%claude_stats --team`` renders per-user and per-notebook tables."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from kandev_nb.ledger import current_user
from kandev_nb.testing import Reply, ScriptedModelServer, text
from tests.browser import lab_page
from tests.browser.conftest import LabServer
from tests.kernel.conftest import setup_code

pytestmark = pytest.mark.timeout(300)


def test_budget_footer_and_team_stats_in_jupyterlab(
    jupyter_lab: LabServer,
    page: Any,
    scripted_model: ScriptedModelServer,
    claude_env: dict[str, str],
    claude_workdir: Path,
    screenshots: Path,
) -> None:
    scripted_model.push(Reply(text("Within the budget.")))
    setup = setup_code(claude_env, claude_workdir, budget_usd=2.0, budget_scope="user", budget_period="day")
    lab_page.write_notebook(jupyter_lab.root / "team.ipynb", setup, "%%claude\nsay something", "%claude_stats --team")
    lab_page.open_notebook(page, jupyter_lab.notebook_url("team.ipynb"))
    lab_page.command(page, "notebook:run-all-cells")
    lab_page.wait_cell_done(page, 1)
    claude_cell = lab_page.cell(page, 1)
    budget = claude_cell.locator(".kandev-budget").first
    expect(budget).to_contain_text(f"budget of user {current_user()}, today")
    expect(budget).to_contain_text("of the $2.00 budget")  # the text, not "$...$" typeset as LaTeX
    expect(budget.locator("mjx-container")).to_have_count(0)
    page.screenshot(path=str(screenshots / "team-budget-footer.png"))
    lab_page.wait_cell_done(page, 2)
    stats = lab_page.cell(page, 2).locator(".kandev-stats")
    expect(stats).to_contain_text("Per user")
    expect(stats).to_contain_text("Per notebook")
    expect(stats).to_contain_text(current_user())
    lab_page.cell(page, 2).evaluate("el => el.scrollIntoView({block: 'start'})")
    page.screenshot(path=str(screenshots / "team-claude-stats.png"))
