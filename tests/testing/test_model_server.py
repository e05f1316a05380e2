"""ScriptedModelServer: its SSE against the Messages API shape, then the real CLI against it."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from kandev_nb.testing import (
    HttpError,
    RecordedRequest,
    Reply,
    ScriptedModelServer,
    Usage,
    http_error,
    text,
    thinking,
    tool_use,
)
from kandev_nb.testing.model_server import EXHAUSTED_TEXT

Event = tuple[str, dict[str, Any]]


def main_body(prompt: str = "hi", *, stream: bool = True, model: str = "claude-test") -> dict[str, Any]:
    """A request body shaped like the CLI's main-conversation requests."""
    return {
        "model": model,
        "max_tokens": 32000,
        "stream": stream,
        "tools": [{"name": "Write", "input_schema": {"type": "object"}}],
        "messages": [{"role": "user", "content": [{"type": "text", "text": prompt}]}],
    }


def parse_sse(raw: str) -> list[Event]:
    """(event name, data) pairs; checks that each data's ``type`` repeats the event name."""
    events: list[Event] = []
    for frame in raw.split("\n\n"):
        if not frame.strip():
            continue
        fields = dict(line.split(": ", 1) for line in frame.splitlines())
        data = json.loads(fields["data"])
        assert data["type"] == fields["event"]
        events.append((fields["event"], data))
    return events


def post(server: ScriptedModelServer, body: dict[str, Any], path: str = "/v1/messages?beta=true") -> httpx.Response:
    return httpx.post(server.url + path, json=body, timeout=30)


def stream_events(server: ScriptedModelServer, body: dict[str, Any] | None = None) -> list[Event]:
    """POST a streaming main request and read the SSE incrementally, as the CLI does."""
    with httpx.stream("POST", server.url + "/v1/messages?beta=true", json=body or main_body(), timeout=30) as r:
        assert r.status_code == 200
        assert r.headers["content-type"].startswith("text/event-stream")
        return parse_sse("".join(r.iter_text()))


def deltas(events: list[Event], kind: str, key: str) -> list[str]:
    return [d["delta"][key] for e, d in events if e == "content_block_delta" and d["delta"]["type"] == kind]


@pytest.fixture
def server() -> Iterator[ScriptedModelServer]:
    with ScriptedModelServer() as s:
        yield s


# --- SSE shape --------------------------------------------------------------------------


def test_text_reply_streams_in_chunks_with_the_message_envelope(
    server: ScriptedModelServer,
) -> None:
    server.push(Reply(text("Hello **world**")))
    events = stream_events(server, main_body(model="claude-echo"))

    assert [e for e, _ in events] == [
        "message_start",
        "content_block_start",
        "content_block_delta",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    ]
    assert deltas(events, "text_delta", "text") == ["Hello **worl", "d**"]
    message = events[0][1]["message"]
    assert message["model"] == "claude-echo"
    assert message["role"] == "assistant" and message["content"] == []
    assert events[1][1]["content_block"] == {"type": "text", "text": ""}
    assert events[5][1]["delta"]["stop_reason"] == "end_turn"


def test_chunk_size_controls_the_deltas(server: ScriptedModelServer) -> None:
    server.push(Reply(text("abcdefg", chunk_size=3)))
    assert deltas(stream_events(server), "text_delta", "text") == ["abc", "def", "g"]


def test_usage_is_split_between_message_start_and_message_delta(
    server: ScriptedModelServer,
) -> None:
    usage = Usage(
        input_tokens=120,
        output_tokens=30,
        cache_read_input_tokens=50,
        cache_creation_input_tokens=10,
    )
    server.push(Reply(text("Done."), usage=usage), Reply(text("default")))

    events = stream_events(server)
    start_usage = events[0][1]["message"]["usage"]
    assert start_usage["input_tokens"] == 120
    assert start_usage["cache_read_input_tokens"] == 50
    assert start_usage["cache_creation_input_tokens"] == 10
    assert events[-2][1]["usage"] == {"output_tokens": 30}

    default = stream_events(server)
    assert default[0][1]["message"]["usage"]["input_tokens"] == 100
    assert default[-2][1]["usage"] == {"output_tokens": 20}


