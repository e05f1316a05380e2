"""Issue 13 in a real browser: Claude reads, inserts, runs, edits and deletes cells of the open tab.

JupyterLab 4 in headless Chromium, the real CLI, the scripted model. One `%%claude` turn
calls every notebook tool; Allow is clicked on each card in the page (run_cell is allowed by a
``Rules`` policy instead). While the cell still runs, the inserted cell shows below it and
the run cell's own output area fills. Then the user saves: no "file changed" dialog, and the
file on disk holds every change.

Screenshots: ``artifacts/screenshots/notebook-tools-*.png`` (with ``KANDEV_NB_UPDATE_DOCS=1``
also ``docs/screenshots/``).
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path
from typing import Any

import nbformat
import pytest
from playwright.sync_api import expect

from kandev_nb.testing import RecordedRequest, Reply, ScriptedModelServer, text, tool_use
from tests.browser import lab_page
from tests.browser.conftest import DOCS_SCREENSHOTS, LabServer
from tests.kernel.conftest import setup_code
from tests.kernel_tools.conftest import result_images, result_text, tool_results

pytestmark = pytest.mark.timeout(300)

INSERTED = "y = x + 1\nprint('y is', y)"
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAQAAAAECAIAAAAmkwkpAAAAEElEQVR4nGP4z8AARwzEcQCukw/x0F8jngAAAABJRU5ErkJggg=="
WITH_IMAGE = (
    INSERTED + f"\nfrom IPython.display import Image, display\nimport base64\ndisplay(Image(base64.b64decode('{PNG}')))"
)
EDITED = "x = 100\nprint('edited by Claude')"


def _notebook(path: Path, setup: str) -> None:
    """Cells with fixed ids; `data` and `broken` carry saved outputs that this run never recomputes."""
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = dict(lab_page.KERNELSPEC)
    setup_cell = nbformat.v4.new_code_cell(setup, id="setup")
    data = nbformat.v4.new_code_cell("x = 41\nprint('saved output')", id="data", execution_count=1)
    data.outputs = [
        nbformat.v4.new_output("stream", name="stdout", text="saved output\n"),
        nbformat.v4.new_output("display_data", data={"image/png": PNG, "text/plain": "<Image>"}),
    ]
    broken = nbformat.v4.new_code_cell("1 / 0", id="broken", execution_count=2)
    broken.outputs = [
        nbformat.v4.new_output("stream", name="stdout", text="".join(f"row {i}\n" for i in range(2000))),
        nbformat.v4.new_output(
            "error",
            ename="ZeroDivisionError",
            evalue="division by zero",
            traceback=["\x1b[0;31mZeroDivisionError\x1b[0m: division by zero"],
        ),
    ]
    claude = nbformat.v4.new_code_cell("%%claude\nTidy up this notebook", id="claude")
    nb.cells = [setup_cell, data, broken, claude]
    nbformat.write(nb, path)


def _last_result(request: RecordedRequest) -> str:
    results = tool_results(request)
    return result_text(results[-1]) if results else ""


def _run_cell(page: Any, index: int) -> None:
    lab_page.cell(page, index).locator(".jp-InputPrompt").click()
    lab_page.command(page, "notebook:run-cell")


def _shot(page: Any, locator: Any, path: Path, docs: bool) -> None:
    locator.evaluate("el => el.scrollIntoView({block: 'center'})")
    page.screenshot(path=str(path))
    if docs and os.environ.get("KANDEV_NB_UPDATE_DOCS") == "1":
        DOCS_SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        shutil.copy(path, DOCS_SCREENSHOTS / path.name)


def test_claude_reads_inserts_runs_edits_and_deletes_cells_in_the_open_tab(
    jupyter_lab: LabServer,
    page: Any,
    scripted_model: ScriptedModelServer,
    claude_env: dict[str, str],
    claude_workdir: Path,
    screenshots: Path,
) -> None:
    _every_tool(
        jupyter_lab,
        jupyter_lab.notebook_url("tools.ipynb"),
        page,
        scripted_model,
        claude_env,
        claude_workdir,
        screenshots,
        "",
    )


def _every_tool(
    server: LabServer,
    url: str,
    page: Any,
    scripted_model: ScriptedModelServer,
    claude_env: dict[str, str],
    claude_workdir: Path,
    screenshots: Path,
    frontend: str,
) -> None:
    """The whole flow in one frontend (`frontend` prefixes the screenshots; "" is JupyterLab's,
    which also refresh ``docs/screenshots``)."""
    seen: dict[str, str] = {}

    def insert_after_read(request: RecordedRequest) -> Reply:
        seen["read"] = _last_result(request)
        return Reply(text("I will add a cell."), tool_use("mcp__kernel__insert_cell", {"source": WITH_IMAGE}))

    def run_inserted(request: RecordedRequest) -> Reply:
        seen["insert"] = _last_result(request)
        seen["read images"] = str(len(result_images(tool_results(request)[-2])))
        match = re.search(r"with id (\S+)", seen["insert"])
        return Reply(tool_use("mcp__kernel__run_cell", {"cell_id": match.group(1) if match else "?"}))

    def edit_after_run(request: RecordedRequest) -> Reply:
        seen["run"] = _last_result(request)
        seen["run images"] = str(len(result_images(tool_results(request)[-1])))
        return Reply(tool_use("mcp__kernel__edit_cell", {"cell_id": "data", "source": EDITED}))

    def delete_after_edit(request: RecordedRequest) -> Reply:
        seen["edit"] = _last_result(request)
        return Reply(tool_use("mcp__kernel__delete_cell", {"cell_id": "broken"}))

    on_disk = str(server.root / "tools.ipynb")

    def read_file_after_delete(request: RecordedRequest) -> Reply:
        seen["delete"] = _last_result(request)
        return Reply(tool_use("Read", {"file_path": on_disk}))  # the CLI edits only files it has read

    def notebook_edit_after_read(request: RecordedRequest) -> Reply:
        return Reply(tool_use("NotebookEdit", {"notebook_path": on_disk, "cell_id": "data", "new_source": "boom"}))

    def write_after_notebook_edit(request: RecordedRequest) -> Reply:
        seen["NotebookEdit"] = _last_result(request)
        return Reply(tool_use("Write", {"file_path": on_disk, "content": "{}"}))

    def finish(request: RecordedRequest) -> Reply:
        seen["Write"] = _last_result(request)
        return Reply(text("Done: one cell added and run, one edited, one deleted."))

    scripted_model.push(
        Reply(tool_use("mcp__kernel__read_notebook", {})),
        insert_after_read,
        run_inserted,
        edit_after_run,
        delete_after_edit,
        read_file_after_delete,
        notebook_edit_after_read,
        write_after_notebook_edit,
        finish,
    )
    setup = (
        setup_code(claude_env, claude_workdir)
        + "x = 41\nkandev_nb.configure(approve=kandev_nb.Rules(allow=['mcp__kernel__run_cell', 'Read']))\n"
    )
    _notebook(server.root / "tools.ipynb", setup)
    lab_page.open_notebook(page, url)
    _run_cell(page, 0)
    lab_page.wait_cell_done(page, 0)
    _run_cell(page, 3)

    claude_cell = lab_page.cell(page, 3)
    card = claude_cell.locator(".kandev-approval").last
    allow = claude_cell.locator(".kandev-approval button.kandev-allow")
    # insert_cell: the card shows the source highlighted, not JSON.
    expect(card).to_contain_text("insert_cell", timeout=120_000)
    expect(card.locator(".kandev-code")).to_contain_text("print('y is', y)")
    _shot(page, card, screenshots / f"notebook-tools-{frontend}insert-card.png", not frontend)
    allow.last.click()

    # The new cell shows below the running one, and run_cell fills its own output area.
    new_cell = lab_page.cell(page, 4)
    expect(new_cell.locator(".jp-InputArea")).to_contain_text("y = x + 1", timeout=60_000)
    expect(new_cell.locator(".jp-OutputArea")).to_contain_text("y is 42", timeout=60_000)
    expect(new_cell.locator(".jp-OutputArea img")).to_have_count(1)
    # edit_cell: a diff of the cell, then Allow.
    expect(card).to_contain_text("edit_cell", timeout=60_000)
    expect(card.locator(".kandev-diff, .kandev-code").first).to_contain_text("x = 100")
    assert lab_page.is_running(page, 3), "the %%claude cell still runs while the edit waits"
    # The run's stdout went to its own cell only (the %%claude cell's tool card quotes the answer).
    expect(claude_cell.locator('[data-mime-type="application/vnd.jupyter.stdout"]', has_text="y is 42")).to_have_count(
        0
    )
    _shot(page, card, screenshots / f"notebook-tools-{frontend}edit-card.png", not frontend)
    allow.last.click()
    expect(lab_page.cell(page, 1).locator(".jp-InputArea")).to_contain_text("edited by Claude", timeout=60_000)
    expect(lab_page.cell(page, 1).locator(".jp-OutputArea")).not_to_contain_text("saved output")
    # delete_cell.
    expect(card).to_contain_text("delete_cell", timeout=60_000)
    allow.last.click()
    expect(page.locator(".jp-NotebookPanel:visible .jp-Notebook .jp-Cell")).to_have_count(4)
    lab_page.wait_cell_done(page, 2)  # the %%claude cell moved up once `broken` was deleted
    expect(lab_page.cell(page, 2).locator(".jp-OutputArea")).to_contain_text("Done: one cell added")
    page.screenshot(path=str(screenshots / f"notebook-tools-{frontend}finished.png"))

    assert "saved output" in seen["read"] and "ZeroDivisionError: division by zero" in seen["read"]
    assert "\x1b" not in seen["read"] and "the running %%claude cell" in seen["read"]
    assert "[stream output of cell 2 cut: " in seen["read"] and "row 1999" in seen["read"]  # head and tail
    assert "y is 42" in seen["run"]
    assert seen["read images"] == "1" and "[image/png attached as image 1]" in seen["read"]  # the saved PNG
    assert seen["run images"] == "1"  # what the run displayed went back as an image too
    assert "changed since" not in seen["edit"] and "deleted cell 2 (id broken)" in seen["delete"]
    # The CLI's own file tools may not rewrite the open notebook behind the tab (PreToolUse hook).
    for tool in ("NotebookEdit", "Write"):
        assert "is the notebook open in the user's tab" in seen[tool] and "mcp__kernel__insert_cell" in seen[tool]

    lab_page.save(page)
    expect(page.locator(".jp-Dialog")).to_have_count(0)
    saved = nbformat.read(server.root / "tools.ipynb", as_version=4)
    assert [c.id for c in saved.cells][:3] == ["setup", "data", "claude"] and len(saved.cells) == 4
    assert saved.cells[1].source == EDITED and saved.cells[1].outputs == []
    assert saved.cells[3].source == WITH_IMAGE
    assert "y is 42" in json.dumps(saved.cells[3].outputs) and saved.cells[3].execution_count is not None
    assert not [o for o in saved.cells[2].outputs if o.get("output_type") == "stream" and "y is 42" in o.text]


def test_every_tool_where_no_extension_runs(
    lab_without_extension: LabServer,
    page: Any,
    scripted_model: ScriptedModelServer,
    claude_env: dict[str, str],
    claude_workdir: Path,
    screenshots: Path,
) -> None:
    """The bridge's fallback where kandev-nb's extension is not installed: the widget manager's
    document context (with the extension, the bridge goes through its INotebookTracker)."""
    _every_tool(
        lab_without_extension,
        lab_without_extension.notebook_url("tools.ipynb"),
        page,
        scripted_model,
        claude_env,
        claude_workdir,
        screenshots,
        "plain-",
    )


def test_every_tool_in_notebook_7(
    tmp_path: Path,
    lab_ledger: Path,
    page: Any,
    scripted_model: ScriptedModelServer,
    claude_env: dict[str, str],
    claude_workdir: Path,
    screenshots: Path,
) -> None:
    """The same flow in Jupyter Notebook 7's page (the same bridge, the same cards)."""
    from tests.browser.notebook7 import notebook_url, require_notebook7, start_notebook7

    require_notebook7()
    server = start_notebook7(tmp_path / "nb7", lab_ledger)
    try:
        _every_tool(
            server,
            notebook_url(server, "tools.ipynb"),
            page,
            scripted_model,
            claude_env,
            claude_workdir,
            screenshots,
            "nb7-",
        )
    finally:
        server.stop()


