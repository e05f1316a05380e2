"""Approvals you cannot miss, in JupyterLab 4 in Chromium (issue 27, point 2).

The notebook's kernel runs the real Claude Code CLI against the scripted model of this test.
While an approval waits the page shows a notification naming the notebook and the tool, the
notebook's tab a badge and the page title the count; the notification's Allow answers the
CLI's request. Without ``window.jupyterapp`` (JupyterLab's default: the app is exposed only with
``--LabApp.expose_app_in_browser`` or in dev mode) the notifier draws its own toast; its Show
focuses the card, where Enter allows and Escape opens the reason box. A reload of an unsaved
notebook brings the card back, and when the cell is gone the toast still answers.

With kandev-nb's JupyterLab extension (installed with the package) the notifications are the
extension's (JupyterLab's own, tests/extension/test_panel_in_lab.py); the kernel's own toast is
tested in a Lab with the extension disabled (`lab_without_extension`), as where no extension runs.
"""

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

LAB_TOAST = ".Toastify__toast"
OUR_TOAST = ".kandev-toast"
HIDE_APP = "() => { window.__kandevApp = window.jupyterapp; delete window.jupyterapp; }"
SHOW_APP = "() => { window.jupyterapp = window.__kandevApp; }"


def _theme(page: Any, name: str) -> None:
    lab_page.command(page, "apputils:change-theme", {"theme": name})
    want = "false" if name == "JupyterLab Dark" else "true"
    page.wait_for_function(f"() => document.body.dataset.jpThemeLight === '{want}'", timeout=60_000)
    page.wait_for_timeout(500)  # the new theme's stylesheet applied before a screenshot


def _write(model: ScriptedModelServer, *targets: Path) -> None:
    for target in targets:
        model.push(Reply(tool_use("Write", {"file_path": str(target), "content": f"{target.name}\n"})))
    model.push(Reply(text("Done.")))


def _bash(model: ScriptedModelServer, target: Path) -> None:
    """A short command: the toast's line is the whole payload, so the toast offers Allow (a
    Write's toast does not: its line does not show the content; issue 32, point 3)."""
    model.push(Reply(tool_use("Bash", {"command": f"printf '{target.name}\\n' > {target.name}"})))
    model.push(Reply(text("Done.")))


def _title(page: Any) -> str:
    return str(page.evaluate("() => document.title"))


def test_lab_notification_names_notebook_and_tool_counts_in_title_and_its_allow_answers(
    jupyter_lab: LabServer,
    page: Any,
    scripted_model: ScriptedModelServer,
    claude_env: dict[str, str],
    claude_workdir: Path,
    screenshots: Path,
) -> None:
    target = claude_workdir / "hello.txt"
    _bash(scripted_model, target)
    lab_page.write_notebook(
        jupyter_lab.root / "toast.ipynb", setup_code(claude_env, claude_workdir), "%%claude\nCreate hello.txt"
    )
    lab_page.open_notebook(page, jupyter_lab.notebook_url("toast.ipynb"))
    lab_page.command(page, "notebook:run-all-cells")

    toast = page.locator(LAB_TOAST, has_text="Claude wants to use Bash")
    toast.wait_for(state="visible", timeout=120_000)
    expect(toast).to_contain_text("toast.ipynb")
    expect(toast).to_contain_text("printf 'hello.txt\\n' > hello.txt")  # the whole command, uncut
    expect(toast).to_contain_text("(waiting ")  # wait and remind: no deny deadline with a tab attached
    page.wait_for_function("() => document.title.startsWith('(1) ⏳ ')")
    expect(page.locator(".lm-TabBar-tab[data-kandev-waiting='1']")).to_contain_text("toast.ipynb")
    assert lab_page.is_running(page, 1) and not target.exists()
    page.wait_for_timeout(1000)  # the toast's slide-in ends
    page.screenshot(path=str(screenshots / "notify-lab-toast-light.png"))
    _theme(page, "JupyterLab Dark")
    page.screenshot(path=str(screenshots / "notify-lab-toast-dark.png"))
    _theme(page, "JupyterLab Light")

    toast.get_by_role("button", name="Allow").click()
    lab_page.wait_cell_done(page, 1)
    assert target.read_text() == "hello.txt\n"
    expect(lab_page.cell(page, 1).locator(".jp-OutputArea")).to_contain_text("allowed by you")
    page.wait_for_function("() => !document.title.startsWith('(')")
    expect(page.locator(".lm-TabBar-tab[data-kandev-waiting]")).to_have_count(0)


