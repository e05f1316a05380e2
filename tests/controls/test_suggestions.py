"""The CLI's permission_suggestions as buttons: the saved rule, exactly as suggested, on the
real CLI; unknown suggestion types get no button and a clear message."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from kandev_nb.agent import events as ev
from kandev_nb.agent.permissions import Approval
from kandev_nb.agent.suggestions import describe, offered
from kandev_nb.notebook.widgets import TurnView
from kandev_nb.notebook.widgets.recording import Recorder
from kandev_nb.testing import Reply, ScriptedModelServer, text, tool_use
from tests.approvals.conftest import SessionMaker, sent
from tests.widgets.test_static import plain

pytestmark = pytest.mark.timeout(180)
BOTH = pytest.mark.parametrize("claude_cli", ["2.1.332", "2.1.197"], indirect=True)
NPM = {
    "type": "addRules",
    "rules": [{"toolName": "Bash", "ruleContent": "npm test *"}],
    "behavior": "allow",
    "destination": "localSettings",
}


@BOTH
async def test_the_suggestion_button_saves_exactly_that_rule_and_the_cli_stops_asking(
    make_session: SessionMaker, scripted_model: ScriptedModelServer, claude_workdir: Path, rec: Recorder
) -> None:
    npm = {"command": "npm test -- --watch=false", "description": "run the tests"}
    scripted_model.push(
        Reply(tool_use("Bash", npm)), Reply(text("ran")), Reply(tool_use("Bash", npm)), Reply(text("ran again"))
    )
    view = TurnView("test", session_name="t")
    labels: list[str] = []

    def click(event: ev.AgentEvent) -> None:
        if isinstance(event, ev.PermissionRequest):
            card = view.approvals[event.request_id]
            labels.extend(item["label"] for item in json.loads(card.controls.suggestions))
            card._on_view_msg(card.controls, {"action": "allow_suggestion", "index": 0}, [])

    session = make_session()
    turn = await session.run("test", consumers=[view.handle, click])
    assert labels == ["Always allow Bash(npm test *) in this project (.claude/settings.local.json)"]
    request = next(e for e in turn.events if isinstance(e, ev.PermissionRequest))
    answer = sent(session).answers_to(request.request_id)[0]["response"]["response"]
    assert answer["behavior"] == "allow" and answer["updatedPermissions"] == [NPM]
    local = json.loads((claude_workdir / ".claude" / "settings.local.json").read_text())
    assert "Bash(npm test *)" in local["permissions"]["allow"]
    saved = plain(view.finish(turn)["text/html"])
    assert "Saved by the CLI: Always allow Bash(npm test *) in this project (.claude/settings.local.json)" in saved
    asked_again: list[str] = []

    def deny(event: ev.AgentEvent) -> None:
        if isinstance(event, ev.PermissionRequest):
            asked_again.append(event.tool_name)
            event.approval.deny("asked again")

    await session.run("again", consumers=[deny])
    # 2.1.332 applies the saved rule in the same process; 2.1.197 saves it but asks again until restarted
    assert asked_again == ([] if "2.1.332" in str(session.cli_version) else ["Bash"])


async def test_unknown_or_broken_suggestions_get_no_button_and_decide_nothing() -> None:
    weird = [
        NPM,
        {"type": "grantEverything", "destination": "userSettings"},
        {"type": "addRules", "rules": []},
        {"type": "setMode", "mode": "acceptEdits", "destination": "session"},
    ]
    buttons, problems = offered(weird)
    assert [i for i, _ in buttons] == [0, 3]
    assert buttons[1][1] == "Allow, and switch to acceptEdits mode for this session"
    assert problems == [
        "kandev-nb does not know the permission suggestion type 'grantEverything'; not offered",
        "permission suggestion addRules has no rules; not offered",
    ]
    approval = Approval("r1", "Bash", {"command": "x"}, suggestions=weird)
    with pytest.raises(ValueError, match="grantEverything"):
        approval.allow(suggestion=1)
    with pytest.raises(IndexError, match="this request has 4"):
        approval.allow(suggestion=7)
    assert approval.decision is None
    assert approval.allow(suggestion=0)
    decision = await asyncio.wait_for(approval.wait(None), 1)
    assert decision.updated_permissions == [NPM] and decision.suggestion == NPM
    assert decision.to_wire({"command": "x"})["updatedPermissions"] == [NPM]
    assert describe({**NPM, "destination": "userSettings"}).endswith("for all your projects (~/.claude/settings.json)")
