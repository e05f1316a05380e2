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
