"""A `Turn`: one prompt and everything the CLI did about it, collected from AgentEvents."""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kandev_nb.agent import events as ev
from kandev_nb.agent.origin import Origin
from kandev_nb.agent.tools import normalize_tool_call

__all__ = ["DISPLAY_RENDERERS", "ToolRecord", "Turn", "compact_events"]

DISPLAY_RENDERERS: dict[str, Callable[[Turn], str]] = {}
"""MIME type -> renderer of a finished :class:`Turn` for IPython's rich display.

Filled by ``kandev_nb/__init__.py`` with :mod:`kandev_nb.render.static` (the agent layer does
not import the renderers above it); empty, a Turn displays as its ``repr``."""


def compact_events(events: list[ev.AgentEvent]) -> list[ev.AgentEvent]:
    """Merge runs of consecutive text (or thinking) chunks from the same thread into one event.

    A finished turn keeps one MessageChunk per text run instead of one per stream delta
    (about 500 bytes each), so 200 long turns stay small; nothing else changes.
    """
    out: list[ev.AgentEvent] = []
    run: list[str] = []
    for event in events:
        last = out[-1] if out else None
        if (
            isinstance(event, ev.MessageChunk | ev.Reasoning)
            and type(last) is type(event)
            and last is not None
            and last.parent_tool_use_id == event.parent_tool_use_id
        ):
            if not run:
                run.append(last.text)
            run.append(event.text)
            continue
        if run:
            out[-1] = out[-1].model_copy(update={"text": "".join(run)})
            run = []
        out.append(event)
    if run:
        out[-1] = out[-1].model_copy(update={"text": "".join(run)})
    return out


@dataclass
class ToolRecord:
    """One tool call of a turn: the call, its latest update, and its approval, if any."""

    call: ev.ToolCall
    update: ev.ToolUpdate | None = None
    decision: ev.PermissionDecided | None = None
    started: float = 0.0
    ended: float | None = None
    proposed: ev.ToolCall | None = None
    """The call as the model proposed it, when the person edited its input before allowing
    (`call` then holds the input that ran, ``decision.updated_input``)."""

    @property
    def edited(self) -> bool:
        """True when the call ran with an input the person edited."""
        return self.proposed is not None

    @property
    def status(self) -> str:
        """ "running", "complete" or "error" (a denied tool ends as "error")."""
        return self.update.status if self.update else "running"

    @property
    def wall_ms(self) -> int | None:
        """Wall time from tool_use to its tool_result, in ms (None while running): the time the
        approval waited for an answer included."""
        return None if self.ended is None else int((self.ended - self.started) * 1000)

    @property
    def approval_wait_ms(self) -> int:
        """How long the call's approval waited for an answer (a person, a timeout), in ms; 0
        when nobody was asked (`decision.waited_ms`)."""
        return self.decision.waited_ms if self.decision is not None else 0

    @property
    def duration_ms(self) -> int | None:
        """The tool's own run time, in ms (None while running): tool_use to tool_result less
        the time its approval waited for an answer (:attr:`approval_wait_ms`), so a person's
        six minutes of thinking are not the tool's."""
        wall = self.wall_ms
        return None if wall is None else max(wall - self.approval_wait_ms, 0)


