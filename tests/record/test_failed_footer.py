"""Issue 28.6: a failed turn's footer says "failed (API 529)", the CLI's text and what to do,
never "success" (live in a real kernel with the real CLI, and in the saved rendering)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kandev_nb.testing import ScriptedModelServer, http_error
from tests.kernel.conftest import setup_code
from tests.kernel.kernel_harness import KernelHarness

pytestmark = pytest.mark.timeout(240)


def test_an_api_error_footer_says_failed_with_the_status_and_retry(
    kernel: KernelHarness, scripted_model: ScriptedModelServer, claude_env: dict[str, str], claude_workdir: Path
) -> None:
    scripted_model.push(http_error(529, "Overloaded", headers={"x-should-retry": "false"}))
    kernel.execute(setup_code(claude_env, claude_workdir))
    run = kernel.execute("%%claude\nHello")
    saved = run.data("text/html")[-1]
    footer = re.search(r'<div class="kandev-footer".*?</div>', saved, re.DOTALL)
    assert footer is not None
    text = re.sub(r"<[^>]+>", "", footer.group(0))
    assert "✗ failed (API 529): API Error: 529" in text and "%%claude --retry sends it again" in text
    assert "success" not in text
    markdown = run.data("text/markdown")[-1] if run.data("text/markdown") else ""
    assert "success" not in markdown.split("---")[-1]
    assert "failed (API 529)" in markdown


def test_small_budgets_and_costs_are_not_printed_as_zero() -> None:
    from kandev_nb.notebook.ledger_hooks import check_budget
    from kandev_nb.notebook.state import NotebookSettings
    from kandev_nb.render.html import fmt_usd

    assert [fmt_usd(x) for x in (0.001, 0.000042, 0.0008, 1.5)] == ["$0.0010", "$0.000042", "$0.0008", "$1.50"]
    with pytest.raises(RuntimeError) as refused:
        check_budget(NotebookSettings(budget_usd=0.001), 0.0016)
    assert "budget of $0.0010 is spent: $0.0016" in str(refused.value)  # old code: "budget of $0.00"
