"""Issue 37 in headless Chromium: the Claude panel, JupyterLab's own notifications and a restart,
in JupyterLab 4 started as a person starts it (no ``window.jupyterapp``, no dev mode).

The notebooks' kernels run the real Claude Code CLI against this test's scripted model.

- A Write waits: JupyterLab's notification names the notebook, the cell and the tool, and
  offers Show and Deny, not Allow (its one line does not show the content). The notebook's tab
  is closed; the Claude panel still lists the approval, shows it whole, and its Allow writes the
  file. The notification goes with the answer.
- A short Bash command's notification offers Allow, which answers it.
- Kernel > Restart while an approval waits: the card says the turn ended and nothing was
  allowed; the notification, the panel entry, the tab badge and the title count go within 2 s.
- A fleet runs: one Lab notification says how many of its rows wait (Show, no Allow: it shows no
  row whole). Accel Shift A opens the panel, which shows the fleet's rows by status and each
  waiting row's approval; a row's Allow there runs its Bash call, Stop all there stops the rest.

Screenshots: ``panel-*.png`` in artifacts/screenshots/.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from kandev_nb.testing import Reply, ScriptedModelServer, text, tool_use
from tests.browser import lab_page
from tests.browser.conftest import LabServer
from tests.fleet.conftest import answer_per_row
from tests.fleet.test_fleet_queue_budget import touch_then_answer
from tests.kernel.conftest import setup_code

pytestmark = pytest.mark.timeout(400)

LAB_TOAST = ".Toastify__toast"
PANEL = "#kandev-nb-panel"
CARD = ".kandev-approval-controls"


def _cells(page: Any) -> Any:
    return page.locator(".jp-NotebookPanel:visible .jp-Notebook .jp-Cell")


def _command(page: Any, label: str) -> None:
    """Run a command from the palette by its label, as a person does."""
    palette = page.locator(".lm-CommandPalette:visible").first
    for _ in range(5):  # a kernel coming up may take the focus back as the palette opens
        page.keyboard.press("Control+Shift+C")
        try:
            palette.wait_for(state="visible", timeout=3_000)
            break
        except Exception:  # noqa: BLE001 - playwright's TimeoutError: press again
            page.locator(".jp-NotebookPanel:visible .jp-Notebook").first.click(position={"x": 5, "y": 5})
    palette.locator(".lm-CommandPalette-input").fill(label)
    palette.locator(".lm-CommandPalette-item", has_text=label).first.click()


def _open(page: Any, lab: LabServer, name: str) -> None:
    page.goto(lab.notebook_url(name))
    _cells(page).first.wait_for(timeout=120_000)
    page.wait_for_function("() => document.body.dataset.kandevNbExtension", timeout=60_000)
    page.locator(".jp-Notebook-ExecutionIndicator[data-status='idle']").first.wait_for(timeout=120_000)


def _run_all(page: Any) -> None:
    _cells(page).first.locator(".jp-InputPrompt").click()  # the notebook has the focus: Run All is enabled
    page.wait_for_timeout(500)
    page.locator(".lm-MenuBar-itemLabel", has_text="Run").first.click()
    page.locator(".lm-Menu-item", has_text="Run All Cells").first.click()


def _theme(page: Any, name: str) -> None:
    _command(page, f"Use Theme: {name}")
    want = "false" if name == "JupyterLab Dark" else "true"
    page.wait_for_function(f"() => document.body.dataset.jpThemeLight === '{want}'", timeout=60_000)
    page.wait_for_timeout(500)


def _wait_file(path: Path, timeout: float = 60) -> str:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if path.exists():
            return path.read_text()
        time.sleep(0.2)
    raise AssertionError(f"{path} was not written in {timeout} s")


def test_the_panel_answers_the_approval_of_a_closed_tab_and_the_notification_names_it(
    user_lab: LabServer,
    page: Any,
    scripted_model: ScriptedModelServer,
    claude_env: dict[str, str],
    claude_workdir: Path,
    screenshots: Path,
) -> None:
    target = claude_workdir / "hello.txt"
    scripted_model.push(
        Reply(
            text("I will write it."), tool_use("Write", {"file_path": str(target), "content": "hello from the panel\n"})
        ),
        Reply(text("Done.")),
    )
    lab_page.write_notebook(
        user_lab.root / "closed.ipynb", setup_code(claude_env, claude_workdir), "%%claude\nWrite hello.txt"
    )
    _open(page, user_lab, "closed.ipynb")
    _run_all(page)

    toast = page.locator(LAB_TOAST, has_text="Claude wants to use Write")
    toast.wait_for(state="visible", timeout=120_000)
    expect(toast).to_contain_text("closed.ipynb")
    expect(toast).to_contain_text("In [2]")
    expect(toast).to_contain_text("(waiting ")
    expect(toast.get_by_role("button", name="Allow")).to_have_count(0)  # its line does not show the content
    expect(toast.get_by_role("button", name="Show")).to_have_count(1)
    expect(page.locator(".kandev-toast")).to_have_count(0)  # the extension's notification, not the kernel's toast
    page.wait_for_timeout(800)
    page.screenshot(path=str(screenshots / "panel-notification-light.png"))

    # "Allow the oldest waiting approval" does not allow what no notification showed whole:
    # it opens the Claude panel at it instead
    _command(page, "Allow the oldest waiting approval")
    panel = page.locator(PANEL)
    expect(panel).to_be_visible(timeout=30_000)
    page.wait_for_timeout(1000)
    assert not target.exists()
    _command(page, "Open the Claude panel")  # the command opens it too (it stays open)

    # Show opens the Claude panel at the entry, which shows the request whole
    toast.get_by_role("button", name="Show").click()
    expect(panel).to_be_visible(timeout=30_000)
    entry = panel.locator(".kandev-panel-approval")
    expect(entry).to_have_count(1)
    expect(entry.locator(".kandev-panel-whole")).to_contain_text("hello from the panel")
    expect(entry.locator(".kandev-panel-head")).to_contain_text("closed.ipynb · In [2] · Write")

    # close the notebook's tab (its kernel keeps running, the turn keeps waiting)
    page.locator(".lm-TabBar-tab", has_text="closed.ipynb").locator(".lm-TabBar-tabCloseIcon").click()
    dialog = page.locator(".jp-Dialog")
    if dialog.count():
        dialog.get_by_role("button", name="Discard").click()
    expect(page.locator(".lm-TabBar-tab", has_text="closed.ipynb")).to_have_count(0)
    assert not target.exists()
    expect(entry).to_have_count(1)
    expect(entry.locator(".kandev-panel-allow")).to_be_visible()
    page.screenshot(path=str(screenshots / "panel-closed-tab-light.png"))
    _theme(page, "JupyterLab Dark")
    page.screenshot(path=str(screenshots / "panel-closed-tab-dark.png"))
    _theme(page, "JupyterLab Light")

    entry.locator(".kandev-panel-allow").click()
    assert _wait_file(target) == "hello from the panel\n"
    expect(panel.locator(".kandev-panel-approval")).to_have_count(0, timeout=30_000)
    expect(page.locator(LAB_TOAST, has_text="Claude wants to use Write")).to_have_count(0, timeout=10_000)
    expect(panel.locator(".kandev-panel-session")).to_contain_text("1 turn today", timeout=60_000)


def test_a_short_command_s_notification_allows_it(
    user_lab: LabServer,
    page: Any,
    scripted_model: ScriptedModelServer,
    claude_env: dict[str, str],
    claude_workdir: Path,
) -> None:
    target = claude_workdir / "short.txt"
    scripted_model.push(Reply(tool_use("Bash", {"command": "printf 'ok\\n' > short.txt"})), Reply(text("Done.")))
    via = (
        "from kandev_nb.notebook.bridge import bridge\n"
        "print('via', sorted({v.get('via') for v in bridge().views.values()}))"
    )
    lab_page.write_notebook(
        user_lab.root / "short.ipynb", setup_code(claude_env, claude_workdir), "%%claude\nshort", via
    )
    _open(page, user_lab, "short.ipynb")
    _run_all(page)
    toast = page.locator(LAB_TOAST, has_text="Claude wants to use Bash")
    toast.wait_for(state="visible", timeout=120_000)
    expect(toast).to_contain_text("printf 'ok\\n' > short.txt")  # the whole command, uncut
    page.wait_for_function("() => document.title.startsWith('(1) ⏳ ')")
    toast.get_by_role("button", name="Allow").click()
    assert _wait_file(target) == "ok\n"
    expect(_cells(page).nth(1).locator(".jp-OutputArea")).to_contain_text("allowed by you", timeout=60_000)
    expect(toast).to_have_count(0, timeout=10_000)
    page.wait_for_function("() => !document.title.startsWith('(')")
    # the notebook bridge reached this tab's document through the extension (INotebookTracker)
    expect(_cells(page).nth(2).locator(".jp-OutputArea")).to_contain_text("via ['extension']", timeout=60_000)


def test_the_panel_shows_a_fleet_answers_a_row_and_stops_it(
    user_lab: LabServer,
    page: Any,
    scripted_model: ScriptedModelServer,
    claude_env: dict[str, str],
    claude_workdir: Path,
    screenshots: Path,
) -> None:
    scripted_model.push(*[answer_per_row(touch_then_answer)] * 12)  # each row: touch out-N.txt, then an answer
    lab_page.write_notebook(
        user_lab.root / "fleet.ipynb",
        setup_code(claude_env, claude_workdir) + "import pandas as pd\nrows = pd.DataFrame({'id': [1, 2, 3]})",
        "%%claude --over rows -o out --concurrency 3 --fleet lab\nHandle ticket {id}.",
    )
    _open(page, user_lab, "fleet.ipynb")
    _run_all(page)
    panel = page.locator(PANEL)
    expect(panel).to_be_hidden()
    page.keyboard.press("Control+Shift+A")  # the shortcut (Accel Shift A) opens the Claude panel
    expect(panel).to_be_visible(timeout=30_000)

    fleet = panel.locator(".kandev-panel-fleet")
    counts = fleet.locator(".kandev-panel-fleet-counts")
    expect(counts).to_have_text("3 waiting of 3", timeout=120_000)
    expect(fleet.locator(".kandev-panel-where")).to_have_text("fleet.ipynb · In [2] · fleet lab")
    expect(fleet.locator(".kandev-panel-fleet-waiting")).to_have_text("3 rows waiting for you")
    rows = panel.locator(".kandev-panel-approval")
    expect(rows).to_have_count(3)
    # one Lab notification for the fleet's waiting rows, not one per row; it shows no row
    # whole, so it offers Show, never Allow
    toast = page.locator(LAB_TOAST, has_text="fleet lab")
    expect(toast).to_have_count(1, timeout=30_000)
    expect(toast).to_contain_text("fleet.ipynb · In [2] · fleet lab: 3 rows wait for you (the oldest waiting ")
    expect(toast.get_by_role("button", name="Allow")).to_have_count(0)
    expect(toast.get_by_role("button", name="Show")).to_have_count(1)
    expect(page.locator(LAB_TOAST, has_text="Claude wants to use")).to_have_count(0)
    second = rows.filter(has_text="row 2 of 3")
    expect(second.locator(".kandev-panel-head")).to_contain_text("fleet.ipynb · In [2] · fleet lab · row 2 of 3 · Bash")
    expect(second.locator(".kandev-panel-whole")).to_contain_text("touch out-2.txt")
    second.locator(".kandev-panel-allow").click()
    assert _wait_file(claude_workdir / "out-2.txt") == ""
    expect(counts).to_have_text("1 done · 2 waiting of 3", timeout=60_000)
    expect(rows).to_have_count(2)
    expect(toast).to_contain_text("fleet lab: 2 rows wait for you", timeout=10_000)  # the same notification
    page.wait_for_timeout(800)
    page.screenshot(path=str(screenshots / "claude-panel-fleet.png"))

    fleet.locator(".kandev-panel-fleet-stop").click()  # as the board's Stop all
    expect(fleet).to_have_count(0, timeout=60_000)  # it ended
    expect(rows).to_have_count(0)
    expect(toast).to_have_count(0, timeout=10_000)
    board = _cells(page).nth(1).locator(".jp-OutputArea")
    expect(board).to_contain_text("stopped: stopped by you (Stop all)", timeout=30_000)
    expect(board).to_contain_text("1 done · 2 stopped of 3")
    assert sorted(p.name for p in claude_workdir.glob("out-*.txt")) == ["out-2.txt"]


def test_a_restart_while_an_approval_waits_leaves_nothing_behind(
    user_lab: LabServer,
    page: Any,
    scripted_model: ScriptedModelServer,
    claude_env: dict[str, str],
    claude_workdir: Path,
    screenshots: Path,
) -> None:
    target = claude_workdir / "never.txt"
    scripted_model.push(Reply(tool_use("Write", {"file_path": str(target), "content": "no\n"})), Reply(text("Done.")))
    lab_page.write_notebook(
        user_lab.root / "restart.ipynb", setup_code(claude_env, claude_workdir), "%%claude\nWrite it"
    )
    _open(page, user_lab, "restart.ipynb")
    _run_all(page)
    card = page.locator(CARD)
    expect(card.get_by_role("button", name="Allow once")).to_be_enabled(timeout=120_000)
    toast = page.locator(LAB_TOAST, has_text="Claude wants to use Write")
    toast.wait_for(state="visible", timeout=60_000)
    _command(page, "Open the Claude panel")
    expect(page.locator(PANEL).locator(".kandev-panel-approval")).to_have_count(1, timeout=30_000)
    page.wait_for_function("() => document.title.startsWith('(1) ⏳ ')")
    expect(page.locator(".lm-TabBar-tab[data-kandev-waiting='1']")).to_have_count(1)

    _cells(page).first.locator(".jp-InputPrompt").click()
    _command(page, "Restart Kernel…")
    page.locator(".jp-Dialog .jp-Dialog-button.jp-mod-accept").click()
    started = time.monotonic()
    expect(card).to_contain_text("kernel restarted: this turn ended; nothing was allowed", timeout=2_000)
    expect(page.locator(LAB_TOAST, has_text="Claude wants to use")).to_have_count(0, timeout=2_000)
    expect(page.locator(PANEL).locator(".kandev-panel-approval")).to_have_count(0, timeout=2_000)
    expect(page.locator(".lm-TabBar-tab[data-kandev-waiting]")).to_have_count(0, timeout=2_000)
    page.wait_for_function("() => !document.title.startsWith('(')", timeout=2_000)
    assert time.monotonic() - started < 4  # each wait above is at most 2 s, most return at once
    expect(card.get_by_role("button", name="Allow once")).to_be_disabled()
    page.screenshot(path=str(screenshots / "panel-after-restart.png"))
    assert not target.exists()


def test_a_saved_notebook_reopened_with_a_new_kernel_shows_no_dead_widget(
    user_lab: LabServer,
    page: Any,
    scripted_model: ScriptedModelServer,
    claude_env: dict[str, str],
    claude_workdir: Path,
    screenshots: Path,
) -> None:
    scripted_model.push(
        Reply(text("I will write it."), tool_use("Bash", {"command": "printf 'x\\n' > x.txt"})),
        Reply(text("Done: revenue rose from $4 to $6.")),
    )
    lab_page.write_notebook(user_lab.root / "reopen.ipynb", setup_code(claude_env, claude_workdir), "%%claude\nWrite x")
    _open(page, user_lab, "reopen.ipynb")
    _run_all(page)
    page.locator(CARD).get_by_role("button", name="Allow once").click(timeout=120_000)
    expect(_cells(page).nth(1).locator(".kandev-turn-actions")).to_have_count(1, timeout=120_000)
    _cells(page).first.locator(".jp-InputPrompt").click()
    page.keyboard.press("Control+s")
    page.wait_for_timeout(1500)
    saved = json.loads((user_lab.root / "reopen.ipynb").read_text())
    kept = [o for o in saved["cells"][1]["outputs"] if "application/vnd.jupyter.widget-view+json" in o.get("data", {})]
    assert len(kept) == 1 and kept[0]["metadata"] == {"kandev_nb/tab_only": True}, kept  # the turn's buttons

    for kernel in user_lab.api("GET", "/api/kernels") or []:  # the kernel goes: a new one on reopen
        user_lab.api("DELETE", f"/api/kernels/{kernel['id']}")
    _open(page, user_lab, "reopen.ipynb")
    out = _cells(page).nth(1).locator(".jp-OutputArea")
    expect(out).to_contain_text("revenue rose from $4 to $6", timeout=30_000)
    page.wait_for_timeout(3000)  # the widget renderer gives up on the missing model
    expect(page.get_by_text("Error displaying widget", exact=False).locator("visible=true")).to_have_count(0)
    expect(out.locator(".kandev-tab-only-gone")).to_have_count(1)
    page.screenshot(path=str(screenshots / "panel-reopened.png"))


def test_notebook7_notification_and_panel_answer_an_approval(
    tmp_path: Path,
    lab_ledger: Path,
    page: Any,
    scripted_model: ScriptedModelServer,
    claude_env: dict[str, str],
    claude_workdir: Path,
    screenshots: Path,
) -> None:
    from tests.browser import notebook7

    notebook7.require_notebook7()
    target = claude_workdir / "nb7.txt"
    scripted_model.push(
        Reply(tool_use("Write", {"file_path": str(target), "content": "from Notebook 7\n"})), Reply(text("Done."))
    )
    server = notebook7.start_notebook7(tmp_path / "nb7", lab_ledger)
    try:
        lab_page.write_notebook(server.root / "seven.ipynb", setup_code(claude_env, claude_workdir), "%%claude\nWrite")
        page.goto(notebook7.notebook_url(server, "seven.ipynb"))
        _cells(page).first.wait_for(timeout=120_000)
        page.wait_for_function("() => document.body.dataset.kandevNbExtension", timeout=60_000)
        end = time.monotonic() + 120
        while not [k for k in server.api("GET", "/api/kernels") or [] if k.get("execution_state") == "idle"]:
            assert time.monotonic() < end, "no idle kernel"
            time.sleep(0.25)
        _run_all(page)
        toast = page.locator(LAB_TOAST, has_text="Claude wants to use Write")
        toast.wait_for(state="visible", timeout=120_000)
        expect(toast).to_contain_text("seven.ipynb")
        toast.get_by_role("button", name="Show").click()
        entry = page.locator(PANEL).locator(".kandev-panel-approval")
        expect(entry.locator(".kandev-panel-whole")).to_contain_text("from Notebook 7", timeout=30_000)
        page.screenshot(path=str(screenshots / "panel-notebook7.png"))
        entry.locator(".kandev-panel-allow").click()
        assert _wait_file(target) == "from Notebook 7\n"
        expect(entry).to_have_count(0, timeout=30_000)
    finally:
        server.stop()