@dataclass
class Turn:
    """The record of one turn, built by :meth:`add` from the session's events.

    Attributes:
        prompt: the text sent.
        started_at, ended_at: timezone-aware UTC datetimes.
        events: every event, in order (nothing dropped; `Unknown` ones included).
        text_parts, reasoning_parts: the main-thread message_chunk / reasoning texts; read
            them joined as ``turn.text`` and ``turn.reasoning`` (appending stays O(1)).
        tools: tool calls by `tool_use_id`, in call order.
        stats: from the `Complete` event, once the turn is over.
        error: the `Error` event, if the turn failed.
        approval_wait_ms: time spent waiting for approvals (sum over requests), ms.
        mode: the permission mode the turn started in ("supervised", "plan", "acceptEdits",
            "autonomous"), set by :meth:`Session.run <kandev_nb.agent.session.Session.run>`.
        model: the model it ran with: `system/init.model` of the CLI process (else the
            session's configured model, else the result's main `modelUsage` key).
        prompt_uuid: the `uuid` the prompt was sent with (a new UUID per turn): its entry in
            the CLI's transcript, named again by the turn's result (:attr:`origin_echoed`).
        origin: which cell, fleet row or Python call sent the prompt (:mod:`kandev_nb.agent.origin`).
    """

    prompt: str
    session_name: str = "default"
    started_at: dt.datetime = field(default_factory=lambda: dt.datetime.now(dt.UTC))
    ended_at: dt.datetime | None = None
    events: list[ev.AgentEvent] = field(default_factory=list)
    text_parts: list[str] = field(default_factory=list, repr=False)
    reasoning_parts: list[str] = field(default_factory=list, repr=False)
    tools: dict[str, ToolRecord] = field(default_factory=dict)
    stats: ev.TurnStats | None = None
    error: ev.Error | None = None
    last_message_uuid: str | None = None
    session_id: str | None = None
    cli_version: str | None = None
    cwd: str | None = None
    interrupted: bool = False
    mode: str | None = None
    model: str | None = None
    approval_wait_ms: int = 0
    context: ev.ContextWindow | None = None
    todos: tuple[Any, ...] = ()
    meta: dict[str, Any] = field(default_factory=dict)
    output: Any = None
    output_raw: Any = None
    output_error: str | None = None
    prompt_uuid: str | None = None
    origin: Origin | None = None
    _tool_since_text: bool = field(default=False, repr=False)

    @property
    def text(self) -> str:
        """The main-thread answer: every message_chunk text, in order (joined on demand)."""
        if len(self.text_parts) > 1:
            self.text_parts[:] = ["".join(self.text_parts)]
        return self.text_parts[0] if self.text_parts else ""

    @property
    def reasoning(self) -> str:
        """The main-thread thinking text."""
        if len(self.reasoning_parts) > 1:
            self.reasoning_parts[:] = ["".join(self.reasoning_parts)]
        return self.reasoning_parts[0] if self.reasoning_parts else ""

    @property
    def stopped(self) -> bool:
        """True when the user stopped the turn (Stop button or kernel interrupt) and the CLI
        ended it with its interrupted `result`: the turn's first Error is that result's
        (``Error.interrupted``). A turn ended by a timeout or a failure is not "stopped"."""
        return self.error is not None and self.error.interrupted

    @property
    def failed(self) -> bool:
        """True when the turn ended in an error that is not the user's stop (`result.is_error`
        or an Error event); the ledger's ``is_error``."""
        if self.stopped:
            return False
        return self.error is not None or (self.stats is not None and self.stats.is_error)

    @property
    def origin_echoed(self) -> bool:
        """True when the turn's result named its prompt (:attr:`prompt_uuid` among the result's
        `user_message_uuids`): the answer recorded is the answer to this prompt, not to a turn
        the session started on its own. False before the result and on CLIs that name no
        prompt (2.1.197, 2.1.118)."""
        return bool(self.prompt_uuid and self.stats and self.prompt_uuid in self.stats.user_message_uuids)

    @property
    def done(self) -> bool:
        """True once the `Complete` event was added."""
        return self.stats is not None

    def add(self, event: ev.AgentEvent, now: float = 0.0) -> None:
        """Fold one event into the record."""
        self.events.append(event)
        if event.session_id:
            self.session_id = event.session_id
        match event:
            case ev.MessageChunk(parent_tool_use_id=None):
                if self._tool_since_text and self.text_parts:
                    self.text_parts.append("\n\n")  # text after a tool call is a new paragraph
                self._tool_since_text = False
                self.text_parts.append(event.text)
            case ev.Reasoning(parent_tool_use_id=None):
                self.reasoning_parts.append(event.text)
            case ev.ToolCall():
                self.tools[event.tool_call_id] = ToolRecord(call=event, started=now)
                self._tool_since_text = event.parent_tool_use_id is None or self._tool_since_text
            case ev.ToolUpdate():
                record = self.tools.get(event.tool_call_id)
                if record is not None:
                    record.update = event
                    record.ended = now
            case ev.PermissionDecided():
                self.approval_wait_ms += event.waited_ms
                record = self.tools.get(event.tool_use_id or "")
                if record is None:  # no tool_use_id on the request: the oldest undecided call of that tool
                    record = next(
                        (r for r in self.tools.values() if r.call.tool_name == event.tool_name and r.decision is None),
                        None,
                    )
                if record is not None:
                    record.decision = event
                    if event.updated_input is not None and record.proposed is None:
                        record.proposed = record.call
                        record.call = record.call.model_copy(
                            update={
                                "input": event.updated_input,
                                "normalized": normalize_tool_call(record.call.tool_name, event.updated_input),
                            }
                        )
            case ev.ContextWindow():
                self.context = event
            case ev.Todos():
                self.todos = event.items
            case ev.SessionStatus():
                self.cli_version = event.cli_version or self.cli_version
                self.cwd = event.cwd or self.cwd
                self.model = event.model or self.model
            case ev.Error():
                self.error = self.error or event  # the first error is the cause (e.g. the timeout)
            case ev.Complete():
                self.stats = event.stats
                self.model = self.model or event.stats.main_model
                self.last_message_uuid = event.last_message_uuid
                self.ended_at = dt.datetime.now(dt.UTC)
                self.events = compact_events(self.events)

    def add_now(self, event: ev.AgentEvent) -> None:
        """:meth:`add` with the current monotonic time (for tool durations)."""
        self.add(event, time.monotonic())

    def _repr_html_(self) -> str | None:
        render = DISPLAY_RENDERERS.get("text/html")
        return render(self) if render else None

    def _repr_markdown_(self) -> str | None:
        render = DISPLAY_RENDERERS.get("text/markdown")
        return render(self) if render else None

    def __repr__(self) -> str:
        state = "done" if self.done else "running"
        cost = f", ${self.stats.cost_usd:.4f}" if self.stats else ""
        return f"<Turn {state}{cost}: {self.prompt[:40]!r} -> {len(self.text)} chars, {len(self.tools)} tools>"
