"""The WebSocket transport: the CLI dials a server in the kernel (``--sdk-url``).

Instead of stdin/stdout, the CLI opens a WebSocket to ``ws://HOST:PORT/ws/cli/<key>``
and exchanges the same stream-json lines over it, both ways. Everything above the transport
(control plane, adapter, widgets, ledger) is unchanged: :class:`WebSocketTransport` is a
:class:`~kandev_nb.wire.transport.Transport` like :class:`~kandev_nb.wire.transport.StdioTransport`.

The CLI is still a local child process. It runs inside a :class:`StdioTransport` (own
session, ``PR_SET_PDEATHSIG``, bounded close, killed at exit) whose stdout stays silent in
this mode; only the socket carries the protocol.

What was measured with CLI 2.1.118 (the last good version; see :data:`SDK_URL_REFUSED_FROM`):

* The CLI connects as soon as it starts and sends nothing until it receives a message, so
  the transport counts as connected when the socket opens (``system/init`` only follows the
  first user message, and hooks can delay it further).
* Every CLI message is one text frame holding one line with its ``"\\n"``. We still frame
  bytes with :class:`~kandev_nb.wire.transport.LineFramer`, so a message may hold several lines
  or part of one, as text or binary.
* The CLI sends ``{"type":"keep_alive"}`` every 300 s and ignores ours; the session does not
  count keep_alive as activity.
* Closed with code 1000 or dropped without a close frame, the CLI reconnects for up to
  10 minutes and replays what it sent. A connection here is single-use: a dropped one ends
  :meth:`WebSocketTransport.lines` and the CLI is stopped, so the session restarts it with
  ``--resume``. Closed with code 4001 (one of its "permanent" codes) it ends its input and
  exits with 0, which is how :meth:`WebSocketTransport.close` stops it. Stdin EOF does
  nothing in this mode.
* From 2.1.121 on the CLI exits with "--sdk-url rejected: host ... is not an approved
  Anthropic endpoint"; we check the version first and raise :class:`SdkUrlUnsupportedError`.

Who may connect (issue 17: another local user read the URL, token included, from
``/proc/*/cmdline`` and took the session over). A connection is accepted only if all hold,
else it gets HTTP 403 and nothing of the session reaches it:

* the path is a registered ``/ws/cli/<key>`` (the key is not secret: it is in argv);
* its ``Authorization: Bearer <token>`` header holds the transport's 256-bit token, which
  the CLI gets in its environment (``CLAUDE_CODE_SESSION_ACCESS_TOKEN``, which 2.1.118 sends
  as that header on its ``--sdk-url`` socket); a process's environment is readable only by
  its own user, unlike its command line;
* on Linux, the connecting socket (found in ``/proc/net/tcp{,6}`` by its port) belongs to
  the kernel's own uid and is held by the CLI process this transport launched (or one of its
  children): a peer the kernel did not start is refused even if it has the token;
* it is the transport's first connection.

The CLI also sends that token as a bearer header to ``ws``/``http`` MCP servers it is
configured with; by then its own connection is made, and the token admits no second one.
Only loopback is used unless a host is passed explicitly.
"""

from __future__ import annotations

import asyncio
import contextlib
import http
import json
import logging
import os
import secrets
import signal
import subprocess
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any, Final
from urllib.parse import urlsplit

from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response
from websockets.protocol import State

from kandev_nb.wire.cli import SDK_URL_REFUSED_FROM, cli_version, sdk_url_supported
from kandev_nb.wire.peers import dial_host, socket_owner, sockets_of
from kandev_nb.wire.transport import (
    DEFAULT_MAX_LINE_BYTES,
    CLIProcessError,
    LineFramer,
    LineTooLong,
    StdioTransport,
    Transport,
    TransportClosedError,
)

__all__ = [
    "DEFAULT_CONNECT_TIMEOUT",
    "SDK_URL_REFUSED_FROM",
    "CLIWebSocketServer",
    "SdkUrlUnsupportedError",
    "WebSocketTransport",
    "sdk_url_supported",
    "websocket_transport_factory",
]

log = logging.getLogger("kandev_nb")

TransportFactory = Callable[[list[str], dict[str, str], str], Transport]
"""``(argv, env, cwd) -> Transport``, what :class:`kandev_nb.agent.session.Session` accepts."""

DEFAULT_CONNECT_TIMEOUT: Final = 60.0
"""Seconds the CLI has to open its socket after launch (the seed asks for 30 s or more)."""

CLOSE_SESSION: Final = 4001
"""Close code that makes the CLI end its input and exit instead of reconnecting."""

