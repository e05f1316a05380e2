"""A `Session`: one Claude Code conversation, one CLI process at a time, many turns.

>>> session = Session(cwd="project")
>>> turn = await session.run("Fix the failing test")       # doctest: +SKIP
>>> async for event in session.stream("And now explain"):  # doctest: +SKIP
...     print(event.type)

A background reader task owns the CLI's output for the whole life of the process, so
control_requests are answered even between turns. Each turn's events go to the consumers
given to :meth:`Session.run` through a fan-out that isolates failures (a broken consumer is
logged and skipped, it never stops the turn).

Lifecycle (:class:`SessionState`): NEW -> READY (process up, initialize answered) ->
RUNNING (a turn) -> READY ... -> CLOSED. If the CLI dies, the state returns to NEW and the
next turn starts a new process with ``--resume <session_id>``.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import logging
import os
import subprocess
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Self

from kandev_nb.agent import events as ev
from kandev_nb.agent.adapter import Adapter
from kandev_nb.agent.background import BackgroundWatch, merge_stats
from kandev_nb.agent.controls import (
    CHECKPOINT_ARGS,
    CHECKPOINT_ENV,
    LiveControls,
    with_mcp_failures,
)
from kandev_nb.agent.permissions import (
    Approval,
    ApprovalPolicy,
    Decision,
    cli_permission_mode,
    mode_from_cli,
)
from kandev_nb.agent.questions import QUESTION_TOOL, AnswerPolicy
from kandev_nb.agent.questions import prepare as prepare_question
from kandev_nb.agent.turn import Turn
from kandev_nb.errors import SessionClosedError, TurnInProgressError
from kandev_nb.wire.cli import (
    CLINotFoundError,
    CLIOptions,
    build_argv,
    child_env,
    cli_version,
    find_cli,
)
from kandev_nb.wire.control import ControlError, ControlPlane
from kandev_nb.wire.protocol import (
    ControlCancelRequest,
    ControlRequest,
    ControlResponse,
    KeepAlive,
    ResultMessage,
    UserMessage,
    parse_line,
    user_message,
)
from kandev_nb.wire.transport import (
    CLIProcessError,
    LineTooLong,
    StdioTransport,
    Transport,
    TransportClosedError,
)

__all__ = ["Consumer", "Session", "SessionClosedError", "SessionConfig", "SessionState", "TurnInProgressError"]

log = logging.getLogger("kandev_nb")

NO_APPROVAL_NOTE = frozenset({
    "Read", "Glob", "Grep", "LS", "NotebookRead", "TodoWrite", "Task", "Agent", "TaskCreate", "TaskUpdate",
    "TaskList", "TaskGet", "TaskOutput", "TaskStop", "ToolSearch", "Skill", "EnterPlanMode", "ExitPlanMode",
    "AskUserQuestion", "ListAgents", "Monitor", "SendMessage", "CronList",
})
"""Tools that never need approval: running them without a request is not worth a note."""

UNASKED_TOOL_TIMEOUT_S = 300.0
"""Seconds a person has to answer for an in-process MCP `tools/call` that came with no
allowed can_use_tool, when the session has no `approval_timeout`; then it is denied."""

INTERRUPT_GRACE_S = 15.0
"""Seconds the CLI gets to end a turn after an interrupt before its process is closed."""

Consumer = Callable[[ev.AgentEvent], None]
"""Anything called with each event of a turn, in order (widgets, the ledger, a list.append)."""

TransportFactory = Callable[[list[str], dict[str, str], str], Transport]


class SessionState(enum.Enum):
    """Where a :class:`Session` is: NEW (no process), READY, RUNNING (a turn), CLOSED."""

    NEW = "new"
    READY = "ready"
    RUNNING = "running"
    CLOSED = "closed"


@dataclass
class SessionConfig:
    """Everything a session is started with. All fields have defaults.

    Attributes:
        cwd: the CLI's working directory (default: the current directory).
        mode: "supervised" (default), "plan", "acceptEdits" or "autonomous".
        approve: an approval policy ``(tool_name, tool_input) -> "allow"|"deny"|None``.
        approval_timeout: seconds an approval may wait before it is denied (None: forever).
        inactivity_timeout: seconds without any CLI message before the turn is interrupted
            (paused while an approval waits). Default 300.
        env: extra environment for the CLI (e.g. ANTHROPIC_BASE_URL).
        cli_path: explicit binary (else KANDEV_CLAUDE_CLI, PATH, the SDK's bundled one).
        resume, resume_session_at, fork: start from an existing conversation.
        allow_root_bypass: the explicit opt-in for autonomous mode as root (sets IS_SANDBOX=1).
        mcp_servers: in-process MCP servers by name, answering `mcp_message` control requests.
        answer: a policy answering AskUserQuestion (:data:`kandev_nb.agent.questions.AnswerPolicy`).
    """

    cwd: str | os.PathLike[str] | None = None
    mode: str = "supervised"
    model: str | None = None
    approve: ApprovalPolicy | None = None
    approval_timeout: float | None = None
    inactivity_timeout: float | None = 300.0
    env: dict[str, str] = field(default_factory=dict)
    cli_path: str | os.PathLike[str] | None = None
    resume: str | None = None
    resume_session_at: str | None = None
    fork: bool = False
    max_turns: int | None = None
    max_budget_usd: float | None = None
    mcp_config: str | None = None
    system_prompt: str | None = None
    append_system_prompt: str | None = None
    allowed_tools: tuple[str, ...] = ()
    allow_root_bypass: bool = False
    include_partial_messages: bool = True
    initialize_timeout: float = 90.0
    mcp_servers: dict[str, Any] = field(default_factory=dict)
    extra_args: tuple[str, ...] = ()  # issue 19: more CLI flags (--add-dir, --effort...)
    file_checkpoints: bool = False  # issue 19: CHECKPOINT_ENV + --replay-user-messages, for rewind_files
    answer: AnswerPolicy | None = None  # issue 19: answers AskUserQuestion (kandev_nb.agent.questions)


class Session(LiveControls):  # issue 19: set_model, rewind_to, mcp_status... in agent/controls.py
    """One conversation with Claude Code.

    Args:
        config: a :class:`SessionConfig`; keyword arguments override its fields.
        transport_factory: ``(argv, env, cwd) -> Transport``; defaults to a
            :class:`~kandev_nb.wire.transport.StdioTransport`. Tests and the WebSocket transport
            plug in here.
        name: a label for the ledger and the widgets ("default" for the magic's session).
    """

    def __init__(
        self,
        config: SessionConfig | None = None,
        *,
        transport_factory: TransportFactory | None = None,
        name: str = "default",
        **overrides: Any,
    ) -> None:
        self.config = replace(config or SessionConfig(), **overrides)
        cli_permission_mode(self.config.mode, allow_root_bypass=self.config.allow_root_bypass)  # validate early
        for timeout in ("approval_timeout", "inactivity_timeout", "initialize_timeout"):
            value = getattr(self.config, timeout)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int | float) or value < 0):
                raise TypeError(f"{timeout} must be a non-negative number of seconds or None, not {value!r}")
        self.name = name
        self.state = SessionState.NEW
        self.adapter = Adapter(resumed=bool(self.config.resume))
        self.transport: Transport | None = None
        self.control: ControlPlane | None = None
        self.cli_path: Path | None = None
        self.cli_version: str | None = None
        self.commands: tuple[ev.SlashCommand, ...] = ()
        self.model: str | None = None  # the model `system/init` named for the live process
        self.turns: list[Turn] = []
        self.approvals: dict[str, Approval] = {}
        self._transport_factory = transport_factory
        self._saved = bool(self.config.resume)
        self._reader: asyncio.Task[None] | None = None
        self._backlog: list[ev.AgentEvent] = []
        self._queue: asyncio.Queue[ev.AgentEvent] | None = None
        self._last_activity = time.monotonic()
        self._approval_tasks: set[asyncio.Task[None]] = set()
        self._turn_policy: ApprovalPolicy | None = None
        self._exit_error: ev.Error | None = None
        self._lock = asyncio.Lock()
        self._asked: set[str] = set()  # tool_use_ids the CLI sent a can_use_tool for
        self._granted: dict[str, str] = {}  # tool_use_id -> mcp__ tool allowed by a can_use_tool, until its tools/call
        self._session_tools: set[str] = set()  # tools allowed "for the session" in this process
        self._launched_mode: str | None = None  # the CLI mode the live process started in
        self._interrupt_task: asyncio.Task[None] | None = None
        self._interrupted_at: float | None = None  # monotonic time of the running turn's interrupt
        self.background = BackgroundWatch()  # issue 19: a turn stays open for its background tasks

    # -- properties -----------------------------------------------------------------------

    @property
    def session_id(self) -> str | None:
        """The CLI's session_id (from `system/init` and every later message)."""
        return self.adapter.session_id or self.config.resume

    @property
    def cwd(self) -> str:
        """The working directory the CLI runs in."""
        return str(Path(self.config.cwd or os.getcwd()).resolve())

    @property
    def pid(self) -> int | None:
        """The CLI's process id, if it runs as a local child."""
        return getattr(self.transport, "pid", None)

    # -- lifecycle ------------------------------------------------------------------------

    def _cli_options(self) -> CLIOptions:
        c = self.config
        # Resume our own conversation only once the CLI has saved it: a CLI killed in its
        # first moments leaves nothing to resume, and --resume would fail.
        own = self.adapter.session_id
        resume = (own if own and (self._saved or self._transcript_saved(own)) else None) or c.resume
        return CLIOptions(
            model=c.model,
            permission_mode=cli_permission_mode(c.mode, allow_root_bypass=c.allow_root_bypass),
            resume=resume,
            resume_session_at=c.resume_session_at if resume == c.resume else None,
            fork_session=c.fork and resume == c.resume,
            max_turns=c.max_turns,
            max_budget_usd=c.max_budget_usd,
            mcp_config=c.mcp_config,
            system_prompt=c.system_prompt,
            append_system_prompt=c.append_system_prompt,
            allowed_tools=c.allowed_tools,
            include_partial_messages=c.include_partial_messages,
            extra_args=c.extra_args + (CHECKPOINT_ARGS if c.file_checkpoints else ()),
        )

    def _transcript_saved(self, session_id: str) -> bool:
        """Whether the CLI wrote `session_id`'s transcript (``<config>/projects/*/<id>.jsonl``)."""
        env = {**os.environ, **self.config.env}
        roots = {Path(env.get("HOME", "~")).expanduser() / ".claude"}
        if env.get("CLAUDE_CONFIG_DIR"):
            roots.add(Path(env["CLAUDE_CONFIG_DIR"]).expanduser())
        return any(next(root.glob(f"projects/*/{session_id}.jsonl"), None) for root in roots)

    async def start(self) -> None:
        """Launch the CLI and send `initialize`; no-op if already running.

        Raises:
            CLINotFoundError: no binary found.
            CLIProcessError: the CLI exited before answering initialize (with its stderr).
            SessionClosedError: after :meth:`close`.
        """
        if self.state is SessionState.CLOSED:
            raise SessionClosedError("this session is closed")
        if self.state is not SessionState.NEW:
            return
        try:
            self.cli_path = find_cli(self.config.cli_path)
            self.cli_version = await asyncio.to_thread(cli_version, self.cli_path)
        except CLINotFoundError:
            if self._transport_factory is None:
                raise
            # A custom transport (a replay, a remote CLI) may need no local binary.
            self.cli_path, self.cli_version = Path("claude"), None
        except (OSError, RuntimeError, subprocess.SubprocessError) as exc:  # not executable, no version...
            raise CLIProcessError(f"{self.cli_path or self.config.cli_path} does not run as Claude Code: {exc}",
                                  None, "") from exc
        if self.adapter.session_id:  # a previous process of this session died: resume it
            self.adapter.new_process()
        self._session_tools.clear()  # "allow for the session" rules lived in the old process
        options = self._cli_options()
        argv = build_argv(self.cli_path, options)
        extra = {**(CHECKPOINT_ENV if self.config.file_checkpoints else {}), **self.config.env}
        if self.config.mode == "autonomous" and self.config.allow_root_bypass:
            extra["IS_SANDBOX"] = "1"
        env = child_env(extra)
        if "IS_SANDBOX" not in extra:
            # Only the user's opt-in (allow_root_bypass) lets the CLI bypass permissions as
            # root; a value inherited from the kernel's environment does not count.
            env.pop("IS_SANDBOX", None)
        factory = self._transport_factory or (lambda a, e, c: StdioTransport(a, e, c))
        self.transport = factory(argv, env, self.cwd)
        self.control = ControlPlane(self.transport.send)
        self._exit_error = None
        self._launched_mode = options.permission_mode
        launched = self.transport
        await self.transport.start()
        self._reader = asyncio.get_running_loop().create_task(self._read_loop(self.transport, self.control))
        try:
            response = await self.control.request("initialize", timeout=self.config.initialize_timeout, hooks=None)
        except (ConnectionError, ControlError, TimeoutError) as exc:
            transport = launched  # self.transport is None if the reader saw the exit first
            await self._teardown()
            await transport.close()  # idempotent; waits for the rest of its stderr
            code = transport.exit_code
            raise CLIProcessError(
                f"Claude Code exited before answering initialize (exit code {code}): {exc}\n{transport.stderr_tail}",
                code,
                transport.stderr_tail,
            ) from exc
        except asyncio.CancelledError:  # the kernel's interrupt while the CLI starts: no half-started process
            await self._teardown()
            await launched.close()
            raise
        self.commands = tuple(
            ev.SlashCommand(name=c.get("name", ""), description=c.get("description", ""),
                            argument_hint=c.get("argumentHint", ""))
            for c in response.get("commands") or [] if isinstance(c, dict)
        )
        self._backlog.append(ev.AvailableCommands(commands=self.commands))
        self.state = SessionState.READY

    async def _teardown(self) -> None:
        transport, self.transport = self.transport, None
        if transport is not None:
            await transport.close()
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._reader
            self._reader = None
        if self.state is not SessionState.CLOSED:
            self.state = SessionState.NEW

    async def close(self) -> None:
        """End the CLI (stdin EOF, then TERM, then KILL, bounded) and close the session."""
        for approval in list(self.approvals.values()):
            self._withdraw(approval)
        await self._teardown()
        self.state = SessionState.CLOSED

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # -- the reader -----------------------------------------------------------------------

    async def _read_loop(self, transport: Transport, control: ControlPlane) -> None:
        try:
            async for line in transport.lines():
                if isinstance(line, LineTooLong):
                    self._emit(ev.Unknown(raw={"size": line.size}, reason=f"line of {line.size} bytes over the limit"))
                    continue
                msg = parse_line(line)
                if not isinstance(msg, KeepAlive):
                    self._last_activity = time.monotonic()
                match msg:
                    case ControlResponse():
                        if not control.handle_response(msg):
                            self._emit(ev.Unknown(raw=msg.model_dump(), reason="control_response to no request"))
                    case ControlRequest():
                        await self._on_control_request(msg, control)
                    case ControlCancelRequest():
                        approval = self.approvals.get(msg.request_id)
                        if approval is not None:
                            self._withdraw(approval)
                    case _:
                        self.background.note_raw(getattr(msg, "raw", None) or {})
                        events = with_mcp_failures(self.adapter.handle(msg), getattr(msg, "raw", None) or {})
                        if isinstance(msg, UserMessage):
                            self.note_replay(msg.raw)  # issue 19: the prompt's uuid, for rewind_files
                            events = self._note_unasked(msg, events)
                        elif isinstance(msg, ResultMessage) and not any(isinstance(e, ev.Complete) for e in events):
                            events = [*events, *self._unreadable_result()]
                        for event in events:
                            if isinstance(event, ev.SessionMode):
                                self.config.mode = mode_from_cli(event.mode) or self.config.mode
                            elif isinstance(event, ev.SessionStatus) and event.model:
                                self.model = event.model
                            elif isinstance(event, ev.Complete):
                                self._saved = True  # a finished turn: the CLI has written the transcript
                            self._emit(event)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a bug of ours must not hang the turn
            log.exception("kandev_nb reader failed")
            self._emit(ev.Error(message=f"kandev-nb reader failed: {exc!r}", subtype="reader_error"))
        code = transport.exit_code
        control.fail_all(TransportClosedError(f"Claude Code exited (code {code})"))
        for approval in list(self.approvals.values()):
            self._withdraw(approval)
        if self.state is not SessionState.CLOSED and self.transport is transport:
            self.state = SessionState.NEW
            self.transport = None
        if self._queue is not None:
            stderr = transport.stderr_tail.strip()
            err = ev.Error(
                message=f"Claude Code exited mid-turn with exit code {code}" + (f": {stderr[-2000:]}" if stderr else ""),
                subtype="cli_exited", exit_code=code, stderr=stderr, session_id=self.session_id,
            )
            self._emit(err)
            self._emit(ev.Complete(
                stats=ev.TurnStats(session_id=self.session_id, result_subtype="cli_exited", is_error=True),
                last_message_uuid=self.adapter.last_message_uuid, session_id=self.session_id,
            ))

    def _note_unasked(self, msg: UserMessage, events: list[ev.AgentEvent]) -> list[ev.AgentEvent]:
        """Make visible that the CLI ran a tool without asking us.

        In every mode but autonomous, a tool outside :data:`NO_APPROVAL_NOTE` whose result
        arrives with no can_use_tool before it was allowed by the CLI's own permission
        settings: a ``permissions.allow`` rule of the user, the mode (acceptEdits), or its
        read-only classification of a shell command. A :class:`~kandev_nb.agent.events.PermissionDecided`
        with ``decided_by="settings"`` is put before its ToolUpdate, so the tool's record and
        card show who decided. On CLIs that report it (2.1.332), the reason comes from the
        message's ``tool_result_meta[].permission_decision`` (`source`, `reason_type`); a
        PreToolUse hook's deny (``source: "hook"``, measured with 2.1.332) is reported as
        ``decided_by="hook"`` with the hook's reason (the `tool_result` text).
        """
        if self.config.mode == "autonomous":
            return events
        meta: dict[str, dict[str, Any]] = {}
        for entry in msg.raw.get("tool_result_meta") or ():
            if isinstance(entry, dict) and isinstance(entry.get("permission_decision"), dict):
                meta[str(entry.get("id"))] = entry["permission_decision"]
        out: list[ev.AgentEvent] = []
        for event in events:
            if (isinstance(event, ev.ToolUpdate) and event.tool_call_id not in self._asked
                    and event.tool_name not in NO_APPROVAL_NOTE and not event.auto_completed):
                self._asked.add(event.tool_call_id)
                decision = meta.get(event.tool_call_id, {})
                accepted = decision.get("decision", "accept" if event.status == "complete" else None)
                if accepted in ("accept", "reject", "deny"):
                    source = " / ".join(str(decision[k]) for k in ("source", "reason_type") if decision.get(k))
                    by_hook = decision.get("source") == "hook"
                    why = (f"{event.tool_name} was allowed for this session by an earlier answer"
                           if event.tool_name in self._session_tools and accepted == "accept"
                           else f"Claude Code's own permission settings ({source or 'no request was sent'})")
                    if accepted != "accept" and event.output.strip():
                        # the tool_result text is the reason (a hook's permissionDecisionReason)
                        why = event.output.strip() if by_hook else f"{why}: {event.output.strip()}"
                    out.append(ev.PermissionDecided(
                        request_id=f"settings:{event.tool_call_id}", tool_name=event.tool_name,
                        tool_use_id=event.tool_call_id,
                        behavior="allow" if accepted == "accept" else "deny",
                        decided_by="hook" if by_hook else "settings", waited_ms=0,
                        message=why,
                        session_id=self.session_id, parent_tool_use_id=event.parent_tool_use_id,
                    ))
            out.append(event)
        return out

    def _withdraw(self, approval: Approval) -> None:
        """The request is void (control_cancel_request, or the CLI is gone): close its card."""
        if approval.cancel():
            self._emit(ev.PermissionCancelled(request_id=approval.request_id, session_id=self.session_id))

    def _unreadable_result(self) -> list[ev.AgentEvent]:
        """A `result` the adapter could not read still ends the turn (the raw line is in an
        `unknown` event just before): an error, then a Complete without figures."""
        sid = self.session_id
        return [
            ev.Error(message="kandev-nb could not read the CLI's result message; the turn ended without figures",
                     subtype="unreadable_result", session_id=sid),
            ev.Complete(stats=ev.TurnStats(session_id=sid, result_subtype="unreadable_result", is_error=True),
                        last_message_uuid=self.adapter.last_message_uuid, session_id=sid),
        ]

    def _emit(self, event: ev.AgentEvent) -> None:
        if self._queue is not None:
            self._queue.put_nowait(event)
        else:
            self._backlog.append(event)

    async def _on_control_request(self, msg: ControlRequest, control: ControlPlane) -> None:
        request = msg.request
        subtype = request.get("subtype")
        try:
            if subtype == "can_use_tool":
                self._start_approval(msg.request_id, request, control)
            elif subtype == "hook_callback":
                await control.answer(msg.request_id, {})
            elif subtype == "mcp_message":
                # A task, like approvals: a long tools/call must not stop the reader, which
                # has to pass on the CLI's notifications/cancelled when the turn is interrupted.
                task = asyncio.get_running_loop().create_task(self._on_mcp_message(msg.request_id, request, control))
                self._approval_tasks.add(task)
                task.add_done_callback(self._approval_tasks.discard)
            else:
                self._emit(ev.Unknown(raw=msg.model_dump(), reason=f"unsupported control_request {subtype!r}"))
                await control.answer_error(msg.request_id, f"kandev-nb does not support {subtype!r}")
        except TransportClosedError:
            pass

    async def _on_mcp_message(self, request_id: str, request: dict[str, Any], control: ControlPlane) -> None:
        server = self.config.mcp_servers.get(str(request.get("server_name")))
        message = request.get("message") or {}
        if server is None:
            await control.answer_error(request_id, f"no in-process MCP server named {request.get('server_name')!r}")
            return
        refusal = None
        if isinstance(message, dict) and message.get("method") == "tools/call":
            refusal = await self._authorize_tool_call(str(request.get("server_name")), server, message)
        if refusal is not None:
            reply: dict[str, Any] = {"jsonrpc": "2.0", "id": message.get("id"), "result": {
                "content": [{"type": "text", "text": refusal}], "isError": True}}
        else:
            reply = await server.handle(message)
        with contextlib.suppress(TransportClosedError):
            await control.answer(request_id, {"mcp_response": reply})

    async def _authorize_tool_call(self, server_name: str, server: Any, message: dict[str, Any]) -> str | None:
        """Whether an in-process MCP `tools/call` may run: None if so, else the refusal text.

        A tool the server marks as read-only (``server.needs_approval(name)`` false) or one
        in ``allowed_tools`` runs. Any other one runs only if a can_use_tool for the same
        ``mcp__<server>__<tool>`` and `tool_use_id` (``params._meta["claudecode/toolUseId"]``)
        was allowed (each allow is used once), or the tool was allowed for the session;
        otherwise a person is asked here, with the same PermissionRequest card (the policy
        answers first if it can), in every mode, and no answer within `approval_timeout`
        (else :data:`UNASKED_TOOL_TIMEOUT_S`) denies it. The CLI normally asks first; a
        call that arrives unasked is a peer we should not trust blindly.
        """
        raw = message.get("params")
        params: dict[str, Any] = raw if isinstance(raw, dict) else {}
        name = str(params.get("name") or "")
        full = f"mcp__{server_name}__{name}"
        needs = getattr(server, "needs_approval", None)
        if (callable(needs) and not needs(name)) or full in self.config.allowed_tools or full in self._session_tools:
            return None
        meta = params.get("_meta")
        tool_use_id = meta.get("claudecode/toolUseId") if isinstance(meta, dict) else None
        tool_use_id = tool_use_id if isinstance(tool_use_id, str) else None
        if tool_use_id is not None and self._granted.pop(tool_use_id, None) == full:
            return None
        arguments = params.get("arguments")
        arguments = arguments if isinstance(arguments, dict) else {}
        if tool_use_id is not None:
            self._asked.add(tool_use_id)  # its result is not "ran without a request"
        approval = self._open_approval(
            f"mcp:{uuid.uuid4().hex}", full, dict(arguments), tool_use_id,
            title=f"{full} (called without a permission request)",
            reason="Claude Code called this tool without asking first (no allowed can_use_tool covered it).",
        )
        timeout = self.config.approval_timeout if self.config.approval_timeout is not None else UNASKED_TOOL_TIMEOUT_S
        decision = await self._decide(approval, timeout)
        if decision.behavior == "allow" and decision.updated_input is not None:
            params["arguments"] = decision.updated_input
        return None if decision.behavior == "allow" else (
            f"Permission to use {full} was denied: {decision.message or 'denied by the user'}")

    def _open_approval(
        self, request_id: str, tool_name: str, tool_input: dict[str, Any], tool_use_id: str | None, *,
        title: str, reason: Any = None, blocked: Any = None, suggestions: Any = None,
    ) -> Approval:
        """Register an :class:`Approval`, let the policy answer if it can, and show its card."""
        approval = Approval(
            request_id, tool_name, tool_input, tool_use_id=tool_use_id, suggestions=suggestions,
            timeout_s=self.config.approval_timeout,
        )
        self.approvals[request_id] = approval
        payload = self.adapter.tool_payload(tool_name, tool_input, tool_use_id)
        event = ev.PermissionRequest(
            request_id=request_id, tool_name=tool_name, tool_use_id=tool_use_id, input=tool_input, title=title,
            reason=reason, blocked_path=str(blocked) if blocked else None,
            normalized=payload, approval=approval, session_id=self.session_id,
        )
        policy = self._turn_policy or self.config.approve
        if tool_name == QUESTION_TOOL:  # issue 19: a question card, answered by a person or `answer`
            policy = None
            prepare_question(approval, self.config.answer)
        if policy is not None:
            try:
                answer = policy(tool_name, tool_input)
                note_of = getattr(policy, "note", None)
                note = str(note_of(tool_name, tool_input) or "") if answer == "allow" and callable(note_of) else ""
            except Exception as exc:  # noqa: BLE001 - a broken policy asks a person instead
                log.warning("approval policy raised %r; asking instead", exc)
                answer, note = None, ""
            if answer == "allow":
                approval.allow(by="policy", note=note)
            elif answer == "deny":
                approval.deny(f"Denied by the notebook's approval policy for {tool_name}.", by="policy")
        self._emit(event)
        return approval

    def _start_approval(self, request_id: str, request: dict[str, Any], control: ControlPlane) -> None:
        tool_name = str(request.get("tool_name") or "unknown")
        raw_input = request.get("input")
        tool_input: dict[str, Any] = raw_input if isinstance(raw_input, dict) else {}
        tool_use_id = request.get("tool_use_id")
        if isinstance(tool_use_id, str):
            self._asked.add(tool_use_id)
        approval = self._open_approval(
            request_id, tool_name, tool_input, tool_use_id if isinstance(tool_use_id, str) else None,
            title=str(request.get("description") or request.get("display_name") or tool_name),
            reason=request.get("decision_reason"), blocked=request.get("blocked_path") or request.get("blocked_paths"),
            suggestions=request.get("permission_suggestions"),
        )
        task = asyncio.get_running_loop().create_task(self._finish_approval(approval, control))
        self._approval_tasks.add(task)
        task.add_done_callback(self._approval_tasks.discard)

    async def _decide(self, approval: Approval, timeout: float | None) -> Decision:
        """Wait for the one decision of `approval` and report it (PermissionDecided)."""
        try:
            decision: Decision = await approval.wait(timeout)
        except Exception:  # never leave the CLI waiting: a broken wait denies
            log.exception("kandev_nb approval wait failed; denying")
            approval.deny("kandev-nb could not wait for an answer; denied.", by="timeout")
            decision = await approval.wait(None)
        finally:
            self.approvals.pop(approval.request_id, None)
        self._last_activity = time.monotonic()
        if decision.decided_by != "cancelled":
            if decision.updated_permissions and decision.suggestion is None:  # a saved suggestion is no session rule
                self._session_tools.add(approval.tool_name)
            self._emit(ev.PermissionDecided(
                request_id=approval.request_id, tool_name=approval.tool_name, behavior=decision.behavior,
                decided_by=decision.decided_by, waited_ms=decision.waited_ms, message=decision.message,
                note=decision.note, tool_use_id=approval.tool_use_id, session_id=self.session_id,
            ))
        return decision

    async def _finish_approval(self, approval: Approval, control: ControlPlane) -> None:
        """Wait for the one decision of `approval`, report it, then send it to the CLI.

        The PermissionDecided event goes out before the answer, so it always precedes what
        the CLI does next. A request the CLI withdrew (decided_by "cancelled") was already
        reported as PermissionCancelled by :meth:`_withdraw` and gets no answer. An allowed
        ``mcp__*`` tool is remembered by its `tool_use_id`, so its `tools/call` runs unasked.
        """
        decision = await self._decide(approval, self.config.approval_timeout)
        if decision.decided_by != "cancelled":
            if decision.behavior == "allow" and approval.tool_use_id and approval.tool_name.startswith("mcp__"):
                self._granted[approval.tool_use_id] = approval.tool_name
            with contextlib.suppress(TransportClosedError):
                await control.answer(approval.request_id, decision.to_wire(approval.tool_input))

    # -- turns ----------------------------------------------------------------------------

    async def run(
        self,
        prompt: str | list[dict[str, Any]],
        *,
        consumers: Iterable[Consumer] = (),
        approve: ApprovalPolicy | None = None,
        turn: Turn | None = None,
    ) -> Turn:
        """Send `prompt` and wait for the turn to end.

        Args:
            prompt: text, or a list of content blocks (text/image) for the user message.
            consumers: called with every event in order; exceptions are logged and ignored.
            approve: an approval policy for this turn only (else the session's).
            turn: a :class:`Turn` to fill (else a new one).

        Returns:
            The finished :class:`Turn`. A failed turn is returned too (``turn.error``);
            a cancelled await (the kernel's interrupt) sends the protocol's `interrupt`,
            waits for the CLI's interrupted result and returns normally.

        Raises:
            TurnInProgressError: another turn of this session is running.
            CLINotFoundError, CLIProcessError: the CLI could not be started.
        """
        if self._lock.locked():
            raise TurnInProgressError("a turn is already running in this session")
        async with self._lock:
            await self.start()
            turn = turn or Turn(prompt=prompt if isinstance(prompt, str) else _text_of(prompt), session_name=self.name)
            turn.cli_version, turn.cwd = self.cli_version, self.cwd
            turn.mode, turn.model = self.config.mode, self.model or self.config.model
            sinks = [turn.add_now, *consumers]
            self._turn_policy = approve
            self._queue = asyncio.Queue()
            for event in self._backlog:
                if not isinstance(event, ev.Complete):  # a previous turn's end never ends this one
                    self._queue.put_nowait(event)
            self._backlog.clear()
            self.state = SessionState.RUNNING
            self.turns.append(turn)
            try:
                assert self.transport is not None
                try:
                    await self.transport.send(user_message(prompt, self.session_id or ""))
                except TransportClosedError:
                    pass  # the reader reports the exit as this turn's error
                self._last_activity = time.monotonic()
                await self._pump(turn, sinks)
            finally:
                self._queue = None
                self._turn_policy = None
                if self.state is SessionState.RUNNING:
                    self.state = SessionState.READY
            return turn

    async def _pump(self, turn: Turn, sinks: list[Consumer]) -> None:
        """Deliver the turn's events to `sinks` until its Complete; watch the turn timer.

        The turn timer: when no message came from the CLI for `inactivity_timeout` seconds
        (and no approval is waiting), an Error with subtype "inactivity_timeout" is sent and
        the turn is interrupted. A cancellation of this task (the kernel's interrupt) is
        absorbed (``uncancel``) and becomes the protocol's `interrupt`; the turn then ends
        with the CLI's interrupted result. If the CLI has not ended the turn
        :data:`INTERRUPT_GRACE_S` seconds after an interrupt, the process is closed and the
        turn ends with an Error (subtype "interrupt_timeout"); the next turn resumes.
        """
        assert self._queue is not None
        self._interrupted_at = None
        self.background.reset()
        while not turn.done or self.background.holds(turn):
            try:
                if self._queue.empty():  # wait (a timer per wait, not per event: a pipe read brings many)
                    event = await asyncio.wait_for(self._queue.get(), 1.0)
                else:
                    event = self._queue.get_nowait()
            except TimeoutError:
                if self._interrupted_at is not None and time.monotonic() - self._interrupted_at > INTERRUPT_GRACE_S:
                    self._dispatch(ev.Error(
                        message=f"Claude Code did not end the turn within {INTERRUPT_GRACE_S:g} s of the interrupt; "
                                "its process was closed (the next cell resumes the conversation).",
                        subtype="interrupt_timeout", session_id=self.session_id), sinks)
                    self._dispatch(ev.Complete(stats=ev.TurnStats(
                        session_id=self.session_id, result_subtype="interrupted", is_error=True),
                        last_message_uuid=self.adapter.last_message_uuid, session_id=self.session_id), sinks)
                    await self._teardown()
                    break
                limit = self.config.inactivity_timeout
                idle = time.monotonic() - self._last_activity
                if limit and self._interrupted_at is None and not self.approvals and idle > limit and not turn.done:
                    self._dispatch(ev.Error(
                        message=f"No message from Claude Code for {idle:.0f} s (limit {limit:g} s, "
                                "configure(inactivity_timeout=...)); the turn was interrupted.",
                        subtype="inactivity_timeout", session_id=self.session_id), sinks)
                    self._begin_interrupt(turn)
                continue
            except asyncio.CancelledError:
                task = asyncio.current_task()
                if task is not None:
                    task.uncancel()
                self._begin_interrupt(turn)
                continue
            if isinstance(event, ev.Complete) and turn.done and turn.stats is not None:  # a background follow-up
                event = event.model_copy(update={"stats": merge_stats(turn.stats, event.stats)})
            self.background.note(event)
            self._dispatch(event, sinks)

    def _dispatch(self, event: ev.AgentEvent, sinks: list[Consumer]) -> None:
        for sink in sinks:
            try:
                sink(event)
            except Exception:
                log.exception("kandev_nb consumer %r failed on %s", sink, event.type)

    def _begin_interrupt(self, turn: Turn | None) -> None:
        """Mark `turn` interrupted and send the protocol's `interrupt` once, in the background."""
        if turn is not None and not turn.done:
            turn.interrupted = True
            if self._interrupted_at is None:
                self._interrupted_at = time.monotonic()
        if self._interrupt_task is None or self._interrupt_task.done():
            self._interrupt_task = asyncio.get_running_loop().create_task(self._interrupt_and_settle())

    async def _interrupt_and_settle(self) -> None:
        # The CLI withdraws each waiting can_use_tool (control_cancel_request, which closes
        # its card) before it answers the interrupt; anything still open after the answer
        # is denied so the CLI is never left waiting.
        if self.control is not None:
            with contextlib.suppress(Exception):
                await self.control.request("interrupt", timeout=10)
        for approval in list(self.approvals.values()):
            approval.deny("The user interrupted the turn.", interrupt=True)

    async def interrupt(self) -> None:
        """Stop the running turn with the protocol's `interrupt` (the Stop button).

        Waiting approvals are withdrawn by the CLI (PermissionCancelled). The turn ends with
        the CLI's interrupted result (`error_during_execution`); the process and the
        conversation stay for the next turn. A no-op between turns. Returns once the CLI
        answered the interrupt (at most 10 s).
        """
        if self.turns and self.background.holds(self.turns[-1]):  # issue 19: the turn waits for background work
            await self.stop_background()
            return
        turn = self.turns[-1] if self.turns and not self.turns[-1].done else None
        if turn is None or self.state is not SessionState.RUNNING:
            return
        self._begin_interrupt(turn)
        if self._interrupt_task is not None:
            await asyncio.shield(self._interrupt_task)

    async def set_mode(self, mode: str) -> None:
        """Change the permission mode of the live session, without a restart.

        Sends the control request ``set_permission_mode`` to the running CLI (same process,
        same conversation); the CLI then reports ``system/status`` with ``permissionMode``,
        which reaches the next turn as a SessionMode event. Before the first turn it only
        changes the mode the process will be started in.

        The one exception is switching to "autonomous" a process that was not started in it:
        the CLI refuses that ("the session was not launched with
        --dangerously-skip-permissions"), so the process is closed and the next turn starts
        a new one in bypassPermissions mode that resumes the conversation (``--resume``).

        Raises:
            ValueError, RootBypassError: see :func:`kandev_nb.agent.permissions.cli_permission_mode`.
            ControlError: the CLI refused the mode.
            ControlTimeoutError: the CLI did not answer within 30 s.
        """
        cli_mode = cli_permission_mode(mode, allow_root_bypass=self.config.allow_root_bypass)
        if self.control is None or self.state is SessionState.NEW:
            self.config.mode = mode
            return
        if cli_mode == "bypassPermissions" and self._launched_mode != "bypassPermissions":
            if self.state is SessionState.RUNNING:
                raise TurnInProgressError("autonomous mode needs a new CLI process; switch between turns")
            self.config.mode = mode
            await self._teardown()
            return
        await self.control.request("set_permission_mode", mode=cli_mode, timeout=30)
        self.config.mode = mode

    async def stream(self, prompt: str, **kwargs: Any) -> AsyncIterator[ev.AgentEvent]:
        """Run a turn and yield its events as they come (the same ones consumers get)."""
        queue: asyncio.Queue[ev.AgentEvent | None] = asyncio.Queue()
        consumers = [*kwargs.pop("consumers", ()), queue.put_nowait]
        task = asyncio.get_running_loop().create_task(self.run(prompt, consumers=consumers, **kwargs))
        task.add_done_callback(lambda _: queue.put_nowait(None))
        try:
            while (event := await queue.get()) is not None:
                yield event
            await task
        finally:
            if not task.done():
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task


def _text_of(blocks: list[dict[str, Any]]) -> str:
    return "\n".join(str(b.get("text", "")) for b in blocks if b.get("type") == "text")
