"""The fleet: one fresh :class:`~kandev_nb.agent.session.Session` per row, at most
`concurrency` CLI processes at once, one budget, one approval queue, a ledger row per
finished row.

In Dask's vocabulary: every row is a future (:attr:`Fleet.futures`, ``asyncio.Future`` of a
:class:`~kandev_nb.fleet.results.RowResult`, keyed by the row's index value), and
:meth:`Fleet.as_completed` yields results as rows finish. A variant that runs rows
elsewhere (a Dask cluster, issue 26) overrides :meth:`Fleet.execute_row`; the scheduling,
budget, queue, ledger and board stay.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hashlib
import logging
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field, replace
from typing import Any, Final

import pandas as pd

from kandev_nb.agent import events as ev
from kandev_nb.agent.config import SessionConfig
from kandev_nb.agent.origin import Origin
from kandev_nb.agent.permissions import ApprovalPolicy
from kandev_nb.agent.session import Session
from kandev_nb.agent.state import SessionState
from kandev_nb.errors import CLIProcessError, KandevError, LedgerError, StructuredOutputError
from kandev_nb.fleet.pacing import Limiter, RateGovernor
from kandev_nb.fleet.queue import ApprovalQueue, activity_of, fleet_denies
from kandev_nb.fleet.reaper import MARK, REAPER, after_grace, kill_unfinished
from kandev_nb.fleet.results import RowResult, RowStatus, over_attempts, result_frame
from kandev_nb.fleet.spec import FleetSpec, row_values
from kandev_nb.ledger.keys import encode_key, legacy_key_text
from kandev_nb.policy.enforce import LabelledPolicy

__all__ = ["TRANSIENT_STATUSES", "Fleet", "RowState", "row_values", "running_fleets", "transient"]

TRANSIENT_STATUSES: Final = frozenset({408, 409, 429, 500, 502, 503, 504, 529})
"""HTTP statuses of API errors worth another try."""
_TRANSIENT_SUBTYPES: Final = frozenset({"cli_exited", "inactivity_timeout", "interrupt_timeout", "reader_error"})


def transient(turn: Any) -> bool:
    """Whether a failed turn may succeed if tried again: an API error with a status of
    :data:`TRANSIENT_STATUSES` (`result.api_error_status`), or a CLI that exited, went silent
    or could not be read (Error subtypes cli_exited, inactivity_timeout, interrupt_timeout,
    reader_error). A stopped turn or an answer that does not validate is not."""
    if turn is None or turn.stopped or not turn.failed:
        return False
    error, stats = turn.error, turn.stats
    status = (error.api_error_status if error is not None else None) or (stats.api_error_status if stats else None)
    return status in TRANSIENT_STATUSES or (error is not None and error.subtype in _TRANSIENT_SUBTYPES)


log = logging.getLogger("kandev_nb")

_RUNNING: list[Fleet] = []
"""The fleets whose :meth:`Fleet.run` is under way in this process, oldest first."""


def running_fleets() -> list[Fleet]:
    """The fleets running now in this process (in the kernel: their rows' approvals are listed
    by ``kandev_nb.pending()``), oldest first."""
    return list(_RUNNING)


@dataclass
class RowState:
    """A row while the fleet runs (what the board shows).

    Attributes:
        key, position, prompt: the row's index value, 1-based position, prompt.
        status: pending, running, done, error, stopped, skipped.
        activity: what its agent does now ("Bash · pytest -x", "writing", "waiting for approval").
        started, ended: :func:`time.monotonic` seconds (None before).
        session: its Session while it runs.
        stop_reason: why it was asked to stop (a person, the budget), or None.
        result: once finished.
    """

    key: Any
    position: int
    prompt: str
    status: RowStatus = "pending"
    activity: str = ""
    started: float | None = None
    ended: float | None = None
    session: Session | None = None
    stop_reason: str | None = None
    result: RowResult | None = None
    interrupt_sent: bool = False
    watchers: list[Callable[[ev.AgentEvent], None]] = field(default_factory=list)
    """Called with each of the row's events (a board showing the row's live turn)."""

    @property
    def elapsed_s(self) -> float:
        """Seconds it ran (so far)."""
        if self.started is None:
            return 0.0
        return (self.ended if self.ended is not None else time.monotonic()) - self.started


class Fleet:
    """One agent per row of `spec.frame`.

    Args:
        spec: the checked request (:class:`~kandev_nb.fleet.spec.FleetSpec`).
        config: the SessionConfig every row's fresh Session starts from (mode, model,
            max_turns, cwd, allowed_tools, env, cli_path...).
        name: the fleet's name in the ledger (``turns.fleet``); None: not resumable.
        concurrency: at most this many CLI processes at once.
        budget_usd: the whole fleet's spend limit in USD (None: none).
        redo: with a `name`, start every row even if the ledger has it finished.
        approve: the approval policy of every row (answers before the queue).
        approval_timeout: seconds a queued approval waits before it is denied (None: forever).
        kernel_tools: part of the fingerprint (the caller adds the servers to `config`).
        ledger: a :class:`~kandev_nb.ledger.RunLedger` to record finished rows in and read
            finished rows from (None: nothing recorded, nothing resumed).
        notebook: the notebook path recorded with each row.
        retries: how many times a row that failed for a transient reason (an API error, a
            CLI that died or went silent) is run again, resuming its session.
        rate_quiet_s: seconds without a rate limit before the lowered concurrency is raised
            by one (:class:`~kandev_nb.fleet.pacing.RateGovernor`).
        worktrees: a :class:`~kandev_nb.fleet.worktrees.Worktrees`: each row in its own git
            worktree (None: rows share the working directory).

    Attributes:
        rows: :class:`RowState` by key, in frame order.
        futures: by key, the future of each row's :class:`RowResult`.
        queue: the :class:`~kandev_nb.fleet.queue.ApprovalQueue` of every row.
        listeners: called (no arguments) after every change a board shows.
        cell: the execution count (``In [n]``) of the notebook cell that started it (its
            board's cell), set by the notebook layer; None elsewhere.
    """

    def __init__(
        self,
        spec: FleetSpec,
        config: SessionConfig,
        *,
        name: str | None = None,
        concurrency: int = 4,
        budget_usd: float | None = None,
        redo: bool = False,
        approve: ApprovalPolicy | None = None,
        approval_timeout: float | None = 300.0,
        kernel_tools: bool = False,
        ledger: Any = None,
        notebook: str | None = None,
        retries: int = 0,
        rate_quiet_s: float = 30.0,
        worktrees: Any = None,
    ) -> None:
        self.spec = spec
        self.config = config
        self.name = name
        self.concurrency = concurrency
        self.budget_usd = budget_usd
        self.redo = redo
        self.approve = approve
        self.approval_timeout = approval_timeout
        self.ledger = ledger
        self.notebook = notebook
        self.cell: int | None = None
        self.fingerprint = spec.fingerprint(config, kernel_tools, worktrees is not None)
        self.rows: dict[Any, RowState] = {k: RowState(k, i + 1, spec.prompts[k]) for i, k in enumerate(spec.keys)}
        self.futures: dict[Any, asyncio.Future[RowResult]] = {}
        self.queue = ApprovalQueue(row_values=row_values(spec))
        self.queue.on_change.append(self._changed)
        self.listeners: list[Callable[[], None]] = []
        self.started: float | None = None
        self.ended: float | None = None
        self.stopped_reason: str | None = None
        self._limiter = Limiter(concurrency)
        self.pacing = RateGovernor(self._limiter, concurrency, rate_quiet_s, self._changed)
        self.retries = retries
        self.worktrees = worktrees
        self._tasks: dict[Any, asyncio.Task[RowResult]] = {}
        self._budget_hit = False
        self._earlier: dict[Any, tuple[float | None, int]] = {}
        """By key, the cost (USD) and number of the ledger's turns of the row from earlier runs."""
        self.waited: set[Any] = set()
        """The keys of the rows that waited for a person (a request in the queue) during this run."""

    # -- what the board reads ------------------------------------------------------------

    @property
    def total(self) -> int:
        """Rows in the fleet."""
        return len(self.rows)

    @property
    def finished(self) -> int:
        """Rows with a final status (done, error, stopped, skipped)."""
        return sum(1 for r in self.rows.values() if r.status in ("done", "error", "stopped", "skipped"))

    @property
    def spent_usd(self) -> float:
        """USD spent by this run's finished rows (every attempt of this run; earlier runs'
        attempts and rows read back from the ledger cost nothing now)."""
        return sum(r.result.run_cost_usd for r in self.rows.values() if r.result is not None)

    def counts(self) -> dict[str, int]:
        """Rows by status, in the order the progress line names them: done, error, stopped,
        skipped, running (of which ``waiting``: a request waits for a person), pending."""
        out = dict.fromkeys(("done", "error", "stopped", "skipped", "running", "pending"), 0)
        for state in self.rows.values():
            out[state.status] = out.get(state.status, 0) + 1
        out["waiting"] = len({item.key for item in self.queue.pending})
        return out

    @property
    def elapsed_s(self) -> float:
        """Seconds since the fleet started."""
        if self.started is None:
            return 0.0
        return (self.ended if self.ended is not None else time.monotonic()) - self.started

    def estimate_left_s(self) -> float | None:
        """Seconds left at the pace so far (rows started this run), or None before any finished."""
        ran = [r for r in self.rows.values() if r.result is not None and not r.result.from_ledger and r.started]
        left = sum(1 for r in self.rows.values() if r.status in ("pending", "running"))
        if not ran or not left:
            return None if left else 0.0
        per_row = sum(r.elapsed_s for r in ran) / len(ran)
        return per_row * left / max(1, min(self.concurrency, left))

    def _changed(self) -> None:
        for item in list(self.queue.pending):
            self.waited.add(item.key)
        for listener in list(self.listeners):
            try:
                listener()
            except Exception:
                log.exception("kandev_nb fleet listener %r failed", listener)

    # -- running -----------------------------------------------------------------------------

    async def run(self) -> pd.DataFrame:
        """Run every row that has no finished ledger row (all with `redo`) and return the
        result frame (:func:`~kandev_nb.fleet.results.result_frame`).

        A cancelled await (the kernel's interrupt) stops every running row, marks the rows
        not started "skipped", and returns the frame so far.
        """
        _RUNNING.append(self)
        try:
            return await self._run()
        finally:
            if self in _RUNNING:
                _RUNNING.remove(self)

    async def _run(self) -> pd.DataFrame:
        loop = asyncio.get_running_loop()
        self.started = time.monotonic()
        finished = await self._finished_rows()
        for key, state in self.rows.items():
            future: asyncio.Future[RowResult] = loop.create_future()
            self.futures[key] = future
            if key in finished:
                self._finish(state, finished[key])
                continue
            task = loop.create_task(self._row(state))
            self._tasks[key] = task
            task.add_done_callback(functools.partial(self._task_done, state))
        self._changed()
        pending = list(self._tasks.values())
        try:
            if pending:
                await asyncio.wait(pending)
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if current is not None:
                current.uncancel()
            self.stop(reason="stopped by the kernel's interrupt")
            await asyncio.wait(pending)
        self.ended = time.monotonic()
        self.pacing.close()
        self._changed()
        return self.frame()

    def frame(self) -> pd.DataFrame:
        """The result frame of the rows finished so far (others "skipped", "not run")."""
        results = {k: r.result for k, r in self.rows.items() if r.result is not None}
        return result_frame(self.spec.keys, self.spec.frame.index, results, self.spec.schema)

    async def as_completed(self) -> AsyncIterator[RowResult]:
        """Each row's :class:`RowResult` as it finishes (like ``dask.distributed.as_completed``);
        call while or after :meth:`run` runs."""
        while not self.futures:
            await asyncio.sleep(0.01)
        for next_done in asyncio.as_completed(list(self.futures.values())):
            yield await next_done

    def stop(self, key: Any = None, *, reason: str = "stopped by you") -> None:
        """Stop one row (`key`) or, with no key, every row: a running row is interrupted (the
        protocol's `interrupt`) and ends "stopped" (a CLI still there after the grace,
        :data:`~kandev_nb.fleet.reaper.STOP_GRACE_S`, is killed with what it started); a row not
        started yet ends "skipped"."""
        if key is None:
            self.stopped_reason = self.stopped_reason or reason
            targets = list(self.rows.values())
        else:
            targets = [self.rows[key]]
        for state in targets:
            if state.status in ("pending", "running") and state.stop_reason is None:
                state.stop_reason = reason
                if state.status == "running":  # a CLI still there after the grace is killed: the row ends "stopped"
                    after_grace(functools.partial(kill_unfinished, state))
                if state.status == "running" and state.session is not None:
                    self._interrupt(state, state.session)
        self._changed()

    def _interrupt(self, state: RowState, session: Session) -> None:
        """Send the row's turn the protocol's `interrupt` once it runs (a session still
        starting is interrupted at its first event, :meth:`_on_event`)."""
        if state.interrupt_sent or session.state is not SessionState.RUNNING:
            return
        state.interrupt_sent = True
        task = asyncio.get_running_loop().create_task(session.interrupt())
        task.add_done_callback(lambda t: t.exception() if not t.cancelled() else None)
        session.broker.deny_all(state.stop_reason or "stopped")

    def _task_done(self, state: RowState, task: asyncio.Task[RowResult]) -> None:
        if task.cancelled() or task.exception() is not None:
            error = "cancelled" if task.cancelled() else f"{type(task.exception()).__name__}: {task.exception()}"
            self._finish(state, RowResult(state.key, "error", error))

    def _finish(self, state: RowState, result: RowResult) -> RowResult:
        if state.result is not None:
            return state.result
        if not result.from_ledger:  # the row's attempts of earlier runs count too
            result.add_earlier(*self._earlier.get(state.key, (None, 0)))
        state.result, state.status, state.activity = result, result.status, ""
        if state.started is not None:
            state.ended = time.monotonic()
        future = self.futures.get(state.key)
        if future is not None and not future.done():
            future.set_result(result)
        self._check_budget()
        self._changed()
        return result

    def _check_budget(self) -> None:
        if self.budget_usd is None or self._budget_hit or self.spent_usd < self.budget_usd:
            return
        self._budget_hit = True
        reason = f"the fleet's budget of ${self.budget_usd:g} was spent (${self.spent_usd:.4f})"
        for state in self.rows.values():
            if state.status == "running":
                self.stop(state.key, reason=f"stopped: {reason}")

    async def _row(self, state: RowState) -> RowResult:
        await self._limiter.acquire()
        try:
            skip = self._skip_reason(state)
            if skip is not None:
                return self._finish(state, RowResult(state.key, "skipped", skip))
            state.status, state.started, state.activity = "running", time.monotonic(), "starting"
            self._changed()
            result = await self.execute_row(state)
            return self._finish(state, result)
        finally:
            await self._limiter.release()

    def _skip_reason(self, state: RowState) -> str | None:
        if state.stop_reason is not None:
            return f"never started: {state.stop_reason}"
        if self.budget_usd is not None and self.spent_usd >= self.budget_usd:
            return f"never started: the fleet's budget of ${self.budget_usd:g} was spent (${self.spent_usd:.4f})"
        return None

    def session_for(self, state: RowState, cwd: Any = None, *, mark: str | None = None) -> Session:
        """The fresh Session of one row (named ``<fleet>[<key>]``), in `cwd` (its worktree),
        else the row's own working directory when the fleet has a cwd column (`mark`: its reaper mark)."""
        config = replace(self.config, env={**self.config.env, MARK: mark}) if mark else self.config
        if cwd is not None:
            config = replace(config, cwd=cwd)
        elif self.spec.cwds is not None:
            config = replace(config, cwd=self.spec.cwds[state.key])
        session = Session(config, name=f"{self.name or 'fleet'}[{state.key}]")
        if session.broker.policy is None:  # the fleet's "Deny for all rows" rules hold in every mode
            session.broker.policy = LabelledPolicy(fleet_denies(self.queue), "the fleet's rule (Deny for all rows)")
        return session

    async def execute_row(self, state: RowState) -> RowResult:
        """Run one row's turn in a fresh Session and record it; never raises for the row's
        own failures (a CLI that cannot start, a failed turn, an answer that does not
        validate: status "error" with the reason). A transient failure (:func:`transient`) is
        tried again in the same session (the CLI resumes the conversation), up to
        :attr:`retries` times; the result's cost includes every attempt. With
        :attr:`worktrees`, the row runs in its own git worktree and its result counts the
        changes (:mod:`kandev_nb.fleet.worktrees`)."""
        tree = None
        if self.worktrees is not None:
            try:
                tree = await self.worktrees.make(state.key)
            except (KandevError, OSError) as exc:
                return RowResult(state.key, "error", f"no worktree for this row: {exc}")
        mark = REAPER.watch()  # what its CLI starts dies with the kernel, by SIGKILL too
        session = self.session_for(state, tree.cwd if tree is not None else None, mark=mark)
        state.session = session
        tries: list[RowResult] = []
        try:
            for attempt in range(self.retries + 1):
                turn, result, again = await self._attempt(state, session)
                tries.append(result)
                if turn is not None:
                    await self._record(turn, result, state.position)
                if result.status != "error" or not again or attempt == self.retries or state.stop_reason:
                    break
                state.activity = f"retry {attempt + 1} of {self.retries}: {(result.error or '')[:60]}"
                self._changed()
        finally:
            state.session = None
            with contextlib.suppress(Exception):
                await session.close()
            REAPER.forget(mark)
        result = over_attempts(tries)
        if state.stop_reason is not None and result.status == "error":  # its CLI was killed at the deadline
            result.status, result.error = "stopped", state.stop_reason
        if tree is not None:
            try:
                result.extra = await asyncio.to_thread(tree.stats)
            except (KandevError, OSError) as exc:
                log.warning("kandev_nb fleet: row %r: no diff stats: %s", state.key, exc)
        return result

    async def _attempt(self, state: RowState, session: Session) -> tuple[Any, RowResult, bool]:
        """One turn of a row: (turn or None, its result, whether a retry may help)."""
        turn = None
        try:
            turn = await session.run(
                state.prompt,
                consumers=[lambda event: self._on_event(state, session, event)],
                approve=self.approve,
                approval_timeout=self.approval_timeout,
                output_type=self.spec.output,
                origin=Origin.fleet_row(self.name, row=state.key, position=state.position, notebook=self.notebook),
            )
            return turn, self._judge(state, turn, None), transient(turn)
        except StructuredOutputError as exc:
            turn = exc.turn if exc.turn is not None else (session.turns[-1] if session.turns else None)
            if turn is None:
                return None, RowResult(state.key, "error", str(exc)), False
            return turn, self._judge(state, turn, str(exc)), transient(turn)
        except CLIProcessError as exc:  # the CLI died before answering initialize
            return None, RowResult(state.key, "error", f"{type(exc).__name__}: {exc}"), True
        except (KandevError, OSError) as exc:
            return None, RowResult(state.key, "error", f"{type(exc).__name__}: {exc}"), False

    def _judge(self, state: RowState, turn: Any, output_error: str | None) -> RowResult:
        if turn.stopped or (state.stop_reason is not None and turn.error is not None):
            return RowResult.of_turn(state.key, turn, "stopped", state.stop_reason or "stopped by you")
        if turn.failed:
            message = turn.error.message if turn.error is not None else "the turn failed"
            return RowResult.of_turn(state.key, turn, "error", message)
        if output_error is not None:
            return RowResult.of_turn(state.key, turn, "error", output_error)
        return RowResult.of_turn(state.key, turn, "done", None)

    def _on_event(self, state: RowState, session: Session, event: ev.AgentEvent) -> None:
        """A row's event: its activity line, and its approvals into the fleet's queue; a row
        asked to stop while its CLI was starting is interrupted now."""
        for watch in list(state.watchers):
            try:
                watch(event)
            except Exception:
                log.exception("kandev_nb fleet: a watcher of row %r failed", state.key)
        if state.stop_reason is not None and not state.interrupt_sent:
            self._interrupt(state, session)
        if isinstance(event, ev.PermissionRequest):
            state.activity = "waiting · " + activity_of(event.tool_name, event.input)
            self.queue.offer(state.key, state.position, self.total, event, session.cwd)
        elif isinstance(event, ev.ToolCall):
            state.activity = activity_of(event.tool_name, event.input)
        elif isinstance(event, ev.MessageChunk) and not state.activity.startswith("writing"):
            state.activity = "writing"
        elif isinstance(event, ev.ApiRetry | ev.RateLimit):
            self.pacing.report(event)
            status = getattr(event, "status", None)
            state.activity = f"API retry after HTTP {status}" if status else "rate limited"
        else:
            return
        self._changed()

    # -- the ledger --------------------------------------------------------------------------

    async def _record(self, turn: Any, result: RowResult, position: int) -> None:
        if self.ledger is None:
            return
        turn.origin = Origin.fleet_row(self.name, row=result.key, position=position, notebook=self.notebook)
        turn.meta["fleet"] = {
            "fleet": self.name,
            "fleet_key": encode_key(result.key),
            "fleet_fingerprint": self.row_fingerprint(result.key),
            "fleet_result": {**result.ledger_json(), "position": position, "fingerprint": self.fingerprint},
        }
        try:
            await self.ledger.arecord(turn, notebook=self.notebook)
        except LedgerError as exc:
            log.warning("kandev_nb fleet: row %r not recorded: %s", result.key, exc)

    async def dry_run(self) -> Any:
        """What :meth:`run` would do, sending nothing: the rows it would start, the first
        prompts as they would be sent, and a cost estimate from the ledger's earlier rows of
        the same template and options (a :class:`~kandev_nb.fleet.estimate.FleetEstimate`)."""
        from kandev_nb.fleet.estimate import estimate

        return await estimate(self)

    def row_fingerprint(self, key: Any) -> str:
        """The ledger's ``fleet_fingerprint`` of row `key`: 16 hex digits of the fleet's
        :attr:`fingerprint` (template and options) and the row's prompt, so a row whose data
        (or a notebook variable its prompt reads) changed runs again on a rerun."""
        text = f"{self.fingerprint}\n{self.rows[key].prompt}"
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    async def _finished_rows(self) -> dict[Any, RowResult]:
        """The rows the ledger has finished ("done") with this fingerprint, by key ({} with no
        name, no ledger, or `redo`); also notes each row's earlier turns (their cost and
        number, any fingerprint) for its `cost_usd` and `attempts`."""
        if self.name is None or self.ledger is None:
            return {}
        runs = await asyncio.to_thread(self.ledger.runs, fleet=self.name)
        if runs.empty:
            return {}
        legacy = {legacy_key_text(k): k for k in self.rows}
        out: dict[Any, RowResult] = {}
        earlier: dict[Any, list[Any]] = {}
        for row in runs.to_dict("records"):  # oldest first: a later row of a key wins
            key = self._row_key(row.get("fleet_key"), legacy)
            if key is None:
                continue
            cost = row.get("cost_usd")
            spent = earlier.setdefault(key, [None, 0])
            spent[1] += 1
            if cost is not None and not pd.isna(cost):
                spent[0] = (spent[0] or 0.0) + float(cost)
            saved = row.get("fleet_result") or {}
            if self.redo or row.get("fleet_fingerprint") != self.row_fingerprint(key):
                continue
            if saved.get("status") == "done":
                out[key] = RowResult.of_ledger(key, row, self.spec.output)
            else:
                out.pop(key, None)
        self._earlier = {k: (v[0], v[1]) for k, v in earlier.items()}
        for key, result in out.items():  # read back: every attempt the ledger has of the row
            cost, result.attempts = self._earlier[key]
            result.cost_usd = cost
        return out

    def _row_key(self, stored: Any, legacy: dict[str, Any]) -> Any:
        """The key of this fleet's row a ledger row's decoded ``fleet_key`` names, or None: the
        same value (the typed encoding), else the same text as releases before it wrote."""
        if stored is None or (not isinstance(stored, tuple) and pd.isna(stored)):
            return None
        try:
            if stored in self.rows:
                return stored
        except TypeError:  # an unhashable value
            return None
        return legacy.get(legacy_key_text(stored))