def test_own_toast_show_focuses_the_card_enter_allows_escape_opens_the_reason_box(
    lab_without_extension: LabServer,
    page: Any,
    scripted_model: ScriptedModelServer,
    claude_env: dict[str, str],
    claude_workdir: Path,
    screenshots: Path,
) -> None:
    jupyter_lab = lab_without_extension  # the kernel's own toast: where no extension runs
    first, second = claude_workdir / "a.txt", claude_workdir / "b.txt"
    _write(scripted_model, first, second)
    lab_page.write_notebook(
        jupyter_lab.root / "keys.ipynb", setup_code(claude_env, claude_workdir), "%%claude\nCreate a.txt and b.txt"
    )
    lab_page.open_notebook(page, jupyter_lab.notebook_url("keys.ipynb"))
    lab_page.command(page, "notebook:run-all-cells")
    page.evaluate(HIDE_APP)  # JupyterLab's default: no window.jupyterapp

    toast = page.locator(OUR_TOAST, has_text="a.txt")
    toast.wait_for(state="visible", timeout=120_000)
    expect(toast).to_contain_text("keys.ipynb")
    expect(toast).to_contain_text("Claude wants to use Write")
    # the line shows the path, not the content it writes: Show and Deny, no Allow (issue 32 point 3)
    expect(toast.get_by_role("button", name="Allow")).to_have_count(0)
    expect(toast.get_by_role("button", name="Deny")).to_have_count(1)
    expect(toast.locator(".kandev-toast-partial")).to_contain_text("Only a summary")
    page.wait_for_function("() => document.title.startsWith('(1) ⏳ ')")
    page.evaluate(SHOW_APP)
    page.screenshot(path=str(screenshots / "notify-own-toast-light.png"))
    _theme(page, "JupyterLab Dark")
    page.screenshot(path=str(screenshots / "notify-own-toast-dark.png"))
    _theme(page, "JupyterLab Light")
    page.evaluate(HIDE_APP)

    toast.get_by_role("button", name="Show").click()
    card = lab_page.cell(page, 1).locator(".kandev-approval").first
    expect(card).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.locator(OUR_TOAST, has_text="a.txt")).to_have_count(0, timeout=60_000)

    toast = page.locator(OUR_TOAST, has_text="b.txt")
    toast.wait_for(state="visible", timeout=120_000)
    toast.get_by_role("button", name="Show").click()
    waiting = lab_page.cell(page, 1).locator(".kandev-approval:not(.kandev-decided)")
    expect(waiting).to_be_focused()
    page.keyboard.press("Escape")
    reason = waiting.locator("input.kandev-deny-reason")
    expect(reason).to_be_focused()
    page.keyboard.type("not b")
    page.keyboard.press("Enter")
    page.evaluate(SHOW_APP)
    lab_page.wait_cell_done(page, 1)
    assert first.read_text() == "a.txt\n" and not second.exists()
    expect(lab_page.cell(page, 1).locator(".jp-OutputArea")).to_contain_text("not b")
    expect(page.locator(OUR_TOAST)).to_have_count(0)


