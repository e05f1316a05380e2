"""Whole turns through ``Session(transport_factory=websocket_transport_factory())``.

The real CLI 2.1.118 against the scripted model. The main check runs the same script over
stdio and over the WebSocket and compares the events and the turn stats, normalised for ids,
uuids, timestamps and durations.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kandev_nb.agent import events as ev
from kandev_nb.agent.session import Session, TransportFactory
from kandev_nb.agent.turn import Turn
from kandev_nb.testing import Reply, ScriptedModelServer, ScriptEntry, scripted_env, text, tool_use
from kandev_nb.testing.clis import pinned_cli
from kandev_nb.wire.transport import StdioTransport
from kandev_nb.wire.websocket import (
    SdkUrlUnsupportedError,
    WebSocketTransport,
    websocket_transport_factory,
)
from tests.transport_ws.conftest import (
    RecordingFactory,
    approve_all,
    event_dumps,
    normalise,
    relayed,
)

ANSWER = "Hello there, this answer streams in several deltas."


def _script(cwd: Path) -> list[ScriptEntry]:
    return [
        Reply(text(ANSWER, chunk_size=7)),
        Reply(tool_use("Write", {"file_path": f"{cwd}/out.txt", "content": "hi\n"})),
        Reply(text("Wrote it.")),
    ]


async def _two_turns(factory: TransportFactory | None, cli: Path, root: Path) -> tuple[list[Turn], dict[str, str]]:
    """Run "say hi" then "write it" (allowed) with `factory`; return the turns and the
    paths to normalise."""
    cwd, home = root / "project", root / "home"
    cwd.mkdir(parents=True)
    with ScriptedModelServer(_script(cwd)) as server:
        session = Session(cwd=cwd, env=scripted_env(server, home), transport_factory=factory, cli_path=cli)
        try:
            hello_chunks: list[ev.MessageChunk] = []
            say_hi = await session.run(
                "say hi", consumers=[lambda e: hello_chunks.append(e) if isinstance(e, ev.MessageChunk) else None]
            )
            say_hi.meta["chunks"] = [c.text for c in hello_chunks]  # as delivered, before the turn compacts them
            turns = [say_hi, await session.run("write it", consumers=[approve_all])]
        finally:
            await session.close()
        assert server.remaining == 0
    assert (cwd / "out.txt").read_text() == "hi\n"
    return turns, {str(cwd.resolve()): "<cwd>", str(home): "<home>", server.url: "<model>"}


def _comparable(turns: list[Turn], paths: dict[str, str]) -> list[tuple[list[object], object]]:
    return [
        (event_dumps(t.events, paths), normalise(t.stats.model_dump(mode="json") if t.stats else None, paths))
        for t in turns
    ]


async def test_full_turn_with_approval_matches_stdio(cli_118: Path, tmp_path: Path) -> None:
    factory = RecordingFactory()
    ws_turns, ws_paths = await _two_turns(factory, cli_118, tmp_path / "ws")
    stdio_turns, stdio_paths = await _two_turns(None, cli_118, tmp_path / "stdio")

    assert len(factory.transports) == 1 and factory.transports[0].url is not None
    assert factory.transports[0].command == [*factory.transports[0].argv, "--sdk-url", factory.transports[0].url]
    hello, write = ws_turns
    assert hello.error is None and write.error is None
    assert hello.text == ANSWER  # once: stream_event deltas and the assistant line are not both shown
    # streamed in pieces (the masker may hold back a delta's tail that could start a secret: boundaries move)
    assert "".join(hello.meta["chunks"]) == ANSWER and len(hello.meta["chunks"]) > 1
    kinds = [e.type for e in write.events]
    assert (
        kinds.index("tool_call")
        < kinds.index("permission_request")
        < kinds.index("permission_decided")
        < kinds.index("tool_update")
    )
    assert write.text == "Wrote it." and write.stats is not None and write.stats.cost_usd > 0
    assert _comparable(ws_turns, ws_paths) == _comparable(stdio_turns, stdio_paths)


async def test_relayed_recut_frames_and_cli_keepalives_change_nothing(cli_118: Path, tmp_path: Path) -> None:
    """Through the relay every other message holds two lines or half a line, and keep_alive
    lines come in between: the turns are still the same as over stdio."""
    factory = relayed(keepalive=0.05)
    ws_turns, ws_paths = await _two_turns(factory, cli_118, tmp_path / "ws")
    stdio_turns, stdio_paths = await _two_turns(None, cli_118, tmp_path / "stdio")
    assert b'{"type":"keep_alive"}' in factory.seen  # injected lines reached the session...
    assert not any(isinstance(e, ev.Unknown) for t in ws_turns for e in t.events)  # ...and went no further
    assert _comparable(ws_turns, ws_paths) == _comparable(stdio_turns, stdio_paths)


async def test_our_keepalives_are_ignored_by_the_cli(cli_118: Path, tmp_path: Path) -> None:
    factory = RecordingFactory(keepalive_interval=0.01)
    ws_turns, ws_paths = await _two_turns(factory, cli_118, tmp_path / "ws")
    stdio_turns, stdio_paths = await _two_turns(None, cli_118, tmp_path / "stdio")
    assert factory.transports[0].keepalives_sent > 0
    assert _comparable(ws_turns, ws_paths) == _comparable(stdio_turns, stdio_paths)


@pytest.mark.slow
async def test_keepalives_from_the_cli_are_not_activity(cli_118: Path, tmp_path: Path, claude_home: Path) -> None:
    """The model never answers; keep_alive lines arrive all the time, yet the inactivity
    timer fires and interrupts the turn."""
    factory = relayed(keepalive=0.1)
    with ScriptedModelServer([Reply(text("too late"), delay_first_byte=120)]) as server:
        session = Session(
            cwd=tmp_path,
            env=scripted_env(server, claude_home),
            transport_factory=factory,
            cli_path=cli_118,
            inactivity_timeout=2,
        )
        try:
            turn = await session.run("wait")
        finally:
            await session.close()
    assert factory.seen.count(b'{"type":"keep_alive"}') > 1
    errors = [e.subtype for e in turn.events if isinstance(e, ev.Error)]
    assert errors[0] == "inactivity_timeout"
    assert turn.interrupted and turn.text == ""


async def test_dropped_connection_ends_the_turn_and_the_session_resumes(
    cli_118: Path, tmp_path: Path, claude_home: Path
) -> None:
    factory = RecordingFactory()
    script: list[ScriptEntry] = [Reply(text("word " * 100, chunk_size=5, delay=0.05)), Reply(text("Back again."))]
    with ScriptedModelServer(script) as server:
        session = Session(
            cwd=tmp_path, env=scripted_env(server, claude_home), transport_factory=factory, cli_path=cli_118
        )

        def drop_on_first_chunk(event: ev.AgentEvent) -> None:
            if isinstance(event, ev.MessageChunk) and factory.transports[0].connected:
                factory.transports[0].disconnect()

        try:
            broken = await session.run("talk slowly", consumers=[drop_on_first_chunk])
            first = factory.transports[0]
            assert first.exit_code is not None  # the CLI was stopped, not left reconnecting
            again = await session.run("are you there?")
        finally:
            await session.close()
        resumed_request = server.main_requests[-1]

    assert broken.error is not None and broken.error.subtype == "cli_exited"
    assert "WebSocket connection to the kernel closed unexpectedly" in broken.error.message
    assert "--resume" in broken.error.message
    assert again.error is None and again.text == "Back again."
    second_argv = factory.transports[1].argv
    assert broken.stats is not None and broken.stats.session_id
    assert second_argv[second_argv.index("--resume") + 1] == broken.stats.session_id
    prompts = [m["content"] for m in resumed_request.messages if m.get("role") == "user"]
    assert any("talk slowly" in str(p) for p in prompts)  # the conversation went on


async def test_newest_cli_is_refused_before_launch(tmp_path: Path, claude_home: Path) -> None:
    factory = RecordingFactory()
    with ScriptedModelServer([]) as server:
        session = Session(
            cwd=tmp_path,
            env=scripted_env(server, claude_home),
            transport_factory=factory,
            cli_path=pinned_cli("2.1.332"),
        )
        with pytest.raises(SdkUrlUnsupportedError) as caught:
            await session.run("hi")
        await session.close()
    assert caught.value.version == "2.1.332"
    assert "stdio transport" in str(caught.value) and "2.1.121" in str(caught.value)
    assert factory.transports[0].pid is None  # never launched


@pytest.mark.parametrize("version", ["2.1.332", "2.1.197"])
async def test_refusal_is_recognised_when_the_cli_exits(version: str, tmp_path: Path, claude_home: Path) -> None:
    """With the version check off, the CLI itself refuses; the same error comes out."""
    transport = WebSocketTransport(
        [
            str(pinned_cli(version)),
            "-p",
            "--input-format",
            "stream-json",
            "--output-format",
            "stream-json",
            "--verbose",
        ],
        scripted_env("http://127.0.0.1:9", claude_home),
        tmp_path,
        check_version=False,
    )
    with pytest.raises(SdkUrlUnsupportedError) as caught:
        await transport.start()
    assert caught.value.exit_code == 1
    assert "is not an approved Anthropic endpoint" in caught.value.stderr
    await transport.close()


def test_factory_makes_unstarted_websocket_transports() -> None:
    factory = websocket_transport_factory()
    first, second = factory(["claude"], {}, "."), factory(["claude"], {}, ".")
    assert isinstance(first, WebSocketTransport) and isinstance(second, WebSocketTransport)
    assert first.server is second.server and first.server.host == "127.0.0.1"
    assert first.token != second.token and len(first.token) >= 40
    assert first.connect_timeout >= 30
    assert not isinstance(first, StdioTransport) and first.pid is None


async def test_auto_approved_tool_is_seen_from_its_tool_use_block(
    cli_118: Path, tmp_path: Path, claude_home: Path
) -> None:
    """With --allowedTools the CLI sends no can_use_tool (only the PreToolUse hook of every
    tool, kandev_nb/policy/enforce.py); the tool still shows up."""
    cwd = tmp_path.resolve()
    script: list[ScriptEntry] = [
        Reply(tool_use("Write", {"file_path": f"{cwd}/auto.txt", "content": "a\n"})),
        Reply(text("Done.")),
    ]
    factory = RecordingFactory()
    with ScriptedModelServer(script) as server:
        session = Session(
            cwd=cwd,
            env=scripted_env(server, claude_home),
            transport_factory=factory,
            cli_path=cli_118,
            allowed_tools=("Write",),
        )
        try:
            turn = await session.run("write without asking")
        finally:
            await session.close()
    requests = [line for line in factory.seen if b'"control_request"' in line]
    assert requests and all(b'"hook_callback"' in line for line in requests)  # kandev-nb's PreToolUse hook only
    assert not any(b'"can_use_tool"' in line for line in factory.seen)
    assert not any(isinstance(e, ev.PermissionRequest) for e in turn.events)
    assert [(r.call.tool_name, r.status) for r in turn.tools.values()] == [("Write", "complete")]
    assert (cwd / "auto.txt").read_text() == "a\n"
