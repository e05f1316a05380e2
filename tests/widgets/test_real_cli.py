"""TurnView fed by real Claude Code turns (the CLI against the scripted model server)."""

from __future__ import annotations

from pathlib import Path

from kandev_nb import events as ev
from kandev_nb.session import Session
from kandev_nb.testing import Reply, ScriptedModelServer, text, thinking, tool_use
from kandev_nb.widgets import TurnView
from kandev_nb.widgets.recording import Recorder
from tests.widgets.test_static import plain


async def test_real_turn_text_tools_and_approval_buttons(
    rec: Recorder, scripted_model: ScriptedModelServer, claude_env: dict[str, str], claude_workdir: Path
) -> None:
    target = claude_workdir / "a.py"
    target.write_text("def f():\n    return 1\n")
    scripted_model.push(
        Reply(thinking("Let me look."), text("I'll check **the file**.\n\n```python\nx = 1\n```\n"),
              tool_use("Read", {"file_path": str(target)})),
        Reply(tool_use("Edit", {"file_path": str(target), "old_string": "return 1", "new_string": "return 2"})),
        Reply(tool_use("Bash", {"command": "echo out; echo err >&2; exit 3", "description": "try it"})),
        Reply(text("Done: changed it.", chunk_size=3)),
    )
    view = TurnView("fix it", session_name="t")
    clicked: list[str] = []

    def click_allow(e: ev.AgentEvent) -> None:  # plays the person at the notebook
        if isinstance(e, ev.PermissionRequest):
            clicked.append(e.tool_name)
            view.approvals[e.request_id].allow.click()

    session = Session(cwd=str(claude_workdir), env=claude_env)
    try:
        turn = await session.run("fix it", consumers=[view.handle, click_allow])
    finally:
        await session.close()
    assert turn.error is None and target.read_text() == "def f():\n    return 2\n"
    assert clicked == ["Edit", "Bash"]
    # each text run between tool cards is its own segment; Turn.text joins them as paragraphs
    assert "\n\n".join(s.text for s in view.segments if "kandev-text" in s._dom_classes) == turn.text
    kinds = {c.call.tool_name: c for c in view.cards.values()}
    assert set(kinds) == {"Read", "Edit", "Bash"}
    assert kinds["Read"].kind == "read_file" and "return 1" in plain(kinds["Read"].html.value)
    edit = kinds["Edit"]
    assert edit.status == "complete" and "+1" in edit.html.value and "−1" in edit.html.value
    assert "allowed by you" in plain(edit.html.value)
    bash = kinds["Bash"]
    assert bash.status == "error" and "exit 3" in plain(bash.html.value) and "err" in plain(bash.html.value)
    for card in view.approvals.values():
        assert card.allow.disabled and "Allowed" in card.status.value
    assert view.footer.value and "$" in view.footer.value
    bundle = view.finish(turn)
    h = bundle["text/html"]
    assert "Done: changed it." in plain(h) and "kandev-kind-shell_exec" in h and "Thinking" in plain(h)
    assert view.root is None


async def test_real_turn_denied_with_reason(
    rec: Recorder, scripted_model: ScriptedModelServer, claude_env: dict[str, str], claude_workdir: Path
) -> None:
    scripted_model.push(
        Reply(tool_use("Write", {"file_path": str(claude_workdir / "x.txt"), "content": "hi\n"})),
        Reply(text("OK, not writing.")),
    )
    view = TurnView("write")

    def deny(e: ev.AgentEvent) -> None:
        if isinstance(e, ev.PermissionRequest):
            card = view.approvals[e.request_id]
            card.reason.value = "not today"
            card.deny.click()

    session = Session(cwd=str(claude_workdir), env=claude_env)
    try:
        turn = await session.run("write", consumers=[view.handle, deny])
    finally:
        await session.close()
    assert not (claude_workdir / "x.txt").exists()
    (card,) = view.approvals.values()
    assert "Denied" in card.status.value and "not today" in card.status.value
    (tool,) = view.cards.values()
    assert tool.status == "error"
    # the agent got the reason
    assert "not today" in str(scripted_model.main_requests[-1].messages[-1])
    view.finish(turn)
