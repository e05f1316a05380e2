"""Issue 27 points 4 and 9 in JupyterLab 4 in headless Chromium, with the real CLI.

* Point 4: a finished turn shows "Insert as Markdown cell below" (issue 34 point 6: the cell
  keeps "$41.5k" as dollars, not LaTeX); each code block of the answer
  "Insert as code cell below" and "Copy". Clicks create real cells below the `%%claude` cell
  (in click order) through the tab's bridge; the inserted code cell runs. The saved notebook
  holds no button (they are the live tab's, never in the output's HTML).
* Point 9: the header's mode and model are chips; choosing "plan" and a model changes the next
  turn: its header says plan and the CLI asks the scripted model server for that model.

Screenshots (light and dark): ``answer-actions-*.png``, ``header-chips-*.png``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from kandev_nb.agent.permissions import MODES
from kandev_nb.testing import Reply, ScriptedModelServer, text, tool_use
from tests.browser import lab_page, theme_shots
from tests.browser.conftest import LabServer
from tests.kernel.conftest import setup_code

pytestmark = pytest.mark.timeout(400)

ANSWER = (
    "Revenue rose from $41.5k in July to $61k. Here is the code:\n\n```python\nprint('from the answer')\n```\n\n"
    "And the shell line:\n\n```bash\necho 'two words'\n```\n\nThat is all."
)
INSERTED = ANSWER.replace("$41.5k", "\\\\$41.5k").replace("$61k", "\\\\$61k")
"""The Markdown cell the answer becomes: its dollars escaped, so the cell shows dollars, not
LaTeX (issue 34, point 6); the code blocks as they were."""
_CELLS = """() => window.jupyterapp.shell.currentWidget.content.model.sharedModel.cells
  .map(c => [c.cell_type, c.getSource()])"""


def test_answers_become_cells_and_the_chips_choose_the_next_turn(
    jupyter_lab: LabServer,
    page: Any,
    scripted_model: ScriptedModelServer,
    claude_env: dict[str, str],
    claude_workdir: Path,
    screenshots: Path,
) -> None:
    scripted_model.push(Reply(text(ANSWER)), Reply(text("Planned.")))
    lab_page.write_notebook(
        jupyter_lab.root / "answers.ipynb",
        setup_code(claude_env, claude_workdir),
        "%%claude\nShow me some code",
        "%%claude\nAgain, please",
    )
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=jupyter_lab.url)
    lab_page.open_notebook(page, jupyter_lab.notebook_url("answers.ipynb"))
    for index in (0, 1):
        lab_page.cell(page, index).locator(".jp-InputPrompt").click()
        lab_page.command(page, "notebook:run-cell")
        lab_page.wait_cell_done(page, index)
    claude_cell = lab_page.cell(page, 1)
    output = claude_cell.locator(".jp-OutputArea-output").first
    expect(output.locator("button.kandev-insert-markdown")).to_have_count(1, timeout=30_000)
    expect(output.locator("button.kandev-insert-code")).to_have_count(2)
    expect(output.locator("button.kandev-copy-code")).to_have_count(2)
    theme_shots.shot_both(page, screenshots, "answer-actions", output.locator(".kandev-answer-actions"))

    output.locator("button.kandev-copy-code").nth(1).click()
    expect(output.locator("button.kandev-copy-code").nth(1)).to_have_text("Copied")
    assert page.evaluate("() => navigator.clipboard.readText()") == "echo 'two words'"

    output.locator("button.kandev-insert-code").first.click()
    output.locator("button.kandev-insert-code").nth(1).click()
    output.locator("button.kandev-insert-markdown").click()
    page.wait_for_function(f"() => ({_CELLS})().length === 6")
    cells = page.evaluate(_CELLS)
    assert cells[2] == ["code", "print('from the answer')"]
    assert cells[3] == ["code", "%%bash\necho 'two words'"]  # a shell block runs as a shell cell
    assert cells[4] == ["markdown", INSERTED]  # in click order, below the %%claude cell
    assert cells[5] == ["code", "%%claude\nAgain, please"]
    lab_page.cell(page, 4).locator(".jp-InputPrompt").click()  # render the inserted Markdown cell
    lab_page.command(page, "notebook:run-cell")
    rendered = lab_page.cell(page, 4).locator(".jp-RenderedMarkdown")
    expect(rendered).to_contain_text("Revenue rose from $41.5k in July to $61k.")  # dollars, not math
    assert rendered.locator("mjx-container").count() == 0
    for index, printed in ((2, "from the answer"), (3, "two words")):
        lab_page.cell(page, index).locator(".jp-InputPrompt").click()
        lab_page.command(page, "notebook:run-cell")
        expect(lab_page.cell(page, index).locator(".jp-OutputArea-output")).to_contain_text(printed)

    # Point 9: the header chips choose the next turn's mode and model.
    mode_chip = output.locator(".kandev-chip-mode")
    expect(mode_chip).to_contain_text("supervised ▾")
    mode_chip.click()
    expect(mode_chip.locator("button.kandev-chip-choice")).to_have_text(list(MODES))
    theme_shots.shot_both(page, screenshots, "header-chip-menu", mode_chip)
    mode_chip.locator("button.kandev-chip-choice", has_text="plan").click()
    expect(mode_chip).to_contain_text("→ plan next")
    model_chip = output.locator(".kandev-chip-model")
    model_chip.click()
    page.once("dialog", lambda dialog: dialog.accept("claude-other-1"))
    model_chip.locator("button.kandev-chip-choice", has_text="other").click()
    expect(model_chip).to_contain_text("→ claude-other-1 next")
    theme_shots.shot_both(page, screenshots, "header-chips", mode_chip)
    lab_page.cell(page, 5).locator(".jp-InputPrompt").click()
    lab_page.command(page, "notebook:run-cell")
    lab_page.wait_cell_done(page, 5)
    expect(lab_page.cell(page, 5).locator(".kandev-run-info")).to_contain_text(
        re.compile(r"claude · default · turn \d+ · plan")
    )
    assert scripted_model.main_requests[-1].body["model"] == "claude-other-1"  # on the wire

    lab_page.save(page)
    saved = json.loads((jupyter_lab.root / "answers.ipynb").read_text())
    html = "".join("".join(o.get("data", {}).get("text/html", "")) for o in saved["cells"][1]["outputs"])
    assert "kandev-answer-host" in html and "Insert as" not in html and "kandev-chip" not in html


def test_the_plan_card_offers_the_clis_choices_in_lab(
    jupyter_lab: LabServer,
    page: Any,
    scripted_model: ScriptedModelServer,
    claude_env: dict[str, str],
    claude_workdir: Path,
    screenshots: Path,
) -> None:
    scripted_model.push(
        Reply(tool_use("ExitPlanMode", {"plan": "## Plan\n\n1. Write **plan.txt**"})),
        Reply(tool_use("Write", {"file_path": str(claude_workdir / "plan.txt"), "content": "p\n"})),
        Reply(text("Planned and written.")),
    )
    lab_page.write_notebook(
        jupyter_lab.root / "plan.ipynb", setup_code(claude_env, claude_workdir), "%%claude --mode plan\nPlan it"
    )
    lab_page.open_notebook(page, jupyter_lab.notebook_url("plan.ipynb"))
    lab_page.command(page, "notebook:run-all-cells")
    claude_cell = lab_page.cell(page, 1)
    card = claude_cell.locator(".kandev-approval:not(.kandev-decided)")
    accept = card.locator("button.kandev-approve-accept-edits")
    accept.wait_for(state="visible", timeout=120_000)
    expect(card.locator("button.kandev-approve-keep-asking")).to_have_text("Approve, keep asking")
    expect(accept).to_have_text("Approve and auto-accept edits")
    expect(card.locator("button.kandev-allow")).to_have_count(0)
    theme_shots.shot_both(page, screenshots, "plan-card-choices", card)
    accept.click()
    lab_page.wait_cell_done(page, 1)
    assert (claude_workdir / "plan.txt").read_text() == "p\n"  # the Write did not ask
    output = claude_cell.locator(".jp-OutputArea-output").first
    expect(output).to_contain_text("Planned and written.")
    expect(output.locator(".kandev-chip-mode")).to_contain_text("plan ▾")


TROJAN = (
    "Use this:\n\n```python\n"
    'access_level = "user\u2067 # only for admins: \u2069"\n'
    'env = "pr\u200bod"\n'
    "print(access_level, env == 'prod')\n```\n"
)


def test_hidden_characters_of_an_answer_code_block_are_marked_and_left_out_of_the_inserted_cell(
    jupyter_lab: LabServer,
    page: Any,
    scripted_model: ScriptedModelServer,
    claude_env: dict[str, str],
    claude_workdir: Path,
    screenshots: Path,
) -> None:
    """Issue 32 point 6: an answer's fenced block showed a Trojan Source line raw (a string that
    reads as a comment) and a zero-width space inside "prod"; Insert and Copy passed them on."""
    scripted_model.push(Reply(text(TROJAN)))
    lab_page.write_notebook(
        jupyter_lab.root / "trojan.ipynb", setup_code(claude_env, claude_workdir), "%%claude\nShow me the code"
    )
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=jupyter_lab.url)
    lab_page.open_notebook(page, jupyter_lab.notebook_url("trojan.ipynb"))
    lab_page.command(page, "notebook:run-all-cells")
    lab_page.wait_cell_done(page, 1)
    output = lab_page.cell(page, 1).locator(".jp-OutputArea-output").first
    expect(output.locator("button.kandev-insert-code")).to_have_count(1, timeout=30_000)
    block = output.locator(".kandev-text pre.kandev-code")
    expect(block.locator(".kandev-invisible")).to_have_count(3)
    expect(block).to_contain_text("<U+2067>")
    expect(block).to_contain_text("pr<U+200B>od")
    expect(output.locator(".kandev-text .kandev-invisible-warning")).to_contain_text(
        "3 invisible or direction-changing characters"
    )
    page.screenshot(path=str(screenshots / "answer-hidden-characters.png"))

    output.locator("button.kandev-copy-code").click()
    expect(output.locator("button.kandev-copy-code")).to_have_text("Copied")
    copied = page.evaluate("() => navigator.clipboard.readText()")
    assert "\u2067" not in copied and "\u200b" not in copied and "<U+" not in copied
    output.locator("button.kandev-insert-code").click()
    page.wait_for_function(f"() => ({_CELLS})().length === 3")
    inserted = page.evaluate(_CELLS)[2]
    assert inserted == [
        "code",
        'access_level = "user # only for admins: "\nenv = "prod"\nprint(access_level, env == \'prod\')',
    ]
    expect(output.locator(".kandev-removed-note")).to_have_text(
        "Without 3 invisible or direction-changing characters (U+2067, U+2069, U+200B): removed from the code."
    )
    lab_page.cell(page, 2).locator(".jp-InputPrompt").click()
    lab_page.command(page, "notebook:run-cell")
    expect(lab_page.cell(page, 2).locator(".jp-OutputArea-output")).to_contain_text("True")
