"""Issue 34.10: a subagent's text, attributed to its Agent call (the Agent SDK's
``forward_subagent_text``), shown inside the subagent's card, live and saved.

Measured on CLI 2.1.332: with ``"forwardSubagentText": true`` in `initialize`, the subagent's
text blocks arrive as `assistant` lines with ``parent_tool_use_id`` = the Agent call's id and
its ``agent_id``, and no `stream_event` deltas; without it only its tool calls arrive.
"""

from __future__ import annotations

import html
from pathlib import Path

import pytest

from kandev_nb.agent import events as ev
from kandev_nb.agent.session import Session
from kandev_nb.notebook.widgets import TurnView
from kandev_nb.notebook.widgets.recording import Recorder
from kandev_nb.notebook.widgets.stream import StreamText
from kandev_nb.testing import Reply, ScriptedModelServer, text, tool_use

pytestmark = pytest.mark.timeout(300)

SUB_NOTE = "SUB-NOTE: reading the notes first."
SUB_REPORT = "SUB-REPORT: the project builds with make."


def script(server: ScriptedModelServer, cwd: Path) -> None:
    (cwd / "notes.md").write_text("# Notes\nThe build uses make.\n")
    call = {
        "description": "Read the notes",
        "subagent_type": "general-purpose",
        "prompt": "Read notes.md and report how the project builds.",
        "run_in_background": False,  # 2.1.332 runs agents in the background by default
    }
    server.push(
        Reply(text("I will delegate."), tool_use("Agent", call)),
        Reply(text(SUB_NOTE), tool_use("Read", {"file_path": f"{cwd}/notes.md"})),  # the subagent's requests
        Reply(text(SUB_REPORT)),
        Reply(text("The subagent says: make.")),
    )


def _allow(event: ev.AgentEvent) -> None:
    if isinstance(event, ev.PermissionRequest):
        event.approval.allow()


@pytest.mark.parametrize("forward", [True, False], ids=["forwarded", "sdk-default"])
async def test_subagent_text_is_attributed_to_its_agent_call_and_shown_in_its_card(
    rec: Recorder,
    forward: bool,
    claude_cli: Path,
    claude_env: dict[str, str],
    claude_workdir: Path,
    scripted_model: ScriptedModelServer,
) -> None:
    script(scripted_model, claude_workdir)
    view = TurnView("ask a subagent", session_name="t")
    session = Session(
        cwd=claude_workdir,
        cli_path=claude_cli,
        env=dict(claude_env),
        forward_subagent_text=forward,
        inactivity_timeout=120,
    )
    try:
        turn = await session.run("ask a subagent", consumers=[view.handle, _allow])
    finally:
        await session.close()
    assert not turn.failed, turn.error
    agent_id = next(tid for tid, record in turn.tools.items() if record.call.tool_name == "Agent")
    sub_texts = [e.text for e in turn.events if isinstance(e, ev.MessageChunk) and e.parent_tool_use_id == agent_id]
    assert "The subagent says: make." in turn.text and SUB_NOTE not in turn.text  # never the main answer
    card = view.cards[agent_id]
    assert card.nested is not None
    nested_text = [c.text for c in card.nested.children if isinstance(c, StreamText)]
    saved = html.unescape(view.finish(turn)["text/html"])
    if not forward:  # the SDK's default: only the subagent's tool calls
        assert sub_texts == [] and nested_text == []
        assert SUB_NOTE not in saved
        return
    assert sub_texts == [SUB_NOTE, SUB_REPORT]
    assert nested_text == [SUB_NOTE, SUB_REPORT]  # live: inside the Agent card, around its Read card
    read = next(r for r in turn.tools.values() if r.call.tool_name == "Read")
    assert read.call.parent_tool_use_id == agent_id
    # saved: inside the Agent card's nested block, which is inside the card's <details>
    card_at = saved.index("kandev-kind-subagent_task")
    nested_at = saved.index('class="kandev-nested"', card_at)
    note_at, report_at = saved.index(SUB_NOTE), saved.index(f"<p>{SUB_REPORT}</p>", nested_at)
    assert card_at < nested_at < note_at < saved.index("kandev-kind-read_file", nested_at) < report_at
    assert saved.index("The subagent says: make.") > report_at  # the answer comes after the card
