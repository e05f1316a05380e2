"""Background work of a turn: it stays open until its background tasks are done.

Measured on CLI 2.1.332 (tests/controls/test_background.py): a background Bash
(``run_in_background: true``) gives ``system/task_started`` (`task_id`, `tool_use_id`), then
the turn's ``result`` and ``system/session_state_changed`` ``{"state": "idle"}`` while the
command still runs. When it ends: ``task_notification`` (``status``, ``summary``),
``session_state_changed`` ``running``, and the CLI's own follow-up request with a SECOND
``result`` for the same prompt, then ``idle`` (the two results of one prompt of
claude-agent-sdk-typescript#376). :class:`BackgroundWatch` keeps the turn open until no task
it started runs and the follow-up result came, so that result and its text are attributed to
the same turn (its stats are added to the first result's), never lost or shown in the next
cell. The Stop button (:meth:`Session.interrupt`) then sends ``stop_task`` for each open task.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from kandev_nb.agent import events as ev

__all__ = ["BACKGROUND_HOLD_S", "FOLLOW_UP_WAIT_S", "BackgroundWatch", "merge_stats"]

BACKGROUND_HOLD_S = 600.0
"""Seconds at most a turn stays open for its background tasks after its first result."""
FOLLOW_UP_WAIT_S = 30.0
"""Seconds a turn waits, after its last task ended, for the CLI's follow-up result."""

_SUMMED = (
    "cost_usd",
    "duration_api_ms",
    "num_turns",
    "input_tokens",
    "output_tokens",
    "cache_read_input_tokens",
    "cache_creation_input_tokens",
)


def merge_stats(first: ev.TurnStats, later: ev.TurnStats) -> ev.TurnStats:
    """The stats of one turn that got two results: per-turn figures summed (USD, ms,
    tokens), the prompts taken in (`user_message_uuids`) of both, the rest (model, subtype,
    totals, `result_origin`) from the later result."""
    summed = {k: getattr(first, k) + getattr(later, k) for k in _SUMMED if hasattr(first, k)}
    prompts = (*first.user_message_uuids, *(u for u in later.user_message_uuids if u not in first.user_message_uuids))
    return later.model_copy(update={**summed, "user_message_uuids": prompts})


class BackgroundWatch:
    """Which background tasks the running turn started, and whether it must stay open.

    Attributes:
        open_tasks: `task_id` -> description, started and not ended.
        state: the last ``session_state_changed`` state ("running", "idle"), or None.
    """

    def __init__(self) -> None:
        self.open_tasks: dict[str, str] = {}
        self.state: str | None = None
        self._first_result: float | None = None
        self._last_end: float | None = None
        self._results_after_end = 0

    def reset(self) -> None:
        """A new turn starts: forget the last turn's timing (tasks still open stay)."""
        self._first_result = self._last_end = None
        self._results_after_end = 0

    def note_raw(self, raw: Mapping[str, Any]) -> None:
        """Read a `system/session_state_changed` line (the adapter ignores it)."""
        if raw.get("type") == "system" and raw.get("subtype") == "session_state_changed":
            self.state = str(raw.get("state") or "") or None

    def note(self, event: ev.AgentEvent) -> None:
        """Follow SubagentTask and Complete events of the turn."""
        if isinstance(event, ev.SubagentTask) and event.task_id:
            if event.phase == "started" and event.task_type in ("local_bash", "local_agent", None):
                self.open_tasks[event.task_id] = event.description or event.task_id
            elif event.phase == "ended" and self.open_tasks.pop(event.task_id, None) is not None:
                self._last_end, self._results_after_end = time.monotonic(), 0
        elif isinstance(event, ev.Complete):
            if self._first_result is None:
                self._first_result = time.monotonic()
            if self._last_end is not None:
                self._results_after_end += 1

    def holds(self, turn: Any, now: float | None = None) -> bool:
        """Whether `turn` (done: it has a result) must stay open for its background work."""
        if not turn.done or turn.interrupted or self._first_result is None:
            return False
        now = time.monotonic() if now is None else now
        if now - self._first_result > BACKGROUND_HOLD_S:
            return False
        if self.open_tasks:
            return True
        if self._last_end is None:
            return False
        waiting_follow_up = self._results_after_end == 0 and now - self._last_end < FOLLOW_UP_WAIT_S
        return waiting_follow_up or self.state == "running"
