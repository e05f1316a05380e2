"""The same fleet on a Dask cluster (issue 26): each row a Dask task on a worker, the
board, the approval queue and the ledger in the notebook.

>>> from distributed import Client
>>> client = Client(cluster)                                                   # doctest: +SKIP
>>> triage = await kandev_nb.fleet(tickets, "...", schema=Triage, concurrency=64,
...                                cluster=client)                             # doctest: +SKIP

:class:`ClusterFleet` is a :class:`~kandev_nb.fleet.runner.Fleet` whose
:meth:`~ClusterFleet.execute_row` submits :func:`kandev_nb.fleet.cluster_worker.run_row`
(an ``async`` task: it runs in the worker's event loop) with ``client.submit`` and judges
and records what comes back; scheduling order, budget, Stop, the queue and the board stay.

Channels (all Dask's own; no socket, pool or scheduler of ours), and why:

- **concurrency**: one ``distributed.Semaphore(max_leases=concurrency)`` per run, leased by
  each row's task around its CLI, so the limit holds across every worker and survives a
  worker's death (the scheduler expires the dead worker's lease). Worker resources would
  need the cluster started with them; a semaphore needs nothing from the cluster's setup.
  A task waiting for a lease holds one of its worker's ``nthreads`` slots: rows running at
  once are at most min(concurrency, the cluster's total threads).
- **events, worker -> notebook**: ``Worker.log_event(topic, msg)`` on the worker and
  ``Client.subscribe_topic(topic, handler)`` in the kernel: structured events, pushed over
  the connections Dask already has (worker -> scheduler -> client batched streams), no
  polling. Each row sends ``start`` (its worker and host), one ``ask`` per can_use_tool
  at once, else at most one ``batch`` per 0.25 s (activity, requests its approval timeout
  decided): never a message per text delta. The scheduler keeps the last events of a topic
  (``distributed.admin.low-level-log-length``), so no message carries a secret.
- **answers, notebook -> worker**: one ``distributed.Queue`` per attempt of a row (named in
  its ``start`` message): FIFO, waited on by the row's task (no polling). Per attempt, not
  per row: a dead worker's pending ``get`` stays on the scheduler and would take the next
  answer meant for the retry.
  It carries ``answer`` (a Decision, the card's or a fleet-wide rule's: "Allow for all rows"
  answers each waiting row on every worker, and later requests are answered by the rule in
  the kernel before they are queued) and ``interrupt`` (Stop, the budget).
- **resume after a lost worker**: one ``distributed.Variable`` per row holding its session_id,
  set by the worker as soon as the CLI reports it.
- **Stop, Stop all, the kernel's interrupt**: a started row gets the protocol's interrupt
  through its Queue, with a deadline; rows not started are cancelled, and a run's ``Event``
  stops one that gets its lease later. Dask never cancels a running task: the worker's
  watchdog does (issue 33, :mod:`kandev_nb.fleet.watchdog`).

**Sealed, and the cluster closed** (issue 32): every client of the scheduler can read the
topic, post to it and put into the queues, so each message both ways is sealed with a key
made for the run (:mod:`kandev_nb.fleet.sealed`, HMAC-SHA256) and checked before a card is
drawn, an answer applied or a rule changed; one that fails is dropped and reported
(:attr:`ClusterFleet.dropped`, and a warning). Every client can also run code on the
workers, so the cluster itself is the boundary: a fleet started on a scheduler that takes
clients without a TLS certificate (:func:`open_to_others`) warns first
(:class:`OpenClusterWarning`), naming the secure setups.

The ledger stays the notebook's: each row is recorded once, by the kernel, from the turns
the task returns, with the worker's host in ``host``; the ledger URL never goes to workers.
Secrets stay out of task arguments and results: the worker's CLI takes its environment
(API key, base URL, CLI path) from the worker's own (the cluster's configuration: the
worker env of LocalCluster, Dask Gateway's ``environment``, dask-jobqueue's ``job_script_prologue``,
or a WorkerPlugin); :func:`kandev_nb.wire.cli.child_env`'s allow-list applies there.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import time
import uuid
import warnings
from dataclasses import replace
from typing import Any, Final

from kandev_nb.agent import events as ev
from kandev_nb.agent.permissions import Approval
from kandev_nb.fleet.cluster_checks import (
    INSTALL,
    OpenClusterWarning,
    check_client,
    check_store,
    open_to_others,
    require_distributed,
)
from kandev_nb.fleet.cluster_worker import RowJob, RowOutcome, run_row
from kandev_nb.fleet.pacing import Limiter
from kandev_nb.fleet.queue import activity_of, deny_texts
from kandev_nb.fleet.reaper import CANCEL_AFTER_S
from kandev_nb.fleet.results import RowResult, RowStatus, over_attempts
from kandev_nb.fleet.runner import Fleet, RowState
from kandev_nb.fleet.sealed import KERNEL, Channel, Forged, claimed_kind, new_key
from kandev_nb.fleet.spec import FleetError, key_text
from kandev_nb.fleet.watchdog import leave_kernel_group

__all__ = [
    "INSTALL",
    "ClusterFleet",
    "OpenClusterWarning",
    "check_client",
    "check_store",
    "open_to_others",
    "require_distributed",
]

log = logging.getLogger("kandev_nb")

KERNEL_INTERRUPT: Final = "stopped by the kernel's interrupt"
"""The stop reason :meth:`Fleet.run` gives when the kernel's interrupt cancels it."""