def test_a_request_its_client_abandons_before_the_first_byte_is_not_answered(server: ScriptedModelServer) -> None:
    """Issue 33.5: a stop cuts a request while its reply waits (``delay_first_byte``); the
    client never gets a byte, so the server's record says it answered nothing (it counted the
    reply's whole usage before, money no one was charged)."""
    server.push(Reply(text("late"), usage=Usage(1000, 100), delay_first_byte=1.0), Reply(text("now")))
    with pytest.raises(httpx.ReadTimeout):
        httpx.post(server.url + "/v1/messages?beta=true", json=main_body(), timeout=0.3)
    for _ in range(100):
        if server.in_flight == 0:
            break
        threading.Event().wait(0.05)
    assert server.in_flight == 0 and server.answered_usage == [None]
    assert post(server, main_body()).status_code == 200
    assert server.answered_usage == [None, Usage()]


def test_tool_use_input_is_streamed_as_partial_json_that_reassembles(
    server: ScriptedModelServer,
) -> None:
    tool_input = {"file_path": "/abs/x.txt", "content": "hi\n" * 20, "nested": {"n": [1, 2, 3]}}
    server.push(
        Reply(thinking("let me see"), tool_use("Write", tool_input)),
        Reply(
            tool_use("Read", {"file_path": "/abs/x.txt"}),
            tool_use("Bash", {"command": "ls"}, id="toolu_mine"),
        ),
    )

    first = stream_events(server)
    assert first[1][1]["content_block"]["type"] == "thinking"
    assert "".join(deltas(first, "thinking_delta", "thinking")) == "let me see"
    assert len(deltas(first, "signature_delta", "signature")) == 1
    tool_start = [d["content_block"] for e, d in first if e == "content_block_start"][1]
    assert tool_start == {"type": "tool_use", "id": "toolu_0001", "name": "Write", "input": {}}
    fragments = deltas(first, "input_json_delta", "partial_json")
    assert len(fragments) > 1
    assert json.loads("".join(fragments)) == tool_input
    assert first[-2][1]["delta"]["stop_reason"] == "tool_use"

    second = stream_events(server)
    ids = [d["content_block"]["id"] for e, d in second if e == "content_block_start"]
    assert ids == ["toolu_0002", "toolu_mine"]
    assert [d["index"] for e, d in second if e == "content_block_stop"] == [0, 1]


def test_non_streaming_request_gets_one_json_message(server: ScriptedModelServer) -> None:
    server.push(Reply(text("whole"), tool_use("Read", {"file_path": "/a"}), stop_reason="max_tokens"))
    message = post(server, main_body(stream=False)).json()
    assert message["content"] == [
        {"type": "text", "text": "whole"},
        {"type": "tool_use", "id": "toolu_0001", "name": "Read", "input": {"file_path": "/a"}},
    ]
    assert message["stop_reason"] == "max_tokens"
    assert message["usage"]["output_tokens"] == 20


def test_http_error_has_the_anthropic_error_shape(server: ScriptedModelServer) -> None:
    server.push(
        http_error(529, "Overloaded"),
        http_error(400, "bad", error_type="custom_error", headers={"x-should-retry": "false"}),
    )
    overloaded = post(server, main_body())
    assert overloaded.status_code == 529
    assert overloaded.json() == {
        "type": "error",
        "error": {"type": "overloaded_error", "message": "Overloaded"},
    }
    bad = post(server, main_body())
    assert bad.status_code == 400
    assert bad.json()["error"] == {"type": "custom_error", "message": "bad"}
    assert bad.headers["x-should-retry"] == "false"


# --- script handling --------------------------------------------------------------------


def test_exhausted_script_answers_with_a_marker_text(server: ScriptedModelServer) -> None:
    assert not server.exhausted
    assert deltas(stream_events(server), "text_delta", "text") != []
    assert server.exhausted
    assert post(server, main_body(stream=False)).json()["content"][0]["text"] == EXHAUSTED_TEXT
    server.push(Reply(text("more")))
    assert not server.exhausted
    assert post(server, main_body(stream=False)).json()["content"][0]["text"] == "more"
    assert server.remaining == 0


