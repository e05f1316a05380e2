"""The kernel's end of kandev-nb's JupyterLab extension: one comm per page (issue 37).

The extension (``src/kernels.ts``) opens a comm, target
:data:`~kandev_nb.notebook.lab_messages.TARGET`, on every running kernel of the server, over
its own kernel connection (Jupyter authenticates it; no port or token of ours). A kernel
without kandev_nb loaded refuses it (ipykernel closes a comm of an unknown target) and the
page tries again after the kernel next ran a cell. ``%load_ext kandev_nb`` registers the
target (:func:`register`).

While a comm is open the kernel sends a :class:`~kandev_nb.notebook.lab_messages.State`
whenever what the panel shows changed (checked every :data:`POLL_S` s, while the kernel's
event loop runs: it does while a `%%claude` cell awaits its turn, and between cells): the
waiting approvals of every session and of every running fleet's rows
(:func:`~kandev_nb.notebook.pending.waiting`, whole payload and the one-line form), the running
turns, the running fleets (rows by status, spend; :func:`~kandev_nb.fleet.runner.running_fleets`),
each session's turns and cost today.

The page answers through the same broker and the same payload binding as the card:
an :class:`~kandev_nb.notebook.lab_messages.Answer` allows only with the digest of a text
that was the whole payload (:meth:`~kandev_nb.notebook.pending.PendingApproval.allow_shown`),
and only while the request waiting under that id is the one the page was sent. A fleet row's
approval is answered the same way (its :class:`~kandev_nb.notebook.pending.FleetPendingApproval`
binds to what the row's card on the board shows), and a
:class:`~kandev_nb.notebook.lab_messages.StopFleet` stops a fleet as its board's Stop all does.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import logging
import sys
import threading
from collections.abc import Callable
from typing import Any

from pydantic import ValidationError

from kandev_nb.notebook.lab_messages import (
    PROTOCOL,
    TARGET,
    Answer,
    Answered,
    Hello,
    LabSettings,
    Mismatch,
    RunningFleet,
    RunningTurn,
    SessionCost,
    Settings,
    State,
    Stop,
    StopFleet,
    Waiting,
    read_from_page,
)
from kandev_nb.notebook.pending import PendingApproval, waiting
from kandev_nb.render.card_view import tool_label
from kandev_nb.render.reveal import reveal_text, warning_markdown

__all__ = ["POLL_S", "LabChannel", "apply_settings", "channel", "fleet_id", "register", "snapshot"]

log = logging.getLogger("kandev_nb")

POLL_S = 0.5
"""Seconds between two looks at what the panel shows (only changes are sent)."""


def _version() -> str:
    from kandev_nb._version import __version__

    return str(__version__)


def _waiting_entry(p: PendingApproval, remind_after_s: float | None, fleets: list[Any]) -> Waiting:
    whole = p.broker.surface_whole(p.request_id)
    text, found = reveal_text(whole.text if whole is not None else p.summary)
    return Waiting(
        id=p.request_id,
        session=p.session,
        tool=tool_label(p.tool),
        full_tool=p.tool,
        cell=p.cell,
        age_s=round(p.age_s, 1),
        left_s=None if p.left_s is None else round(p.left_s, 1),
        question=p.question,
        line=p.summary,
        complete=p.complete,
        line_digest=p.line.digest if p.line is not None else None,
        whole=text,
        whole_digest=whole.digest if whole is not None else None,
        warning=warning_markdown(found).replace("**", "").strip(),
        reminded=remind_after_s is not None and p.age_s >= remind_after_s,
        row=getattr(p, "row_label", None),
        fleet=next((fleet_id(f) for f in fleets if f.queue is getattr(p, "queue", None)), None),
    )


def _running_fleets() -> list[Any]:
    """The fleets running in this kernel (:func:`kandev_nb.fleet.runner.running_fleets`), oldest
    first; none when no fleet module was ever imported (no fleet ran)."""
    runner = sys.modules.get("kandev_nb.fleet.runner")
    return list(runner.running_fleets()) if runner is not None else []


def fleet_id(fleet: Any) -> str:
    """The :attr:`~kandev_nb.notebook.lab_messages.RunningFleet.id` of `fleet` while it runs."""
    return f"fleet-{id(fleet):x}"


def _fleet_entry(fleet: Any) -> RunningFleet:
    counts = fleet.counts()
    return RunningFleet(
        id=fleet_id(fleet),
        name=fleet.name,
        cell=getattr(fleet, "cell", None),
        total=fleet.total,
        done=counts["done"],
        error=counts["error"],
        stopped=counts["stopped"],
        skipped=counts["skipped"],
        running=counts["running"],
        pending=counts["pending"],
        waiting=counts["waiting"],
        spent_usd=round(fleet.spent_usd, 6),
        budget_usd=fleet.budget_usd,
        elapsed_s=round(fleet.elapsed_s, 1),
        stopping=fleet.stopped_reason,
    )


def snapshot(state: Any, notebook: str | None, now: float | None = None) -> State:
    """What the panel shows of this kernel now (`state`: a
    :class:`~kandev_nb.notebook.state.NotebookState`; `notebook`: the open tab's path, or None)."""
    from kandev_nb.agent.session import SessionState
    from kandev_nb.notebook.notify import notifier

    note = notifier()
    remind_after_s = note.remind_after_s if note is not None else None
    today = dt.datetime.now(dt.UTC).date()
    wall = dt.datetime.now(dt.UTC)
    turns: list[RunningTurn] = []
    sessions: list[SessionCost] = []
    for name, session in state.sessions.items():
        last = session.turns[-1] if session.turns else None
        running = last is not None and not last.done and session.state is SessionState.RUNNING
        if running and last is not None:
            turns.append(
                RunningTurn(
                    session=name,
                    cell=session.broker.cell,
                    elapsed_s=round(max(0.0, (wall - last.started_at).total_seconds()), 1),
                    context_tokens=last.context.used if last.context is not None else 0,
                    tools=len(last.tools),
                )
            )
        done_today = [t for t in session.turns if t.stats is not None and t.started_at.date() == today]
        sessions.append(
            SessionCost(
                session=name,
                session_id=session.session_id,
                turns_today=len(done_today),
                cost_today_usd=round(sum(t.stats.cost_usd for t in done_today if t.stats), 6),
                running=running,
            )
        )
    fleets = _running_fleets()
    return State(
        version=_version(),
        notebook=notebook,
        waiting=[_waiting_entry(p, remind_after_s, fleets) for p in waiting(state.sessions, now, fleets)],
        turns=turns,
        fleets=[_fleet_entry(f) for f in fleets],
        sessions=sessions,
    )


def _key(state: State) -> str:
    """`state` without the seconds that change on their own (the page counts them)."""
    return state.model_copy(
        update={
            "waiting": [w.model_copy(update={"age_s": 0, "left_s": w.left_s is not None}) for w in state.waiting],
            "turns": [t.model_copy(update={"elapsed_s": 0}) for t in state.turns],
            "fleets": [f.model_copy(update={"elapsed_s": 0}) for f in state.fleets],
        }
    ).model_dump_json()


def apply_settings(state: Any, settings: LabSettings) -> None:
    """Take Lab's settings as this kernel's defaults: `defaultMode` becomes the notebook's mode
    and `unansweredCard`/`denyAfterSeconds` what an unanswered card does, except where
    ``kandev_nb.configure(...)`` set them in this kernel (`configure` wins). The mode changes
    only when Lab's `defaultMode` is new to this kernel (a page saying hello again with the
    same settings changes nothing), and a mode a person chose on a card for a session stays."""
    before = state.lab_settings
    state.lab_settings = settings
    new_mode = before is None or before.defaultMode != settings.defaultMode
    if new_mode and "mode" not in state.configured:
        state.settings.mode = settings.defaultMode


class LabChannel:
    """The open comms of the extension's pages with this kernel (usually one per browser tab
    of the server: the extension opens one per kernel).

    Attributes:
        comms: the open comms by `comm_id`.
        answers: ``(request_id, action, ok)`` of every answer a page sent (tests read it).
    """

    def __init__(self, loop: asyncio.AbstractEventLoop | None) -> None:
        self.loop = loop
        self.comms: dict[str, Any] = {}
        self.answers: list[tuple[str, str, bool]] = []
        self._sent: dict[str, str] = {}  # comm_id -> key of the last State it was sent
        self._task: asyncio.Task[None] | None = None
        self._thread = threading.get_ident()

    # -- comms ------------------------------------------------------------------------------

    def open(self, comm: Any, msg: dict[str, Any]) -> None:
        """The comm target's handler: a page said hello (``comm_open`` data is a Hello)."""
        data = msg.get("content", {}).get("data")
        try:
            hello = read_from_page(data)
            if not isinstance(hello, Hello):
                raise TypeError(f"the first message must be a hello, not {hello.kind!r}")
        except (ValidationError, TypeError) as exc:
            comm.send(Mismatch(version=_version(), error=f"unreadable hello: {exc}").model_dump())
            comm.close()
            return
        if hello.protocol != PROTOCOL:
            comm.send(
                Mismatch(
                    version=_version(),
                    error=(
                        f"this kernel runs kandev_nb {_version()} (protocol {PROTOCOL}), the page's extension "
                        f"{hello.version} (protocol {hello.protocol}): install the same version of both, then "
                        "restart the kernel and reload the page"
                    ),
                ).model_dump()
            )
            comm.close()
            return
        self.comms[comm.comm_id] = comm
        comm.on_msg(lambda m: self._in_loop(lambda: self._on_msg(comm, m)))
        comm.on_close(lambda _m: self._in_loop(lambda: self._forget(comm.comm_id)))
        self._in_loop(lambda: self._opened(comm, hello))

    def _opened(self, comm: Any, hello: Hello) -> None:
        from kandev_nb.notebook.state import current

        apply_settings(current(), hello.settings)
        self.refresh(force=comm.comm_id)
        self.start()

    def _forget(self, comm_id: str) -> None:
        self.comms.pop(comm_id, None)
        self._sent.pop(comm_id, None)

    def _in_loop(self, fn: Callable[[], None]) -> None:
        """Run `fn` in the kernel's event loop thread (comm callbacks may come on a subshell's)."""
        if self.loop is None or threading.get_ident() == self._thread:
            fn()
        else:
            self.loop.call_soon_threadsafe(fn)

    # -- messages from the page ---------------------------------------------------------------

    def _on_msg(self, comm: Any, msg: dict[str, Any]) -> None:
        try:
            message = read_from_page(msg.get("content", {}).get("data"))
        except ValidationError as exc:
            log.warning("kandev-nb: a message from the Lab extension was not understood and was dropped: %s", exc)
            return
        if isinstance(message, Answer):
            comm.send(self.answer(message).model_dump())
        elif isinstance(message, Stop):
            self.stop(message.session)
        elif isinstance(message, StopFleet):
            self.stop_fleet(message.id)
        elif isinstance(message, Settings):
            from kandev_nb.notebook.state import current

            apply_settings(current(), message.settings)
        self.refresh()

    def answer(self, message: Answer) -> Answered:
        """Apply `message` to the approval waiting under its id, as the card would, bound to
        what the page showed (:meth:`PendingApproval.allow_shown`)."""
        from kandev_nb.notebook.state import current

        item = next((p for p in waiting(current().sessions) if p.request_id == message.id), None)
        error = ""
        try:
            if item is None:
                raise RuntimeError("this approval is no longer waiting")
            if message.action == "allow":
                item.allow_shown(message.digest)
            else:
                item.deny(message.reason)
        except (RuntimeError, ValueError, TypeError) as exc:
            error = str(exc)
        self.answers.append((message.id, message.action, not error))
        return Answered(id=message.id, ok=not error, error=error)

    def stop(self, session: str | None) -> None:
        """Interrupt the running turn of `session`, as its Stop button; None: every running
        turn of this kernel, a fleet's rows included (each fleet as its board's Stop all)."""
        from kandev_nb.notebook.state import current

        for name, s in list(current().sessions.items()):
            if session is None or name == session:
                with contextlib.suppress(RuntimeError):  # no running loop: nothing runs
                    asyncio.get_running_loop().create_task(s.interrupt())
        if session is None:
            for fleet in _running_fleets():
                self.stop_fleet(fleet_id(fleet))

    def stop_fleet(self, which: str) -> bool:
        """Stop every row of the running fleet whose :func:`fleet_id` is `which`, as its board's
        Stop all does (with the same reason). Returns False when no such fleet runs (it ended)."""
        fleet = next((f for f in _running_fleets() if fleet_id(f) == which), None)
        if fleet is None:
            return False
        from kandev_nb.notebook.fleet_board import STOP_ALL_REASON

        fleet.stop(reason=STOP_ALL_REASON)
        return True

    # -- state to the pages -----------------------------------------------------------------

    def refresh(self, force: str | None = None) -> None:
        """Send the State to every comm whose last one differs (and to `force`, a comm_id)."""
        if not self.comms:
            return
        from kandev_nb.notebook.bridge import tab_path
        from kandev_nb.notebook.state import current

        state = snapshot(current(), tab_path())
        key = _key(state)
        data = None
        for comm_id, comm in list(self.comms.items()):
            if self._sent.get(comm_id) == key and comm_id != force:
                continue
            data = data or state.model_dump()
            try:
                comm.send(data)
            except Exception:  # noqa: BLE001 - a closed comm: forget it
                log.warning("kandev-nb: the Lab extension's comm %s could not be sent to", comm_id)
                self._forget(comm_id)
                continue
            self._sent[comm_id] = key

    def start(self) -> None:
        """Keep the pages current from a task of the kernel's event loop (once)."""
        if self._task is not None and not self._task.done():
            return
        with contextlib.suppress(RuntimeError):
            self._task = asyncio.get_running_loop().create_task(self._poll())

    async def _poll(self) -> None:
        while self.comms:
            try:
                self.refresh()
            except Exception:  # never let a broken refresh stop the panel
                log.exception("kandev-nb Lab channel: refresh failed")
            await asyncio.sleep(POLL_S)


_channel: LabChannel | None = None


def channel() -> LabChannel | None:
    """The kernel's channel to the extension's pages, or None before :func:`register`."""
    return _channel


def register(ip: Any) -> LabChannel | None:
    """Register the comm target (``%load_ext kandev_nb``; again after ``%reload_ext``).
    Returns the channel, or None outside an ipykernel (a terminal IPython, a script)."""
    global _channel
    if getattr(ip, "kernel", None) is None:
        return None
    from comm import get_comm_manager

    loop: asyncio.AbstractEventLoop | None
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        loop = None
    if _channel is None:
        _channel = LabChannel(loop)
    get_comm_manager().register_target(TARGET, _channel.open)
    return _channel
