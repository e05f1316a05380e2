"""Issue 35 in headless Chromium: typing in another cell while a long answer streams.

JupyterLab 4 started as a person starts it; the real Claude Code CLI streams a 96 KB answer
(paragraphs, a long code block, a table) from the scripted model in 40-character deltas while
the test types 200 characters at 30 ms per key into a cell below: every character arrives, in
order, while the answer is still streaming, and the answer ends whole.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from kandev_nb.testing import Reply, ScriptedModelServer, text
from tests.browser import lab_page
from tests.browser.conftest import LabServer
from tests.extension.test_panel_in_lab import _cells, _open, _run_all
from tests.kernel.conftest import setup_code

pytestmark = pytest.mark.timeout(400)


def long_answer() -> str:
    """About 96 KB of Markdown: 300 paragraphs, a 300-function code block, a 200-row table."""
    paras = [
        f"Paragraph {i}: the widget sends only **new** text while a `turn` streams, and blocks "
        f"that are finished render once; tool cards show diffs and tables render row by row ({i})."
        for i in range(300)
    ]
    code = "\n".join(
        f"def step_{i}(x, factor={i}):\n    x = x * factor + {i}  # scale, then shift\n"
        f'    return {{"step": {i}, "value": x}}\n'
        for i in range(300)
    )
    table = "\n".join(
        [
            "| name | count | ratio |",
            "|---|---:|---:|",
            *(f"| `row_{i}` | {i * 37 % 9999} | {i / 7:.3f} |" for i in range(200)),
        ]
    )
    return "\n\n".join([*paras[:100], f"```python\n{code}```", *paras[100:200], table, *paras[200:], "The end."])


TYPED = ("the quick brown fox jumps over the lazy dog 0123456789 " * 4)[:200]


def test_typing_in_another_cell_while_a_long_answer_streams_keeps_every_character_in_order(
    user_lab: LabServer,
    page: Any,
    scripted_model: ScriptedModelServer,
    claude_env: dict[str, str],
    claude_workdir: Path,
    screenshots: Path,
) -> None:
    answer = long_answer()
    assert 90_000 <= len(answer) <= 110_000, len(answer)
    scripted_model.push(Reply(text(answer, chunk_size=40, delay=0.01)))
    lab_page.write_notebook(
        user_lab.root / "typing.ipynb", setup_code(claude_env, claude_workdir), "%%claude\nWrite it all", ""
    )
    _open(page, user_lab, "typing.ipynb")
    _run_all(page)
    claude, notes = _cells(page).nth(1), _cells(page).nth(2)
    expect(claude.locator(".kandev-md")).to_contain_text("Paragraph 3:", timeout=120_000)

    editor = notes.locator(".cm-content")
    editor.click()
    page.keyboard.type(TYPED, delay=30)
    # the answer was still streaming when the last key was typed: the test measured typing
    # during a stream, not after it
    still_streaming = claude.locator(".kandev-md").evaluate(
        "el => !el.closest('.jp-OutputArea').querySelector('.kandev-answer-host')"
    )
    page.screenshot(path=str(screenshots / "typing-while-streaming.png"))
    assert still_streaming, "the answer ended before the typing did: make it longer or slower"
    expect(editor).to_have_text(TYPED, timeout=10_000)

    host = claude.locator(".kandev-answer-host")
    host.wait_for(timeout=180_000)  # the swap to the static rendering
    expect(host).to_contain_text("The end.")
    expect(host).to_contain_text("Paragraph 299:")
    expect(host.locator("table tbody tr")).to_have_count(200)
    expect(editor).to_have_text(TYPED)
