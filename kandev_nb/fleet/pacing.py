"""How many rows run at once: the fleet's concurrency, lowered while the API rate-limits.

:class:`Limiter` holds at most `limit` rows at once; the limit can change while rows wait.
:class:`RateGovernor` halves it when a row's CLI reports a retry after HTTP 429 or 529
(`system/api_retry`, :class:`~kandev_nb.agent.events.ApiRetry`; or a `rate_limit_event`
whose status is rejected), says so ("rate limited: 8 -> 4"), and raises it by one every
`quiet_s` seconds without another such report, back to the concurrency asked for.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any, Final

from kandev_nb.agent import events as ev

__all__ = ["RATE_STATUSES", "Limiter", "RateGovernor"]

RATE_STATUSES: Final = frozenset({429, 529})
"""HTTP statuses that mean "too many requests" / "overloaded"."""


class Limiter:
    """At most `limit` holders at once (an adjustable semaphore)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.active = 0
        self._cond = asyncio.Condition()

    async def acquire(self) -> None:
        """Wait for a free slot and take it."""
        async with self._cond:
            await self._cond.wait_for(lambda: self.active < self.limit)
            self.active += 1

    async def release(self) -> None:
        """Give a slot back."""
        async with self._cond:
            self.active -= 1
            self._cond.notify_all()

    async def set_limit(self, limit: int) -> None:
        """Change the limit (running holders keep their slots; waiting ones see it at once)."""
        async with self._cond:
            self.limit = limit
            self._cond.notify_all()


def is_rate_limit(event: ev.AgentEvent) -> bool:
    """Whether `event` reports a rate limit: an ApiRetry after 429/529, or a RateLimit whose
    `info.status` is "rejected" (the CLI's `rate_limit_event`)."""
    if isinstance(event, ev.ApiRetry):
        return event.status in RATE_STATUSES
    if isinstance(event, ev.RateLimit):
        info: Any = event.info.get("rate_limit_info", event.info)
        return isinstance(info, dict) and info.get("status") == "rejected"
    return False


class RateGovernor:
    """Lowers a :class:`Limiter` on rate limits and raises it again after quiet periods.

    Attributes:
        note: the board's line ("rate limited: 8 -> 4"), "" when not limited.
        history: every limit it set, in order.
    """

    def __init__(self, limiter: Limiter, concurrency: int, quiet_s: float, on_change: Callable[[], None]) -> None:
        self.limiter = limiter
        self.concurrency = concurrency
        self.quiet_s = quiet_s
        self.note = ""
        self.history: list[int] = []
        self._last = 0.0
        self._on_change = on_change
        self._task: asyncio.Task[None] | None = None

    def report(self, event: ev.AgentEvent) -> None:
        """A row's event; a rate limit halves the limit (at most once a second)."""
        if not is_rate_limit(event):
            return
        now = time.monotonic()
        current = self.limiter.limit
        if now - self._last >= 1.0 and current > 1:
            lowered = max(1, current // 2)
            self.note = f"rate limited: {current} -> {lowered}"
            self._set(lowered)
        self._last = now
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._recover())

    def _set(self, limit: int) -> None:
        self.history.append(limit)
        asyncio.get_running_loop().create_task(self.limiter.set_limit(limit))
        self._on_change()

    async def _recover(self) -> None:
        while self.limiter.limit < self.concurrency:
            await asyncio.sleep(self.quiet_s)
            if time.monotonic() - self._last >= self.quiet_s:
                raised = self.limiter.limit + 1
                self.note = "" if raised >= self.concurrency else f"rate limited: now {raised}"
                self._set(raised)
                await asyncio.sleep(0)

    def close(self) -> None:
        """Stop the recovery timer."""
        if self._task is not None:
            self._task.cancel()
