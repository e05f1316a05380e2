"""Issue 28.1 in a real kernel: the ledger rows of a notebook whose CLI restarts (a changed
launch option, ``--retry``) are each turn's own requests, and add up to the CLI's total."""

from __future__ import annotations

from pathlib import Path

import pytest

from kandev_nb.testing import Reply, ScriptedModelServer, http_error, text
from kandev_nb.testing.script import Usage
from tests.kernel.conftest import setup_code
from tests.kernel.kernel_harness import KernelHarness

pytestmark = pytest.mark.timeout(300)

OVERLOADED = http_error(529, "Overloaded", headers={"x-should-retry": "false"})


def test_rows_after_restarts_and_retries_are_each_turns_own_requests(
    kernel: KernelHarness, scripted_model: ScriptedModelServer, claude_env: dict[str, str], claude_workdir: Path
) -> None:
    kernel.execute(setup_code(claude_env, claude_workdir))
    cells = [
        ([Reply(text("One."), usage=Usage(100, 20))], "%%claude\nFirst"),
        ([Reply(text("Two."), usage=Usage(100, 20))], "%%claude\nSecond"),
        ([OVERLOADED], "%%claude\nThird"),
        ([Reply(text("Three."), usage=Usage(100, 20))], "%%claude --retry\n"),
        ([Reply(text("Four."), usage=Usage(100, 20))], "%%claude --max-turns 9\nFourth, after a restart"),
        ([Reply(text("Five."), usage=Usage(100, 20))], "%%claude\nFifth"),
    ]
    expected = []
    for entries, cell in cells:
        scripted_model.push(*entries)
        first = len(scripted_model.requests)
        kernel.wait(kernel.start(cell))
        answered = [u for u in scripted_model.answered_usage[first:] if u is not None]
        expected.append([sum(u.input_tokens for u in answered), sum(u.output_tokens for u in answered)])
    rows = kernel.eval("kandev_nb.runs()[['input_tokens', 'output_tokens']].values.tolist()")
    assert rows == expected  # old code: the retry row read 300 in / 60 out, the restart row 400 / 80
    costs = kernel.eval("kandev_nb.runs()[['cost_usd', 'total_cost_usd']].values.tolist()")
    assert sum(c for c, _ in costs) == pytest.approx(costs[-1][1], abs=1e-9), costs  # the CLI's own running total
    assert sum(c for c, _ in costs) == pytest.approx(0.0008 * 5, abs=1e-9)  # five answered requests
    answers = kernel.eval("kandev_nb.runs()['answer'].fillna('').tolist()")
    assert answers == ["One.", "Two.", "", "Three.", "Four.", "Five."]  # issue 28.4