TOKEN_ENV: Final = "CLAUDE_CODE_SESSION_ACCESS_TOKEN"
"""The CLI's environment variable whose value it sends as ``Authorization: Bearer <value>``
when it opens its ``--sdk-url`` socket (read from 2.1.118's own code)."""

_PATH_PREFIX: Final = "/ws/cli/"
_REFUSED_MARKER: Final = "--sdk-url rejected"
_END: Final = object()


class SdkUrlUnsupportedError(CLIProcessError):
    """This CLI version refuses ``--sdk-url`` to a non-Anthropic host (2.1.121 and later).

    Raised before launching when ``claude --version`` says so, or when the CLI exits with
    its "--sdk-url rejected" message.

    Attributes:
        version: the CLI's version ("2.1.332"), or None if it could not be read.
        exit_code, stderr: as :class:`CLIProcessError` (None and "" when never launched).
    """

    def __init__(self, version: str | None, cli: str, exit_code: int | None = None, stderr: str = "") -> None:
        shown = f"Claude Code {version}" if version else "This Claude Code CLI"
        super().__init__(
            f"{shown} ({cli}) refuses --sdk-url to any host but Anthropic's own (CLI versions from "
            f"{'.'.join(map(str, SDK_URL_REFUSED_FROM))} on), so the WebSocket transport cannot drive it. "
            "Use the stdio transport instead (the default: `%%claude` without `--transport websocket`, "
            "or `Session()` without `transport_factory`), or a CLI up to 2.1.119 (2.1.118 works).",
            exit_code,
            stderr,
        )
        self.version = version


class CLIWebSocketServer:
    """One listening socket in the kernel, routing ``/ws/cli/<key>`` to transports.

    Transports share a server: it starts listening when the first one attaches and stops
    when the last one detaches. A connection is accepted only on a registered path, from
    the transport's own CLI (bearer token, and on Linux the socket's uid and process), and
    only once per transport; anything else gets HTTP 403 (see the module docstring).

    Args:
        host: interface to bind; loopback unless you pass another one explicitly.
        port: TCP port; 0 picks a free one each time the server starts.
        ping_interval, ping_timeout: WebSocket ping keepalive, seconds (the CLI also pings
            us every 10 s).
    """

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        ping_interval: float | None = 20.0,
        ping_timeout: float | None = 60.0,
    ) -> None:
        self.host = host
        self.port = port
        self.ping_interval = ping_interval
        self.ping_timeout = ping_timeout
        self._server: Server | None = None
        self._routes: dict[str, WebSocketTransport] = {}
        self._lock: asyncio.Lock | None = None

    @property
    def bound_port(self) -> int | None:
        """The port listened on while started, else None."""
        if self._server is None:
            return None
        return int(next(iter(self._server.sockets)).getsockname()[1])

    async def attach(self, transport: WebSocketTransport) -> str:
        """Register `transport` (listening first if needed); return the URL for its CLI.

        Returns:
            ``ws://HOST:PORT/ws/cli/<key>`` with a fresh key; the transport's token goes to
            the CLI in its environment, never in the URL.

        Raises:
            OSError: the host/port could not be bound.
        """
        async with self._guard():
            if self._server is None:
                self._server = await serve(
                    self._handle,
                    self.host,
                    self.port,
                    process_request=self._check_request,
                    max_size=None,  # the framer bounds lines; 1 MiB (the default) is too small for tool results
                    ping_interval=self.ping_interval,
                    ping_timeout=self.ping_timeout,
                    close_timeout=5,
                )
            key = secrets.token_hex(8)
            self._routes[key] = transport
            return f"ws://{dial_host(self.host)}:{self.bound_port}{_PATH_PREFIX}{key}"

    async def detach(self, transport: WebSocketTransport) -> None:
        """Forget `transport`; stop listening once no transport is left (bounded, 5 s)."""
        async with self._guard():
            for key, value in list(self._routes.items()):
                if value is transport:
                    del self._routes[key]
            if not self._routes and self._server is not None:
                server, self._server = self._server, None
                server.close()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(server.wait_closed(), 5)

    def _guard(self) -> asyncio.Lock:
        if self._lock is None:
            self._lock = asyncio.Lock()
        return self._lock

    def _route(self, path: str) -> WebSocketTransport | None:
        """The transport registered at `path` (``/ws/cli/<key>``), else None."""
        parts = urlsplit(path).path.removeprefix(_PATH_PREFIX).split("/")
        if not path.startswith(_PATH_PREFIX) or len(parts) != 1:
            return None
        return self._routes.get(parts[0])

    def _check_request(self, connection: ServerConnection, request: Request) -> Response | None:
        transport = self._route(request.path)
        why = "an unknown path"
        if transport is not None:
            why = transport._refusal(request.headers.get("Authorization", ""), connection.remote_address)
        if why or transport is None or not transport._claim():
            log.warning("kandev_nb: refused a WebSocket connection (%s)", why or "the path is taken")
            return connection.respond(http.HTTPStatus.FORBIDDEN, "Forbidden\n")
        return None

    async def _handle(self, connection: ServerConnection) -> None:
        transport = self._route(connection.request.path if connection.request else "")
        if transport is None:  # detached between handshake and handler
            await connection.close(CLOSE_SESSION, "session closed")
            return
        await transport._serve(connection)


