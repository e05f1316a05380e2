"""A skeptic's finding on ``%%claude --over`` in a real kernel (issue 25)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from kandev_nb.testing import RecordedRequest, Reply, ScriptedModelServer, text, tool_use
from tests.fleet.conftest import answer_per_row
from tests.kernel.conftest import kernel, ledger_path, setup_code  # noqa: F401 - fixtures
from tests.kernel.kernel_harness import KernelHarness

pytestmark = pytest.mark.timeout(300)


def test_cli_keeps_the_notebooks_mode_for_every_row(
    kernel: KernelHarness,  # noqa: F811 - the fixture
    scripted_model: ScriptedModelServer,
    claude_cli: Path,
    claude_env: dict[str, str],
    claude_workdir: Path,
    feed: Callable[..., None],
) -> None:
    """``--cli`` made a config of cwd, model, timeout and env only: the notebook's mode (and its hooks,
    inactivity timeout, answer...) were dropped, so in ``configure(mode="acceptEdits")`` every row's
    Write asked and the approval timeout denied it."""

    def write(number: int, request: RecordedRequest) -> Reply:
        if request.last_user_text():
            return Reply(tool_use("Write", {"file_path": str(claude_workdir / f"note-{number}.txt"), "content": "x"}))
        return Reply(text(f"wrote note-{number}.txt"))

    feed(answer_per_row(write), 8)
    kernel.execute(setup_code(claude_env, claude_workdir, mode="acceptEdits"))
    kernel.execute("import pandas as pd\nt = pd.DataFrame({'id': [1, 2]})")
    kernel.execute(f"%%claude --over t -o r --cli {claude_cli} --approval-timeout 2\nWrite ticket {{id}}.", timeout=200)
    assert kernel.eval("list(r['status'])") == ["done", "done"]
    assert sorted(p.name for p in claude_workdir.glob("note-*.txt")) == ["note-1.txt", "note-2.txt"]
