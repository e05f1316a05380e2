"""A live turn per CLI version (approvals allowed and denied), recorded, then replayed without a CLI."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from kandev_nb.agent import events as ev
from kandev_nb.agent.adapter import Adapter
from kandev_nb.agent.debug import DebugObserver, from_env
from kandev_nb.agent.session import Session
from kandev_nb.testing import Reply, ScriptedModelServer, pinned_cli, scripted_env, text, tool_use
from kandev_nb.wire.protocol import parse_line
from kandev_nb.wire.recorder import ReplayTransport, load_transcript, recording_factory

ROOT = Path(__file__).parents[1] / "transcripts"


def decide(event: ev.AgentEvent) -> None:
    if isinstance(event, ev.PermissionRequest):
        if event.input.get("file_path", "").endswith("no.txt"):
            event.approval.deny("Not that one.")
        else:
            event.approval.allow()


@pytest.mark.parametrize("version", ["2.1.197", "2.1.332"])
async def test_live_turn_with_approvals_then_replay(version: str, tmp_path: Path) -> None:
    work, home, record = tmp_path / "work", tmp_path / "home", tmp_path / "run.jsonl"
    work.mkdir()
    script = [
        Reply(text("Writing two files."), tool_use("Write", {"file_path": f"{work}/yes.txt", "content": "yes\n"})),
        Reply(tool_use("Write", {"file_path": f"{work}/no.txt", "content": "no\n"})),
        Reply(text("One written, one refused.")),
    ]
    with ScriptedModelServer(script) as server:
        session = Session(
            cwd=work,
            env=scripted_env(server, home),
            cli_path=pinned_cli(version),
            transport_factory=recording_factory(record),
        )
        turn = await asyncio.wait_for(session.run("write them", consumers=[decide]), 120)
        await session.close()
    assert (work / "yes.txt").read_text() == "yes\n" and not (work / "no.txt").exists()
    assert turn.text == "Writing two files.\n\nOne written, one refused." and turn.error is None
    assert [(r.status, r.decision.behavior if r.decision else None) for r in turn.tools.values()] == [
        ("complete", "allow"),
        ("error", "deny"),
    ]
    assert turn.stats is not None and turn.stats.cost_usd > 0 and turn.last_message_uuid

    replay = ReplayTransport(record)
    again = Session(cwd=work, cli_path=pinned_cli(version), transport_factory=lambda argv, env, cwd: replay)
    replayed = await asyncio.wait_for(again.run("write them", consumers=[decide]), 60)
    await again.close()
    assert replayed.text == turn.text and replayed.stats == turn.stats
    assert [r.status for r in replayed.tools.values()] == ["complete", "error"]
    # initialize, the prompt, then one answer per control_request of the CLI: the two
    # can_use_tool and kandev-nb's hooks (PreToolUse of every tool, PostToolUse redaction)
    out = [e["msg"] for e in load_transcript(record) if e["dir"] == "out" and isinstance(e["msg"], dict)]
    asked = [m["request"]["subtype"] for m in out if m.get("type") == "control_request"]
    assert asked.count("can_use_tool") == 2 and set(asked) == {"can_use_tool", "hook_callback"}
    assert [m["type"] for m in replay.sent] == ["control_request", "user", *["control_response"] * len(asked)]


async def test_replay_of_a_recording_that_wrote_both_messages_first() -> None:
    """shared/wire-samples style: initialize and the prompt both sent before any answer."""
    entries = load_transcript(ROOT / "2.1.197" / "text.jsonl")
    ins = [e for e in entries if e["dir"] == "in"]
    reordered = [entries[0], *ins, *[e for e in entries[1:] if e["dir"] != "in"]]
    replay = ReplayTransport(reordered)
    session = Session(cli_path=pinned_cli("2.1.332"), transport_factory=lambda argv, env, cwd: replay)
    turn = await asyncio.wait_for(session.run("say hello"), 60)
    await session.close()
    assert turn.text.startswith("Hello! Here is a **markdown** answer")


def test_debug_logs_raw_and_normalised(tmp_path: Path) -> None:
    assert from_env({}) is None
    observer = from_env({"KANDEV_DEBUG_AGENT_MESSAGES": "true", "KANDEV_DEBUG_DIR": str(tmp_path)})
    assert isinstance(observer, DebugObserver)
    adapter = Adapter(observer=observer)
    lines = [
        json.dumps(e["msg"]).encode()
        for e in load_transcript(ROOT / "2.1.332" / "text.jsonl")
        if e["dir"] == "out" and e["msg"].get("type") not in ("control_response",)
    ]
    produced = [event for line in lines for event in adapter.handle(parse_line(line))]
    observer.close()
    raw = [json.loads(x) for x in observer.raw_path.read_text().splitlines()]
    normalized = [json.loads(x) for x in observer.normalized_path.read_text().splitlines()]
    assert raw == [json.loads(line) for line in lines]
    assert [n["type"] for n in normalized] == [e.type for e in produced]
    assert normalized[-1]["type"] == "complete" and normalized[-1]["raw_index"] == len(raw)
