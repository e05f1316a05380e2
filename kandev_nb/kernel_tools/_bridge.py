"""An in-process MCP server reached through the CLI's `mcp_message` control requests.

The CLI sends each JSON-RPC message for an ``{"type": "sdk"}`` server as the `message` of a
`control_request` (subtype `mcp_message`) and expects, for requests, the JSON-RPC response
back as ``{"mcp_response": ...}``. :class:`McpBridge` feeds those dicts into one
``mcp.server.Server.run`` over the ``mcp`` library's in-memory stream pair, so the library
itself does the protocol (initialize, the `initialized` notification, tools/list,
tools/call, ping, cancellation): nothing here parses JSON-RPC beyond matching a response to
its request by ``id``.

One bridge runs one connection for its lifetime; a repeated `initialize` (CLI 2.1.197 sends
two) goes to the same live connection, which answers both. 2.1.197 also reuses request ids
(two `initialize` with id 0, two `tools/list` with id 1, from two MCP clients of its own), so
requests may be in flight with the same id: each gets a connection-unique id on the way in
and its own id back on the way out (a `notifications/cancelled` is mapped the same way).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
from typing import Any

import anyio
import mcp.types as mt
from mcp.server import Server
from mcp.shared.memory import create_client_server_memory_streams
from mcp.shared.message import ServerMessageMetadata, SessionMessage

from kandev_nb.errors import McpBridgeError

__all__ = ["McpBridge", "McpBridgeError"]

log = logging.getLogger("kandev_nb")

_REQUEST_CANCELLED = {"code": -32800, "message": "Request cancelled"}
"""What a request the server settled without answering (a cancelled call) is ended with."""


class McpBridge:
    """Route raw JSON-RPC dicts to one in-process ``mcp.server.Server``.

    Args:
        server: a low-level ``mcp.server.Server`` (its handlers run on the calling loop).
        name: the server's name in the CLI's MCP config (only for messages).

    The connection starts with the first message (it needs a running event loop) and
    lives until :meth:`aclose`.
    """

    def __init__(self, server: Server[Any], name: str) -> None:
        self.server = server
        self.name = name
        self._pending: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._ids = itertools.count(1)
        self._original: dict[int, Any] = {}  # connection id -> the CLI's id
        self._to_server: Any = None
        self._task: asyncio.Task[None] | None = None
        self._ready: asyncio.Event | None = None
        self._stop: asyncio.Event | None = None
        self._closed = False
        self.failure: BaseException | None = None

    async def handle(self, message: dict[str, Any]) -> dict[str, Any] | None:
        """Deliver one JSON-RPC message from the CLI and wait for its response.

        Args:
            message: the control request's `message` (a JSON-RPC request, notification or
                response, as a dict with camelCase keys).

        Returns:
            The JSON-RPC response dict (``{"jsonrpc", "id", "result"|"error"}``) for a
            request; None for a notification or a response.

        Raises:
            McpBridgeError: the bridge is closed or its server stopped.
            pydantic.ValidationError: `message` is not JSON-RPC.
        """
        if self._closed:
            raise McpBridgeError(f"in-process MCP server {self.name!r} is closed")
        await self._ensure_started()
        message = self._renumber(message)
        parsed = mt.jsonrpc_message_adapter.validate_python(message, by_name=False)
        future: asyncio.Future[dict[str, Any]] | None = None
        metadata = None
        if isinstance(parsed, mt.JSONRPCRequest):
            request_id = int(parsed.id)
            future = asyncio.get_running_loop().create_future()
            self._pending[request_id] = future

            async def unanswered() -> None:
                self._deliver({"jsonrpc": "2.0", "id": request_id, "error": dict(_REQUEST_CANCELLED)})

            metadata = ServerMessageMetadata(on_request_unanswered=unanswered)
        try:
            await self._to_server.send(SessionMessage(parsed, metadata=metadata))
        except (anyio.ClosedResourceError, anyio.BrokenResourceError) as exc:
            if isinstance(parsed, mt.JSONRPCRequest):
                self._pending.pop(int(parsed.id), None)
                self._original.pop(int(parsed.id), None)
            raise McpBridgeError(f"in-process MCP server {self.name!r} stopped") from exc
        if future is None:
            return None
        return await asyncio.shield(future)

    def _renumber(self, message: dict[str, Any]) -> dict[str, Any]:
        """A request with a connection-unique id; a cancellation naming that id."""
        if "method" in message and message.get("id") is not None:
            internal = next(self._ids)
            self._original[internal] = message["id"]
            return {**message, "id": internal}
        params = message.get("params")
        if message.get("method") == "notifications/cancelled" and isinstance(params, dict):
            wanted = params.get("requestId")
            matches = [i for i, original in self._original.items() if original == wanted and i in self._pending]
            if matches:
                return {**message, "params": {**params, "requestId": matches[-1]}}
        return message

    async def _ensure_started(self) -> None:
        if self._task is not None and self._task.done():
            raise McpBridgeError(f"in-process MCP server {self.name!r} stopped: {self.failure!r}")
        if self._task is None:
            self._ready, self._stop = asyncio.Event(), asyncio.Event()
            self._task = asyncio.get_running_loop().create_task(self._run(), name=f"mcp-{self.name}")
        assert self._ready is not None
        await self._ready.wait()
        if self._to_server is None:
            raise McpBridgeError(f"in-process MCP server {self.name!r} failed to start: {self.failure!r}")

    async def _run(self) -> None:
        assert self._ready is not None and self._stop is not None
        try:
            async with create_client_server_memory_streams() as (client, server_side):
                from_server, self._to_server = client
                async with anyio.create_task_group() as tg:
                    tg.start_soon(self._serve, *server_side)
                    tg.start_soon(self._read, from_server)
                    self._ready.set()
                    await self._stop.wait()
                    tg.cancel_scope.cancel()
        except Exception as exc:
            self.failure = exc
            log.exception("in-process MCP server %r failed", self.name)
        finally:
            self._to_server = None
            self._ready.set()
            self._fail_pending(f"in-process MCP server {self.name!r} stopped")

    async def _serve(self, read: Any, write: Any) -> None:
        try:
            await self.server.run(read, write, self.server.create_initialization_options())
        finally:
            await write.aclose()

    async def _read(self, from_server: Any) -> None:
        async for item in from_server:
            if isinstance(item, Exception):
                log.debug("MCP server %r reported %r", self.name, item)
                continue
            payload: dict[str, Any] = item.message.model_dump(by_alias=True, mode="json", exclude_none=True)
            if "method" not in payload:
                self._deliver(payload)
            elif "id" in payload:  # a request to the client (ping, sampling...): none is supported
                answer = {"jsonrpc": "2.0", "id": payload["id"]}
                if payload["method"] == "ping":
                    answer["result"] = {}
                else:
                    answer["error"] = {"code": -32601, "message": f"{payload['method']} is not supported"}
                with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
                    await self._to_server.send(SessionMessage(mt.jsonrpc_message_adapter.validate_python(answer)))
            # notifications from the server (logging, list_changed) have nowhere to go

    def _deliver(self, payload: dict[str, Any]) -> None:
        internal = payload.get("id")
        if not isinstance(internal, int):
            return
        future = self._pending.pop(internal, None)
        if future is not None and not future.done():
            future.set_result({**payload, "id": self._original.pop(internal, internal)})

    def _fail_pending(self, reason: str) -> None:
        pending, self._pending = self._pending, {}
        self._original.clear()
        for future in pending.values():
            if not future.done():
                future.set_exception(McpBridgeError(reason))

    async def aclose(self) -> None:
        """Stop the connection; requests still waiting fail with :class:`McpBridgeError`."""
        self._closed = True
        if self._stop is not None:
            self._stop.set()
        if self._task is not None:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await asyncio.wait_for(self._task, 5.0)
