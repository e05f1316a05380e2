"""Issue 34 point 9 in a real kernel with the real CLI and the scripted model: a 150-section
answer ends as a folded output (the whole answer inside the fold, "Show all" under it, the
footer after it); a short answer in the same session is not folded; the text/markdown copy
is the whole answer, never folded."""

from __future__ import annotations

import re
from pathlib import Path

from kandev_nb.render import fold
from kandev_nb.testing import Reply, ScriptedModelServer, text
from tests.kernel.conftest import setup_code
from tests.kernel.kernel_harness import CellRun, KernelHarness
from tests.widgets.test_long_answers import sections


def _final(run: CellRun, mime: str) -> str:
    """The cell's last `mime` payload: the finished turn's static rendering (what is saved)."""
    found = run.data(mime)
    assert found, [m["msg_type"] for m in run.outputs]
    return str(found[-1])


def test_a_long_answer_ends_folded_and_a_short_one_does_not(
    kernel: KernelHarness, scripted_model: ScriptedModelServer, claude_env: dict[str, str], claude_workdir: Path
) -> None:
    answer = sections(150)
    scripted_model.push(Reply(text(answer)), Reply(text("In short: revenue rose, returns fell.")))
    kernel.execute(setup_code(claude_env, claude_workdir))

    run = kernel.execute("%%claude\nWrite the 150-section report")
    assert run.error is None, run.error
    html = _final(run, "text/html")
    assert html.count('class="kandev-fold"') == 1 and fold.FOLD_RULES in html
    body = html[html.index('class="kandev-fold-body"') : html.index('class="kandev-fold-note"')]
    assert body.count("<h5") == 150 and "Section 150</h5>" in body  # the whole answer, inside the fold
    sizes = fold.fold_sizes(len(answer.splitlines()), len(answer.encode()))
    assert f"▾ Show all ({sizes})" in html
    footer = html[html.index('<div class="kandev-footer"') :]  # after the fold: the cost stays in view
    assert html.index('class="kandev-fold"') < html.index('<div class="kandev-footer"')
    assert re.search(r"cost</span> <b>\$0\.\d{4}</b>", footer), footer
    md = _final(run, "text/markdown")
    assert "Show all" not in md and "## 150. Section 150" in md
    assert kernel.eval("kandev_nb.last_turn().text") == answer

    run = kernel.execute("%%claude\nAnd in one line?")
    html = _final(run, "text/html")
    assert "In short: revenue rose, returns fell." in html
    assert "kandev-fold" not in html