class WebSocketTransport(Transport):
    """The CLI as a local child that talks stream-json over a WebSocket to the kernel.

    Args:
        argv: the CLI's command line without ``--sdk-url`` (see
            :func:`kandev_nb.wire.cli.build_argv`); ``--sdk-url <url>`` is appended.
        env: the child's environment (``CLAUDECODE`` is removed again here).
        cwd: the working directory.
        server: the server to attach to (default: a new loopback one for this transport).
        connect_timeout: seconds the CLI has to open its socket, >= 30 recommended.
        keepalive_interval: seconds between our ``keep_alive`` messages (None: none).
        check_version: refuse early, by ``claude --version``, a CLI that rejects --sdk-url.
        on_stderr: called with each stderr line of the CLI.
        max_line_bytes: lines longer than this become :class:`LineTooLong`.
        verify_peer: on Linux, also require that the connecting socket is held by the CLI
            process launched here, under the kernel's uid (see the module docstring).

    Attributes:
        url: the ``--sdk-url`` given to the CLI (no secret in it), once started.
        token: the secret the CLI must present (``Authorization: Bearer``), given to it in
            its environment as ``CLAUDE_CODE_SESSION_ACCESS_TOKEN``.
        keepalives_sent: how many keep_alive messages we have sent.
    """

    def __init__(
        self,
        argv: list[str],
        env: dict[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        *,
        server: CLIWebSocketServer | None = None,
        connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
        keepalive_interval: float | None = 60.0,
        check_version: bool = True,
        on_stderr: Callable[[str], None] | None = None,
        max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
        verify_peer: bool = True,
    ) -> None:
        self.argv = argv
        self.verify_peer = verify_peer
        self.env = env
        self.cwd = cwd
        self.server = server or CLIWebSocketServer()
        self.connect_timeout = connect_timeout
        self.keepalive_interval = keepalive_interval
        self.check_version = check_version
        self.on_stderr = on_stderr
        self.token = secrets.token_urlsafe(32)
        self.url: str | None = None
        self.keepalives_sent = 0
        self._framer = LineFramer(max_line_bytes)
        self._queue: asyncio.Queue[bytes | LineTooLong | object] = asyncio.Queue()
        self._process: StdioTransport | None = None
        self._ws: ServerConnection | None = None
        self._claimed = False
        self._connected = asyncio.Event()
        self._closed = False
        self._note = ""
        self._ended_why: str | None = None
        self._served = asyncio.Event()
        self._watch: asyncio.Task[None] | None = None
        self._keepalive: asyncio.Task[None] | None = None
        self._write_lock = asyncio.Lock()

    # -- state ----------------------------------------------------------------------------

    @property
    def pid(self) -> int | None:
        """The CLI's process id once started."""
        return self._process.pid if self._process else None

    @property
    def exit_code(self) -> int | None:
        return self._process.exit_code if self._process else None

    @property
    def stderr_tail(self) -> str:
        """The CLI's last stderr lines, then why the connection ended if it was not us."""
        tail = self._process.stderr_tail if self._process else ""
        return f"{tail}\n{self._note}".strip() if self._note else tail

    @property
    def command(self) -> list[str] | None:
        """The command line launched (`argv` plus ``--sdk-url URL``), once started."""
        return self._process.argv if self._process else None

    @property
    def connected(self) -> bool:
        """True while the CLI's socket is open (from the moment it opens, before any message)."""
        return self._ws is not None and self._ws.state is State.OPEN

    # -- lifecycle ------------------------------------------------------------------------

    async def start(self) -> None:
        """Check the version, listen, launch the CLI and wait until its socket opens.

        Raises:
            SdkUrlUnsupportedError: the CLI refuses --sdk-url (by version, or it said so).
            CLIProcessError: the CLI could not be launched, exited before connecting, or did
                not connect within `connect_timeout` seconds (it is stopped).
            RuntimeError: called twice.
        """
        if self._process is not None or self._closed:
            raise RuntimeError("a WebSocketTransport is started once")
        if self.check_version:
            await asyncio.to_thread(self._check_version)
        self.url = await self.server.attach(self)
        env = dict(os.environ if self.env is None else self.env)
        env.pop("CLAUDECODE", None)
        env.pop("CLAUDE_CODE_WEBSOCKET_AUTH_FILE_DESCRIPTOR", None)
        env[TOKEN_ENV] = self.token  # sent back as "Authorization: Bearer"; never in argv
        self._process = StdioTransport([*self.argv, "--sdk-url", self.url], env, self.cwd, on_stderr=self.on_stderr)
        try:
            await self._process.start()
            self._watch = asyncio.get_running_loop().create_task(self._watch_process(self._process))
            await self._wait_connected(self._watch)
        except BaseException:
            await self.close()
            raise
        if self.keepalive_interval:
            self._keepalive = asyncio.get_running_loop().create_task(self._send_keepalives(self.keepalive_interval))

    def _check_version(self) -> None:
        try:
            version = cli_version(Path(self.argv[0]))
        except (OSError, RuntimeError, subprocess.SubprocessError):
            return  # unknown: let the CLI decide; a refusal is still recognised on its exit
        with contextlib.suppress(ValueError):
            if not sdk_url_supported(version):
                raise SdkUrlUnsupportedError(version, self.argv[0])

    async def _wait_connected(self, exited: asyncio.Task[None]) -> None:
        opened = asyncio.get_running_loop().create_task(self._connected.wait())
        try:
            await asyncio.wait({opened, exited}, timeout=self.connect_timeout, return_when=asyncio.FIRST_COMPLETED)
        finally:
            opened.cancel()
        if self._connected.is_set():
            return
        assert self._process is not None
        code, stderr = self._process.exit_code, self._process.stderr_tail
        if _REFUSED_MARKER in stderr:
            raise SdkUrlUnsupportedError(None, self.argv[0], code, stderr)
        if exited.done():
            raise CLIProcessError(
                f"Claude Code exited (code {code}) before connecting to the kernel's WebSocket: {stderr}",
                code,
                stderr,
            )
        raise CLIProcessError(
            f"Claude Code did not connect to the kernel's WebSocket within {self.connect_timeout:g} s "
            f"and was stopped: {stderr}",
            code,
            stderr,
        )

    async def _watch_process(self, process: StdioTransport) -> None:
        """Drain the CLI's stdout (silent in this mode) until it exits, then end lines()."""
        async for line in process.lines():
            log.debug("kandev_nb: Claude Code printed on stdout in --sdk-url mode: %r", line)
        if self._ws is not None:  # let the socket deliver what the CLI sent before exiting
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._served.wait(), 5)
        self._queue.put_nowait(_END)

    def _refusal(self, authorization: str, peer: Any) -> str:
        """Why the connection from `peer` (``(host, port, ...)``) with header `authorization`
        is not this transport's CLI, or "" if it is."""
        if not secrets.compare_digest(authorization.encode(), f"Bearer {self.token}".encode()):
            return "no or a wrong bearer token"
        if not self.verify_peer or not os.path.exists("/proc/net/tcp"):
            return ""
        pid = self.pid
        if pid is None:
            return "the CLI is not started yet"
        port = peer[1] if isinstance(peer, tuple) and len(peer) > 1 else None
        owner = socket_owner(int(port), self.server.bound_port) if isinstance(port, int) else None
        if owner is None:
            return "its socket was not found in /proc/net/tcp"
        uid, inode = owner
        if uid != os.getuid():
            return f"its socket belongs to uid {uid}, not {os.getuid()}"
        if inode not in sockets_of(pid):
            return "its socket is not held by the CLI process kandev-nb started"
        return ""

    def _claim(self) -> bool:
        """Accept the first connection only; called at the handshake."""
        if self._claimed or self._closed:
            return False
        self._claimed = True
        return True

    async def _serve(self, ws: ServerConnection) -> None:
        """Own the CLI's connection: frame what it sends into lines until it closes."""
        self._ws = ws
        self._connected.set()
        try:
            async for message in ws:
                data = message.encode() if isinstance(message, str) else message
                for line in self._framer.push(data):
                    self._queue.put_nowait(line)
        except ConnectionClosed:
            pass
        finally:
            for line in self._framer.flush():
                self._queue.put_nowait(line)
            code, reason = ws.close_code, ws.close_reason
            self._ended_why = f"code {code}" + (f", {reason!r}" if reason else "") if code else "no close frame"
            self._served.set()
            self._queue.put_nowait(_END)

    async def _send_keepalives(self, interval: float) -> None:
        while True:
            await asyncio.sleep(interval)
            with contextlib.suppress(TransportClosedError):
                await self.send({"type": "keep_alive"})
                self.keepalives_sent += 1

    async def send(self, message: dict[str, Any]) -> None:
        """Send `message` as one text message holding one JSON line.

        Raises:
            TransportClosedError: not connected, or the connection is closing or gone.
        """
        ws = self._ws
        if ws is None or self._closed or ws.state is not State.OPEN:
            raise TransportClosedError("Claude Code is not connected to the kernel's WebSocket")
        data = json.dumps(message, ensure_ascii=False) + "\n"
        async with self._write_lock:
            try:
                await ws.send(data)
            except ConnectionClosed as exc:
                raise TransportClosedError("Claude Code's WebSocket connection closed") from exc

    async def lines(self) -> AsyncIterator[bytes | LineTooLong]:
        """Lines from the CLI until its socket closes or it exits.

        If the connection ended without :meth:`close`, the CLI is stopped before this ends,
        so `exit_code` is set and `stderr_tail` ends with the reason.
        """
        while (item := await self._queue.get()) is not _END:
            assert isinstance(item, bytes | LineTooLong)
            yield item
        if self._closed:
            return
        if self._watch is not None:  # did the CLI die (and close its socket), or only the socket?
            await asyncio.wait({self._watch}, timeout=1)
        if await self._stop_process():
            self._note = (
                f"kandev-nb: the CLI's WebSocket connection to the kernel closed unexpectedly "
                f"({self._ended_why or 'the socket closed'}); the CLI was stopped. "
                "The next turn restarts it and resumes the session (--resume)."
            )

    async def _stop_process(self) -> bool:
        """SIGTERM the CLI if running (it would keep reconnecting), then the bounded close.

        Returns:
            True if the CLI was still running and we stopped it.
        """
        process = self._process
        if process is None:
            return False
        running = process.exit_code is None and process.pid is not None
        if running and process.pid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(process.pid, signal.SIGTERM)
        await process.close()
        if self._watch is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(asyncio.shield(self._watch), 5)
        return running

    def disconnect(self) -> None:
        """Drop the CLI's connection at once, with no close frame, as a network failure would.

        :meth:`lines` then ends and stops the CLI (which would try to reconnect and be
        refused). For tests and watchdogs; to end a session use :meth:`close`.
        """
        if self._ws is not None:
            self._ws.transport.abort()

    def kill(self) -> None:
        """SIGKILL the CLI now (no waiting)."""
        if self._process is not None:
            self._process.kill()

    async def close(self) -> None:
        """Close code 4001 (the CLI exits), then the process's bounded close; idempotent.

        Takes at most about 20 s: 5 s for the close handshake, then up to 5 s each for the
        process to exit, SIGTERM and SIGKILL. Also ends :meth:`lines`.
        """
        if self._closed:
            return
        self._closed = True
        try:
            if self._keepalive is not None:
                self._keepalive.cancel()
            ws = self._ws
            if ws is not None and ws.state is State.OPEN:
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(ws.close(CLOSE_SESSION, "session closed by kandev-nb"), 5)
            await self._stop_process()
        finally:
            self._queue.put_nowait(_END)
            await self.server.detach(self)


