"""Issue 16: a saved turn reopened in JupyterLab, untrusted and then trusted.

The saved HTML colours code and aligns table cells by class, with one ``<style>`` element
per output (no inline style per token). JupyterLab sanitises an untrusted notebook's HTML
and drops ``<style>``: the answer must still read well (the same text, code in the
theme's plain text colour on the code background, light and dark). Once trusted, the
``<style>`` applies: keywords in the editor's keyword colour, cells aligned as the Markdown
says, and the long answer's parts laid out only near the screen (``content-visibility``).
Screenshots: ``artifacts/screenshots/saved-*.png``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import nbformat
import pytest
from playwright.sync_api import expect

from benchmarks._browser_page import answer
from kandev_nb.agent import events as ev
from kandev_nb.agent.turn import Turn
from kandev_nb.render import static
from tests.browser import lab_page
from tests.browser.conftest import LabServer
from tests.browser.test_cards_in_lab import _readable, _theme

pytestmark = pytest.mark.timeout(300)

_COLOURS = """out => {
  const kw = out.querySelector('.kandev-static pre.kandev-code .kt-k');
  const cell = (cls) => out.querySelector('.kandev-static td.' + cls);
  const part = out.querySelector('.kandev-static .kandev-part');
  return {kw: getComputedStyle(kw).color, pre: getComputedStyle(kw.closest('pre')).color,
          right: getComputedStyle(cell('kandev-al-right')).textAlign,
          left: getComputedStyle(cell('kandev-al-left')).textAlign,
          visibility: part ? getComputedStyle(part).contentVisibility : null,
          styles: out.querySelectorAll('style').length, inline: out.querySelectorAll('[style]').length};
}"""


def _saved_notebook(path: Path, body: str) -> None:
    turn = Turn(prompt="A long answer, please", session_name="default")
    turn.add(ev.MessageChunk(text=body), 0.0)
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = dict(lab_page.KERNELSPEC)
    cell = nbformat.v4.new_code_cell("%%claude\nA long answer, please", execution_count=1)
    cell.outputs = [nbformat.v4.new_output("display_data", data=static.mime_bundle(turn))]
    nb.cells.append(cell)
    nbformat.write(nb, path)  # unsigned: JupyterLab opens it untrusted


def test_a_saved_turn_reads_well_untrusted_and_is_coloured_once_trusted(
    jupyter_lab: LabServer,
    page: Any,
    screenshots: Path,
) -> None:
    body = answer("mix", 0.15)
    _saved_notebook(jupyter_lab.root / "saved.ipynb", body)
    lab_page.open_notebook(page, jupyter_lab.notebook_url("saved.ipynb"))
    output = lab_page.cell(page, 0).locator(".jp-OutputArea-output").first
    expect(output.locator(".kandev-static .kandev-text")).to_contain_text("def step_1(x, factor=1):")
    expect(output).to_contain_text(f"(paragraph {body.count('(paragraph') - 1}).")

    # untrusted: the sanitizer dropped <style>; the classes stay, the code is the theme's text colour
    got = output.evaluate(_COLOURS)
    assert got["styles"] == 0 and got["kw"] == got["pre"], got
    assert output.locator(".kandev-static .kt-k").count() > 50
    for dark in (True, False):
        _theme(page, "JupyterLab Dark" if dark else "JupyterLab Light")
        _readable(page, output.locator("pre.kandev-code"), dark=dark)
        output.locator("pre.kandev-code").first.evaluate("el => el.scrollIntoView({block: 'center'})")
        page.screenshot(path=str(screenshots / f"saved-1-untrusted-{'dark' if dark else 'light'}.png"))

    lab_page.command(page, "notebook:trust")
    page.locator(".jp-Dialog button.jp-mod-accept").click()
    expect(output.locator("style.kandev-style")).to_have_count(1, timeout=30_000)
    output = lab_page.cell(page, 0).locator(".jp-OutputArea-output").first
    expect(output.locator("style.kandev-style")).to_have_count(1)
    for dark in (False, True):
        _theme(page, "JupyterLab Dark" if dark else "JupyterLab Light")
        got = output.evaluate(_COLOURS)
        assert got["kw"] != got["pre"], got  # keywords in the editor's keyword colour
        assert (got["right"], got["left"]) == ("right", "left"), got
        assert got["visibility"] == "auto", got
        assert got["inline"] < 12, got  # a few: code blocks, header, parts; none per token or cell
        _readable(page, output.locator("pre.kandev-code .kt-k"), dark=dark)
        _readable(page, output.locator("pre.kandev-code"), dark=dark)
        output.locator("pre.kandev-code").first.evaluate("el => el.scrollIntoView({block: 'center'})")
        page.screenshot(path=str(screenshots / f"saved-2-trusted-{'dark' if dark else 'light'}.png"))
