"""Where a Session is (its own module: the Session and its live controls both read it)."""

from __future__ import annotations

import enum

__all__ = ["SessionState"]


class SessionState(enum.Enum):
    """Where a :class:`~kandev_nb.agent.session.Session` is: NEW (no process), READY, RUNNING
    (a turn), CLOSED."""

    NEW = "new"
    READY = "ready"
    RUNNING = "running"
    CLOSED = "closed"