def test_callable_entries_answer_from_the_request(server: ScriptedModelServer) -> None:
    def echo(request: RecordedRequest) -> Reply | HttpError:
        prompt = request.last_user_text()
        return http_error(400, "no") if prompt == "fail" else Reply(text(f"you said {prompt}"))

    server.push(echo, echo)
    assert post(server, main_body("hello", stream=False)).json()["content"][0]["text"] == "you said hello"
    assert post(server, main_body("fail")).status_code == 400


def test_a_raising_callable_becomes_a_500_and_is_kept(server: ScriptedModelServer) -> None:
    def broken(request: RecordedRequest) -> Reply:
        raise KeyError("oops")

    server.push(broken)
    response = post(server, main_body())
    assert response.status_code == 500
    assert [type(e) for e in server.errors] == [KeyError]


def test_side_requests_are_recorded_but_do_not_consume_the_script(
    server: ScriptedModelServer,
) -> None:
    server.push(Reply(text("main")))
    assert httpx.head(server.url + "/").status_code == 200
    assert httpx.head(server.url + "/api/hello").status_code == 200
    title = {
        "model": "claude-haiku",
        "max_tokens": 512,
        "messages": [{"role": "user", "content": "title?"}],
    }
    assert post(server, title).json()["content"][0]["type"] == "text"
    probe = main_body(stream=False) | {"max_tokens": 1}
    assert post(server, probe).status_code == 200
    counted = post(server, main_body(), path="/v1/messages/count_tokens?beta=true").json()
    assert counted["input_tokens"] > 0
    assert server.remaining == 1

    assert post(server, main_body(stream=False)).json()["content"][0]["text"] == "main"
    assert [(r.method, r.path, r.main) for r in server.requests] == [
        ("HEAD", "/", False),
        ("HEAD", "/api/hello", False),
        ("POST", "/v1/messages", False),
        ("POST", "/v1/messages", False),
        ("POST", "/v1/messages/count_tokens", False),
        ("POST", "/v1/messages", True),
    ]
    recorded = server.main_requests[0]
    assert recorded.query == "beta=true"
    assert recorded.body["model"] == "claude-test"
    assert recorded.headers["content-type"] == "application/json"
    assert recorded.received_at <= server.requests[-1].received_at


def test_requests_are_served_concurrently(server: ScriptedModelServer) -> None:
    n = 5
    everyone_in = threading.Barrier(n, timeout=20)

    def wait_for_all(request: RecordedRequest) -> Reply:
        everyone_in.wait()  # breaks (and the request fails) unless n requests are in flight
        return Reply(text(f"reply to {request.last_user_text()}"))

    server.push(*[wait_for_all] * n)
    results: dict[int, str] = {}

    def ask(i: int) -> None:
        results[i] = post(server, main_body(f"q{i}", stream=False)).json()["content"][0]["text"]

    threads = [threading.Thread(target=ask, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert server.errors == []
    assert results == {i: f"reply to q{i}" for i in range(n)}


async def test_works_from_inside_a_running_event_loop() -> None:
    with ScriptedModelServer([Reply(text("async ok"))]) as server:
        async with httpx.AsyncClient() as client:
            response = await client.post(server.url + "/v1/messages", json=main_body(stream=False))
    assert response.json()["content"][0]["text"] == "async ok"


def test_stop_is_idempotent_and_frees_the_port() -> None:
    server = ScriptedModelServer([Reply(text("x"))]).start()
    port = int(server.url.rsplit(":", 1)[1])
    assert post(server, main_body(stream=False)).status_code == 200
    server.stop()
    server.stop()
    with pytest.raises(httpx.ConnectError):
        httpx.get(server.url + "/", timeout=5)
    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", port))


def test_last_user_text_skips_system_messages_and_injected_blocks() -> None:
    def last_user_text(*messages: dict[str, Any]) -> str:
        body = {"messages": list(messages)}
        return RecordedRequest("POST", "/v1/messages", "", {}, body, 0.0, True).last_user_text()

    def user(*texts: str) -> dict[str, Any]:
        return {"role": "user", "content": [{"type": "text", "text": t} for t in texts]}

    reminder = "<system-reminder>\nctx\n</system-reminder>"
    command = "<command-name>/compact</command-name>\n<command-args></command-args>"
    system = {"role": "system", "content": "# Environment"}
    tool_result = {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "ok"}],
    }

    assert last_user_text(user(reminder, "hi"), system) == "hi"
    assert last_user_text(user(command, "after")) == "after"
    assert last_user_text(user("one", "two")) == "one\ntwo"
    assert last_user_text({"role": "user", "content": "plain"}) == "plain"
    assert last_user_text(user(reminder, "hi"), system, tool_result) == ""
    assert last_user_text(user("<b>bold</b>")) == "<b>bold</b>"
    assert last_user_text() == ""