WORKER_LOST: Final = "worker lost, retried"
"""How a waiting approval card of a row whose worker died is closed."""

MAX_DROPPED: Final = 100
"""Dropped messages :attr:`ClusterFleet.dropped` keeps (a flood of forged messages stays bounded)."""


_SENT_FIELDS: Final = (
    "cwd",
    "mode",
    "model",
    "max_turns",
    "system_prompt",
    "append_system_prompt",
    "allowed_tools",
    "disallowed_tools",
    "allow_root_bypass",
    "approval_timeout",
    "inactivity_timeout",
    "initialize_timeout",
    "extra_args",
    "session_store",
)
"""The SessionConfig fields a worker gets (plain values, and the picklable session store; never
env, cli_path or callables)."""


class ClusterFleet(Fleet):
    """A :class:`~kandev_nb.fleet.runner.Fleet` whose rows run as Dask tasks through `client`.

    Args:
        client: a connected ``distributed.Client`` (synchronous, as in a notebook, or
            asynchronous on the kernel's event loop).
        flush_s: seconds between two ``batch`` event messages of one row (at most).
        Everything else as :class:`Fleet` (`concurrency` becomes the run's Semaphore).

    Attributes:
        where: by row key, ``(worker address, host)`` of the row's current attempt.
        jobs: by row key, the :class:`~kandev_nb.fleet.cluster_worker.RowJob` submitted.
        outcomes: by row key, the :class:`~kandev_nb.fleet.cluster_worker.RowOutcome` returned.
        fleet_id: the run's id in Dask names (topic, semaphore, queues, variables, task keys).
        channel: the kernel's end of the run's sealed channel (:mod:`kandev_nb.fleet.sealed`).
        dropped: why each message this run did not seal was dropped, oldest first (at most
            :data:`MAX_DROPPED`; each also logged as a warning).
        open_cluster: the :func:`open_to_others` warning given when the run started, or None.
    """

    def __init__(self, *args: Any, client: Any, flush_s: float = 0.25, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self.config.mcp_servers:
            raise FleetError("kernel tools (in-process MCP servers) cannot reach Dask workers: drop kernel_tools")
        check_store(self.config.session_store)
        self.client = client
        self.flush_s = flush_s
        self.fleet_id = uuid.uuid4().hex[:12]
        self.topic = f"kandev-fleet-{self.fleet_id}"
        self._seal_key = new_key()
        self.channel = Channel(self._seal_key, self.fleet_id, KERNEL)
        self.dropped: list[str] = []
        self.open_cluster: str | None = None
        self._limiter = Limiter(max(1, self.total))  # the cluster's Semaphore limits, not the kernel
        self.where: dict[Any, tuple[str, str]] = {}
        self.jobs: dict[Any, RowJob] = {}
        self.outcomes: dict[Any, RowOutcome] = {}
        self.semaphore: Any = None
        self._by_text = {key_text(k): s for k, s in self.rows.items()}
        self._dask: dict[Any, Any] = {}
        self._queues: dict[str, Any] = {}
        self._attempts: dict[Any, str] = {}
        self._attempt_no: dict[Any, int] = {}
        """By row key, the number of the row's current attempt (its ``start``'s ``n``)."""
        self._mirrors: dict[str, tuple[Any, Approval]] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self.lost_scheduler: str | None = None
        self._sent_deny = self._deny_rules()
        self.queue.on_change.append(self._rules_changed)

    # -- calling a sync or async client from the kernel's loop ---------------------------------

    async def _call(self, fn: Any, *args: Any, **kwargs: Any) -> Any:
        if self.client.asynchronous:
            return await fn(*args, **kwargs)
        return await asyncio.to_thread(functools.partial(fn, *args, **kwargs))

    async def _queue(self, name: str) -> Any:
        """The ``distributed.Queue`` called `name` (made once; registered on the scheduler)."""
        if name not in self._queues:
            queue_class = require_distributed().Queue
            if self.client.asynchronous:
                self._queues[name] = await queue_class(name, client=self.client)
            else:
                self._queues[name] = await self._call(queue_class, name, client=self.client)
        return self._queues[name]

    async def _set_variable(self, name: str, value: Any) -> None:
        variable = require_distributed().Variable(name, client=self.client)
        try:
            await self._call(variable.set, value)
        except Exception as exc:  # noqa: BLE001 - the row's task says what is wrong with the scheduler
            log.warning("kandev_nb fleet: variable %s not set: %s", name, exc)

    async def _send(self, key: Any, attempt: str, wire: dict[str, str]) -> None:
        try:
            queue = await self._queue(f"{self.jobs[key].answers}-{attempt}")
            await self._call(queue.put, wire)
        except Exception as exc:  # noqa: BLE001 - a scheduler gone: the row's future says so
            log.warning("kandev_nb fleet: no answer sent to row %r: %s", key, exc)

    def _post(self, key: Any, kind: str, **fields: Any) -> None:
        """Seal a message for the row's current attempt now (its sequence number is taken in
        the order of the calls) and put it into the attempt's queue."""
        attempt = self._attempts.get(key)
        if self._loop is None or attempt is None:
            return
        wire = self.channel.seal(kind, key_text(key), attempt, **fields)
        task = self._loop.create_task(self._send(key, attempt, wire))
        task.add_done_callback(lambda t: t.exception() if not t.cancelled() else None)

    # -- running -----------------------------------------------------------------------------

    async def run(self) -> Any:
        """:meth:`Fleet.run` on the cluster: subscribe to the run's topic, make its Semaphore,
        and unsubscribe at the end. Returns the result frame.

        Raises:
            FleetError: the scheduler cannot be reached to start (nothing ran).
        """
        self._loop = asyncio.get_running_loop()
        self.open_cluster = open_to_others(self.client)
        if self.open_cluster is not None:  # said before anything starts; registry=None: said every run
            warnings.warn_explicit(self.open_cluster, OpenClusterWarning, __file__, 0, module=__name__, registry=None)
        semaphore = functools.partial(  # on this client's scheduler (Dask's default client may be another)
            require_distributed().Semaphore, self.concurrency, self.topic, self.client.scheduler, self.client.loop
        )
        try:
            self.semaphore = await (semaphore() if self.client.asynchronous else asyncio.to_thread(semaphore))
        except Exception as exc:
            raise FleetError(f"the Dask scheduler cannot be reached: {type(exc).__name__}: {exc}") from exc
        await leave_kernel_group(self.client, self._call)
        self.client.subscribe_topic(self.topic, self._on_message)
        try:
            return await super().run()
        finally:
            if self._dask:  # left early (a second interrupt as the rows stopped): nothing runs on
                await self._cancel(list(self._dask.values()))
            with contextlib.suppress(Exception):
                self.client.unsubscribe_topic(self.topic)

    def job(self, state: RowState, cwd: Any = None) -> RowJob:
        """The picklable :class:`RowJob` of one row (no env, no CLI path, no ledger URL)."""
        config = self.config
        if cwd is not None:
            config = replace(config, cwd=cwd)
        elif self.spec.cwds is not None:
            config = replace(config, cwd=self.spec.cwds[state.key])
        fields = {name: getattr(config, name) for name in _SENT_FIELDS}
        fields["cwd"] = str(fields["cwd"]) if fields["cwd"] is not None else None
        fields["approval_timeout"] = self.approval_timeout
        return RowJob(
            fleet_id=self.fleet_id,
            key=state.key,
            key_text=key_text(state.key),
            position=state.position,
            total=self.total,
            prompt=state.prompt,
            config=fields,
            schema=dict(self.spec.output.schema) if self.spec.output is not None else None,
            semaphore=self.semaphore,
            topic=self.topic,
            answers=f"{self.topic}-answers-{state.position}",
            session_var=f"{self.topic}-session-{state.position}",
            stop_event=f"{self.topic}-stop",
            retries=self.retries,
            need_cwd=self.worktrees is not None,
            flush_s=self.flush_s,
            deny=tuple(self._deny_rules()),
            seal_key=self._seal_key,
            task_key=f"kandev-row-{self.fleet_id}-{state.position}",  # the worker's watchdog knows the row by it
        )

    def _deny_rules(self) -> list[str]:
        """The deny rules every row holds on its worker: the ``approve`` Rules' and the fleet's."""
        fleet = [r.rule for r in self.queue.rules if r.behavior == "deny"]
        return [*deny_texts(self.approve), *fleet]

    def _rules_changed(self) -> None:
        """Send the deny rules again to every running row when "Deny for all rows" adds one."""
        deny = self._deny_rules()
        if deny == self._sent_deny or self._loop is None:
            return
        self._sent_deny = deny
        for key in list(self._attempts):
            self._loop.call_soon_threadsafe(functools.partial(self._post, key, "rules", deny=deny))

    async def execute_row(self, state: RowState) -> RowResult:
        """Run one row as a Dask task and judge and record what it returns; never raises
        for the row's own failures. A row whose worker dies is run again by Dask on another
        worker (resuming its session when its transcript is reachable there); a cancelled
        task (Stop before it started, the kernel's interrupt) ends "stopped" or "skipped"."""
        tree = None
        if self.worktrees is not None:
            try:
                tree = await self.worktrees.make(state.key)
            except Exception as exc:  # noqa: BLE001 - KandevError, OSError: the row's own failure
                return RowResult(state.key, "error", f"no worktree for this row: {exc}")
        job = self.jobs[state.key] = self.job(state, tree.cwd if tree is not None else None)
        state.status, state.activity = "pending", "queued on the cluster"
        state.started = None  # it starts when a worker says so (its "start" message): no elapsed time before
        self._changed()
        # set (a worker's get returns at once) and sealed: a worker acts on it only once opened
        await self._set_variable(job.session_var, self.channel.seal_value(job.session_var, {}))
        future = self.client.submit(run_row, job, key=job.task_key, pure=False)
        self._dask[state.key] = future
        try:
            outcome = await self._result(future)
        except BaseException as exc:  # noqa: BLE001 - a cancelled future is asyncio's CancelledError
            return self._lost(state, exc)
        finally:
            self._dask.pop(state.key, None)
            self._close_cards(state.key, "the row ended")
        self.outcomes[state.key] = outcome
        return await self._judge_outcome(state, outcome)

    async def _result(self, future: Any) -> RowOutcome:
        if self.client.asynchronous:
            outcome: RowOutcome = await future
            return outcome
        loop = asyncio.get_running_loop()
        done: asyncio.Future[None] = loop.create_future()

        def finished(_f: Any) -> None:
            loop.call_soon_threadsafe(lambda: None if done.done() else done.set_result(None))

        future.add_done_callback(finished)
        await done
        outcome = await asyncio.to_thread(future.result)
        return outcome

    def _lost(self, state: RowState, exc: BaseException) -> RowResult:
        """The row's result when its future did not give one (cancelled, the scheduler gone)."""
        current = asyncio.current_task()
        if isinstance(exc, asyncio.CancelledError) and current is not None and current.cancelling():
            raise exc  # this row's own await was cancelled, not its Dask future
        if self.lost_scheduler is None and self.client.status not in ("running", "newly-created"):  # "connecting"
            self.lost_scheduler = f"the Dask scheduler went away ({type(exc).__name__}: {exc})"
            super().stop(reason=self.lost_scheduler)  # every row that ran is an error, those that did not skipped
        started = state.key in self.where
        if self.lost_scheduler is not None and started and state.stop_reason in (None, self.lost_scheduler):
            return RowResult(state.key, "error", self.lost_scheduler)
        if state.stop_reason is not None:
            status: RowStatus = "stopped" if started else "skipped"
            return RowResult(state.key, status, state.stop_reason if started else f"never started: {state.stop_reason}")
        return RowResult(state.key, "error", f"the row's Dask task failed: {type(exc).__name__}: {exc}")

    async def _judge_outcome(self, state: RowState, outcome: RowOutcome) -> RowResult:
        if not outcome.turns and state.stop_reason is not None:  # stopped before or as its CLI started
            return RowResult(state.key, "stopped", state.stop_reason)
        if not outcome.turns:
            return RowResult(state.key, "error", outcome.error or "the row's task ran no turn")
        tries: list[RowResult] = []
        for turn in outcome.turns:
            output_error = None
            if self.spec.output is not None and turn.output_raw is not None:
                try:
                    turn.output = self.spec.output.validate(turn.output_raw)
                except Exception as exc:  # noqa: BLE001 - the answer does not validate: the row's error
                    output_error = f"the answer does not match the schema: {exc}"
            elif self.spec.output is not None and not turn.failed and not turn.stopped:
                output_error = turn.output_error or "the turn gave no structured answer"
            turn.meta["host"] = outcome.host
            turn.meta["dask_worker"] = outcome.worker
            result = self._judge(state, turn, output_error)
            await self._record(turn, result, state.position)
            tries.append(result)
        return over_attempts(tries)  # every attempt's cost, as in the kernel

    # -- stopping ------------------------------------------------------------------------------

    def stop(self, key: Any = None, *, reason: str = "stopped by you") -> None:
        """:meth:`Fleet.stop` on the cluster: a running row gets the protocol's interrupt
        through its Queue (its task kills a CLI still there after the grace; its future is
        cancelled :data:`CANCEL_AFTER_S` later if it still runs); one not started is cancelled."""
        super().stop(key, reason=reason)
        targets = list(self._dask) if key is None else [key] if key in self._dask else []
        cancel = []
        for target in targets:
            if target not in self.where:  # not started
                cancel.append(self._dask[target])
            elif self._loop is not None:
                self._post(target, "interrupt", reason=reason)
                self._loop.call_later(CANCEL_AFTER_S, self._cancel_late, target, self._dask[target])
        if key is None and self._loop is not None:
            done = self._loop.create_task(self._set_stop())
            done.add_done_callback(lambda t: t.exception() if not t.cancelled() else None)
        if cancel and self._loop is not None:
            task = self._loop.create_task(self._cancel(cancel))
            task.add_done_callback(lambda t: t.exception() if not t.cancelled() else None)

    async def _set_stop(self) -> None:
        """Set the run's ``distributed.Event``: a row that gets its lease later does not start."""
        try:
            await self._call(require_distributed().Event(f"{self.topic}-stop", client=self.client).set)
        except Exception as exc:  # noqa: BLE001 - the scheduler gone: nothing starts there any more
            log.warning("kandev_nb fleet: could not tell the workers to stop: %s", exc)

    def _cancel_late(self, key: Any, future: Any) -> None:
        """A stopped row's future still runs :data:`CANCEL_AFTER_S` after the stop: cancel it."""
        if not future.done() and self._dask.get(key) is future and self._loop is not None:
            self._loop.create_task(self._cancel([future])).add_done_callback(lambda t: t.cancelled() or t.exception())

    async def _cancel(self, futures: list[Any]) -> None:
        """``client.cancel(futures, force=True)``: the worker's watchdog then kills each CLI."""
        try:
            await self._call(self.client.cancel, futures, force=True)
        except Exception as exc:  # noqa: BLE001 - the scheduler gone: nothing runs there any more
            log.warning("kandev_nb fleet: could not cancel the rows' Dask tasks: %s", exc)

    # -- messages from the workers ---------------------------------------------------------------

    def _on_message(self, event: Any) -> None:
        """``subscribe_topic``'s handler (the client's loop: a thread of its own for a sync
        client): hand the message to the kernel's loop."""
        _, wire = event
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._receive, wire)

    def _receive(self, wire: Any) -> None:
        """Open a message from the topic and handle it; one this run did not seal (another
        client of the scheduler posted it) is dropped and reported, before any card is drawn."""
        try:
            message = self.channel.open(wire)
        except Forged as exc:
            self._report(
                f"dropped a {claimed_kind(wire)!r} message on the fleet's topic that this run did not seal: {exc}"
            )
            return
        self._handle(message)

    def _report(self, text: str) -> None:
        """Keep and log why a message was dropped (:attr:`dropped`)."""
        if len(self.dropped) < MAX_DROPPED:
            self.dropped.append(text)
            log.warning("kandev_nb fleet: %s: another client of the Dask scheduler sent it", text)
            self._changed()

    def _handle(self, message: dict[str, Any]) -> None:
        """A sealed message from a row's task (``start``, ``ask``, ``batch``, ``dropped``)."""
        state = self._by_text.get(message.get("row", ""))
        if state is None or state.result is not None:
            return
        worker, kind = str(message.get("worker", "")), message.get("kind")
        if kind == "dropped":
            why, claimed = message.get("why"), message.get("claimed")
            self._report(f"row {state.position} on {worker}: dropped a {claimed!r} message in its queue: {why}")
            return
        if kind == "start":
            number = message.get("n")
            number = number if isinstance(number, int) else 0
            if number < self._attempt_no.get(state.key, 0):  # an older attempt's late start
                self._report(
                    f"row {state.position} on {worker}: ignored a start of attempt {number}, older than the current"
                )
                return
            self._attempt_no[state.key] = number
            before = self.where.get(state.key)
            self.where[state.key] = (worker, str(message.get("host", "")))
            self._attempts[state.key] = str(message.get("attempt", ""))
            if before is not None and before[0] != worker:
                self._close_cards(state.key, WORKER_LOST)
                state.activity = f"{WORKER_LOST} on {worker}"
            else:
                state.activity = "starting"
            state.status = "running"
            if state.started is None:
                state.started = time.monotonic()
        elif kind == "ask":
            self._ask(state, worker, message)
            return
        elif kind == "batch":
            for request_id in message.get("decided") or []:
                mirror = self._mirrors.pop(request_id, None)
                if mirror is not None:
                    mirror[1].deny("decided on the worker (approval timeout)", by="timeout")
            if message.get("activity"):
                state.activity = str(message["activity"])
        self._changed()

    def _ask(self, state: RowState, worker: str, message: dict[str, Any]) -> None:
        """A row's can_use_tool: a kernel-side :class:`Approval` mirrors it; the fleet's
        policy, its rules and the queue answer it as for a row in the kernel; the decision
        goes back through the row's Queue."""
        data = dict(message["event"])
        mirror = Approval(
            data["request_id"],
            data["tool_name"],
            data.get("input") or {},
            tool_use_id=data.get("tool_use_id"),
            suggestions=message.get("suggestions") or [],
            timeout_s=message.get("timeout_s"),
            cwd=message.get("cwd"),
        )
        event = ev.PermissionRequest.model_validate({**data, "approval": mirror})
        self._mirrors[mirror.request_id] = (state.key, mirror)
        key = state.key

        def send(decision: Any) -> None:
            self._mirrors.pop(mirror.request_id, None)
            if decision.decided_by == "cancelled":
                return
            self._post(key, "answer", request_id=mirror.request_id, decision=decision.model_dump(mode="json"))

        mirror.on_decided(send)
        state.activity = "waiting · " + activity_of(event.tool_name, event.input)  # the command, as in the kernel
        self._policy(mirror, event, message.get("cwd") or "")
        host = self.where.get(key, (worker, ""))[1]
        self.queue.offer(key, state.position, self.total, event, message.get("cwd") or "", where=f"{worker} ({host})")
        for watch in list(state.watchers):
            with contextlib.suppress(Exception):
                watch(event)
        self._changed()

    def _policy(self, mirror: Approval, event: ev.PermissionRequest, cwd: str) -> None:
        from kandev_nb.agent.questions import QUESTION_TOOL
        from kandev_nb.policy import enforce

        if self.approve is None or event.tool_name == QUESTION_TOOL:
            return
        try:
            verdict = enforce.rooted(self.approve, cwd)(event.tool_name, event.input)
        except Exception as exc:  # noqa: BLE001 - a broken policy asks a person instead
            log.warning("approval policy raised %r; asking instead", exc)
            return
        if verdict == "allow":
            mirror.allow(by="policy")
        elif verdict == "deny":
            mirror.deny("Denied by the fleet's policy.", by="policy")

    def _close_cards(self, key: Any, why: str) -> None:
        """Close the row's waiting cards (its worker died, or the row ended) without sending."""
        for request_id, (owner, mirror) in list(self._mirrors.items()):
            if owner == key:
                self._mirrors.pop(request_id, None)
                mirror.deny(why, by="cancelled")
