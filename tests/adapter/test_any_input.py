"""Whatever the CLI prints, the adapter goes on: no exception, no lost earlier events, no hang."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import stat
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kandev_nb.agent import events as ev
from kandev_nb.agent.adapter import Adapter
from kandev_nb.agent.session import Session
from kandev_nb.testing import Reply, ScriptedModelServer, pinned_cli, scripted_env, text
from kandev_nb.wire.protocol import InvalidLine, UnknownMessage, parse_line
from kandev_nb.wire.recorder import load_transcript, out_lines
from kandev_nb.wire.transport import CLIProcessError, LineFramer
from tests.transcripts.replay import feed

ROOT = Path(__file__).parents[1] / "transcripts"
TEXT = load_transcript(ROOT / "2.1.332" / "text.jsonl")


def run(lines: list[bytes], chunks: list[bytes] | None = None) -> list[ev.AgentEvent]:
    framer = LineFramer()
    data = b"".join(line + b"\n" for line in lines)
    framed = []
    for chunk in chunks if chunks is not None else [data]:
        framed += framer.push(chunk)
    return feed(Adapter(), framed + framer.flush())


def text_of(events: list[ev.AgentEvent]) -> str:
    return "".join(e.text for e in events if isinstance(e, ev.MessageChunk))


ANSWER = "Hello! Here is a **markdown** answer with a list:\n\n- one\n- two\n\nDone."


def test_a_64_mib_line_is_one_event_and_the_rest_goes_on() -> None:
    big = json.dumps(
        {
            "type": "user",
            "message": {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "toolu_big", "content": "x" * (64 << 20)}],
            },
        }
    ).encode()
    lines = list(out_lines(TEXT))
    events = run(lines[:-1] + [big] + lines[-1:])
    update = next(e for e in events if isinstance(e, ev.ToolUpdate))
    assert len(update.output) == 64 << 20 and text_of(events) == ANSWER


def test_non_json_lines_before_between_and_after() -> None:
    lines = list(out_lines(TEXT))
    noisy = [b"Warning: something", *lines[:5], b"{not json", *lines[5:], b"\x00\xff garbage", b"[1, 2]"]
    events = run(noisy)
    unknown = [e for e in events if isinstance(e, ev.Unknown)]
    assert len(unknown) == 4 and text_of(events) == ANSWER and isinstance(events[-1], ev.Unknown)


def test_a_utf8_character_split_across_reads() -> None:
    line = json.dumps(
        {
            "type": "stream_event",
            "event": {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "héllo → 🙂"}},
        },
        ensure_ascii=False,
    ).encode()
    data = line + b"\n"
    cut = data.index("🙂".encode()) + 2
    assert text_of(run([], chunks=[data[:cut], data[cut:]])) == "héllo → 🙂"


def test_u2028_inside_a_json_string_does_not_split_the_line() -> None:
    line = (
        '{"type":"stream_event","event":{"type":"content_block_delta","delta":'
        '{"type":"text_delta","text":"a\u2028b\u2029c"}}}'
    ).encode()
    assert text_of(run([line])) == "a\u2028b\u2029c"


def test_unknown_type_subtype_and_content_block_are_kept_unchanged() -> None:
    odd = [
        {"type": "brand_new", "x": 1},
        {"type": "system", "subtype": "brand_new_subtype", "y": 2},
        {"type": "assistant", "message": {"id": "m", "content": [{"type": "hologram", "z": 3}]}},
    ]
    events = run([json.dumps(o).encode() for o in odd] + list(out_lines(TEXT)))
    unknown = [e for e in events if isinstance(e, ev.Unknown)]
    assert [u.raw for u in unknown] == odd and text_of(events) == ANSWER


def test_missing_optional_fields_and_result_without_result() -> None:
    minimal = [
        {"type": "system"},
        {"type": "assistant", "message": {}},
        {"type": "user", "message": {}},
        {"type": "assistant", "message": {"content": [{"type": "text", "text": "hi"}, {"type": "tool_use"}]}},
        {"type": "result"},
    ]
    events = run([json.dumps(o).encode() for o in minimal])
    assert text_of(events) == "hi"
    assert isinstance(events[-1], ev.Complete) and events[-1].stats.result_text is None
    assert any(isinstance(e, ev.ToolUpdate) and e.auto_completed for e in events)


def test_a_required_field_of_the_wrong_type_is_unknown() -> None:
    assert isinstance(parse_line(b'{"type":"stream_event","event":[1]}'), UnknownMessage)
    assert isinstance(parse_line(b'{"type":"control_request","request":{}}'), UnknownMessage)
    assert isinstance(parse_line(b'"just a string"'), InvalidLine)
    events = run(
        [b'{"type":"stream_event","event":{"type":"content_block_delta","delta":{"type":"text_delta","text":7}}}']
    )
    assert len(events) == 1 and isinstance(events[0], ev.Unknown) and "adapter error" in events[0].reason


def test_tool_result_content_as_text_and_image_blocks() -> None:
    call = {
        "type": "assistant",
        "message": {
            "id": "m1",
            "content": [{"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "/p/img.png"}}],
        },
    }
    result = {
        "type": "user",
        "message": {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "t1",
                    "content": [
                        {"type": "text", "text": "an image:"},
                        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"}},
                    ],
                }
            ],
        },
    }
    events = run([json.dumps(call).encode(), json.dumps(result).encode()])
    update = next(e for e in events if isinstance(e, ev.ToolUpdate))
    assert update.status == "complete" and update.output == "an image:\n[image: image/png]"


def test_a_duplicate_tool_result_wins_over_the_first() -> None:
    call = {
        "type": "assistant",
        "message": {
            "id": "m1",
            "content": [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls"}}],
        },
    }
    first = {
        "type": "user",
        "message": {"content": [{"type": "tool_result", "tool_use_id": "t1", "content": "partial"}]},
    }
    second = {
        "type": "user",
        "message": {"content": [{"type": "tool_result", "tool_use_id": "t1", "content": "a\nb"}]},
        "tool_use_result": {"stdout": "a\nb", "stderr": "", "interrupted": False},
    }
    events = run([json.dumps(m).encode() for m in (call, first, second)])
    updates = [e for e in events if isinstance(e, ev.ToolUpdate)]
    assert [u.output for u in updates] == ["partial", "a\nb"]
    assert updates[-1].normalized.output.stdout == "a\nb"


def test_todowrite_replaces_the_whole_list_idempotently() -> None:
    def todo_call(tool_id: str, statuses: list[str]) -> list[bytes]:
        todos = [{"content": f"task {i}", "status": s, "activeForm": f"doing {i}"} for i, s in enumerate(statuses)]
        call = {
            "type": "assistant",
            "session_id": "S",
            "message": {
                "id": tool_id,
                "content": [{"type": "tool_use", "id": tool_id, "name": "TodoWrite", "input": {"todos": todos}}],
            },
        }
        done = {
            "type": "user",
            "message": {"content": [{"type": "tool_result", "tool_use_id": tool_id, "content": "ok"}]},
        }
        return [json.dumps(call).encode(), json.dumps(done).encode()]

    events = run(
        todo_call("a", ["in_progress", "pending"])
        + todo_call("b", ["completed", "weird"])
        + todo_call("c", ["completed", "weird"])
    )
    lists = [[(i.id, i.status) for i in e.items] for e in events if isinstance(e, ev.Todos)]
    assert lists[1] == [("sdk-S-0", "completed"), ("sdk-S-1", "pending")] and lists[2] == lists[1]


# -- property tests on recorded transcripts ---------------------------------------------

ALL = [list(out_lines(load_transcript(p))) for p in sorted(ROOT.glob("2.1.*/*.jsonl"))]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(range(len(ALL))), st.data())
def test_a_cut_transcript_gives_a_prefix_of_the_events(index: int, data: st.DataObject) -> None:
    lines = ALL[index]
    whole = [e.model_dump(mode="json") for e in run(lines)]
    cut = data.draw(st.integers(0, len(lines)))
    part = [e.model_dump(mode="json") for e in run(lines[:cut])]
    assert part == whole[: len(part)]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(range(len(ALL))), st.randoms(use_true_random=False), st.data())
def test_shuffled_and_corrupted_transcripts_never_stop_the_adapter(index: int, rng: Any, data: st.DataObject) -> None:
    lines = list(ALL[index])
    rng.shuffle(lines)
    damaged = []
    for line in lines:
        how = data.draw(st.sampled_from(["keep", "keep", "truncate", "flip", "drop"]))
        if how == "truncate":
            line = line[: rng.randrange(len(line) + 1)]
        elif how == "flip" and line:
            at = rng.randrange(len(line))
            line = line[:at] + bytes([line[at] ^ 0x5A]) + line[at + 1 :]
        if how != "drop":
            damaged.append(line.replace(b"\n", b" "))
    events = run(damaged)
    assert all(
        isinstance(
            e,
            ev.Unknown
            | ev.MessageChunk
            | ev.Reasoning
            | ev.ToolCall
            | ev.ToolUpdate
            | ev.ContextWindow
            | ev.Complete
            | ev.Error
            | ev.SessionStatus
            | ev.SessionMode
            | ev.ApiRetry
            | ev.Todos
            | ev.SubagentTask
            | ev.CompactBoundary
            | ev.RateLimit,
        )
        for e in events
    )
    results = sum(1 for line in damaged if isinstance(parse_line(line), type(parse_line(b'{"type":"result"}'))))
    assert sum(isinstance(e, ev.Complete) for e in events) == results


# -- the CLI process itself -------------------------------------------------------------


async def test_cli_exiting_before_initialize_shows_its_stderr(tmp_path: Path) -> None:
    fake = tmp_path / "claude"
    fake.write_text(
        "#!/bin/sh\nif [ \"$1\" = --version ]; then echo '2.1.332 (Claude Code)'; exit 0; fi\n"
        "echo 'Error: something is badly wrong' >&2\nexit 7\n"
    )
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    session = Session(cwd=tmp_path, cli_path=fake, initialize_timeout=30)
    with pytest.raises(CLIProcessError) as info:
        await session.run("hello")
    assert info.value.exit_code == 7 and "something is badly wrong" in info.value.stderr
    await session.close()


@pytest.mark.parametrize("version", ["2.1.197", "2.1.332"])
async def test_cli_killed_mid_turn_ends_the_turn_with_an_error(version: str, tmp_path: Path) -> None:
    with ScriptedModelServer([Reply(text("slow " * 200, chunk_size=5, delay=0.05)), Reply(text("Back."))]) as server:
        session = Session(cwd=tmp_path, env=scripted_env(server, tmp_path / "home"), cli_path=pinned_cli(version))
        seen: list[ev.AgentEvent] = []

        def kill_on_first_chunk(event: ev.AgentEvent) -> None:
            seen.append(event)
            if isinstance(event, ev.MessageChunk) and sum(isinstance(e, ev.MessageChunk) for e in seen) == 1:
                os.kill(session.pid or 0, signal.SIGKILL)

        turn = await asyncio.wait_for(session.run("talk slowly", consumers=[kill_on_first_chunk]), 120)
        assert turn.error is not None and turn.error.subtype == "cli_exited" and turn.text.startswith("slow")
        again = await asyncio.wait_for(session.run("are you back?"), 120)  # a new process resumes the session
        assert again.error is None and again.text == "Back."
        await session.close()


@pytest.mark.parametrize("version", ["2.1.197", "2.1.332"])
async def test_resuming_a_session_that_does_not_exist(version: str, tmp_path: Path) -> None:
    with ScriptedModelServer([Reply(text("unused"))]) as server:
        session = Session(
            cwd=tmp_path,
            env=scripted_env(server, tmp_path / "home"),
            cli_path=pinned_cli(version),
            resume="00000000-0000-4000-8000-000000000000",
        )
        try:
            turn = await asyncio.wait_for(session.run("hello"), 120)
        except CLIProcessError as exc:  # the CLI may refuse before it answers initialize
            assert "00000000-0000-4000-8000-000000000000" in (exc.stderr + str(exc))
        else:
            assert turn.error is not None and turn.done
        await session.close()
