"""A scripted stand-in for the Anthropic Messages API, for driving the real Claude Code CLI.

The CLI reaches the server through ``ANTHROPIC_BASE_URL`` (see
:func:`kandev_nb.testing.scripted_env`). Every request is recorded; main-conversation
requests consume the script in order; everything else gets a harmless default answer.

What the CLI sends (measured with 2.1.118, 2.1.197 and 2.1.332 in ``-p`` stream-json mode,
``CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1``):

* Each model step is ``POST /v1/messages?beta=true`` with ``"stream": true``, the full
  ``tools`` list and a large ``max_tokens``: one per turn, plus one per tool round trip.
  Compaction (``/compact``: one request in 2.1.197, two in 2.1.332) and subagents look the
  same, so they consume entries too.
* A connection probe: ``HEAD /`` (2.1.118, 2.1.197) or ``HEAD /api/hello`` (2.1.332, only
  when nonessential traffic is allowed).
* Small-model side queries, which the CLI can make in some configurations (model
  validation is ``max_tokens: 1``, titles and summaries carry no ``tools``), and
  ``POST /v1/messages/count_tokens``. None of these appeared in the measured runs.

The rule: a request is *main* when it is ``POST /v1/messages`` (any query string) whose
JSON body has a non-empty ``tools`` list and ``max_tokens`` above 1. Other
``/v1/messages`` requests get a one-line text reply (streamed if asked), ``count_tokens``
gets an estimate, and anything else gets ``200 {}``.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import re
import socket
import threading
import time
from collections import deque
from collections.abc import AsyncIterable, AsyncIterator, Callable, Mapping
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Self, TypeAlias

import uvicorn
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from kandev_nb.testing.script import (
    DEFAULT_MODEL,
    EXHAUSTED_TEXT,
    SIDE_TEXT,
    HttpError,
    Reply,
    TextBlock,
    ThinkingBlock,
    ToolUseBlock,
    Usage,
    http_error,
    text,
    thinking,
    tool_use,
)

__all__ = [
    "HttpError",
    "RecordedRequest",
    "Reply",
    "ScriptEntry",
    "ScriptedModelServer",
    "TextBlock",
    "ThinkingBlock",
    "ToolUseBlock",
    "Usage",
    "http_error",
    "text",
    "thinking",
    "tool_use",
]


@dataclass(frozen=True)
class RecordedRequest:
    """One HTTP request the server received.

    Attributes:
        method: ``"POST"``, ``"HEAD"``, ...
        path: URL path without the query string, e.g. ``"/v1/messages"``.
        query: Raw query string, e.g. ``"beta=true"``; ``""`` if none.
        headers: Request headers, names lower-cased.
        body: Parsed JSON body; ``None`` if absent or not JSON.
        received_at: Arrival time in seconds since the epoch (``time.time()``).
        main: Whether it consumed a script entry (see the module docstring).
    """

    method: str
    path: str
    query: str
    headers: dict[str, str]
    body: Any
    received_at: float
    main: bool

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The body's ``messages`` (``[]`` if none). Roles include ``"system"``."""
        messages = self.body.get("messages") if isinstance(self.body, dict) else None
        return list(messages) if isinstance(messages, list) else []

    def last_user_text(self) -> str:
        """Text of the last message whose role is ``"user"``.

        String content is returned as is. Block content gives its ``text`` blocks joined
        with newlines, leaving out ``tool_result`` blocks and the blocks the CLI injects,
        which consist only of hyphenated tags (``<system-reminder>...</system-reminder>``,
        ``<command-name>``, ``<local-command-stdout>``, ...). So the first request of a
        turn prompted with ``"hi"`` gives ``"hi"``, and a request that follows a tool
        call gives ``""``. The CLI may merge several prompts into one message (after a
        failed turn); they are all included.
        """
        for message in reversed(self.messages):
            if isinstance(message, dict) and message.get("role") == "user":
                return _content_text(message.get("content"))
        return ""