def websocket_transport_factory(
    host: str = "127.0.0.1",
    port: int = 0,
    *,
    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
    keepalive_interval: float | None = 60.0,
    check_version: bool = True,
    on_stderr: Callable[[str], None] | None = None,
) -> TransportFactory:
    """A `transport_factory` for :class:`kandev_nb.agent.session.Session` using the WebSocket transport.

    Every transport it makes shares one :class:`CLIWebSocketServer` on `host`:`port` (one
    path and token per CLI process).

    >>> session = Session(transport_factory=websocket_transport_factory())  # doctest: +SKIP

    Args:
        host: interface to listen on; loopback unless you pass another one explicitly.
        port: TCP port; 0 picks a free one.
        connect_timeout, keepalive_interval, check_version, on_stderr: see
            :class:`WebSocketTransport`.

    Returns:
        ``(argv, env, cwd) -> WebSocketTransport``; the transports are not started yet.
    """
    server = CLIWebSocketServer(host, port)

    def factory(argv: list[str], env: dict[str, str], cwd: str) -> Transport:
        return WebSocketTransport(
            argv,
            env,
            cwd,
            server=server,
            connect_timeout=connect_timeout,
            keepalive_interval=keepalive_interval,
            check_version=check_version,
            on_stderr=on_stderr,
        )

    return factory
