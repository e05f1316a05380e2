"""`TurnView`: the live view of one turn, fed every AgentEvent through :meth:`TurnView.handle`.

Layout (``_dom_classes`` in brackets, for tests and Playwright)::

    VBox [kandev-turn]
      HBox [kandev-header]:  HTML "claude · session · mode · model" [kandev-run-info] ·
                             HTML activity [kandev-activity] · HTML context gauge
                             [kandev-context-gauge] · Button "Stop" [kandev-stop]
      VBox [kandev-body]:    in event order: StreamText [kandev-text], thinking Accordion
                             [kandev-thinking], tool cards [kandev-tool-card], approval
                             cards [kandev-approval], the task list [kandev-todo-card],
                             notes [kandev-note]
      HTML [kandev-footer]:  cost, tokens, durations, API turns (after Complete)

Events whose `parent_tool_use_id` names a subagent card go into that card's nested box.

Threading: :meth:`handle`, :meth:`display` and :meth:`finish` run on the kernel's event
loop. Button callbacks may run on another thread; they only answer approvals, call
`on_stop`, and set traits.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import time
from collections.abc import Callable
from typing import Any

import ipywidgets as w

from kandev_nb.agent import events as ev
from kandev_nb.agent.turn import Turn
from kandev_nb.notebook import answers
from kandev_nb.notebook.answers import TURN_MIME
from kandev_nb.notebook.widgets.approval import ApprovalCard, fmt_left
from kandev_nb.notebook.widgets.cards import TodoCard, ToolCard, WidgetFactory
from kandev_nb.notebook.widgets.questions import card_for
from kandev_nb.notebook.widgets.static_view import StaticView, mark_budget
from kandev_nb.notebook.widgets.stream import StreamText, Throttle, shed_lib
from kandev_nb.render import html as r
from kandev_nb.render import static
from kandev_nb.render.card_view import tool_label
from kandev_nb.render.theme import NO_MATH

__all__ = ["TURN_MIME", "StaticView", "TurnView"]  # StaticView: widgets/static_view.py


class TurnView:
    """The live widgets of one turn, then its static rendering.

    Made where a page shows widgets (its widget manager ran the notebook bridge's first page
    code, which says "present": :func:`kandev_nb.notebook.bridge.page_shown`), at the start of the
    turn or when a page says "present" during it; elsewhere the turn gets a :class:`StaticView`
    (:mod:`kandev_nb.notebook.cell_view`).

    Args:
        prompt: the prompt text (shown in the header of the static rendering).
        session_name: the session's label.
        budget_usd: an optional notebook budget in USD; the footer shows the spend against it.
        budget_scope: whose budget that is, for the footer ("user ana, today").
        spent_before_usd: what the notebook spent before this turn, in USD.
        on_stop: called with no arguments when the Stop button is clicked (possibly on a
            button thread); if it returns an awaitable, that is run on the view's loop.
        mode, model, number: the header's permission mode, model and the turn's 1-based number
            in its session (as ``%claude_undo --turn`` takes it); None leaves one out.
        interval_s: minimum seconds between two text updates (0.05 s: <= 20 updates/s).
        min_chars, max_wait_s: fewer than `min_chars` buffered characters wait up to
            `max_wait_s` seconds (see :class:`~kandev_nb.notebook.widgets.stream.Throttle`).
        tick_s: seconds between two activity-line updates while the turn runs.
        clock: monotonic seconds (injectable for simulated time).

    Attributes:
        turn: the view's own :class:`~kandev_nb.agent.turn.Turn` record, built from the events.
        root: the root ``VBox`` (None after :meth:`finish`).
        cards: tool cards by `tool_use_id`; approvals: approval cards by `request_id`.
        text_updates: number of "append" messages sent for streamed text; deltas: text and
            reasoning events received.
    """

    live = True
    """Widgets in a tab: a tab reloaded while the turn runs gets them back (:mod:`kandev_nb.notebook.reattach`)."""

    def __init__(
        self,
        prompt: str,
        session_name: str = "default",
        budget_usd: float | None = None,
        budget_scope: str | None = None,
        *,
        spent_before_usd: float = 0.0,
        on_stop: Callable[[], Any] | None = None,
        mode: str | None = None,
        model: str | None = None,
        number: int | None = None,
        interval_s: float = 0.05,
        min_chars: int = 256,
        max_wait_s: float = 0.25,
        tick_s: float = 1.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._prompt, self._session_name = prompt, session_name
        self._events: list[tuple[ev.AgentEvent, float]] = []
        self._turn: Turn | None = None
        self.budget_usd = budget_usd
        self.budget_scope = budget_scope
        self.spent_before_usd = spent_before_usd
        self.on_stop = on_stop
        self.clock = clock
        self.tick_s = tick_s
        self.started = clock()
        self.f = WidgetFactory()
        self.mode, self.model, self.number = mode, model, number  # number: the turn's, 1-based
        self.run_info = self.f.html("", "kandev-run-info")
        self._render_run_info()
        self.activity = self.f.html("", "kandev-activity")
        self.gauge = self.f.html("", "kandev-context-gauge")
        self.stop = self.f.button("Stop", "kandev-stop", tooltip="Interrupt this turn (the session stays)")
        self.stop.on_click(lambda _b: self._stop_clicked())
        self.body = self.f.vbox((), "kandev-body")
        self.footer = self.f.html("", "kandev-footer")
        self.root: w.VBox | None = self.f.vbox(
            (
                self.f.hbox((self.run_info, self.activity, self.gauge, self.stop), "kandev-header"),
                self.body,
                self.footer,
            ),
            "kandev-turn",
            answers.kernel_class(),  # the tab's header chips (issue 27 point 9)
            *NO_MATH.split(),  # MathJax never typesets the live view either: "$41.5k ... $61k" stays text
        )
        self.cards: dict[str, ToolCard] = {}
        self.approvals: dict[str, ApprovalCard] = {}
        self.todo_card: TodoCard | None = None
        self.segments: list[StreamText] = []
        self._open: dict[tuple[str | None, type], StreamText] = {}
        self._warmers: dict[int, r.CodeWarmer] = {}  # by id() of an open segment
        self.throttle = Throttle(self._flush_text, interval_s, min_chars=min_chars, max_wait_s=max_wait_s, clock=clock)
        self.deltas = 0
        self._state_kind: type | None = None
        self._state = "Starting Claude Code"
        self._state_since = clock()
        self._retry = ""
        self._handle: Any = None
        self._ticker: asyncio.Task[None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self.finished = False
        self.stopped = False
        self.stopped_by_user = False  # the CLI ended the turn with its interrupted result
        self._failed = False  # an Error that is not the answer to the user's stop was shown
        self.context: ev.ContextWindow | None = None
        self._tool_started: dict[str, float] = {}
        self._render_activity()

    # -- properties -----------------------------------------------------------------------

    @property
    def turn(self) -> Turn:
        """The view's own record of the turn, built from the events it was given."""
        if self._turn is None or len(self._turn.events) != len(self._events):
            turn = Turn(prompt=self._prompt, session_name=self._session_name)
            for event, at in self._events:
                turn.add(event, at)
            self._turn = turn
        return self._turn

    @property
    def text_updates(self) -> int:
        """Text "append" messages sent so far, over all segments."""
        return sum(s.updates for s in self.segments)

    @property
    def widget(self) -> w.VBox | None:
        """The root widget while live (None after :meth:`finish`)."""
        return self.root

    # -- display --------------------------------------------------------------------------

    def display(self) -> None:
        """Show the view in the current cell output under a display_id, start the ticker."""
        from IPython.display import display

        self._handle = display(self.root, display_id=True)  # type: ignore[no-untyped-call, unused-ignore]  # typed from IPython 9
        self._start_ticker()

    def _start_ticker(self) -> None:
        if self._ticker is not None or self.finished or self.tick_s <= 0:
            return
        try:
            self._loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        self._ticker = self._loop.create_task(self._tick())

    async def _tick(self) -> None:
        while not self.finished:
            await asyncio.sleep(self.tick_s)
            self.refresh()

    def refresh(self) -> None:
        """Redraw what changes with time: the activity line and each waiting card's time left
        (called every `tick_s` seconds while the turn runs)."""
        for card in self._waiting():
            card.tick()
        self._render_activity()

    def _render_activity(self) -> None:
        now = self.clock()
        elapsed = r.fmt_ms((now - self.started) * 1000)
        since = now - self._state_since
        step = f" ({r.fmt_ms(since * 1000)})" if since >= 2 and self._state.startswith("Running") else ""
        waiting = self._waiting() if self._state.startswith("Waiting") else []
        if waiting:  # this wait, and the time left of the soonest timeout, not the turn's time
            lefts = [x for x in (a.approval.remaining_s() for a in waiting) if x is not None]
            parts = ([f"waiting {r.fmt_ms(since * 1000)}"] if since >= 1 else []) + (
                [f"{fmt_left(min(lefts))} left"] if lefts else []
            )
            step = f" ({', '.join(parts)})" if parts else ""
            elapsed = f"turn {elapsed}"
        retry = (
            f' · <span style="color:var(--jp-warn-color1,#9a6700)">{r.esc(self._retry)}</span>' if self._retry else ""
        )
        spinner = "" if self.finished else "● "
        self.activity.value = f"{spinner}{r.esc(self._state)}{step} · {elapsed}{retry}"

    def _render_run_info(self) -> None:
        self.run_info.value = static.run_info_html(self._session_name, self.mode, self.model, self.number)

    def _set_state(self, state: str) -> None:
        if state != self._state:
            self._state = state
            self._state_since = self.clock()
            self._render_activity()

    # -- stop -----------------------------------------------------------------------------

    def _stop_clicked(self) -> None:
        self.stopped = True
        self.stop.disabled = True
        self.stop.description = "Stopping…"
        if self.on_stop is None:
            return
        result = self.on_stop()
        if inspect.isawaitable(result):
            loop = self._loop
            if loop is None or loop.is_closed():
                with contextlib.suppress(Exception):
                    result.close()  # type: ignore[attr-defined]
                return
            asyncio.run_coroutine_threadsafe(_await(result), loop)

    # -- events ---------------------------------------------------------------------------

    def _container(self, event: ev.AgentEvent) -> w.VBox:
        parent = event.parent_tool_use_id
        if parent and parent in self.cards and self.cards[parent].nested is not None:
            nested = self.cards[parent].nested
            assert nested is not None
            return nested
        return self.body

    def _add(self, box: w.VBox, widget: w.Widget) -> None:
        box.children = (*box.children, widget)

    def _segment(self, event: ev.MessageChunk | ev.Reasoning) -> StreamText:
        """A new text segment for `event` (text after a card or after thinking starts one)."""
        cls = type(event)
        parent = event.parent_tool_use_id
        for key in [k for k in self._open if k[0] == parent]:
            del self._open[key]
        seg = self.f.track(
            StreamText(_dom_classes=("kandev-text",) if cls is ev.MessageChunk else ("kandev-thinking-text",))
        )
        self.segments.append(seg)
        holder: w.Widget = seg
        if cls is ev.Reasoning:
            holder = self.f.track(
                w.Accordion(
                    children=(seg,), titles=("Thinking",), selected_index=None, _dom_classes=("kandev-thinking",)
                )
            )
        self._add(self._container(event), holder)
        self._open[(parent, cls)] = seg
        if self._ticker is None:
            self._start_ticker()
        return seg

    def _close_segments(self, parent: str | None) -> None:
        for key in [k for k in self._open if k[0] == parent]:
            del self._open[key]

    def _flush_text(self) -> bool:
        sent = False
        for seg in self._open.values():
            if seg.flush():
                sent = True
                # Colour each finished code block now, while the CLI is still writing, so
                # finish() does not wait for Pygments (same rendering, see CodeWarmer).
                warmer = self._warmers.get(id(seg))
                if warmer is None:
                    warmer = self._warmers[id(seg)] = r.CodeWarmer()
                warmer.feed(seg.text)
        return sent

    def handle(self, event: ev.AgentEvent) -> None:
        """Apply one AgentEvent (call on the event loop, in order). Never raises on odd events."""
        if self.finished:
            return
        self._events.append((event, self.clock()))
        cls = type(event)
        if cls is ev.MessageChunk or cls is ev.Reasoning:  # the hot path: keep it short
            self.deltas += 1
            seg = self._open.get((event.parent_tool_use_id, cls)) or self._segment(event)  # type: ignore[arg-type]
            seg.append(event.text)  # type: ignore[union-attr]
            if self._state_kind is not cls:
                self._state_kind = cls
                self._set_state("Writing" if cls is ev.MessageChunk else "Thinking")
            self.throttle.poke(seg.pending)
            return
        if self._ticker is None:
            self._start_ticker()
        self._state_kind = None
        self.throttle.flush_now()
        match event:
            case ev.ToolCall():
                self._close_segments(event.parent_tool_use_id)
                card = ToolCard(event, self.f)
                self.cards[event.tool_call_id] = card
                self._tool_started[event.tool_call_id] = self.clock()
                self._add(self._container(event), card.box)
                early = [a for a in self._waiting() if a.event.tool_use_id == event.tool_call_id]
                if early:  # the request came first: its card takes the tool card's place now
                    self.body.children = tuple(c for c in self.body.children if c is not early[0].box)
                    early[0].attached = True
                    card.box.children = (early[0].box, *card.box.children[1:])
                    return
                if self._waiting():  # it does not run yet: it waits behind an approval (parallel calls)
                    return
                self._set_state(
                    f"Running {event.tool_name}: {event.title[:80]}"
                    if event.title != event.tool_name
                    else f"Running {event.tool_name}"
                )
            case ev.ToolUpdate():
                updated = self.cards.get(event.tool_call_id)
                if updated is not None:
                    started = self._tool_started.get(event.tool_call_id)
                    dur = None if started is None else int((self.clock() - started) * 1000)
                    updated.update(event, dur)
                self._set_state("Thinking")
            case ev.PermissionRequest():
                self._close_segments(None)
                self._ask(event)
            case ev.PermissionDecided() | ev.PermissionCancelled():
                acard2 = self.approvals.get(event.request_id)
                if acard2 is not None:
                    acard2.handle(event)
                    tool_id = acard2.event.tool_use_id
                    self._approved(acard2)
                    if isinstance(event, ev.PermissionDecided) and tool_id in self.cards:
                        self.cards[tool_id].set_decision(event)
                elif isinstance(event, ev.PermissionDecided) and event.tool_use_id in self.cards:
                    # no card: the CLI decided unasked ("settings", a session "grant") or a hook did ("policy", "hook")
                    self.cards[event.tool_use_id].set_decision(event)
                still = self._waiting()  # another request may still wait (parallel tool calls)
                self._set_state(
                    f"Waiting for your approval: {tool_label(still[0].event.tool_name)}" if still else "Working"
                )
            case ev.Todos():
                if self.todo_card is None:
                    self.todo_card = TodoCard(self.f, event.items)
                    self._close_segments(None)
                    self._add(self.body, self.todo_card.box)
                else:
                    self.todo_card.set(event.items)
            case ev.ContextWindow():
                self.context = event
                self.gauge.value = r.context_html(event)
            case ev.ApiRetry():
                self._retry = f"API retry {event.attempt or '?'}/{event.max_retries or '?'}" + (
                    f" (HTTP {event.status})" if event.status else ""
                )
                self._render_activity()
            case ev.RateLimit():
                self._note(event, f"rate limit: {event.message or event.info}")
            case ev.CompactBoundary():
                self._note(event, "conversation compacted")
            case ev.Error(interrupted=True) if not self._failed:
                self.stopped_by_user = True  # said once, in the footer: "stopped by you"
            case ev.Error():
                self._failed = True
                self._note(event, f"error: {event.message}", color="var(--jp-error-color1,#cf222e)")
            case ev.SessionStatus():
                if event.mcp_failed:  # issue 19: named on the turn's card
                    self._note(
                        event,
                        "MCP server(s) failed to connect: " + ", ".join(event.mcp_failed) + " (%claude_mcp shows why)",
                    )
                if event.model and event.model != self.model:
                    self.model = event.model
                    self._render_run_info()
                self._set_state(f"Session {event.status}" + (f" · {event.model}" if event.model else ""))
            case ev.Complete():
                self._complete(event)
            case _:
                pass

    def _ask(self, event: ev.PermissionRequest) -> None:
        """A PermissionRequest: its card takes the place of the tool card of the same
        `tool_use_id` while it waits (so the proposed action shows once, with the controls
        on it), or goes at the end of the body if there is no such card. The cards of
        finished tools fold, so the waiting card is near what it follows; the browser then
        scrolls it into view (``src/widgets/approval.ts``)."""
        host = self.cards.get(event.tool_use_id or "")
        acard = card_for(event, self.f, attached=host is not None)  # a QuestionCard for AskUserQuestion
        self.approvals[event.request_id] = acard
        waiting = acard.outcome is None  # else a policy already answered
        if host is None:
            self._add(self.body, acard.box)
        else:
            kids = host.box.children
            host.box.children = (acard.box, *kids[1:]) if waiting else (kids[0], acard.box, *kids[1:])
            host.on_full.append(acard.show_full)  # its "Show the whole diff" shows the proposed edit whole
            if host.full:
                acard.show_full()
        if waiting:
            for card in self.cards.values():
                if card is not host and card.status != "running":
                    card.fold(True)
        self._set_state(f"Waiting for your approval: {tool_label(event.tool_name)}")

    def _approved(self, acard: ApprovalCard) -> None:
        """The tool card is back in its place, the approval's decision line under it."""
        host = self.cards.get(acard.event.tool_use_id or "")
        if host is None:
            return
        if host.box.children[:1] != (host.html,):
            host.box.children = (host.html, *host.box.children)

    def _waiting(self) -> list[ApprovalCard]:
        return [a for a in self.approvals.values() if a.outcome is None]

    def _note(self, event: ev.AgentEvent, text: str, color: str = "var(--jp-warn-color1,#9a6700)") -> None:
        self._close_segments(event.parent_tool_use_id)
        self._add(
            self._container(event),
            self.f.html(f'<div style="color:{color};font-size:90%">⚠ {r.esc(text)}</div>', "kandev-note"),
        )

    def _complete(self, event: ev.Complete) -> None:
        self._retry = ""
        self.stop.disabled = True
        interrupted = self.stopped_by_user
        failed = self._failed or (event.stats.is_error and not interrupted)
        self._set_state("Stopped by you" if interrupted else ("Failed" if failed else "Done"))
        footer = r.stats_html(event.stats, self.context, interrupted=interrupted)
        if self.budget_usd:
            footer += r.budget_html(self.spent_before_usd + event.stats.cost_usd, self.budget_usd, self.budget_scope)
        self.footer.value = footer

    # -- the end --------------------------------------------------------------------------

    def finish(self, turn: Turn | None = None) -> dict[str, Any]:
        """End the live view: flush, stop the ticker, replace the output with the static
        rendering of `turn` (default: the view's own record) and close every widget.

        Returns:
            The MIME bundle now in the cell output (text/html, text/markdown, text/plain).
        """
        if turn is None:
            turn = self.turn
        mark_budget(turn, self.budget_usd, self.budget_scope, self.spent_before_usd)
        if self.finished:
            return static.mime_bundle(turn)
        bundle, metadata = answers.tab_bundle(turn)  # Insert / Copy buttons; src/mime.ts draws it
        self.throttle.flush_now()
        self.throttle.cancel()
        self.finished = True
        if self._ticker is not None:
            self._ticker.cancel()
            self._ticker = None
        if self._handle is not None:
            self._handle.update(bundle, metadata=metadata, raw=True)
        self.close()
        return bundle

    def close(self) -> None:
        """Close every widget of the view (frees their comms); the view shows nothing after."""
        self.finished = True
        self.throttle.cancel()
        if self._ticker is not None:
            self._ticker.cancel()
            self._ticker = None
        headless = _headless()
        self.f.close_all(shed=headless)
        if headless:
            shed_lib()
        self.root = None
        self._open.clear()
        self._warmers.clear()
        self.segments = []
        self.cards.clear()
        self.approvals.clear()
        self.todo_card = None

    def _ipython_display_(self) -> None:
        self.display()


def _headless() -> bool:
    """No tab said hello to the notebook bridge (nbclient, papermill, a console)."""
    from kandev_nb.notebook.bridge import bridge

    b = bridge()
    return b is None or not b.views


async def _await(awaitable: Any) -> Any:
    return await awaitable
