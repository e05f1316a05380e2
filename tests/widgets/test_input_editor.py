"""Issue 27 point 6, kernel side: the proposal follows the field editors, and an edited
``content`` with newlines (JSON built by the browser) is the input allowed."""

from __future__ import annotations

import json

from kandev_nb.notebook.widgets import TurnView
from kandev_nb.notebook.widgets.input_editor import CODE_FIELDS, controls_esm, edited_request
from kandev_nb.notebook.widgets.recording import Recorder
from tests.widgets.test_approval import card_of, request


async def test_the_preview_redraws_the_proposal_for_the_edited_input(rec: Recorder) -> None:
    v = TurnView("x")
    e = request("Write", {"file_path": "/tmp/notes.py", "content": "old = 1\n"})
    v.handle(e)
    card = card_of(v)
    before = card.what.value
    edited = {"file_path": "/tmp/notes.py", "content": "def f():\n\treturn 'typed'\n"}
    rec.custom(card.controls, {"action": "preview", "input": json.dumps(edited)})
    assert card.what.value != before
    assert "typed" in card.what.value and "edited by you" in card.what.value
    assert e.approval.decision is None  # a preview decides nothing
    shown = card.what.value
    rec.custom(card.controls, {"action": "preview", "input": '{"content": "half'})  # mid-typing: kept as it was
    assert card.what.value == shown
    rec.custom(card.controls, {"action": "allow_edited", "input": json.dumps(edited)})
    d = e.approval.decision
    assert d is not None and d.updated_input == edited and "Edited and allowed" in card.status.value


async def test_the_controls_module_carries_the_field_editors() -> None:
    esm = controls_esm()
    assert "function kandevInputEditor" in esm and esm.rstrip().endswith("};")
    for key in CODE_FIELDS:
        assert f'"{key}"' in esm
    assert edited_request(request("Bash", {"command": "ls"}), "[1]") is None