_INJECTED = re.compile(r"\s*(?:<([a-z]+(?:-[a-z]+)+)>.*?</\1>\s*)+", re.DOTALL)


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    blocks = content if isinstance(content, list) else []
    texts = [b.get("text") for b in blocks if isinstance(b, dict) and b.get("type") == "text"]
    return "\n".join(t for t in texts if isinstance(t, str) and not _INJECTED.fullmatch(t))


ScriptEntry: TypeAlias = Reply | HttpError | Callable[[RecordedRequest], Reply | HttpError]
"""A script entry: a response, or a function of the request that returns one."""


def _is_main(method: str, path: str, body: Any) -> bool:
    if method != "POST" or path.rstrip("/") != "/v1/messages" or not isinstance(body, dict):
        return False
    max_tokens = body.get("max_tokens")
    return bool(body.get("tools")) and not (isinstance(max_tokens, int) and max_tokens <= 1)


# --- rendering ------------------------------------------------------------------------


def _sse(event: str, data: Mapping[str, Any]) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n".encode()


@dataclass(frozen=True)
class _Rendered:
    """A reply with its ids and model fixed, ready to send as JSON or as SSE."""

    reply: Reply
    message_id: str
    model: str
    tool_ids: tuple[str | None, ...]

    def _usage(self, output_tokens: int) -> dict[str, int]:
        u = self.reply.usage
        return {
            "input_tokens": u.input_tokens,
            "cache_creation_input_tokens": u.cache_creation_input_tokens,
            "cache_read_input_tokens": u.cache_read_input_tokens,
            "output_tokens": output_tokens,
        }

    def message(self) -> dict[str, Any]:
        """The whole response as one JSON message (answer to ``"stream": false``)."""
        pairs = zip(self.reply.blocks, self.tool_ids, strict=True)
        return {
            "id": self.message_id,
            "type": "message",
            "role": "assistant",
            "model": self.model,
            "content": [block.content(tool_id) for block, tool_id in pairs],
            "stop_reason": self.reply.stop_reason,
            "stop_sequence": None,
            "usage": self._usage(self.reply.usage.output_tokens),
        }

    async def events(self, closing: threading.Event) -> AsyncIterator[bytes]:
        """The response as server-sent events, pausing ``block.delay`` after each delta.

        Stops early, without ``message_stop``, once ``closing`` is set.
        """
        start = self.message() | {"content": [], "stop_reason": None, "usage": self._usage(1)}
        yield _sse("message_start", {"type": "message_start", "message": start})
        pairs = zip(self.reply.blocks, self.tool_ids, strict=True)
        for index, (block, tool_id) in enumerate(pairs):
            head = {"type": "content_block_start", "index": index}
            yield _sse("content_block_start", head | {"content_block": block.start(tool_id)})
            for delta in block.deltas():
                body = {"type": "content_block_delta", "index": index, "delta": delta}
                yield _sse("content_block_delta", body)
                if block.delay > 0:
                    await asyncio.sleep(block.delay)
                if closing.is_set():
                    return
            yield _sse("content_block_stop", {"type": "content_block_stop", "index": index})
        delta = {"stop_reason": self.reply.stop_reason, "stop_sequence": None}
        usage = {"output_tokens": self.reply.usage.output_tokens}
        yield _sse("message_delta", {"type": "message_delta", "delta": delta, "usage": usage})
        yield _sse("message_stop", {"type": "message_stop"})


# --- the server -----------------------------------------------------------------------


