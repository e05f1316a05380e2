"""A `Session`: one Claude Code conversation, one CLI process at a time, many turns.

>>> session = Session(cwd="project")
>>> turn = await session.run("Fix the failing test")       # doctest: +SKIP
>>> async for event in session.stream("And now explain"):  # doctest: +SKIP
...     print(event.type)

The Session owns the conversation: turns, resume, fork, retry, the inactivity timer,
interrupts and mode changes. The live process is a :class:`~kandev_nb.agent.connection.CLIConnection`
(transport, reader task, control routing, MCP dispatch); every approval goes through the
session's :class:`~kandev_nb.agent.approvals.ApprovalBroker`. Each turn's events go to the
consumers given to :meth:`Session.run` through a fan-out that isolates failures (a broken
consumer is logged and skipped, it never stops the turn).

Lifecycle (:class:`SessionState`): NEW -> READY (process up, initialize answered) ->
RUNNING (a turn) -> READY ... -> CLOSED. If the CLI dies, the state returns to NEW and the
next turn starts a new process with ``--resume <session_id>``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import subprocess
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any, Self

from kandev_nb.agent import events as ev
from kandev_nb.agent.adapter import Adapter
from kandev_nb.agent.approvals import NO_APPROVAL_NOTE, UNASKED_TOOL_TIMEOUT_S, ApprovalBroker
from kandev_nb.agent.background import BackgroundWatch
from kandev_nb.agent.config import UNSET, SessionConfig, Unset, check_seconds
from kandev_nb.agent.connection import CLIConnection
from kandev_nb.agent.controls import CHECKPOINT_ARGS, LiveControls, with_mcp_failures
from kandev_nb.agent.hooks import HookRegistry, hooks_key
from kandev_nb.agent.interrupts import TurnControls
from kandev_nb.agent.mirror import TranscriptMirrorBatcher
from kandev_nb.agent.origin import Origin
from kandev_nb.agent.permissions import Approval, ApprovalPolicy, mode_from_cli
from kandev_nb.agent.pump import Consumer, TurnPump
from kandev_nb.agent.session_store import materialize
from kandev_nb.agent.state import SessionState
from kandev_nb.agent.structured import OutputSpec, fill_output, mark_wrapped
from kandev_nb.agent.subagents import SessionMessage, SubagentInfo, get_subagent_messages, list_subagents, subagent_info
from kandev_nb.agent.tools import normalize_tool_call
from kandev_nb.agent.transcript import NO_MESSAGE, find_transcript, last_cost_state, resume_rejected
from kandev_nb.agent.turn import Turn
from kandev_nb.agent.usage import UsageMeter
from kandev_nb.errors import CLINotFoundError, CLIProcessError, SessionClosedError, TurnInProgressError
from kandev_nb.redact import known_secrets
from kandev_nb.wire.cli import (
    LaunchOptions,
    build_argv,
    cli_version,
    find_cli,
    process_env,
    resume_drops_turn_supported,
)
from kandev_nb.wire.control import ControlPlane
from kandev_nb.wire.protocol import (
    HUMAN_ORIGIN,
    ResultMessage,
    TranscriptMirror,
    UserMessage,
    WireMessage,
    user_message,
)
from kandev_nb.wire.transport import StdioTransport, Transport, TransportClosedError

__all__ = [
    "NO_APPROVAL_NOTE",
    "UNASKED_TOOL_TIMEOUT_S",
    "UNSET",
    "Consumer",
    "Session",
    "SessionClosedError",
    "SessionConfig",
    "SessionState",
    "TurnInProgressError",
]

log = logging.getLogger("kandev_nb")

TransportFactory = Callable[[list[str], dict[str, str], str], Transport]


class Session(LiveControls, TurnControls, TurnPump):  # controls.py, interrupts.py, pump.py
    """One conversation with Claude Code.

    Args:
        config: a :class:`SessionConfig`; keyword arguments override its fields (checked
            as SessionConfig checks them: TypeError / ValueError).
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
        self._config = replace(config or SessionConfig(), **overrides)
        self.name = name
        self.state = SessionState.NEW
        self.adapter = Adapter(resumed=bool(self._config.resume))
        self.broker = ApprovalBroker(
            self._emit,
            self.adapter.tool_payload,
            lambda: self.session_id,
            policy=self._config.approve,
            timeout=self._config.approval_timeout,
            allowed_tools=self._config.allowed_tools,
            cwd=lambda: self.cwd,
        )
        self.broker.answer = self._config.answer
        self.broker.on_card = self.adapter.tool_calls.__setitem__  # a card's cell is the tool card's (issue 23)
        self.broker.on_edited = self._note_edited  # an edited input's card shows what ran
        self.background = BackgroundWatch()  # a turn stays open for its background tasks
        self.connection: CLIConnection | None = None
        self.cli_path: Path | None = None
        self.cli_version: str | None = None
        self.commands: tuple[ev.SlashCommand, ...] = ()
        self.model: str | None = None  # the model `system/init` named for the live process
        self.turns: list[Turn] = []
        self._transport_factory = transport_factory
        self._saved = bool(self._config.resume)
        self._backlog: list[ev.AgentEvent] = []
        self._queue: asyncio.Queue[ev.AgentEvent] | None = None
        self._last_activity = time.monotonic()
        self._lock = asyncio.Lock()
        self._launched: LaunchOptions | None = None  # what the live (or last) process started with
        self._launched_hooks: tuple[Any, ...] = ()  # and its hooks (hooks_key)
        self._output: OutputSpec | None = None  # the running turn's structured output, if asked
        self._interrupt_task: asyncio.Task[None] | None = None
        self._interrupted_at: float | None = None  # monotonic time of the running turn's interrupt
        self.launch_note: str | None = None  # one line when a launch had to fall back (see start)
        store = self._config.session_store  # transcripts mirrored to it (agent/session_store.py)
        self.mirror = TranscriptMirrorBatcher(store) if store is not None else None

    # -- properties -----------------------------------------------------------------------

    @property
    def config(self) -> SessionConfig:
        """The session's :class:`SessionConfig`; `mode` follows the live mode (set_mode and
        the CLI's `system/status`), each change being a new frozen copy."""
        return self._config

    @property
    def session_id(self) -> str | None:
        """The CLI's session_id (from `system/init` and every later message)."""
        return self.adapter.session_id or self._config.resume

    @property
    def cwd(self) -> str:
        """The working directory the CLI runs in."""
        return str(Path(self._config.cwd or os.getcwd()).resolve())

    @property
    def pid(self) -> int | None:
        """The CLI's process id, if it runs as a local child."""
        return self.connection.pid if self.connection is not None else None

    @property
    def transport(self) -> Transport | None:
        """The live process's transport (None without one)."""
        return self.connection.transport if self.connection is not None else None

    @property
    def control(self) -> ControlPlane | None:
        """The live process's control plane (None without one)."""
        return self.connection.control if self.connection is not None else None

    @property
    def approvals(self) -> dict[str, Approval]:
        """The approvals waiting for an answer, by request_id."""
        return self.broker.approvals

    @property
    def launch_options(self) -> LaunchOptions:
        """The :class:`~kandev_nb.wire.cli.LaunchOptions` the live (or last) process was
        started with; before the first start, those of :attr:`config`."""
        return self._launched or self._config.launch_options()

    def _set_mode(self, mode: str, **changes: Any) -> None:
        self._config = replace(self._config, mode=mode, **changes)

    # -- lifecycle ------------------------------------------------------------------------

    @property
    def resume_point(self) -> str | None:
        """The message uuid a new process of this conversation resumes at
        (``--resume-session-at``): the last message committed so far
        (:attr:`Adapter.last_message_uuid`), else the one this session was started at. After a
        ``--retry`` the transcript branches, and a plain ``--resume`` took the failed branch."""
        c = self._config
        return self.adapter.last_message_uuid or (None if c.fork else c.resume_session_at)

    def _next_launch(self) -> LaunchOptions:
        """The options of the next process: the config's, resuming our own conversation once
        the CLI has saved it (a CLI killed in its first moments leaves nothing to resume,
        and --resume would fail), at :attr:`resume_point`."""
        c = self._config
        own = self.adapter.session_id
        saved = own and (self._saved or find_transcript(c.env, own) is not None)
        resume = (own if saved else None) or c.resume
        original = resume == c.resume
        fork = c.fork and original
        first = original and resume and not self.adapter.last_message_uuid  # drops_turn: the first process only
        drops = c.resume_drops_turn if first else None
        if drops and not resume_drops_turn_supported(self.cli_version):  # an older CLI stops at the flag
            drops = None
            self.launch_note = (
                f"Claude Code {self.cli_version} cannot check that the resume drops only the failed turn "
                "(--resume-drops-turn needs 2.1.332): it resumed before that turn without the check."
            )
        return c.launch_options(
            resume=resume,
            resume_session_at=(c.resume_session_at if fork else self.resume_point) if resume else None,
            resume_drops_turn=drops,
            fork_session=fork,
            json_schema=self._output.schema_json if self._output else None,
        )

    async def start(self) -> None:
        """Launch the CLI and send `initialize`; no-op if already running.

        Raises:
            CLINotFoundError: no binary found.
            CLIProcessError: the CLI exited before answering initialize (with its stderr).
            ResumeRejectedError: with ``resume_drops_turn``, the CLI refused to drop what lies
                after ``resume_session_at`` (more than that turn); the session stays NEW.
            SessionClosedError: after :meth:`close`.
        """
        if self.state is SessionState.CLOSED:
            raise SessionClosedError("this session is closed")
        if self.state is not SessionState.NEW:
            return
        try:
            self.cli_path = find_cli(self._config.cli_path)
            self.cli_version = await asyncio.to_thread(cli_version, self.cli_path)
        except CLINotFoundError:
            if self._transport_factory is None:
                raise
            # A custom transport (a replay, a remote CLI) may need no local binary.
            self.cli_path, self.cli_version = Path("claude"), None
        except (OSError, RuntimeError, subprocess.SubprocessError) as exc:  # not executable, no version...
            raise CLIProcessError(
                f"{self.cli_path or self._config.cli_path} does not run as Claude Code: {exc}", None, ""
            ) from exc
        if self.adapter.session_id:  # a previous process of this session died: resume it
            self.adapter.new_process()
        self.broker.new_process()
        options = self._next_launch()
        try:
            await self._launch(options)
        except CLIProcessError as exc:
            if (rejected := resume_rejected(exc, options)) is not exc:  # it would drop more than that turn
                self._backlog = [e for e in self._backlog if not isinstance(e, ev.Error | ev.Complete)]
                raise rejected from exc
            if not options.resume_session_at or NO_MESSAGE not in str(exc):
                raise
            # The transcript lacks that message: resume the conversation where it ends.
            self.launch_note = (
                "Claude Code could not resume at the last good message; "
                "it resumed the conversation where its transcript ends."
            )
            await self._launch(replace(options, resume_session_at=None, resume_drops_turn=None))  # drops nothing

    async def _launch(self, options: LaunchOptions) -> None:
        """Start one process with `options`, its cumulative figures counted from what it
        restores (the transcript's last ``cost-state``, :meth:`UsageMeter.resumed`), and
        send `initialize`. Raises as :meth:`start`."""
        assert self.cli_path is not None
        if options.resume and self._config.session_store is not None:  # not on this machine: from the store
            await asyncio.to_thread(materialize, self._config.session_store, options.resume, self.cwd, options.env)
        self.adapter.usage = UsageMeter.resumed(
            last_cost_state(self._config.env, options.resume) if options.resume else None
        )
        factory = self._transport_factory or (lambda a, e, c: StdioTransport(a, e, c))
        env = process_env(options)
        transport = factory(build_argv(self.cli_path, options), env, self.cwd)
        connection = CLIConnection(
            transport,
            self.broker,
            mcp_servers=self._config.mcp_servers,
            feed=self.adapter.feed,
            on_message=self._on_message,
            on_event=self._emit,
            on_exit=self._on_exit,
            file_guard=self._config.file_guard,
            hooks=HookRegistry(self._config.hooks),
            session_id=lambda: self.session_id,
            secrets=known_secrets(env),  # masked in its output and, by a hook, in what the model reads
            agents=options.agents,
            forward_subagent_text=options.forward_subagent_text,
        )
        self.connection, self._launched = connection, options
        self._launched_hooks = hooks_key(self._config.hooks)
        try:
            response = await connection.start(self._config.initialize_timeout)
        except BaseException:
            if self.connection is connection:
                self.connection = None
            raise
        self.commands = tuple(
            ev.SlashCommand(
                name=c.get("name", ""), description=c.get("description", ""), argument_hint=c.get("argumentHint", "")
            )
            for c in response.get("commands") or []
            if isinstance(c, dict)
        )
        self._backlog.append(ev.AvailableCommands(commands=self.commands))
        self.state = SessionState.READY

    async def _teardown(self) -> None:
        connection, self.connection = self.connection, None
        if connection is not None:
            await connection.close()
        if self.mirror is not None:  # the entries the CLI printed as it exited
            await self.mirror.flush()
        if self.state is not SessionState.CLOSED:
            self.state = SessionState.NEW

    async def stop_process(self) -> None:
        """End the live CLI process between turns and keep the session (its next turn starts
        a process that resumes the conversation). The process saves its running totals on
        exit (the transcript's ``cost-state``), which a process resuming the conversation
        restores: stop it before starting the one that replaces it."""
        if self.state is SessionState.READY:
            await self._teardown()

    async def close(self) -> None:
        """End the CLI (stdin EOF, then TERM, then KILL, bounded) and close the session."""
        self.broker.withdraw_all()
        await self._teardown()
        self.state = SessionState.CLOSED

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # -- what the connection reports ------------------------------------------------------

    def _on_message(self, msg: WireMessage | None, events: list[ev.AgentEvent]) -> None:
        """One wire message's events from :meth:`Adapter.feed` (message None: merged deltas)."""
        if isinstance(msg, TranscriptMirror):
            if self.mirror is not None:
                self.mirror.enqueue(msg.file_path, msg.entries)
            return
        raw = getattr(msg, "raw", None) or {}
        self.background.note_raw(raw)
        events = with_mcp_failures(events, raw)
        if self._output is not None and self._output.wrapped:  # the card shows the answer, not our wrapper
            events = [mark_wrapped(e, self._output) for e in events]
        if isinstance(msg, UserMessage):
            self.note_replay(msg.raw)  # the prompt's uuid, for rewind_files
            events = self.broker.note_unasked(msg.raw, events, self._config.mode)
        elif isinstance(msg, ResultMessage) and not any(isinstance(e, ev.Complete) for e in events):
            events = [*events, *self._unreadable_result()]
        for event in events:
            if isinstance(event, ev.SessionMode):
                mode = mode_from_cli(event.mode)
                if mode is not None and mode != self._config.mode:
                    with contextlib.suppress(ValueError, TypeError):  # e.g. bypass as root without opt-in
                        self._set_mode(mode)
            elif isinstance(event, ev.SessionStatus) and event.model:
                self.model = event.model
            elif isinstance(event, ev.Complete):
                self._saved = True  # a finished turn: the CLI has written the transcript
            self._emit(event)

    def _on_exit(self, connection: CLIConnection) -> None:
        """The process's output ended: back to NEW; a running turn ends with cli_exited."""
        if self.state is not SessionState.CLOSED and self.connection is connection:
            self.state = SessionState.NEW
            self.connection = None
        if self._queue is not None:
            transport = connection.transport
            code = transport.exit_code
            stderr = transport.stderr_tail.strip()
            message = f"Claude Code exited mid-turn with exit code {code}" + (f": {stderr[-2000:]}" if stderr else "")
            sid, uuid = self.session_id, self.adapter.last_message_uuid
            for event in ev.failed_turn(
                message, "cli_exited", session_id=sid, last_message_uuid=uuid, exit_code=code, stderr=stderr
            ):
                self._emit(event)

    def _note_edited(self, tool_use_id: str, tool_name: str, tool_input: dict[str, Any]) -> None:
        """An input edited before Allow: the call's payload (its card's, its ToolUpdate's) is the one that ran."""
        self.adapter.tool_calls[tool_use_id] = normalize_tool_call(tool_name, tool_input)
        self.adapter.tool_inputs[tool_use_id] = tool_input

    def _unreadable_result(self) -> list[ev.AgentEvent]:
        """A `result` the adapter could not read still ends the turn (the raw line is in an
        `unknown` event just before): an error, then a Complete without figures."""
        message = "kandev-nb could not read the CLI's result message; the turn ended without figures"
        sid, uuid = self.session_id, self.adapter.last_message_uuid
        return list(ev.failed_turn(message, "unreadable_result", session_id=sid, last_message_uuid=uuid))

    def _emit(self, event: ev.AgentEvent) -> None:
        if self._queue is not None:
            self._queue.put_nowait(event)
        else:
            self._backlog.append(event)

    def _idle_s(self) -> float:
        """Seconds since the CLI's latest message, our latest send or the latest decision."""
        latest = max(
            self._last_activity,
            self.broker.last_decided,
            self.connection.last_activity if self.connection is not None else 0.0,
        )
        return time.monotonic() - latest

    # -- turns ----------------------------------------------------------------------------

    async def run(
        self,
        prompt: str | list[dict[str, Any]],
        *,
        consumers: Iterable[Consumer] = (),
        approve: ApprovalPolicy | None = None,
        approval_timeout: float | None | Unset = UNSET,
        turn: Turn | None = None,
        output_type: Any = None,
        origin: Origin | None = None,
    ) -> Turn:
        """Send `prompt` and wait for the turn to end.

        Args:
            prompt: text, or a list of content blocks (text/image) for the user message.
            consumers: called with every event in order; exceptions are logged and ignored.
            approve: an approval policy for this turn only (else the session's).
            approval_timeout: seconds this turn's approvals wait before they are denied
                (None: forever); the session's ``approval_timeout`` if not given.
            turn: a :class:`Turn` to fill (else a new one).
            output_type: ask for a structured answer of this type (pydantic model, dataclass,
                TypedDict, ``list[Model]``, JSON-schema dict); ``turn.output`` holds it. The
                CLI takes the schema only at launch (``--json-schema``), so a turn whose
                schema differs from the process's restarts the CLI, resuming.
            origin: which cell or fleet row sends the prompt (default ``Origin()``, kind
                "python"), kept as ``turn.origin``. The prompt goes with a new `uuid`
                (``turn.prompt_uuid``) and the origin ``{"kind": "human"}``, which the result
                names again (``turn.origin_echoed``; :mod:`kandev_nb.agent.origin`).

        Returns:
            The finished :class:`Turn`. A failed turn is returned too (``turn.error``);
            a cancelled await (the kernel's interrupt) sends the protocol's `interrupt`,
            waits for the CLI's interrupted result and returns normally.

        Raises:
            TypeError: `approval_timeout` is not a non-negative number or None.
            TurnInProgressError: another turn of this session is running.
            CLINotFoundError, CLIProcessError: the CLI could not be started.
            StructuredOutputError, NoStructuredOutputError: with `output_type`, the answer
                did not validate / there was none (``exc.turn`` is the finished turn).
        """
        if approval_timeout is not UNSET:
            check_seconds("approval_timeout", approval_timeout)
        if self._lock.locked():
            raise TurnInProgressError("a turn is already running in this session")
        async with self._lock:
            self._output = OutputSpec.of(output_type) if output_type is not None else None
            schema = self._output.schema_json if self._output else None
            if (
                self.state is SessionState.READY
                and self._launched is not None
                and (self._launched.json_schema != schema or self._launched_hooks != hooks_key(self._config.hooks))
            ):
                await self._teardown()  # a new schema or new hooks: a new process, resuming
            await self.start()
            turn = turn or Turn(prompt=prompt if isinstance(prompt, str) else _text_of(prompt), session_name=self.name)
            turn.cli_version, turn.cwd = self.cli_version, self.cwd
            turn.mode, turn.model = self._config.mode, self.model or self._config.model
            turn.prompt_uuid, turn.origin = str(uuid.uuid4()), origin or turn.origin or Origin()
            sinks = [turn.add_now, *consumers]
            self.broker.begin_turn(
                approve,
                timeout=None if isinstance(approval_timeout, Unset) else approval_timeout,
                has_timeout=approval_timeout is not UNSET,
            )
            self._queue = asyncio.Queue()
            for event in self._backlog:
                if not isinstance(event, ev.Complete):  # a previous turn's end never ends this one
                    self._queue.put_nowait(event)
            self._backlog.clear()
            self.state = SessionState.RUNNING
            turn.meta.setdefault("retry_at", self.resume_point)  # where --retry resumes if this turn fails
            self.turns.append(turn)
            try:
                assert self.connection is not None
                try:
                    sid = self.session_id or ""
                    await self.connection.send(user_message(prompt, sid, uuid=turn.prompt_uuid, origin=HUMAN_ORIGIN))
                except TransportClosedError:
                    pass  # the reader reports the exit as this turn's error
                self._last_activity = time.monotonic()
                await self._pump(turn, sinks)
                if self.mirror is not None:  # the store holds the turn once the cell has its answer
                    await self.mirror.flush()
            finally:
                self._queue = None
                self.broker.end_turn()
                self.note_turn_end(turn)  # the files it wrote, for %claude_undo's check
                if self.state is SessionState.RUNNING:
                    self.state = SessionState.READY
            if self._output is not None:
                fill_output(turn, self._output)
            return turn

    def adopt_live(self, **changes: Any) -> None:
        """Record a change the live process took without a restart (``model`` after
        ``set_model``, ``extra_args`` after ``set_max_thinking_tokens``) in the config and in
        :attr:`launch_options`, so the next cell sees the same process."""
        self._config = replace(self._config, **changes)
        if self._launched is not None:
            launched = dict(changes)
            if "extra_args" in launched and self._config.file_checkpoints:
                launched["extra_args"] = (*launched["extra_args"], *CHECKPOINT_ARGS)
            self._launched = replace(self._launched, **launched)

    def subagents(self) -> list[SubagentInfo]:
        """The subagents this session started, from their transcripts' sidecars (each one's
        `agent_id` and the Agent call that started it, `tool_use_id`), sorted by id: the local
        files of this session's CLI, else its :class:`SessionStore`'s copy. [] before the first
        turn (:func:`~kandev_nb.agent.subagents.list_subagents`)."""
        where = self._transcripts()
        infos = (
            subagent_info(self.session_id or "", a, **where) for a in list_subagents(self.session_id or "", **where)
        )
        return [info for info in infos if info is not None]

    def subagent_messages(self, agent_id: str, **paging: Any) -> list[SessionMessage]:
        """The messages of subagent `agent_id` of this session (:meth:`subagents`), in order;
        `paging`: ``limit=``, ``offset=`` (:func:`~kandev_nb.agent.subagents.get_subagent_messages`)."""
        return get_subagent_messages(self.session_id or "", agent_id, **self._transcripts(), **paging)

    def _transcripts(self) -> dict[str, Any]:
        sid, store = self.session_id, self._config.session_store
        if store is None or (sid and find_transcript(self._config.env, sid) is not None):
            return {"env": self._config.env}
        return {"store": store, "cwd": self.cwd}

    def use_hooks(self, hooks: dict[str, Any]) -> None:
        """Give this session Python hooks (``{event: [HookMatcher]}``); a live process whose
        hooks differ is restarted at the next turn, resuming (the CLI takes hooks only in
        `initialize`).

        Raises:
            HookError: a bad event name, matcher or hook.
        """
        self._config = replace(self._config, hooks=hooks)

    async def stream(self, prompt: str | list[dict[str, Any]], **kwargs: Any) -> AsyncIterator[ev.AgentEvent]:
        """Run a turn and yield its events as they come (the same ones consumers get).

        Takes the keyword arguments of :meth:`run` (`consumers`, `approve`,
        `approval_timeout`, `turn`)."""
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