def test_pending_from_another_cell_answers_in_lab(
    jupyter_lab: LabServer,
    page: Any,
    scripted_model: ScriptedModelServer,
    claude_env: dict[str, str],
    claude_workdir: Path,
    screenshots: Path,
) -> None:
    target = claude_workdir / "hello.txt"
    _write(scripted_model, target)
    lab_page.write_notebook(
        jupyter_lab.root / "pending.ipynb",
        setup_code(claude_env, claude_workdir),
        # the turn as a task of the kernel's loop, as a turn started in the background runs
        "import asyncio, kandev_nb.notebook.magic as m\n"
        "task = asyncio.ensure_future(m.run_cell('', 'Create hello.txt'))",
        "for _ in range(600):\n    if kandev_nb.pending():\n        break\n    await asyncio.sleep(0.1)\n"
        "kandev_nb.pending()",
        "p = kandev_nb.pending()[0]\np.show()  # a Write: its line is a summary, shown whole first\np.allow()",
        "turn = await task\nprint(open('hello.txt').read())",
    )
    lab_page.open_notebook(page, jupyter_lab.notebook_url("pending.ipynb"))
    lab_page.command(page, "notebook:run-all-cells")
    lab_page.wait_cell_done(page, 4)
    listed = lab_page.cell(page, 2).locator(".jp-OutputArea")
    expect(listed).to_contain_text("1 approval(s) waiting")
    expect(listed.locator("table")).to_contain_text("Write")
    expect(listed.locator("table")).to_contain_text("hello.txt")
    expect(lab_page.cell(page, 3).locator(".jp-OutputArea")).to_contain_text("True")
    expect(lab_page.cell(page, 4).locator(".jp-OutputArea")).to_contain_text("hello.txt")
    assert target.read_text() == "hello.txt\n"
    page.screenshot(path=str(screenshots / "notify-pending-from-another-cell.png"))


def test_reload_of_an_unsaved_notebook_brings_the_card_and_the_toast_back(
    jupyter_lab: LabServer,
    page: Any,
    scripted_model: ScriptedModelServer,
    claude_env: dict[str, str],
    claude_workdir: Path,
    screenshots: Path,
) -> None:
    target = claude_workdir / "hello.txt"
    _write(scripted_model, target)
    lab_page.write_notebook(
        jupyter_lab.root / "reload.ipynb", setup_code(claude_env, claude_workdir), "%%claude\nCreate hello.txt"
    )
    lab_page.open_notebook(page, jupyter_lab.notebook_url("reload.ipynb"))
    lab_page.command(page, "notebook:run-all-cells")
    lab_page.cell(page, 1).locator(".kandev-approval button.kandev-allow").wait_for(timeout=120_000)

    page.on("dialog", lambda dialog: dialog.accept())  # "leave the page with unsaved changes?"
    page.reload()
    page.wait_for_selector(".jp-NotebookPanel .jp-Cell", timeout=120_000)
    card = lab_page.cell(page, 1).locator(".kandev-approval")
    card.locator("button.kandev-allow").wait_for(state="visible", timeout=120_000)
    # the notebook's name comes with the new tab's hello, maybe after the first notification
    toast = page.locator(LAB_TOAST, has_text="Claude wants to use Write")
    expect(toast).to_contain_text("reload.ipynb", timeout=20_000)
    page.wait_for_function("() => document.title.startsWith('(1) ⏳ ')")
    page.screenshot(path=str(screenshots / "notify-after-reload.png"))
    card.click(position={"x": 5, "y": 5})  # the card's own border: it takes the focus
    expect(card).to_be_focused()
    page.keyboard.press("1")  # the CLI's "1. Yes"
    expect(lab_page.cell(page, 1).locator(".jp-OutputArea")).to_contain_text("Done.", timeout=60_000)
    assert target.read_text() == "hello.txt\n"


def test_when_the_cell_is_gone_after_a_reload_the_toast_still_answers(
    lab_without_extension: LabServer,
    page: Any,
    scripted_model: ScriptedModelServer,
    claude_env: dict[str, str],
    claude_workdir: Path,
    screenshots: Path,
) -> None:
    jupyter_lab = lab_without_extension  # the kernel's own toast: where no extension runs
    target = claude_workdir / "hello.txt"
    _bash(scripted_model, target)
    lab_page.write_notebook(jupyter_lab.root / "gone.ipynb", setup_code(claude_env, claude_workdir))
    lab_page.open_notebook(page, jupyter_lab.notebook_url("gone.ipynb"))
    lab_page.command(page, "notebook:run-all-cells")
    lab_page.wait_cell_done(page, 0)
    page.evaluate(  # a new cell, never saved
        """() => {
      const nb = window.jupyterapp.shell.currentWidget.content.model.sharedModel;
      nb.insertCell(1, {cell_type: 'code', source: '%%claude\\nCreate hello.txt', metadata: {}});
    }"""
    )
    lab_page.cell(page, 1).click()
    lab_page.command(page, "notebook:run-cell")
    lab_page.cell(page, 1).locator(".kandev-approval button.kandev-allow").wait_for(timeout=120_000)

    page.on("dialog", lambda dialog: dialog.accept())
    page.reload()
    page.wait_for_selector(".jp-NotebookPanel .jp-Cell", timeout=120_000)
    page.evaluate(HIDE_APP)
    toast = page.locator(OUR_TOAST, has_text="Claude wants to use Bash")
    toast.wait_for(state="visible", timeout=120_000)
    expect(page.locator(".kandev-approval")).to_have_count(0)
    toast.get_by_role("button", name="Show").click()
    expect(toast).to_contain_text("Its card is not in this page")
    page.screenshot(path=str(screenshots / "notify-cell-gone-toast.png"))
    toast.get_by_role("button", name="Allow").click()
    expect(page.locator(OUR_TOAST)).to_have_count(0, timeout=60_000)
    page.wait_for_function("() => !document.title.startsWith('(')")
    for _ in range(100):
        if target.exists():
            break
        page.wait_for_timeout(200)
    assert target.read_text() == "hello.txt\n"