class ScriptedModelServer:
    """An Anthropic Messages API stand-in on ``127.0.0.1`` that answers from a script.

    uvicorn runs in a daemon thread with its own event loop, so the server works under
    any caller loop (a Jupyter kernel's, pytest's, or none). Requests are served
    concurrently; the script and the records are guarded by a lock.

    Args:
        script: Entries consumed in order by main requests. Each is a :class:`Reply`, an
            :class:`HttpError`, or a callable taking the :class:`RecordedRequest` and
            returning one of those (called in a worker thread).

    Attributes:
        exhausted: Set when a main request found the script empty; it was answered with
            the text ``"(scripted model: script exhausted)"``. :meth:`push` clears it.
        in_flight: Main requests being answered now (from arrival to the end of the
            response body, or of the stream when it is cut).
        max_in_flight: The most main requests that were in flight at once.
    """

    def __init__(self, script: list[ScriptEntry] | None = None) -> None:
        self._lock = threading.Lock()
        self._script: deque[ScriptEntry] = deque(script or [])
        self._requests: list[RecordedRequest] = []
        self._usages: list[Usage | None] = []  # the usage each request was answered with (None: an error)
        self._errors: list[Exception] = []
        self._tool_ids = itertools.count(1)
        self._message_ids = itertools.count(1)
        self.exhausted = False
        self.in_flight = 0
        self.max_in_flight = 0
        self._closing = threading.Event()
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self._port: int | None = None

    # --- lifecycle

    def start(self, timeout: float = 10.0) -> Self:
        """Listen on an ephemeral port; returns once it accepts connections.

        Args:
            timeout: Seconds to wait for uvicorn to come up.

        Raises:
            RuntimeError: Already running, or not up within ``timeout``.
        """
        if self._server is not None:
            raise RuntimeError("ScriptedModelServer is already running")
        self._closing.clear()
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", 0))
        self._port = sock.getsockname()[1]
        config = uvicorn.Config(self._app(), log_level="warning", lifespan="off", timeout_graceful_shutdown=1)
        server = self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=server.run, args=([sock],), name="scripted-model-server", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + timeout
        while not server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                self.stop()
                sock.close()
                raise RuntimeError("ScriptedModelServer did not start")
            time.sleep(0.005)
        return self

    def stop(self, timeout: float = 5.0) -> None:
        """Stop serving and free the port, waiting up to ``timeout`` seconds. Idempotent.

        Streams in progress are cut short. Records stay readable; :meth:`start` may be
        called again (on a new port).
        """
        server, thread = self._server, self._thread
        self._server = self._thread = None
        self._closing.set()
        if server is not None:
            server.should_exit = True
        if thread is not None:
            thread.join(timeout)

    def __enter__(self) -> Self:
        return self if self._server is not None else self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    @property
    def url(self) -> str:
        """Base URL for ``ANTHROPIC_BASE_URL``, e.g. ``"http://127.0.0.1:43121"``.

        Raises:
            RuntimeError: Never started.
        """
        if self._port is None:
            raise RuntimeError("ScriptedModelServer was never started")
        return f"http://127.0.0.1:{self._port}"

    # --- script and records

    def push(self, *entries: ScriptEntry) -> None:
        """Append entries to the end of the script (thread-safe)."""
        with self._lock:
            self._script.extend(entries)
            self.exhausted = self.exhausted and not entries

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request received, in arrival order (a copy)."""
        with self._lock:
            return list(self._requests)

    @property
    def answered_usage(self) -> list[Usage | None]:
        """The :class:`Usage` each request of :attr:`requests` was answered with, in the same
        order (tokens); None for an HTTP error, a request that is not ``/v1/messages``, or one
        whose client went away before the answer's first byte (a request the CLI abandoned
        while a reply's ``delay_first_byte`` ran: it was never answered) (a copy). A stream
        cut after its first byte counts as answered, with the reply's whole usage."""
        with self._lock:
            return list(self._usages)

    @property
    def main_requests(self) -> list[RecordedRequest]:
        """The requests that consumed a script entry (or found the script exhausted)."""
        return [r for r in self.requests if r.main]

    @property
    def remaining(self) -> int:
        """Number of script entries not consumed yet."""
        with self._lock:
            return len(self._script)

    @property
    def errors(self) -> list[Exception]:
        """Exceptions raised by callable entries; each was answered with a 500 (no retry)."""
        with self._lock:
            return list(self._errors)

    # --- HTTP

    def _app(self) -> Starlette:
        methods = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]
        return Starlette(routes=[Route("/{path:path}", self._handle, methods=methods)])

    async def _handle(self, request: Request) -> Response:
        raw = await request.body()
        try:
            body: Any = json.loads(raw) if raw else None
        except ValueError:
            body = None
        path = request.url.path
        recorded = RecordedRequest(
            method=request.method,
            path=path,
            query=request.url.query,
            headers={k.lower(): v for k, v in request.headers.items()},
            body=body,
            received_at=time.time(),
            main=_is_main(request.method, path, body),
        )
        entry: ScriptEntry | None = None
        with self._lock:
            index = len(self._requests)
            self._requests.append(recorded)
            self._usages.append(None)
            if recorded.main and self._script:
                entry = self._script.popleft()
            elif recorded.main:
                self.exhausted = True
        if not recorded.main:
            return self._side_response(recorded, index)
        with self._lock:
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            response = await self._main_response(entry, recorded, body, index, request)
        except BaseException:
            self._leave()
            raise
        if isinstance(response, StreamingResponse):
            response.body_iterator = self._counted(response.body_iterator)
        else:
            self._leave()
        return response

    def _leave(self) -> None:
        with self._lock:
            self.in_flight -= 1

    async def _counted(self, body: AsyncIterable[Any]) -> AsyncIterator[Any]:
        """A stream's body that leaves :attr:`in_flight` when it ends (or is cut)."""
        try:
            async for chunk in body:
                yield chunk
        finally:
            self._leave()

    async def _main_response(
        self, entry: ScriptEntry | None, recorded: RecordedRequest, body: Any, index: int, request: Request
    ) -> Response:
        """The answer to main request number `index`: its script entry (a callable is called
        with the request), or the exhausted-script text."""
        answer = entry if entry is not None else Reply(text(EXHAUSTED_TEXT))
        if callable(answer):
            try:
                answer = await run_in_threadpool(answer, recorded)
            except Exception as exc:  # noqa: BLE001 - kept for the test, answered as a 500
                with self._lock:
                    self._errors.append(exc)
                message = f"scripted callable raised {exc!r}"
                answer = http_error(500, message, headers={"x-should-retry": "false"})
        return await self._respond(answer, body, index, request)

    async def _respond(self, answer: Reply | HttpError, body: Any, index: int, request: Request) -> Response:
        if isinstance(answer, HttpError):
            return JSONResponse(answer.body(), answer.status, headers=dict(answer.headers))
        if answer.delay_first_byte > 0:
            await asyncio.sleep(answer.delay_first_byte)
        if await request.is_disconnected():  # the client gave up first (a stop): nothing was answered
            return Response(status_code=499)
        with self._lock:
            self._usages[index] = answer.usage
        return self._reply_response(answer, body)

    def _reply_response(self, reply: Reply, body: Any) -> Response:
        requested = body.get("model") if isinstance(body, dict) else None
        with self._lock:
            tool_ids = tuple(
                (b.id or f"toolu_{next(self._tool_ids):04d}") if isinstance(b, ToolUseBlock) else None
                for b in reply.blocks
            )
            message_id = f"msg_scripted_{next(self._message_ids):04d}"
        model = reply.model or (requested if isinstance(requested, str) else DEFAULT_MODEL)
        rendered = _Rendered(reply, message_id, model, tool_ids)
        if isinstance(body, dict) and body.get("stream"):
            headers = {"cache-control": "no-cache", "request-id": f"req_{message_id}"}
            return StreamingResponse(rendered.events(self._closing), media_type="text/event-stream", headers=headers)
        return JSONResponse(rendered.message())

    def _side_response(self, request: RecordedRequest, index: int) -> Response:
        path = request.path.rstrip("/")
        if request.method == "POST" and path == "/v1/messages/count_tokens":
            return JSONResponse({"input_tokens": max(1, len(json.dumps(request.body)) // 4)})
        if request.method == "POST" and path == "/v1/messages":
            reply = Reply(text(SIDE_TEXT), usage=Usage(1, 1))
            with self._lock:
                self._usages[index] = reply.usage
            return self._reply_response(reply, request.body)
        return JSONResponse({})
