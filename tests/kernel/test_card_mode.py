"""issue 28, 10: the approval card's "Allow, and switch to acceptEdits mode for this session"
lasts for the session, as the button says: a later cell without --mode runs in acceptEdits
(before, the next cell put the notebook's mode back and the next edit asked again).
A real kernel, the real CLI, the scripted model; the card answered as a browser would."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kandev_nb.testing import Reply, ScriptedModelServer, text, tool_use
from tests.kernel.conftest import setup_code
from tests.kernel.kernel_harness import KernelHarness

pytestmark = pytest.mark.timeout(240)


def test_the_cards_mode_switch_lasts_for_the_session(
    kernel: KernelHarness, scripted_model: ScriptedModelServer, claude_env: dict[str, str], claude_workdir: Path
) -> None:
    first, second, third = (claude_workdir / f"{n}.txt" for n in ("first", "second", "third"))
    first.write_text("0\n")
    scripted_model.push(
        Reply(tool_use("Edit", {"file_path": str(first), "old_string": "0", "new_string": "1"})),
        Reply(text("wrote first")),
        Reply(tool_use("Write", {"file_path": str(second), "content": "2\n"})),
        Reply(text("wrote second")),
        Reply(tool_use("Write", {"file_path": str(third), "content": "3\n"})),
        Reply(text("wrote third")),
    )
    kernel.execute(setup_code(claude_env, claude_workdir))
    run = kernel.start("%%claude\nwrite first")
    controls = kernel.wait_for_approval()
    for _ in range(50):  # the buttons' list is synced just after the card opens
        labels = [item["label"] for item in json.loads(controls.state.get("suggestions", "[]"))]
        if labels:
            break
        kernel.pump_for(0.1)
    index = labels.index("Allow, and switch to acceptEdits mode for this session")
    kernel.send_custom(controls, {"action": "allow_suggestion", "index": index})
    assert kernel.wait(run).status == "ok" and first.read_text() == "1\n"

    # No --mode: the session stays in the mode the card chose; the Write runs without a card.
    run = kernel.start("%%claude --approval-timeout 3\nwrite second")
    assert kernel.wait(run).status == "ok"
    assert second.read_text() == "2\n", "the next cell asked again (the card's mode lasted one cell)"
    assert kernel.eval("kandev_nb.last_turn().mode") == "acceptEdits"
    # configure(mode=...) is the notebook's mode from now on: it replaces the card's choice.
    kernel.execute("kandev_nb.configure(mode='supervised')")
    run = kernel.start("%%claude --approval-timeout 2\nwrite third")
    kernel.wait_for_approval()  # asks again
    assert kernel.wait(run).status == "ok" and not third.exists()
    assert kernel.eval("kandev_nb.last_turn().mode") == "supervised"
