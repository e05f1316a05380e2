"""TurnView fed by real Claude Code turns (the CLI against the scripted model server)."""

from __future__ import annotations

import json
from pathlib import Path

from kandev_nb.agent import events as ev
from kandev_nb.agent.session import Session
from kandev_nb.notebook.widgets import TurnView
from kandev_nb.notebook.widgets.recording import Recorder
from kandev_nb.testing import Reply, ScriptedModelServer, text, thinking, tool_use
from tests.widgets.test_static import plain


async def test_real_turn_text_tools_and_approval_buttons(
    rec: Recorder, scripted_model: ScriptedModelServer, claude_env: dict[str, str], claude_workdir: Path
) -> None:
    target = claude_workdir / "a.py"
    target.write_text("def f():\n    return 1\n")
    scripted_model.push(
        Reply(
            thinking("Let me look."),
            text("I'll check **the file**.\n\n```python\nx = 1\n```\n"),
            tool_use("Read", {"file_path": str(target)}),
        ),
        Reply(tool_use("Edit", {"file_path": str(target), "old_string": "return 1", "new_string": "return 2"})),
        Reply(tool_use("Bash", {"command": "echo out; echo err >&2; exit 3", "description": "try it"})),
        Reply(text("Done: changed it.", chunk_size=3)),
    )
    view = TurnView("fix it", session_name="t")
    clicked: list[str] = []

    def click_allow(e: ev.AgentEvent) -> None:  # plays the person at the notebook
        if isinstance(e, ev.PermissionRequest):
            clicked.append(e.tool_name)
            view.approvals[e.request_id].press("allow")

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
        assert not card.controls.pending and "Allowed" in card.status.value
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
            view.approvals[e.request_id].press("deny", reason="not today")

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


def _no_run_figures(text: str) -> None:
    assert "exit 1" not in text and "exit code" not in text and "stderr" not in text


async def test_real_denials_say_who_denied_and_that_nothing_ran(
    rec: Recorder,
    scripted_model: ScriptedModelServer,
    claude_env: dict[str, str],
    claude_workdir: Path,
    tmp_path: Path,
) -> None:
    """Three denials through the real CLI: the approval timeout, a person with a reason, and a
    PreToolUse hook of the project's settings (which the CLI applies without asking us)."""
    hook = tmp_path / "deny_hook.sh"
    hook.write_text(
        '#!/bin/sh\ncat >/dev/null\necho \'{"hookSpecificOutput":{"hookEventName":"PreToolUse",'
        '"permissionDecision":"deny","permissionDecisionReason":"no network from here"}}\'\n'
    )
    hook.chmod(0o755)
    (claude_workdir / ".claude").mkdir()
    (claude_workdir / ".claude" / "settings.json").write_text(
        json.dumps(
            {"hooks": {"PreToolUse": [{"matcher": "WebFetch", "hooks": [{"type": "command", "command": str(hook)}]}]}}
        )
    )
    scripted_model.push(
        Reply(tool_use("Bash", {"command": "rm -rf data", "description": "Delete raw data"})),
        Reply(tool_use("Write", {"file_path": str(claude_workdir / "x.txt"), "content": "hi\n"})),
        Reply(tool_use("WebFetch", {"url": "https://example.org/", "prompt": "read"})),
        Reply(text("Nothing done.")),
    )
    view = TurnView("three denials")

    def answer(e: ev.AgentEvent) -> None:  # the Bash request is left to the timeout
        if isinstance(e, ev.PermissionRequest) and e.tool_name == "Write":
            view.approvals[e.request_id].press("deny", reason="not today")

    session = Session(cwd=str(claude_workdir), env=claude_env, approval_timeout=1.0)
    try:
        turn = await session.run("go", consumers=[view.handle, answer])
    finally:
        await session.close()
    by_tool = {c.call.tool_name: c for c in view.cards.values()}
    assert set(by_tool) == {"Bash", "Write", "WebFetch"}
    expected = {"Bash": "denied by the approval timeout", "Write": "denied by you", "WebFetch": "denied by a hook"}
    saved = view.finish(turn)
    for name, words in expected.items():
        rec_ = next(r for r in turn.tools.values() if r.call.tool_name == name)
        assert rec_.decision is not None and rec_.decision.behavior == "deny"
        live = plain(by_tool[name].html.value)
        assert words in live and "Not run" in live
        _no_run_figures(live)
    assert "not today" in plain(by_tool["Write"].html.value)
    assert "no network from here" in plain(by_tool["WebFetch"].html.value)
    assert "rm -rf data" in plain(by_tool["Bash"].html.value)
    h, md = plain(saved["text/html"]), saved["text/markdown"]
    for words in expected.values():
        assert words in h and words in md.replace("**", "")
    _no_run_figures(h)
    _no_run_figures(md)
    assert h.count("Not run") == 3
