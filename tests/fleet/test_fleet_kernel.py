"""``%%claude --over`` in a real kernel (the frontend played by the harness), the real CLI and
the scripted model answering per row."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from kandev_nb.testing import ScriptedModelServer
from tests.fleet.conftest import answer_per_row, triage_answer
from tests.fleet.test_fleet_queue_budget import touch_then_answer
from tests.kernel.conftest import kernel, ledger_path, setup_code  # noqa: F401 - fixtures
from tests.kernel.kernel_harness import KernelHarness

pytestmark = pytest.mark.timeout(300)

SETUP = """
import pandas as pd
from typing import Literal
from pydantic import BaseModel

class Triage(BaseModel):
    ticket: int
    priority: Literal["low", "high"]

tickets = pd.DataFrame({"id": [1, 2, 3, 4], "subject": ["a", "b", "c", "d"]}, index=["w", "x", "y", "z"])
"""

CELL = """%%claude --over tickets -o triage --schema Triage --concurrency 2 --fleet dec
Classify ticket {id} ("{subject}"); {{braces}} stay."""


def test_over_runs_a_row_per_agent_shows_the_board_and_a_rerun_sends_nothing(
    kernel: KernelHarness,  # noqa: F811 - the fixture
    scripted_model: ScriptedModelServer,
    claude_env: dict[str, str],
    claude_workdir: Path,
    feed: Callable[..., None],
) -> None:
    feed(answer_per_row(triage_answer), 8)
    kernel.execute(setup_code(claude_env, claude_workdir))
    kernel.execute(SETUP)
    run = kernel.execute(CELL, timeout=200)
    got = kernel.eval(
        "[list(triage.index), list(triage['status']), [int(t) for t in triage['ticket']], "
        "str(triage['ticket'].dtype), len(kandev_nb.runs(fleet='dec'))]"
    )
    assert got == [["w", "x", "y", "z"], ["done"] * 4, [1, 2, 3, 4], "Int64", 4]
    prompts = sorted(
        r.messages[0]["content"][-1]["text"] if isinstance(r.messages[0]["content"], list) else r.messages[0]["content"]
        for r in scripted_model.main_requests
    )
    assert any('Classify ticket 1 ("a"); {braces} stay.' in p for p in prompts), prompts
    shown = json.dumps(run.outputs, default=str)
    assert "kandev-fleet-board" in shown and "4 done of 4" in shown  # the saved output: static board
    before = len(scripted_model.main_requests)
    kernel.execute(CELL.replace("-o triage", "-o again"), timeout=200)
    assert len(scripted_model.main_requests) == before
    assert kernel.eval("list(again['ticket'].astype(int)) == list(triage['ticket'].astype(int))") is True


def test_headless_rows_are_denied_at_the_approval_timeout(
    kernel: KernelHarness,  # noqa: F811 - the fixture
    claude_env: dict[str, str],
    claude_workdir: Path,
    feed: Callable[..., None],
) -> None:
    feed(answer_per_row(touch_then_answer), 12)
    kernel.execute(setup_code(claude_env, claude_workdir))
    kernel.execute("import pandas as pd\nrows = pd.DataFrame({'id': [1, 2]})")
    kernel.execute("%%claude --over rows -o out --approval-timeout 2 --fleet headless\nHandle ticket {id}.", 200)
    assert kernel.eval("list(out['status'])") == ["done", "done"]
    assert kernel.eval("[int(n) for n in kandev_nb.runs(fleet='headless')['permission_denials']]") == [1, 1]
    assert not list(claude_workdir.glob("out-*.txt"))
