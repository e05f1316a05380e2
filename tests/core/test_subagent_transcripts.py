"""Issue 34.10: reading a session's subagent transcripts (the Agent SDK's ``list_subagents`` /
``get_subagent_messages``).

Measured on CLI 2.1.332: a subagent's transcript is
``<config>/projects/<key>/<session_id>/subagents/agent-<agent_id>.jsonl`` with an
``agent-<agent_id>.meta.json`` sidecar whose ``toolUseId`` is the Agent call; the wire's
subagent lines carry the same ``agent_id``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kandev_nb.agent import events as ev
from kandev_nb.agent.session import Session
from kandev_nb.agent.subagents import get_subagent_messages, list_subagents, subagent_info
from kandev_nb.agent.transcript import find_transcript
from kandev_nb.testing import Reply, ScriptedModelServer, text, tool_use
from kandev_nb.wire.protocol import WireMessage

pytestmark = pytest.mark.timeout(300)


def _allow(event: ev.AgentEvent) -> None:
    if isinstance(event, ev.PermissionRequest):
        event.approval.allow()


async def test_a_sessions_subagents_and_their_messages_are_read_from_its_transcripts(
    claude_cli: Path, claude_env: dict[str, str], claude_workdir: Path, scripted_model: ScriptedModelServer
) -> None:
    (claude_workdir / "notes.md").write_text("# Notes\nThe build uses make.\n")
    call = {"description": "Read the notes", "subagent_type": "general-purpose", "prompt": "Read notes.md"}
    scripted_model.push(
        Reply(tool_use("Agent", {**call, "run_in_background": False})),
        Reply(text("Reading."), tool_use("Read", {"file_path": f"{claude_workdir}/notes.md"})),
        Reply(text("It builds with make.")),
        Reply(text("Done.")),
    )
    wire: list[WireMessage] = []
    session = Session(cwd=claude_workdir, cli_path=claude_cli, env=dict(claude_env), inactivity_timeout=120)
    session.adapter.observer = lambda msg, events: wire.append(msg)  # what the CLI printed
    try:
        assert session.subagents() == []
        turn = await session.run("ask a subagent", consumers=[_allow])
    finally:
        await session.close()
    assert not turn.failed and turn.session_id
    agent_call = next(t for t, r in turn.tools.items() if r.call.tool_name == "Agent")
    read_call = next(t for t, r in turn.tools.items() if r.call.tool_name == "Read")
    on_wire = {m.raw["agent_id"] for m in wire if isinstance(getattr(m, "raw", None), dict) and "agent_id" in m.raw}
    assert len(on_wire) == 1
    (agent_id,) = on_wire

    assert list_subagents(turn.session_id, env=claude_env) == [agent_id]
    assert list_subagents(turn.session_id) == []  # another HOME: this machine's own CLI has none
    for pattern in ("*", "?" + turn.session_id[1:], "[" + turn.session_id[0] + "]" + turn.session_id[1:]):
        assert list_subagents(pattern, env=claude_env) == []  # an id is a name, never a glob pattern
        assert get_subagent_messages(pattern, agent_id, env=claude_env) == []
    project = find_transcript(claude_env, turn.session_id)
    assert project is not None  # the session's own transcript; no path that climbs out of projects/:
    assert find_transcript(claude_env, f"../{project.parent.name}/{turn.session_id}") is None
    info = subagent_info(turn.session_id, agent_id, env=claude_env)
    assert info is not None and info.tool_use_id == agent_call and info.agent_type == "general-purpose"
    assert info.description == "Read the notes"
    assert [(i.agent_id, i.tool_use_id) for i in session.subagents()] == [(agent_id, agent_call)]

    messages = get_subagent_messages(turn.session_id, agent_id, env=claude_env)
    assert [m.type for m in messages] == ["user", "assistant", "assistant", "user", "assistant"]
    assert all(m.parent_tool_use_id == agent_call and m.session_id == turn.session_id for m in messages)
    first, *_, last = messages
    assert json.dumps(first.message["content"]).count("Read notes.md") == 1  # the Agent call's prompt
    blocks = [b for m in messages if m.type == "assistant" for b in m.message["content"]]
    assert [b["type"] for b in blocks] == ["text", "tool_use", "text"]
    assert blocks[1]["id"] == read_call
    assert last.message["content"][0]["text"] == "It builds with make."
    assert session.subagent_messages(agent_id) == messages
    assert get_subagent_messages(turn.session_id, agent_id, env=claude_env, limit=2, offset=1) == messages[1:3]
    assert get_subagent_messages(turn.session_id, "nope", env=claude_env) == []
