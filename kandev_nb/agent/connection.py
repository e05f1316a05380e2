"""One CLI process: its transport, the reader task, control routing and MCP dispatch.

A :class:`CLIConnection` owns the CLI's output for the whole life of the process, so
control_requests are answered even between turns:

* `control_response` -> the :class:`~kandev_nb.wire.control.ControlPlane` (a response to no
  request becomes an `unknown` event);
* `control_request` `can_use_tool` -> the :class:`~kandev_nb.agent.approvals.ApprovalBroker`;
  `mcp_message` -> the in-process MCP server it names (in a task; a state-changing
  `tools/call` is first authorized by the broker); `hook_callback` -> the broker's PreToolUse
  hook of every tool (the file guard and the policies' deny side, :mod:`kandev_nb.policy.enforce`)
  or a Python hook (:mod:`kandev_nb.agent.hooks`, on a task);
  any other subtype is answered with an error and kept as an `unknown` event;
* `control_cancel_request` -> the broker withdraws that approval;
* everything else -> the owner's `on_message` (the :class:`~kandev_nb.agent.session.Session`
  runs it through the adapter).

When the process ends, every pending control request fails, every waiting approval is
withdrawn, and the owner's `on_exit` is called. The Session starts a new connection for the
next turn; one connection is never restarted.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from kandev_nb.agent import events as ev
from kandev_nb.agent import output_redact
from kandev_nb.agent.approvals import ApprovalBroker
from kandev_nb.agent.file_guard import FileGuard
from kandev_nb.agent.hooks import HookRegistry, answer_hook_callback
from kandev_nb.errors import CLIProcessError, TransportClosedError
from kandev_nb.policy import enforce
from kandev_nb.redact import LineMasker
from kandev_nb.wire.control import ControlError, ControlPlane
from kandev_nb.wire.protocol import (
    ControlCancelRequest,
    ControlRequest,
    ControlResponse,
    KeepAlive,
    WireMessage,
)
from kandev_nb.wire.transport import LineTooLong, Transport

__all__ = ["CLIConnection"]

log = logging.getLogger("kandev_nb")


class CLIConnection:
    """The live link to one CLI process.

    Args:
        transport: the process's transport (not started yet).
        broker: answers `can_use_tool` and authorizes unasked MCP `tools/call`.
        mcp_servers: in-process MCP servers by `server_name` (``handle(message) -> reply``,
            optionally ``needs_approval(tool_name) -> bool``).
        feed: the adapter's :meth:`~kandev_nb.agent.adapter.Adapter.feed`: the lines of one
            read -> ``(message, events)`` pairs (message None for merged text deltas).
        on_message: called with every ``(message, events)`` pair that is not part of the
            control plane (message None: a run of deltas, or a line over the size limit).
        on_event: called with the events the connection itself makes (`unknown`, the
            reader's own failure).
        on_exit: called with this connection once the process's output ended.
        on_exit: called with this connection once the process's output ended.
        file_guard: asked through the PreToolUse hook before every tool (:mod:`kandev_nb.policy.enforce`).
        hooks: the session's Python hooks (:class:`~kandev_nb.agent.hooks.HookRegistry`).
        session_id: the session's current session_id (for the events hooks make).
        secrets: known secret values (:func:`kandev_nb.redact.known_secrets`), masked in every
            line the CLI prints (:class:`~kandev_nb.redact.LineMasker`) and, through kandev-nb's
            PostToolUse hook, in tool outputs before the model reads them (:mod:`~kandev_nb.agent.output_redact`).
        agents: subagent definitions ``{name: {"description", "prompt", ...}}`` for the
            `initialize` request's ``agents`` (the Agent SDK's way; any size, never on argv).
        forward_subagent_text: ask, in `initialize` (``"forwardSubagentText": true``), for
            subagents' text and thinking too (:class:`~kandev_nb.wire.cli.LaunchOptions`).

    Attributes:
        last_activity: monotonic time of the latest message that was not a `keep_alive`.
        initialize_response: the CLI's answer to `initialize` (``commands``, ``agents``: a list
            of ``{"name", "description", ...}``, ...); ``{}`` until it answered.
    """

    def __init__(
        self,
        transport: Transport,
        broker: ApprovalBroker,
        *,
        mcp_servers: Mapping[str, Any],
        feed: Callable[[list[bytes | LineTooLong]], list[tuple[WireMessage | None, list[ev.AgentEvent]]]],
        on_message: Callable[[WireMessage | None, list[ev.AgentEvent]], None],
        on_event: Callable[[ev.AgentEvent], None],
        on_exit: Callable[[CLIConnection], None],
        file_guard: FileGuard | None = None,
        hooks: HookRegistry | None = None,
        session_id: Callable[[], str | None] = lambda: None,
        secrets: Sequence[str] = (),
        agents: Mapping[str, Any] | None = None,
        forward_subagent_text: bool = False,
    ) -> None:
        self.transport = transport
        self.control = ControlPlane(transport.send)
        self.broker = broker
        self.mcp_servers = mcp_servers
        self.last_activity = time.monotonic()
        self._feed = feed
        self._on_message = on_message
        self._emit = on_event
        self._on_exit = on_exit
        self.file_guard = file_guard
        self.hooks = hooks or HookRegistry(None)
        self._session_id = session_id
        self._reader: asyncio.Task[None] | None = None
        self.masker = LineMasker(secrets)
        self.agents = agents
        self.forward_subagent_text = forward_subagent_text
        self.initialize_response: dict[str, Any] = {}

    @property
    def pid(self) -> int | None:
        """The CLI's process id, if it runs as a local child."""
        return getattr(self.transport, "pid", None)

    async def start(self, initialize_timeout: float) -> dict[str, Any]:
        """Start the process and the reader, send `initialize`, return its response.

        Raises:
            CLIProcessError: the CLI exited or did not answer within `initialize_timeout`
                seconds (with its exit code and stderr tail); the process is closed.
            asyncio.CancelledError: cancelled while starting; the process is closed.
        """
        await self.transport.start()
        self._reader = asyncio.get_running_loop().create_task(self._read_loop())
        try:
            fields: dict[str, Any] = {"hooks": self._initialize_hooks()}
            if self.agents:  # subagent definitions, as the Agent SDK sends them (never on argv)
                fields["agents"] = dict(self.agents)
            if self.forward_subagent_text:  # the Agent SDK's forwardSubagentText
                fields["forwardSubagentText"] = True
            self.initialize_response = await self.control.request("initialize", timeout=initialize_timeout, **fields)
            return self.initialize_response
        except (ConnectionError, ControlError, TimeoutError) as exc:
            await self.close()  # idempotent; waits for the rest of its stderr
            code = self.transport.exit_code
            raise CLIProcessError(
                f"Claude Code exited before answering initialize (exit code {code}): {exc}\n"
                f"{self.transport.stderr_tail}",
                code,
                self.transport.stderr_tail,
            ) from exc
        except asyncio.CancelledError:  # the kernel's interrupt while the CLI starts: no half-started process
            await self.close()
            raise

    async def request(self, subtype: str, *, timeout: float, **fields: Any) -> dict[str, Any]:
        """Send a control_request (`interrupt`, `set_permission_mode`...) and await its response."""
        return await self.control.request(subtype, timeout=timeout, **fields)

    async def send(self, message: dict[str, Any]) -> None:
        """Write one message to the CLI (raises TransportClosedError once it is gone)."""
        await self.transport.send(message)

    async def close(self) -> None:
        """End the process (stdin EOF, then TERM, then KILL, bounded) and the reader."""
        await self.transport.close()
        if self._reader is not None and self._reader is not asyncio.current_task():
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._reader
            self._reader = None

    # -- the reader -------------------------------------------------------------------------

    async def _read_loop(self) -> None:
        try:
            async for batch in self.transport.batches():
                lines = self.masker.lines(batch)  # secrets masked before anything above sees them
                items = self._feed(lines)
                if len(items) < len(lines) or any(m is None or not isinstance(m, KeepAlive) for m, _ in items):
                    self.last_activity = time.monotonic()
                for msg, events in items:
                    match msg:
                        case ControlResponse():
                            if not self.control.handle_response(msg):
                                self._emit(ev.Unknown(raw=msg.model_dump(), reason="control_response to no request"))
                        case ControlRequest():
                            await self._on_control_request(msg)
                        case ControlCancelRequest():
                            self.broker.withdraw(msg.request_id)
                            self.hooks.cancel(msg.request_id)  # a hook_callback the CLI gave up on
                        case _:
                            self._on_message(msg, events)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a bug of ours must not hang the turn
            log.exception("kandev_nb reader failed")
            self._emit(ev.Error(message=f"kandev-nb reader failed: {exc!r}", subtype="reader_error"))
        self.control.fail_all(TransportClosedError(f"Claude Code exited (code {self.transport.exit_code})"))
        self.broker.withdraw_all()
        self._on_exit(self)

    def _initialize_hooks(self) -> dict[str, Any] | None:
        """`initialize`'s ``hooks``: the user's Python hooks, kandev-nb's PreToolUse hook of every
        tool (the file guard and the policies' deny side, :mod:`kandev_nb.policy.enforce`) and its
        PostToolUse output redaction (:mod:`kandev_nb.agent.output_redact`), by event."""
        merged: dict[str, list[dict[str, Any]]] = {}
        redact = output_redact.initialize_hooks(self.masker.secrets)
        for part in (self.hooks.initialize_config(), enforce.initialize_hooks(), redact):
            for event, matchers in (part or {}).items():
                merged.setdefault(event, []).extend(matchers)
        return merged or None

    async def _on_control_request(self, msg: ControlRequest) -> None:
        request = msg.request
        subtype = request.get("subtype")
        try:
            if subtype == "can_use_tool":
                self.broker.on_can_use_tool(msg.request_id, request, self.control.answer)
            elif subtype == "hook_callback" and request.get("callback_id") == enforce.CALLBACK_ID:
                await self.control.answer(msg.request_id, self.broker.pre_tool_use(request, self.file_guard))
            elif subtype == "hook_callback" and request.get("callback_id") == output_redact.CALLBACK_ID:
                await self.control.answer(msg.request_id, output_redact.hook_answer(request, self.masker.secrets))
            elif subtype == "hook_callback":  # a Python hook, on a task: a slow hook never stops the reader
                task = self.broker.spawn(
                    answer_hook_callback(
                        self.hooks,
                        msg.request_id,
                        request,
                        self.control,
                        self._emit,
                        self.broker.asked,
                        self._session_id(),
                    )
                )
                self.hooks.track(msg.request_id, task)
            elif subtype == "mcp_message":
                # A task, like approvals: a long tools/call must not stop the reader, which
                # has to pass on the CLI's notifications/cancelled when the turn is interrupted.
                self.broker.spawn(self._on_mcp_message(msg.request_id, request))
            else:
                self._emit(ev.Unknown(raw=msg.model_dump(), reason=f"unsupported control_request {subtype!r}"))
                await self.control.answer_error(msg.request_id, f"kandev-nb does not support {subtype!r}")
        except TransportClosedError:
            pass

    async def _on_mcp_message(self, request_id: str, request: dict[str, Any]) -> None:
        server = self.mcp_servers.get(str(request.get("server_name")))
        message = request.get("message") or {}
        if server is None:
            with contextlib.suppress(TransportClosedError):
                await self.control.answer_error(
                    request_id, f"no in-process MCP server named {request.get('server_name')!r}"
                )
            return
        refusal = None
        if isinstance(message, dict) and message.get("method") == "tools/call":
            refusal = await self.broker.authorize_tool_call(str(request.get("server_name")), server, message)
        if refusal is not None:
            reply: dict[str, Any] = {
                "jsonrpc": "2.0",
                "id": message.get("id"),
                "result": {"content": [{"type": "text", "text": refusal}], "isError": True},
            }
        else:
            reply = await server.handle(message)
        with contextlib.suppress(TransportClosedError):
            await self.control.answer(request_id, {"mcp_response": reply})
