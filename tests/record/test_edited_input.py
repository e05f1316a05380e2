"""Issue 28.3: an input edited before "Allow edited" is what the card, the saved output, the
Turn and the ledger show and record, marked "edited by you" (real kernel, real CLI)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from kandev_nb.testing import Reply, ScriptedModelServer, text, tool_use
from tests.kernel.conftest import setup_code
from tests.kernel.kernel_harness import KernelHarness
from tests.kernel.test_approvals import answer, html_of, part, wait_for_card, wait_until_decided

pytestmark = pytest.mark.timeout(240)


def test_the_edited_input_is_shown_and_recorded_as_the_one_that_ran(
    kernel: KernelHarness, scripted_model: ScriptedModelServer, claude_env: dict[str, str], claude_workdir: Path
) -> None:
    target = claude_workdir / "config.py"
    target.write_text("RATE = 1\nNAME = 'x'\n")
    proposed = {"file_path": str(target), "old_string": "RATE = 1", "new_string": "RATE = 2"}
    edited = {**proposed, "new_string": "RATE = 7  # chosen by a person"}
    scripted_model.push(
        Reply(tool_use("Read", {"file_path": str(target)})),
        Reply(tool_use("Edit", proposed)),
        Reply(text("Done.")),
    )
    kernel.execute(setup_code(claude_env, claude_workdir))
    run = kernel.start("%%claude\nSet the rate")
    card = wait_for_card(kernel, 1)
    answer(kernel, card, "edit")
    controls = part(kernel, card, "kandev-approval-controls")
    end = time.monotonic() + 30
    while not controls.state.get("input_json") and time.monotonic() < end:
        kernel.pump_for(0.1)
    answer(kernel, card, "allow_edited", input=json.dumps(edited))
    decision_line = wait_until_decided(kernel, card)
    kernel.wait(run)
    assert run.status == "ok", run.error
    assert target.read_text() == "RATE = 7  # chosen by a person\nNAME = 'x'\n"

    saved = html_of(run)
    assert "chosen by a person" in saved and "RATE = 2" not in saved  # the diff of what ran
    assert "edited and allowed by you" in saved
    assert "Edited and allowed" in decision_line
    record = kernel.eval(
        "[(r.call.input, r.proposed.input['new_string'] if r.proposed else None, r.edited)"
        " for r in kandev_nb.last_turn().tools.values() if r.call.tool_name == 'Edit'][0]"
    )
    assert record == [edited, "RATE = 2", True]
    rows = kernel.eval("kandev_nb.tool_calls()[['tool_name', 'edited_input']].values.tolist()")
    assert rows == [["Read", None], ["Edit", edited]]