def test_notebook_7_shows_the_notification_and_the_title_count_and_its_allow_answers(
    tmp_path: Path,
    lab_ledger: Path,
    page: Any,
    scripted_model: ScriptedModelServer,
    claude_env: dict[str, str],
    claude_workdir: Path,
    screenshots: Path,
) -> None:
    from tests.browser.notebook7 import notebook_url, require_notebook7, start_notebook7

    require_notebook7()
    server = start_notebook7(tmp_path / "nb7", lab_ledger)
    try:
        target = claude_workdir / "hello.txt"
        _bash(scripted_model, target)
        lab_page.write_notebook(
            server.root / "seven.ipynb", setup_code(claude_env, claude_workdir), "%%claude\nCreate hello.txt"
        )
        lab_page.open_notebook(page, notebook_url(server, "seven.ipynb"))
        lab_page.command(page, "notebook:run-all-cells")
        toast = page.locator(f"{LAB_TOAST}, {OUR_TOAST}", has_text="Claude wants to use Bash")
        toast.wait_for(state="visible", timeout=120_000)
        expect(toast).to_contain_text("seven.ipynb")
        page.wait_for_function("() => document.title.startsWith('(1) ⏳ ')")
        page.wait_for_timeout(1000)  # the toast's slide-in ends
        page.screenshot(path=str(screenshots / "notify-notebook7.png"))
        toast.get_by_role("button", name="Allow").click()
        lab_page.wait_cell_done(page, 1)
        assert target.read_text() == "hello.txt\n"
        page.wait_for_function("() => !document.title.startsWith('(')")
    finally:
        server.stop()


def test_an_unanswered_card_is_not_denied_with_a_tab_a_reminder_shows_and_its_deny_answers(
    jupyter_lab: LabServer,
    page: Any,
    scripted_model: ScriptedModelServer,
    claude_env: dict[str, str],
    claude_workdir: Path,
    screenshots: Path,
) -> None:
    target = claude_workdir / "hello.txt"
    _write(scripted_model, target)
    lab_page.write_notebook(
        jupyter_lab.root / "remind.ipynb",
        setup_code(claude_env, claude_workdir, approval_timeout=4),
        "%%claude\nCreate hello.txt",
    )
    lab_page.open_notebook(page, jupyter_lab.notebook_url("remind.ipynb"))
    lab_page.command(page, "notebook:run-all-cells")
    reminder = page.locator(LAB_TOAST, has_text="Still waiting")
    reminder.wait_for(state="visible", timeout=120_000)  # half of the 4 s approval timeout
    expect(reminder).to_contain_text("Claude wants to use Write")
    page.wait_for_timeout(4000)  # past the approval timeout: headless, this card would be denied now
    assert lab_page.is_running(page, 1)
    expect(lab_page.cell(page, 1).locator(".kandev-approval button.kandev-allow")).to_be_enabled()
    page.screenshot(path=str(screenshots / "notify-reminder.png"))
    reminder.get_by_role("button", name="Deny").click()
    lab_page.wait_cell_done(page, 1)
    assert not target.exists()
    expect(lab_page.cell(page, 1).locator(".jp-OutputArea")).to_contain_text("denied by you", ignore_case=True)
