"""Issue 27 point 3 in JupyterLab 4 in Chromium: revoke an "Allow for session" grant with a click.

A turn asks for ``touch a1.txt``; "Allow `touch …` for this session" is clicked on the card.
Under the turn, **Permissions** opens the session's panel: the mode, the grant
``Bash(touch:*)`` and the cell that gave it, the rules the CLI loaded (a deny rule of the
project's ``.claude/settings.json``). **Revoke** is clicked; the next turn's ``touch a2.txt``
asks again (a card appears). Screenshots: ``artifacts/screenshots/permissions-panel-{light,dark}.png``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import nbformat
import pytest
from playwright.sync_api import expect

from kandev_nb.testing import Reply, ScriptedModelServer, text, tool_use
from tests.browser import lab_page
from tests.browser.conftest import LabServer
from tests.browser.test_cards_in_lab import _theme
from tests.browser.test_turn_actions_in_lab import _run_cell, _shot
from tests.kernel.conftest import setup_code

pytestmark = pytest.mark.timeout(300)


def test_a_grant_revoked_in_the_panel_is_asked_again(
    jupyter_lab: LabServer,
    page: Any,
    scripted_model: ScriptedModelServer,
    claude_env: dict[str, str],
    claude_workdir: Path,
    screenshots: Path,
) -> None:
    (claude_workdir / ".claude").mkdir()
    (claude_workdir / ".claude" / "settings.json").write_text('{"permissions": {"deny": ["Read(./.env)"]}}')
    scripted_model.push(
        Reply(tool_use("Bash", {"command": "touch a1.txt", "description": "t"})),
        Reply(text("one")),
        Reply(tool_use("Bash", {"command": "touch a2.txt", "description": "t"})),
        Reply(text("two")),
    )
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = dict(lab_page.KERNELSPEC)
    nb.cells = [
        nbformat.v4.new_code_cell(setup_code(claude_env, claude_workdir)),
        nbformat.v4.new_code_cell("%%claude\nTouch one"),
        nbformat.v4.new_code_cell("%%claude\nTouch two"),
    ]
    nbformat.write(nb, jupyter_lab.root / "perms.ipynb")
    lab_page.open_notebook(page, jupyter_lab.notebook_url("perms.ipynb"))
    _run_cell(page, 0)
    lab_page.wait_cell_done(page, 0)
    _run_cell(page, 1)
    first = lab_page.cell(page, 1)
    grant = first.locator(".kandev-approval button.kandev-allow-always")
    expect(grant).to_contain_text("touch", timeout=120_000)
    grant.click()
    count = lab_page.wait_cell_done(page, 1)

    first.locator("button.kandev-permissions-toggle").click()
    panel = first.locator(".kandev-permissions")
    expect(panel).to_contain_text("Bash(touch:*)", timeout=60_000)
    expect(panel).to_contain_text(f"given in cell [{count}]")
    expect(panel).to_contain_text("Read(./.env)")
    _shot(page, panel, screenshots / "permissions-panel-light.png")
    _theme(page, "JupyterLab Dark")
    _shot(page, panel, screenshots / "permissions-panel-dark.png")
    panel.locator("button.kandev-revoke").click()
    expect(panel).to_contain_text("revoked: asked again", timeout=30_000)

    _run_cell(page, 2)  # old main: the kept grant ran `touch a2.txt` unasked
    second = lab_page.cell(page, 2)
    expect(second.locator(".kandev-approval")).to_contain_text("touch a2.txt", timeout=120_000)
    second.locator(".kandev-approval button.kandev-allow").last.click()
    lab_page.wait_cell_done(page, 2)
    assert (claude_workdir / "a2.txt").exists()
