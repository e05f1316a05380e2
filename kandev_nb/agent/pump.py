"""Delivering a running turn's events: the turn timer, the kernel's interrupt, the fan-out.

:class:`TurnPump` is mixed into :class:`~kandev_nb.agent.session.Session` (which owns the
state read here): :meth:`TurnPump._pump` moves a turn's events from the session's queue to
its consumers until the turn's `Complete`, and :meth:`TurnPump.stream` yields them instead.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from kandev_nb.agent import events as ev
from kandev_nb.agent.background import merge_stats

if TYPE_CHECKING:
    from kandev_nb.agent.adapter import Adapter
    from kandev_nb.agent.approvals import ApprovalBroker
    from kandev_nb.agent.background import BackgroundWatch
    from kandev_nb.agent.config import SessionConfig
    from kandev_nb.agent.turn import Turn

__all__ = ["INTERRUPT_GRACE_S", "Consumer", "TurnPump"]

log = logging.getLogger("kandev_nb")

INTERRUPT_GRACE_S = 15.0
"""Seconds the CLI gets to end a turn after an interrupt before its process is closed."""

Consumer = Callable[[ev.AgentEvent], None]
"""Anything called with each event of a turn, in order (widgets, the ledger, a list.append)."""


class TurnPump:
    """The turn's event loop (mixed into Session, which owns the state read here)."""

    adapter: Adapter
    broker: ApprovalBroker
    background: BackgroundWatch
    _config: SessionConfig
    _queue: asyncio.Queue[ev.AgentEvent] | None
    _interrupted_at: float | None

    @property
    def session_id(self) -> str | None:
        raise NotImplementedError

    def _idle_s(self) -> float:
        raise NotImplementedError

    def _begin_interrupt(self, turn: Turn | None) -> None:
        raise NotImplementedError

    async def _teardown(self) -> None:
        raise NotImplementedError

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
                    message = (
                        f"Claude Code did not end the turn within {INTERRUPT_GRACE_S:g} s of the interrupt; "
                        "its process was closed (the next cell resumes the conversation)."
                    )
                    sid, uuid = self.session_id, self.adapter.last_message_uuid
                    ended = ev.failed_turn(
                        message,
                        "interrupt_timeout",
                        session_id=sid,
                        last_message_uuid=uuid,
                        result_subtype="interrupted",
                    )
                    for event in ended:
                        self._dispatch(event, sinks)
                    await self._teardown()
                    break
                limit = self._config.inactivity_timeout
                idle = self._idle_s()
                if (
                    limit
                    and self._interrupted_at is None
                    and not self.broker.approvals
                    and idle > limit
                    and not turn.done
                ):
                    self._dispatch(
                        ev.Error(
                            message=f"No message from Claude Code for {idle:.0f} s (limit {limit:g} s, "
                            "configure(inactivity_timeout=...)); the turn was interrupted.",
                            subtype="inactivity_timeout",
                            session_id=self.session_id,
                        ),
                        sinks,
                    )
                    self._begin_interrupt(turn)
                continue
            except asyncio.CancelledError:
                task = asyncio.current_task()
                if task is not None:
                    task.uncancel()
                turn.meta["cancelled"] = True  # the kernel's interrupt, not the Stop button (the magic re-raises)
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