# --- the real CLI -----------------------------------------------------------------------

BOTH = pytest.mark.parametrize("claude_cli", ["2.1.332", "2.1.197"], indirect=True)


def run_cli(cli: Path, env: dict[str, str], cwd: Path, prompt: str, *flags: str) -> dict[str, Any]:
    """Send one stream-json prompt to a fresh CLI and return its ``result`` line."""
    argv = [
        str(cli),
        "-p",
        "--output-format",
        "stream-json",
        "--input-format",
        "stream-json",
        "--verbose",
        *flags,
    ]
    proc = subprocess.Popen(
        argv,
        cwd=cwd,
        env=os.environ | env,
        text=True,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        message = {
            "type": "user",
            "message": {"role": "user", "content": prompt},
            "parent_tool_use_id": None,
            "session_id": "",
        }
        proc.stdin.write(json.dumps(message) + "\n")
        proc.stdin.flush()
        for line in proc.stdout:
            parsed = json.loads(line)
            if parsed.get("type") == "result":
                return dict(parsed)
        raise AssertionError(f"no result line; exit {proc.wait()}, stderr: {proc.stderr.read() if proc.stderr else ''}")
    finally:
        proc.stdin.close()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@BOTH
def test_real_cli_reports_the_scripted_text_and_usage(
    claude_cli: Path,
    claude_env: dict[str, str],
    claude_workdir: Path,
    scripted_model: ScriptedModelServer,
) -> None:
    usage = Usage(
        input_tokens=120,
        output_tokens=30,
        cache_read_input_tokens=50,
        cache_creation_input_tokens=10,
    )
    scripted_model.push(Reply(text("Hello **world**, from the script."), usage=usage))

    result = run_cli(claude_cli, claude_env, claude_workdir, "hi")

    assert result["is_error"] is False
    assert result["result"] == "Hello **world**, from the script."
    assert result["usage"]["input_tokens"] == 120
    assert result["usage"]["output_tokens"] == 30
    assert result["usage"]["cache_read_input_tokens"] == 50
    assert result["usage"]["cache_creation_input_tokens"] == 10
    [request] = scripted_model.main_requests
    assert request.last_user_text() == "hi"
    assert scripted_model.remaining == 0 and not scripted_model.exhausted


@BOTH
def test_real_cli_writes_a_file_when_the_script_calls_write(
    claude_cli: Path,
    claude_env: dict[str, str],
    claude_workdir: Path,
    scripted_model: ScriptedModelServer,
) -> None:
    target = claude_workdir / "x.txt"
    scripted_model.push(
        Reply(tool_use("Write", {"file_path": str(target), "content": "hi\n"})),
        Reply(text("Done.")),
    )

    result = run_cli(claude_cli, claude_env, claude_workdir, "write x.txt", "--permission-mode", "acceptEdits")

    assert target.read_text() == "hi\n"
    assert result["result"] == "Done."
    first, second = scripted_model.main_requests
    assert first.last_user_text() == "write x.txt"
    [tool_result] = [block for block in second.messages[-1]["content"] if block.get("type") == "tool_result"]
    assert tool_result["tool_use_id"] == "toolu_0001"
    assert not tool_result.get("is_error")
