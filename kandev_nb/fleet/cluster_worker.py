"""The worker side of a fleet on a Dask cluster: :func:`run_row`, one row's task.

It runs as an ``async`` Dask task, so in the worker's own event loop; it takes a lease of
the fleet's ``distributed.Semaphore`` (the fleet's `concurrency` across the cluster), then
starts the CLI found on the worker as on a kernel (``KANDEV_CLAUDE_CLI``, ``claude`` on
``PATH``, the ``claude-agent-sdk`` wheel) with the worker's own environment through
:func:`kandev_nb.wire.cli.child_env`'s allow-list, and runs the row's turn in a fresh
:class:`~kandev_nb.agent.session.Session`.

What goes back to the kernel (the channels are chosen in :mod:`kandev_nb.fleet.cluster`):

- ``Worker.log_event(topic, msg)``: a ``start`` message when the row takes its lease; an
  ``ask`` message per can_use_tool (AskUserQuestion included) at once; else at most one
  ``batch`` message per :attr:`RowJob.flush_s` with the row's activity and the requests
  decided on the worker (by its approval timeout), never one per text delta.
- the task's result, a :class:`RowOutcome`: the turns of every attempt, picklable (the
  approvals' live objects are dropped), which the kernel judges and records in its ledger.

What comes from the kernel: the attempt's ``distributed.Queue`` (:attr:`RowJob.answers`):
``answer`` (a :class:`~kandev_nb.agent.permissions.Decision` as JSON, for one request_id),
``rules`` (the deny rules now) and ``interrupt`` (the protocol's interrupt: Stop, the fleet's
budget); the row's CLI is killed with what it started if it is still there
:data:`~kandev_nb.fleet.reaper.STOP_GRACE_S` after the interrupt. Dask never cancels a running
task by itself: the worker's watchdog (:mod:`kandev_nb.fleet.watchdog`) cancels the row's task
when its key is released (``client.cancel``, the client gone) or the worker closes, and the
cancellation kills the CLI with what it started.

Both ways, every message is sealed with the run's key (:mod:`kandev_nb.fleet.sealed`): a
message in the queue that this run's kernel did not seal (another client of the scheduler
put it) is dropped, never applied, and reported to the kernel in a ``dropped`` message.

Nothing secret travels in a :class:`RowJob` or a :class:`RowOutcome`: no ``env``, no CLI path,
no ledger URL, no Python policy (those run in the kernel; deny rules given as texts
are also held on the worker, in every mode). The one exception is the run's channel key
(:attr:`RowJob.seal_key`), which the scheduler holds with the task: on a cluster that other
clients can reach, they could read it there, as they could run code on the workers.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

from kandev_nb.agent import events as ev
from kandev_nb.agent.turn import Turn
from kandev_nb.fleet.sealed import WORKER, Channel, Forged, claimed_kind

__all__ = ["RowJob", "RowOutcome", "run_row"]


@dataclass(frozen=True)
class RowJob:
    """One row as a Dask task's argument (no secrets: see the module docstring).

    Attributes:
        fleet_id: the run's id (names the topic, queues, variables).
        key, key_text: the row's index value and its ledger text (:func:`~kandev_nb.fleet.spec.key_text`).
        position, total: the row's 1-based position and the number of rows.
        prompt: the row's prompt.
        config: plain :class:`~kandev_nb.agent.config.SessionConfig` fields (cwd, mode, model,
            max_turns, tool rules, system prompts, timeouts): never env, cli_path or callables.
        schema: the JSON schema every row answers with (``--json-schema``), or None.
        semaphore: the fleet's ``distributed.Semaphore`` (max_leases = concurrency).
        topic: the ``log_event`` topic the kernel subscribes to.
        answers: the name prefix of the row's ``distributed.Queue`` of answers from the kernel
            (one queue per attempt: ``<answers>-<attempt>``, named in the ``start`` message).
        stop_event: the name of the run's ``distributed.Event``, set by the kernel when the
            whole fleet stops: a row that gets its lease afterwards does not start.
        session_var: the name of the ``distributed.Variable`` holding the row's session_id
            (a retry on another worker resumes it when its transcript is reachable there).
        retries: attempts after a transient failure, in the same session.
        need_cwd: refuse unless ``config["cwd"]`` exists on the worker (``--worktree``).
        deny: the deny rules in force when the row was sent (the fleet's ``approve`` Rules and
            its "Deny for all rows" rules, Claude Code syntax); the worker's enforcement hook
            holds them in every mode, and the kernel sends the list again when a rule is added.
        flush_s: seconds between two ``batch`` messages of the row (at most).
        seal_key: the run's channel key (:func:`kandev_nb.fleet.sealed.new_key`): every
            message to and from the kernel is sealed with it; not in the repr.
        task_key: the row's Dask task key (the kernel's ``client.submit(..., key=...)``), by
            which the worker's watchdog (:mod:`kandev_nb.fleet.watchdog`) knows the row's task.
    """

    fleet_id: str
    key: Any
    key_text: str
    position: int
    total: int
    prompt: str
    config: dict[str, Any]
    schema: dict[str, Any] | None
    semaphore: Any
    topic: str
    answers: str
    session_var: str
    stop_event: str = ""
    retries: int = 0
    need_cwd: bool = False
    flush_s: float = 0.25
    deny: tuple[str, ...] = ()
    seal_key: bytes = field(default=b"", repr=False)
    task_key: str = ""


@dataclass
class RowOutcome:
    """What a row's task returns to the kernel (picklable, no secrets).

    Attributes:
        turns: every attempt's :class:`~kandev_nb.agent.turn.Turn`, oldest first (approvals
            without their live objects); the kernel judges the last and records them all.
        error: why no turn ran (the CLI could not start, cwd missing on the worker), or None.
        transient: whether that error may pass on another try.
        worker: the worker's address (``tcp://10.0.0.5:40211``); host: its ``socket.gethostname()``.
        resumed: the session_id this attempt resumed (a retry after a lost worker), or None.
        closed_at: when the row's CLI had exited (its Session closed), epoch seconds on the
            worker's clock; None if no CLI started.
        returned_at: when the task returned (its Semaphore lease given back), epoch seconds
            on the worker's clock: with the turn's ``ended_at`` and the kernel's receipt, where
            the end of a row's time goes (the CLI's exit, the lease, Dask's round trip).
    """

    turns: list[Turn] = field(default_factory=list)
    error: str | None = None
    transient: bool = False
    worker: str = ""
    host: str = ""
    resumed: str | None = None
    closed_at: float | None = None
    returned_at: float | None = None


def portable(turn: Turn) -> Turn:
    """`turn` without live objects: each PermissionRequest's ``approval`` (an asyncio future)
    is dropped, and the structured answer is left as JSON (``output_raw``; the kernel
    validates it with the notebook's own schema class)."""
    events = [
        e.model_copy(update={"approval": None}) if isinstance(e, ev.PermissionRequest) else e for e in turn.events
    ]
    copy = Turn.__new__(Turn)
    copy.__dict__.update(turn.__dict__)
    copy.events, copy.output, copy.meta = events, None, dict(turn.meta)
    return copy


MAX_DROPPED_REPORTS = 20
"""``dropped`` messages one row attempt sends at most (a flood of forged messages stays one)."""


class _Row:
    """The live side of one row on the worker: its activity batch, its pending approvals and
    its end of the run's sealed channel (:attr:`attempt` is set once the row has its lease)."""

    def __init__(self, job: RowJob, worker: Any) -> None:
        self.job, self.worker = job, worker
        self.channel = Channel(job.seal_key, job.fleet_id, WORKER)
        self.attempt = ""
        self.dropped = 0
        self.rules_seq = 0
        self.approvals: dict[str, Any] = {}
        self.activity = ""
        self.decided: list[str] = []
        self.dirty = False
        self.session: Any = None
        self.session_id: str | None = None
        self.variable: Any = None
        self.number = 0
        """This attempt's number (1 for the row's first): the Variable's count, carried by ``start``."""
        self.saving: asyncio.Future[Any] | None = None
        self.deny: list[str] = list(job.deny)
        """The deny rules in force (the kernel's ``rules`` message replaces them in place)."""
        self.stop_reason: str | None = None
        """Why the kernel stopped the row (its ``interrupt`` message), or None."""
        self.interrupt_sent = False
        self.guard: Any = None
        """The row's :class:`~kandev_nb.fleet.watchdog.RowGuard` on this worker."""

    def send(self, kind: str, **fields: Any) -> None:
        """Post one sealed message (plain JSON `fields`) on the run's topic."""
        wire = self.channel.seal(kind, self.job.key_text, self.attempt, worker=self.worker.address, **fields)
        self.worker.log_event(self.job.topic, wire)

    def on_event(self, event: ev.AgentEvent) -> None:
        from kandev_nb.fleet.queue import activity_of

        if self.stop_reason is not None and not self.interrupt_sent:  # stopped while its CLI started
            self._interrupt()
        if event.session_id and event.session_id != self.session_id and self.variable is not None:
            self.session_id = event.session_id  # a retry on another worker resumes it
            pid = self.session.pid if self.session is not None else None
            saved = {"session_id": event.session_id, "pid": pid, "host": socket.gethostname(), "n": self.number}
            self.saving = asyncio.ensure_future(self.variable.set(self.channel.seal_value(self.job.session_var, saved)))
        if isinstance(event, ev.PermissionRequest) and event.approval is not None:
            self.approvals[event.request_id] = event.approval
            self.activity = "waiting · " + activity_of(event.tool_name, event.input)
            approval = event.approval
            self.send(
                "ask",
                event=event.model_dump(mode="json", exclude={"approval", "session_id"}),
                suggestions=approval.suggestions,
                timeout_s=approval.timeout_s,
                cwd=self.session.cwd if self.session is not None else os.getcwd(),
            )
            return
        if isinstance(event, ev.PermissionDecided):
            if self.approvals.pop(event.request_id, None) is not None and event.decided_by != "person":
                self.decided.append(event.request_id)  # decided here (timeout, cancel): close the card
            self.activity = "running"
        elif isinstance(event, ev.ToolCall):
            self.activity = activity_of(event.tool_name, event.input)
        elif isinstance(event, ev.MessageChunk) and not self.activity.startswith("writing"):
            self.activity = "writing"
        elif isinstance(event, ev.ApiRetry | ev.RateLimit):
            status = getattr(event, "status", None)
            self.activity = f"API retry after HTTP {status}" if status else "rate limited"
        else:
            return
        self.dirty = True

    def flush(self) -> None:
        if self.dirty or self.decided:
            self.send("batch", activity=self.activity, decided=self.decided)
            self.decided, self.dirty = [], False

    async def flusher(self) -> None:
        while True:
            await asyncio.sleep(self.job.flush_s)
            self.flush()

    async def listen(self, queue: Any) -> None:
        """Apply the kernel's answers, rules and interrupts (the row's ``distributed.Queue``),
        each once its seal is checked; a message that fails is dropped and reported."""
        from kandev_nb.agent.permissions import Decision

        while True:
            wire = await queue.get()
            try:
                message = self.channel.open(wire, row=self.job.key_text, attempt=self.attempt)
            except Forged as exc:
                self.report(wire, exc)
                continue
            if message.get("kind") == "answer":
                approval = self.approvals.get(message["request_id"])
                if approval is not None:  # an answer for another attempt's request is dropped
                    approval._decide(Decision.model_validate(message["decision"]))
            elif message.get("kind") == "rules" and message["seq"] > self.rules_seq:  # a "Deny for all rows"
                self.rules_seq = message["seq"]  # an older list overtaken by a newer one is not applied
                self.deny[:] = [str(rule) for rule in message.get("deny", ())]
            elif message.get("kind") == "interrupt" and self.stop_reason is None:
                self.stop(str(message.get("reason") or "stopped"))

    def stop(self, reason: str) -> None:
        """The kernel's ``interrupt`` (Stop, Stop all, the kernel's interrupt, the budget): the
        turn gets the protocol's interrupt (a CLI still starting gets it at its first event),
        no attempt follows, and a CLI still there :data:`~kandev_nb.fleet.reaper.STOP_GRACE_S`
        later is killed with what it started."""
        from kandev_nb.fleet.reaper import after_grace

        self.stop_reason = reason
        after_grace(self._deadline)
        if self.session is not None:
            self.session.broker.deny_all(reason)
            self._interrupt()

    def _interrupt(self) -> None:
        from kandev_nb.agent.state import SessionState

        session = self.session
        if session is None or session.state is not SessionState.RUNNING:
            return
        self.interrupt_sent = True
        session.broker.deny_all(self.stop_reason or "stopped")
        task = asyncio.ensure_future(session.interrupt())
        task.add_done_callback(lambda t: t.exception() if not t.cancelled() else None)

    def _deadline(self) -> None:
        """The stop's grace is over: kill the row's CLI if it still runs."""
        if self.guard is not None and not self.guard.task.done():
            self.guard.kill()

    def report(self, wire: Any, exc: Forged) -> None:
        """Tell the kernel a message was dropped (at most :data:`MAX_DROPPED_REPORTS` times)."""
        if self.dropped < MAX_DROPPED_REPORTS:
            self.dropped += 1
            self.send("dropped", claimed=claimed_kind(wire), why=str(exc))


async def _saved(variable: Any, row: _Row) -> dict[str, Any]:
    """The row's stored value (session_id, pid, host, attempt count ``n``), opened with the
    run's key; ``{}`` when there is none or it fails to open (reported as a dropped message:
    another client of the scheduler wrote it)."""
    try:
        wire = await variable.get(timeout=5)  # the kernel set it before submitting the task
    except TimeoutError:
        return {}
    try:
        return row.channel.open_value(wire, row.job.session_var)
    except Forged as exc:
        row.report(wire, exc)
        return {}


def _resume_id(saved: dict[str, Any], host: str, store: Any = None, cwd: str | None = None) -> str | None:
    """The row's session_id from a lost attempt (`saved`, opened), if its transcript is on
    this worker, or in the fleet's session `store` (then written here first, for the CLI of
    `cwd`: a row retried on another worker resumes; :func:`~kandev_nb.agent.session_store.materialize`);
    the lost attempt's CLI, when it ran on this host and outlived its worker, is killed first."""
    from kandev_nb.agent.session_store import materialize
    from kandev_nb.agent.transcript import find_transcript

    if saved.get("host") == host and isinstance(saved.get("pid"), int):
        _kill_cli(saved["pid"])
    sid = saved.get("session_id")
    if not isinstance(sid, str):
        return None
    if find_transcript({}, sid) is None and store is not None:
        try:
            materialize(store, sid, cwd or os.getcwd())
        except Exception as exc:  # noqa: BLE001 - the row starts over, as without a store
            logging.getLogger("kandev_nb").warning("kandev_nb fleet: row session %s not restored: %s", sid, exc)
    return sid if find_transcript({}, sid) is not None else None


def _kill_cli(pid: int) -> None:
    """SIGKILL `pid` with what it started (:func:`~kandev_nb.wire.transport.kill_tree`) if it
    is still a ``claude`` process (a CLI whose worker died)."""
    from kandev_nb.wire.transport import kill_tree

    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            text = f.read()
    except OSError:
        return
    if b"claude" in text:
        kill_tree(pid)


async def run_row(job: RowJob) -> RowOutcome:
    """Run one row on this worker (a Dask task; see the module docstring).

    Returns:
        A :class:`RowOutcome`; a row's own failure (no CLI, cwd missing, a failed turn) is in
        it, never raised.

    Raises:
        asyncio.CancelledError: the task was cancelled (the CLI is killed first): by the
            worker's watchdog when the key was released (``client.cancel``, the client gone),
            or by ``Worker.close``.
    """
    import importlib

    dd: Any = importlib.import_module("distributed")  # untyped; imported on the worker only

    from kandev_nb.fleet import watchdog

    worker = dd.get_worker()
    await watchdog.install(worker)  # Dask does not cancel a running task: the watchdog does
    with watchdog.watched(job.task_key or f"kandev-row-{job.fleet_id}-{job.position}") as guard:
        return await _run_row(job, worker, guard)


async def _run_row(job: RowJob, worker: Any, guard: Any) -> RowOutcome:
    """:func:`run_row` once the watchdog watches the row's task."""
    import importlib

    dd: Any = importlib.import_module("distributed")

    from kandev_nb.agent.config import SessionConfig
    from kandev_nb.agent.session import Session
    from kandev_nb.agent.structured import OutputSpec
    from kandev_nb.errors import CLIProcessError, KandevError, StructuredOutputError
    from kandev_nb.fleet.queue import DenyRules
    from kandev_nb.fleet.reaper import MARK, REAPER
    from kandev_nb.fleet.runner import transient
    from kandev_nb.policy.enforce import LabelledPolicy

    out = RowOutcome(worker=worker.address, host=socket.gethostname())
    row = _Row(job, worker)
    row.guard = guard
    async with job.semaphore:
        _check_cancelled()  # a task cancelled while it waited for its lease must not start
        if job.stop_event and await dd.Event(job.stop_event).is_set():
            out.error = "never started: the fleet was stopped"
            return out
        attempt_id = row.attempt = uuid.uuid4().hex[:8]
        queue = await dd.Queue(f"{job.answers}-{attempt_id}")  # a lost attempt's pending get must not eat answers
        variable = row.variable = dd.Variable(job.session_var)
        saved = await _saved(variable, row)
        count = saved.get("n")
        row.number = (count if isinstance(count, int) and count >= 0 else 0) + 1
        await variable.set(row.channel.seal_value(job.session_var, {**saved, "n": row.number}))
        row.send("start", host=out.host, n=row.number)  # the kernel ignores an older attempt's late start
        cwd = job.config.get("cwd")
        if cwd is not None and not os.path.isdir(cwd):
            out.error = f"the row's working directory {cwd} does not exist on worker {out.worker} ({out.host})" + (
                "; --worktree on a cluster needs the repository on a filesystem the workers share"
                if job.need_cwd
                else ""
            )
            return out
        out.resumed = _resume_id(saved, out.host, job.config.get("session_store"), cwd)
        _check_cancelled()
        mark = REAPER.watch()  # what its CLI starts dies with the worker, by SIGKILL too
        session = Session(SessionConfig(**job.config, resume=out.resumed, env={MARK: mark}), name=f"fleet[{job.key}]")
        # the fleet's deny rules hold in every mode here too: the enforcement hook asks them before
        # every tool call (acceptEdits and autonomous run calls the kernel's queue never sees)
        session.broker.policy = LabelledPolicy(DenyRules(row.deny), "the fleet's deny rule")
        row.session = guard.session = session
        helpers = [asyncio.ensure_future(row.listen(queue)), asyncio.ensure_future(row.flusher())]
        output = OutputSpec.of(job.schema) if job.schema is not None else None
        prompt = job.prompt if out.resumed is None else f"(Your previous attempt was cut off.) {job.prompt}"
        try:
            for attempt in range(job.retries + 1):
                if row.stop_reason is not None:  # stopped before this attempt began
                    out.error = out.error or f"never started: {row.stop_reason}"
                    break
                turn = None
                try:
                    turn = await _turn(session, prompt, row, output)
                except StructuredOutputError as exc:
                    turn = exc.turn if exc.turn is not None else (session.turns[-1] if session.turns else None)
                except CLIProcessError as exc:
                    out.error, out.transient = f"{type(exc).__name__}: {exc}", True
                except (KandevError, OSError) as exc:
                    out.error = f"{type(exc).__name__}: {exc}"
                if turn is not None:
                    out.turns.append(portable(turn))
                    out.error = None
                again = transient(turn) if turn is not None else out.transient
                if not again or attempt == job.retries or row.stop_reason is not None:
                    break
                row.activity, row.dirty = f"retry {attempt + 1} of {job.retries}", True
                prompt = job.prompt
        finally:
            for helper in helpers:
                helper.cancel()
            row.flush()
            await asyncio.shield(_close(session))
            out.closed_at = time.time()
            REAPER.forget(mark)
    out.returned_at = time.time()
    return out


def _check_cancelled() -> None:
    """Raise CancelledError if this task was cancelled (``distributed.Semaphore.acquire``
    may take the lease anyway)."""
    task = asyncio.current_task()
    if task is not None and task.cancelling():
        raise asyncio.CancelledError


async def _turn(session: Any, prompt: str, row: _Row, output: Any) -> Turn:
    """``session.run`` that a cancelled task cannot outlive: Session.run takes a cancellation
    as the kernel's interrupt and waits for the CLI to stop the turn; here the task's
    cancellation (``client.cancel``) kills the CLI (SIGKILL) and closes the session."""
    from kandev_nb.agent.origin import Origin

    origin = Origin.fleet_row(None, row=row.job.key, position=row.job.position)  # the kernel adds the fleet's name
    inner = asyncio.ensure_future(session.run(prompt, consumers=[row.on_event], output_type=output, origin=origin))
    try:
        return await asyncio.shield(inner)
    except asyncio.CancelledError:
        await _kill_turn(session, inner)
        with contextlib.suppress(BaseException):
            await asyncio.wait_for(asyncio.shield(_close(session)), 10)
        raise


async def _kill_turn(session: Any, inner: asyncio.Future[Any], limit: float = 10.0) -> None:
    """End a cancelled row's turn now: SIGKILL its CLI with what it started, cancel the turn
    and wait (at most `limit` seconds) until it ended, killing again any CLI that appeared
    meanwhile (a cancellation while the CLI starts: its graceful close would take seconds)."""
    loop = asyncio.get_running_loop()
    seen: list[Any] = []
    end = loop.time() + limit
    inner.cancel()
    while True:
        transport = session.transport
        if transport is not None and transport not in seen:
            seen.append(transport)
        for each in seen:
            kill = getattr(each, "kill", None)
            if kill is not None:
                kill()  # a no-op until its process exists and once it is gone
        if inner.done() or loop.time() > end:
            return
        try:
            await asyncio.wait([inner], timeout=0.1)
        except asyncio.CancelledError:  # cancelled again (the worker closes): finish the kill first
            continue


async def _close(session: Any) -> None:
    with contextlib.suppress(Exception):
        await session.close()
