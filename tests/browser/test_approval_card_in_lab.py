"""Issue 18 (points 2, 3, 10) in a real browser: the approval card in JupyterLab, driven by keys and clicks.

* 18.2: a deny reason typed at a person's speed (a delay between keys) reaches the card,
  the ledger row and the model whole; Enter denies; "Edit then allow" sends what was typed.
* 18.10: the proposed action shows once, the approval controls on its tool card.
* 18.3: a later approval below long finished cards comes into view (folded cards, no
  focus taken from a cell being typed in) and shows the time left before the timeout.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from kandev_nb.ledger import RunLedger
from kandev_nb.testing import Reply, ScriptedModelServer, text, tool_use
from tests.browser import lab_page, theme_shots
from tests.browser.conftest import DOCS_SCREENSHOTS, LabServer
from tests.kernel.conftest import setup_code

pytestmark = pytest.mark.timeout(400)

REASON = "No! That folder is our only copy of the raw data, nothing may delete it."
PENDING = ".kandev-approval:not(.kandev-decided)"
_IN_VIEW = """sel => {
  const el = document.querySelector(sel);
  if (!el) return false;
  const r = el.getBoundingClientRect();
  return r.height > 0 && r.top >= 0 && r.bottom <= window.innerHeight;
}"""


def _shot(page: Any, path: Path) -> None:
    """Screenshot to `path` (artifacts/screenshots/); with ``KANDEV_NB_UPDATE_DOCS=1`` also to docs/screenshots/."""
    page.screenshot(path=str(path))
    if os.environ.get("KANDEV_NB_UPDATE_DOCS") == "1":
        DOCS_SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        shutil.copy(path, DOCS_SCREENSHOTS / path.name)


def _sent_to_model(scripted_model: ScriptedModelServer) -> str:
    return json.dumps([r.messages for r in scripted_model.main_requests])


def test_a_typed_reason_arrives_whole_and_the_action_shows_once(
    jupyter_lab: LabServer,
    page: Any,
    scripted_model: ScriptedModelServer,
    claude_env: dict[str, str],
    claude_workdir: Path,
    lab_ledger: Path,
    screenshots: Path,
) -> None:
    data = claude_workdir.parent / "data"
    data.mkdir()
    (data / "raw.csv").write_text("a,b\n1,2\n")
    target = claude_workdir / "notes.txt"
    scripted_model.push(
        Reply(
            tool_use("Bash", {"command": f"rm -rf {data}", "description": "Delete raw data", "run_in_background": True})
        ),
        Reply(tool_use("Write", {"file_path": str(target), "content": "proposed\n"})),
        Reply(text("Understood: I left the data alone and wrote the notes.")),
    )
    lab_page.write_notebook(
        jupyter_lab.root / "deny.ipynb",
        setup_code(claude_env, claude_workdir),
        "%%claude --approval-timeout 300\nClean up the data folder, then write notes.txt",  # a deadline: the countdown,
    )
    lab_page.open_notebook(page, jupyter_lab.notebook_url("deny.ipynb"))
    lab_page.command(page, "notebook:run-all-cells")
    claude_cell = lab_page.cell(page, 1)

    # 18.10: the approval controls on the Bash card; the command and description once.
    card = claude_cell.locator(PENDING)
    reason_box = card.locator("input.kandev-deny-reason")
    reason_box.wait_for(state="visible", timeout=120_000)
    tool_card = claude_cell.locator(".kandev-tool-card", has=page.locator(".kandev-approval"))
    expect(tool_card).to_have_count(1)
    output_text = claude_cell.locator(".jp-OutputArea-output").inner_text()
    # the CLI's permission suggestions name the rule they would save (issue 19): not the action
    saved_rules = claude_cell.locator(".kandev-suggestions").all_inner_texts()
    shown = output_text.count(f"rm -rf {data}") - sum(t.count(f"rm -rf {data}") for t in saved_rules)
    assert shown == 1, output_text
    assert output_text.count("Delete raw data") == 1, output_text
    assert "outside the working directory" in output_text  # data/ is beside the project, not in it
    assert "blocked path" not in output_text
    assert "run_in_background" in output_text  # 17.9: every input field
    assert "left to answer" in output_text  # the countdown
    _shot(page, screenshots / "approval-on-its-tool-card.png")

    # 18.2: typed at a person's speed, then Enter denies.
    reason_box.click()
    reason_box.press_sequentially(REASON, delay=40)
    _shot(page, screenshots / "approval-deny-reason-typed.png")
    reason_box.press("Enter")

    # "Edit then allow" (issue 27 point 6): one editor per field; a newline typed in `content`
    # is a newline of the file (the old JSON textarea said "Invalid control character").
    edit_card = claude_cell.locator(PENDING, has_text="notes.txt")
    edit_card.locator("button.kandev-edit").wait_for(state="visible", timeout=120_000)
    edit_card.locator("button.kandev-edit").click()
    editor = edit_card.locator("textarea.kandev-edit-code[data-key=content]")
    expect(editor).to_have_value("proposed\n")
    expect(edit_card.locator(".kandev-edit-label").first).to_contain_text("content (plain text)")
    others = edit_card.locator("textarea.kandev-edit-json")  # JSON only for what is left
    expect(others).to_have_value(json.dumps({"file_path": str(target)}, indent=2))
    editor.fill("")
    editor.press_sequentially("typed by hand\nwith a second line\n", delay=10)
    what = edit_card.locator(".kandev-approval-what")
    expect(what).to_contain_text("edited by you")  # the diff above follows the typing
    expect(what).to_contain_text("with a second line")
    expect(edit_card.locator(".kandev-approval-error")).to_have_text("")
    theme_shots.shot_both(page, screenshots, "approval-edit-fields", edit_card)
    edit_card.locator("button.kandev-allow-edited").click()
    lab_page.wait_cell_done(page, 1)

    assert data.is_dir() and (data / "raw.csv").exists()
    assert target.read_text() == "typed by hand\nwith a second line\n"
    assert REASON in _sent_to_model(scripted_model)
    output = claude_cell.locator(".jp-OutputArea-output").first
    expect(output).to_contain_text(REASON)  # the saved card
    expect(output).to_contain_text("Understood")
    calls = RunLedger(lab_ledger).tool_calls()
    assert list(calls["decision"]) == ["deny", "allow"] and list(calls["decided_by"]) == ["person", "person"]
    assert calls["decision_message"].iloc[0] == REASON  # the ledger row
    _shot(page, screenshots / "approval-denied-with-typed-reason.png")


def test_a_later_approval_comes_into_view_with_its_countdown(
    jupyter_lab: LabServer,
    page: Any,
    scripted_model: ScriptedModelServer,
    claude_env: dict[str, str],
    claude_workdir: Path,
    screenshots: Path,
) -> None:
    long_file = "".join(f"line {i}\n" for i in range(60))
    scripted_model.push(
        Reply(
            tool_use(
                "Bash",
                {
                    "command": "python3 -c 'for i in range(40): print(\"output line\", i)'",
                    "description": "Print 40 lines",
                },
            )
        ),
        Reply(tool_use("Write", {"file_path": str(claude_workdir / "long.txt"), "content": long_file})),
        Reply(
            tool_use("Write", {"file_path": str(claude_workdir / "third.txt"), "content": "third\n"}),
            delay_first_byte=4,
        ),  # time to go back to the top and type in a cell
        Reply(text("All three done.")),
    )
    lab_page.write_notebook(
        jupyter_lab.root / "later.ipynb",
        setup_code(claude_env, claude_workdir, approval_timeout=600),
        "#md\n" + "\n\n".join(f"Notes paragraph {i}: what this notebook is for." for i in range(12)),
        "%%claude --approval-timeout 600\nPrint, then write two files",  # with a tab, only a cell's own timeout denies,
    )
    lab_page.open_notebook(page, jupyter_lab.notebook_url("later.ipynb"))
    lab_page.command(page, "notebook:run-all-cells")
    claude_cell = lab_page.cell(page, 2)
    for what in ('print("output line"', "long.txt"):
        allow = claude_cell.locator(f"{PENDING} button.kandev-allow")
        allow.wait_for(state="visible", timeout=120_000)
        expect(claude_cell.locator(PENDING)).to_contain_text(what)
        allow.click()

    # The person goes back to the top and types in the first cell while Claude works.
    page.evaluate(
        "() => document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-WindowedPanel-outer').scrollTo(0, 0)"
    )
    first_editor = lab_page.cell(page, 0).locator(".cm-content")
    first_editor.click()
    page.keyboard.press("Control+End")
    claude_cell.locator(PENDING).wait_for(state="attached", timeout=120_000)
    page.keyboard.type("\n# typed while the approval waits", delay=20)
    assert page.evaluate(
        "() => !!document.activeElement.closest('.jp-Cell') && document.activeElement.closest('.cm-content') !== null"
    )
    expect(lab_page.cell(page, 0).locator(".cm-content")).to_contain_text("typed while the approval waits")
    assert not page.evaluate(_IN_VIEW, f"{PENDING} button.kandev-allow")  # the view was left where the typing is

    # Leaving the editor (Escape: command mode), the waiting card comes into view by itself.
    page.keyboard.press("Escape")
    page.wait_for_function(_IN_VIEW, arg=f"{PENDING} button.kandev-allow", timeout=30_000)
    pending = claude_cell.locator(PENDING)
    expect(pending).to_contain_text("third.txt")
    expect(pending.locator(".kandev-approval-countdown")).to_contain_text("left to answer")
    expect(pending.locator(".kandev-approval-countdown")).to_contain_text("(10:00)")
    expect(claude_cell.locator(".kandev-activity")).to_contain_text("left)")
    folded = claude_cell.locator(".kandev-tool-card details").evaluate_all("ds => ds.map(d => d.open)")
    assert folded == [False, False], folded  # the two finished cards (the waiting card stands in for its own)
    _shot(page, screenshots / "approval-later-in-view-with-countdown.png")

    pending.locator("button.kandev-allow").click()
    lab_page.wait_cell_done(page, 2)
    assert (claude_workdir / "third.txt").read_text() == "third\n"
    expect(claude_cell.locator(".jp-OutputArea-output").first).to_contain_text("All three done.")
