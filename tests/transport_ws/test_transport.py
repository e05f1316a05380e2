"""WebSocketTransport on its own: the wire with the real CLI 2.1.118, framing with a fake
CLI, the path/token guard, start-up failures and the version rule."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from kandev_nb.testing import Reply, ScriptedModelServer, ScriptEntry, scripted_env, text, tool_use
from kandev_nb.wire.cli import LaunchOptions, build_argv, child_env
from kandev_nb.wire.protocol import control_request, control_success, user_message
from kandev_nb.wire.transport import CLIProcessError, LineTooLong
from kandev_nb.wire.websocket import (
    DEFAULT_CONNECT_TIMEOUT,
    CLIWebSocketServer,
    WebSocketTransport,
    sdk_url_supported,
)
from tests.transport_ws.conftest import FAKE_CLI, INTRUDER, PATIENT_CLI


async def _next_json(lines: AsyncIterator[bytes | LineTooLong]) -> dict[str, object]:
    line = await anext(lines)
    assert isinstance(line, bytes)
    message = json.loads(line)
    assert isinstance(message, dict)
    return message


async def test_real_cli_wire_over_the_socket(cli_118: Path, tmp_path: Path, claude_home: Path) -> None:
    """Connected on open; nested user message; can_use_tool fields under `request`;
    a 4001 close makes the CLI exit cleanly."""
    cwd = tmp_path.resolve()
    script: list[ScriptEntry] = [
        Reply(tool_use("Write", {"file_path": f"{cwd}/out.txt", "content": "hi\n"})),
        Reply(text("Done.")),
    ]
    with ScriptedModelServer(script) as server:
        env = child_env(scripted_env(server, claude_home))
        env["CLAUDECODE"] = "1"  # as if the kernel ran inside Claude Code: must not reach the CLI
        transport = WebSocketTransport(build_argv(cli_118, LaunchOptions()), env, cwd)
        try:
            await transport.start()
            assert transport.connected and transport.pid is not None
            assert urlsplit(transport.url).hostname == "127.0.0.1"
            assert os.getsid(transport.pid) == transport.pid  # own session: a kernel interrupt does not reach it
            child_environ = Path(f"/proc/{transport.pid}/environ").read_bytes().split(b"\0")
            assert not any(v.startswith(b"CLAUDECODE=") for v in child_environ)

            lines = transport.lines().__aiter__()
            await transport.send(control_request("init-1", "initialize"))
            first = await _next_json(lines)  # nothing (not even system/init) came before our request
            assert first["type"] == "control_response"
            assert first["response"]["request_id"] == "init-1"  # type: ignore[index]

            await transport.send(user_message("please write the file"))
            seen: list[dict[str, object]] = []
            while (message := await _next_json(lines))["type"] != "result":
                seen.append(message)
                if message["type"] == "control_request":
                    request = message["request"]
                    assert isinstance(request, dict)
                    assert request["subtype"] == "can_use_tool" and request["tool_name"] == "Write"
                    assert "tool_name" not in message and "subtype" not in message
                    await transport.send(
                        control_success(
                            str(message["request_id"]), {"behavior": "allow", "updatedInput": request["input"]}
                        )
                    )
            assert message["is_error"] is False and message["result"] == "Done."
            assert any(m["type"] == "control_request" for m in seen)
            assert server.main_requests[0].last_user_text() == "please write the file"
            assert (cwd / "out.txt").read_text() == "hi\n"
        finally:
            await transport.close()
    assert transport.exit_code == 0  # it exited by itself on close code 4001
    assert not transport.connected


async def test_only_the_right_path_and_token_connect_once(cli_118: Path, tmp_path: Path, claude_home: Path) -> None:
    transport = WebSocketTransport(
        build_argv(cli_118, LaunchOptions()), child_env(scripted_env("http://127.0.0.1:9", claude_home)), tmp_path
    )
    await transport.start()
    try:
        assert transport.url is not None and transport.pid is not None and transport.connected
        cmdline = Path(f"/proc/{transport.pid}/cmdline").read_bytes()
        assert transport.token.encode() not in cmdline  # issue 17, 1: argv is readable by all
        scheme, netloc, path, _, _ = urlsplit(transport.url)
        key = path.removeprefix("/ws/cli/")
        right = {"Authorization": f"Bearer {transport.token}"}
        attempts = [
            (path, right),  # the right URL and token, but not from the CLI's process (and it is taken)
            (path, {}),
            (path, {"Authorization": f"Bearer {transport.token[:-1]}x"}),
            (f"/ws/cli/{key}/{transport.token}", {}),  # the old form: token in the path
            (f"/ws/cli/{'0' * len(key)}", right),
            (f"/ws/cli/{key}/extra", right),
            ("/", right),
        ]
        for attempt, headers in attempts:
            with pytest.raises(InvalidStatus) as caught:
                async with connect(urlunsplit((scheme, netloc, attempt, "", "")), additional_headers=headers):
                    pass
            assert caught.value.response.status_code == 403, attempt
        assert transport.connected  # the CLI's own connection is untouched
    finally:
        await transport.close()


async def _intrude(argv: list[str]) -> dict[str, object]:
    proc = await asyncio.create_subprocess_exec(*argv, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await proc.communicate()
    assert proc.returncode == 0, err.decode()
    result: dict[str, object] = json.loads(out)
    return result


@pytest.mark.skipif(not os.path.exists("/usr/bin/setpriv") or os.geteuid() != 0, reason="needs root and setpriv")
async def test_another_uid_racing_to_the_url_is_refused_and_nothing_reaches_it(tmp_path: Path) -> None:
    """issue 17, 1: another user read the URL from /proc/*/cmdline and connected before the
    CLI. Now the token is not in argv, and even with it a socket of another uid, or of a
    process the kernel did not start, is refused; the CLI the kernel started still connects."""
    go = tmp_path / "go"
    transport = WebSocketTransport(
        [sys.executable, PATIENT_CLI], {**os.environ, "PATIENT_GO": str(go)}, tmp_path, check_version=False
    )
    starting = asyncio.ensure_future(transport.start())
    try:
        while transport.pid is None:
            await asyncio.sleep(0.02)
        nobody = ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "/usr/bin/python3", INTRUDER]
        blind = await _intrude([*nobody, str(transport.pid)])
        assert transport.token not in str(blind["cmdline"]) and blind["environ_readable"] is False
        assert blind["status"] == 403
        assert (await _intrude([*nobody, str(transport.pid), transport.token]))["status"] == 403  # a leaked token
        assert (await _intrude(["/usr/bin/python3", INTRUDER, str(transport.pid), transport.token]))["status"] == 403
        assert not transport.connected
        go.touch()
        await starting
        line = await anext(transport.lines().__aiter__())
        assert line == b'{"hello":"from the CLI the kernel started"}'
    finally:
        go.touch()
        await transport.close()


EXPECTED_LINES = [
    b'{"type":"keep_alive"}',
    b'{"n":1}',
    b'{"n":2}',
    '{"n":3,"s":"café"}'.encode(),
    b'{"n":4}',
    '{"n":5,"s":"a\u2028b"}'.encode(),
    b'{"n":6,"big":"' + b"x" * 3_000_000 + b'"}',
    b'{"n":7}',
]


async def test_messages_are_reframed_into_lines(tmp_path: Path) -> None:
    """Several lines per message, a line over three messages (cut inside a UTF-8
    character, binary pieces), a raw U+2028, a 3 MB line: the same lines come out."""
    transport = WebSocketTransport([sys.executable, FAKE_CLI], None, tmp_path, check_version=False)
    await transport.start()
    try:
        lines = transport.lines().__aiter__()
        got = [await anext(lines) for _ in EXPECTED_LINES]
    finally:
        await transport.close()
    assert got == EXPECTED_LINES


async def test_transports_of_one_server_share_a_port_and_it_stops_with_the_last(tmp_path: Path) -> None:
    server = CLIWebSocketServer()
    first, second = (
        WebSocketTransport([sys.executable, FAKE_CLI], None, tmp_path, server=server, check_version=False)
        for _ in range(2)
    )
    await asyncio.gather(first.start(), second.start())
    assert first.url and second.url
    assert urlsplit(first.url).port == urlsplit(second.url).port == server.bound_port
    assert urlsplit(first.url).path != urlsplit(second.url).path
    await first.close()
    assert server.bound_port is not None and second.connected
    await second.close()
    assert server.bound_port is None


async def test_a_cli_that_never_connects_is_stopped(tmp_path: Path) -> None:
    transport = WebSocketTransport(
        [sys.executable, "-c", "import time; time.sleep(600)"], None, tmp_path, connect_timeout=0.5, check_version=False
    )
    with pytest.raises(CLIProcessError, match="did not connect to the kernel's WebSocket within 0.5 s"):
        await transport.start()
    assert transport.exit_code is not None


async def test_a_cli_that_exits_before_connecting_reports_why(tmp_path: Path) -> None:
    code = "import sys; print('no such flag', file=sys.stderr); sys.exit(3)"
    transport = WebSocketTransport([sys.executable, "-c", code], None, tmp_path, check_version=False)
    with pytest.raises(CLIProcessError, match="exited \\(code 3\\) before connecting") as caught:
        await transport.start()
    assert caught.value.exit_code == 3 and "no such flag" in caught.value.stderr


def test_default_connect_timeout_allows_slow_hooks() -> None:
    assert DEFAULT_CONNECT_TIMEOUT >= 30
    assert WebSocketTransport(["claude"]).connect_timeout == DEFAULT_CONNECT_TIMEOUT


@pytest.mark.parametrize(
    ("version", "supported"),
    [
        ("2.1.118", True),
        ("2.1.119", True),
        ("1.0.128", True),
        ("2.1.121", False),
        ("2.1.197", False),
        ("2.1.332", False),
        ("2.2.0", False),
        ("3.0.0", False),
    ],
)
def test_sdk_url_supported_up_to_2_1_120(version: str, supported: bool) -> None:
    assert sdk_url_supported(version) is supported


async def test_a_cli_behind_a_wrapper_script_is_its_own_peer(tmp_path: Path) -> None:
    """The socket check accepts a connection from a child of the launched process (a
    ``claude`` that is a shell wrapper), found by /proc children or by parent pids."""
    wrapper = ["/bin/sh", "-c", f'"{sys.executable}" "{FAKE_CLI}" "$@"; exit $?', "sh"]
    transport = WebSocketTransport(wrapper, None, tmp_path, check_version=False)
    await transport.start()
    try:
        assert transport.pid is not None
        from kandev_nb.wire.peers import descendants as _descendants
        from kandev_nb.wire.peers import descendants_by_stat as _descendants_by_stat

        assert sorted(_descendants(transport.pid)) == sorted(_descendants_by_stat(transport.pid))
        assert len(_descendants(transport.pid)) == 2
        lines = transport.lines().__aiter__()
        assert await anext(lines) == EXPECTED_LINES[0]
    finally:
        await transport.close()