def test_every_tool_with_real_time_collaboration_on(
    tmp_path: Path,
    lab_ledger: Path,
    page: Any,
    scripted_model: ScriptedModelServer,
    claude_env: dict[str, str],
    claude_workdir: Path,
    screenshots: Path,
) -> None:
    """jupyter-collaboration installed: the tab's YNotebook is the shared document the server
    keeps; every tool's change reaches it and the saved file alike.

    ``KANDEV_NB_RTC_SITE=DIR`` names a ``pip install --target DIR jupyter-collaboration`` (its
    packages, ``etc/jupyter`` and ``share/jupyter``) for a machine where it is not installed.
    """
    import importlib.util
    import os

    site = os.environ.get("KANDEV_NB_RTC_SITE", "")
    extra: dict[str, str] = {}
    if site:
        extra = {
            "PYTHONPATH": os.pathsep.join(p for p in (os.environ.get("PYTHONPATH", ""), site) if p),
            "JUPYTER_PATH": str(Path(site) / "share" / "jupyter"),
            "JUPYTER_CONFIG_PATH": str(Path(site) / "etc" / "jupyter"),
        }
    elif importlib.util.find_spec("jupyter_collaboration") is None:
        pytest.skip("jupyter-collaboration is not installed")
    from tests.browser.conftest import start_lab

    lab = start_lab(tmp_path / "rtc", lab_ledger, extra)
    try:
        log = lab.log.read_text()
        assert "jupyter_server_ydoc | extension was successfully loaded" in log, log[-3000:]
        _every_tool(
            lab, lab.notebook_url("tools.ipynb"), page, scripted_model, claude_env, claude_workdir, screenshots, "rtc-"
        )
    finally:
        lab.stop()
