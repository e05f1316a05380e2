"""The fleet's board: one widget for every row of a :class:`~kandev_nb.fleet.Fleet`.

On top, the approval queue: its oldest request as the usual approval card
(:class:`~kandev_nb.notebook.widgets.approval.ApprovalCard`; a question card for
AskUserQuestion, answered for its row only), named after its row ("row 17
of 200 · Bash · pytest -x"), a fleet's card (:class:`RowsAnswer`): "Allow (this row)", Deny,
Edit, and "Allow `<rule>` for all rows" / "Deny `<rule>` for all rows" with the proposed rule
(:meth:`~kandev_nb.fleet.queue.ApprovalQueue.propose`) in an editable field and a live count of
the waiting rows it answers; grants for the row's agent behind "More"; and the rules given so
far. Then the status summary (:func:`progress_text`: "19 done · 4 stopped · 27 skipped of 50",
spend against the budget, elapsed, an estimate of the time left), Stop all, the filters (all,
waiting, errors, running, done) and a table of at most :data:`TABLE_ROWS` rows, the rows
that need a person first (waiting, then errors, running, stopped, not started, done,
skipped), each with its status, elapsed time (none before it started), cost and what its
agent does now (a waiting row: the command it asks for); a Stop button per running row;
"Show the row's turn" opens one row's full turn under it (the usual live turn view while it
runs: streaming text, cards). Readable, and cheap to send, at 1,000 rows.

Updates are batched: the fleet's changes only mark the board dirty, and a ticker redraws it
at most :data:`REFRESH_HZ` times a second (no comm message per text delta); the table, the
board's largest part, at most :data:`TABLE_BYTES_PER_S` bytes a second (a 50-row table about
once a second, a short one at every tick), and a running row's Stop button is made when the
row starts and closed when it ends: at 1,000 rows and concurrency 16 the board sends under
20 KB a second. When the fleet
ends, the output becomes static HTML (:func:`board_html`), which is what a saved notebook
shows: the summary, the fleet-wide rules, the rows that failed, stopped or waited for a
person (at most :data:`SAVED_ROWS`) and the result's first rows; never the whole table, so
it stays under 60 KB at any row count. Every part carries the MathJax-ignore classes
(:data:`~kandev_nb.render.theme.NO_MATH`): "$0.0080 of $1" is money, not LaTeX.

Class names tests look for: ``kandev-fleet-board``, ``kandev-fleet-progress``,
``kandev-fleet-table``, ``kandev-fleet-filter``, ``kandev-fleet-queue``, ``kandev-fleet-allow-all``,
``kandev-fleet-deny-all``, ``kandev-fleet-rule``, ``kandev-fleet-rule-count`` (the last four
inside the card's controls), ``kandev-fleet-stop-all``, ``kandev-fleet-stop-row``,
``kandev-fleet-open-row``, ``kandev-fleet-row-turn``, ``kandev-fleet-saved-rows``.
"""

from __future__ import annotations

import asyncio
import contextlib
import html
import time
from collections.abc import Callable
from typing import Any, Final

import pandas as pd

from kandev_nb.fleet import Fleet, QueuedApproval, RowState
from kandev_nb.fleet.queue import activity_of
from kandev_nb.notebook.fleet_rows_answer import RowsAnswer
from kandev_nb.render.theme import NO_MATH

__all__ = [
    "FILTERS",
    "REFRESH_HZ",
    "SAVED_ROWS",
    "STOP_ALL_REASON",
    "TABLE_BYTES_PER_S",
    "TABLE_ROWS",
    "TABLE_STYLE",
    "FleetBoard",
    "RowsAnswer",
    "board_html",
    "progress_text",
    "table_html",
]

STOP_ALL_REASON: Final = "stopped by you (Stop all)"
"""Why the rows stopped when a person pressed Stop all (the board's, or the Claude panel's in
JupyterLab): each stopped row's result and the progress line say it."""

REFRESH_HZ: Final = 4.0
"""At most this many redraws of the board per second."""

TABLE_ROWS: Final = 50
"""Rows the live table shows at once (the rest are counted under it; a filter picks others)."""

TABLE_BYTES_PER_S: Final = 8_000
"""The ticker redraws the table at most this many bytes a second (its HTML's size): a
table of 50 rows (about 6 KB) about once a second, one of a few rows at every tick."""

SAVED_ROWS: Final = 50
"""Rows that failed, stopped or waited the saved board lists (the rest are counted)."""

FILTERS: Final = (("All", "all"), ("Waiting", "waiting"), ("Errors", "error"), ("Running", "running"), ("Done", "done"))
"""The table's filters: (label, value)."""

_STATUS_COLOR: Final = {
    "pending": "#57606a",
    "running": "#0969da",
    "waiting": "#bc4c00",
    "done": "#1a7f37",
    "error": "#cf222e",
    "stopped": "#9a6700",
    "skipped": "#57606a",
}

_ORDER: Final = {"waiting": 0, "error": 1, "running": 2, "stopped": 3, "pending": 4, "done": 5, "skipped": 6}
"""The table's order: the rows that need a person first."""

_NAMES: Final = (
    ("done", "done", "done"),
    ("error", "error", "errors"),
    ("stopped", "stopped", "stopped"),
    ("skipped", "skipped", "skipped"),
    ("running", "running", "running"),
    ("pending", "not started", "not started"),
)
"""(status, singular, plural) in the order the summary names them."""

_NO_MATH: Final = NO_MATH


def _clock(seconds: float | None) -> str:
    if seconds is None:
        return "…"
    whole = round(seconds)
    return f"{whole // 60:02d}:{whole % 60:02d}"


def _counted(fleet: Fleet) -> str:
    """``19 done · 4 stopped · 27 skipped of 50`` (only the statuses some row has; running
    rows waiting for a person as ``6 running (2 waiting for you)``)."""
    counts = fleet.counts()
    parts = []
    for status, one, many in _NAMES:
        n = counts.get(status, 0)
        if not n:
            continue
        text = f"{n} {one if n == 1 else many}"
        if status == "running" and counts.get("waiting"):
            text += f" ({counts['waiting']} waiting for you)"
        parts.append(text)
    return f"{' · '.join(parts) or '0 rows'} of {fleet.total}"


def progress_text(fleet: Fleet) -> str:
    """``19 done · 4 stopped · 27 skipped of 50 · $0.0123 of $5 · 00:42 elapsed · ~01:10 left``
    (rows by status; plus "rate limited: 8 -> 4" while the API rate-limits, and "stopped: why")."""
    budget = f" of ${fleet.budget_usd:g}" if fleet.budget_usd is not None else ""
    left = fleet.estimate_left_s()
    parts = [
        _counted(fleet),
        f"${fleet.spent_usd:.4f}{budget}",
        f"{_clock(fleet.elapsed_s)} elapsed",
    ]
    if fleet.ended is None and left:
        parts.append(f"~{_clock(left)} left")
    if fleet.pacing.note:
        parts.append(fleet.pacing.note)
    if fleet.stopped_reason:
        parts.append(f"stopped: {fleet.stopped_reason}")
    return " · ".join(parts)


def _waiting(fleet: Fleet) -> dict[Any, QueuedApproval]:
    """The oldest waiting request of each row that waits for a person, by key."""
    out: dict[Any, QueuedApproval] = {}
    for item in list(fleet.queue.pending):
        out.setdefault(item.key, item)
    return out


def _shown_status(state: RowState, waiting: dict[Any, QueuedApproval]) -> str:
    return "waiting" if state.status == "running" and state.key in waiting else state.status


def _short(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _row_html(state: RowState, status: str, now: str) -> str:
    cost = state.result.cost_usd if state.result is not None else None
    started = state.started is not None and state.status not in ("pending", "skipped")
    color = _STATUS_COLOR.get(status, "#57606a")
    return (
        "<tr>"
        f"<td>{state.position}</td>"
        f"<td>{html.escape(_short(str(state.key), 60))}</td>"
        f'<td style="color:{color}">{html.escape(status)}</td>'
        f"<td>{_clock(state.elapsed_s) if started else ''}</td>"
        f"<td>{'' if cost is None else f'${cost:.4f}'}</td>"
        f"<td>{html.escape(_short(now, 120))}</td>"
        "</tr>"
    )


def _now(state: RowState, waiting: dict[Any, QueuedApproval]) -> str:
    item = waiting.get(state.key)
    if item is not None and state.status == "running":  # the command it asks for, in the kernel and on a worker
        return "waiting · " + activity_of(item.event.tool_name, item.event.input)
    return state.activity or (state.result.error or "" if state.result is not None else "")


_HEAD: Final = "<tr><th>#</th><th>row</th><th>status</th><th>elapsed</th><th>cost</th><th>now</th></tr>"

TABLE_STYLE: Final = (
    '<style class="kandev-fleet-style">.kandev-fleet-board table.kandev-fleet-table th,'
    ".kandev-fleet-board table.kandev-fleet-table td{text-align:left;padding:1px 12px 1px 0;"
    "white-space:nowrap}.kandev-fleet-board table.kandev-fleet-table td:last-child{white-space:normal}</style>"
)
"""The tables' alignment, sent once (in the title, and in the saved board): every column
left-aligned under its heading (a browser centres ``th``, JupyterLab right-aligns saved
tables), numbers and times on one line. An untrusted notebook drops it: the table stays readable."""


def table_html(fleet: Fleet, show: str = "all", limit: int = TABLE_ROWS) -> str:
    """The live table: the rows `show` picks (a value of :data:`FILTERS`; "waiting" is a
    running row with a request waiting for a person), the rows that need a person first
    (waiting, error, running, stopped, not started, done, skipped; frame order within each),
    at most `limit` of them, the rest counted under it."""
    waiting = _waiting(fleet)
    picked = []
    for state in fleet.rows.values():
        status = _shown_status(state, waiting)
        if show == "all" or status == show:
            picked.append((_ORDER.get(status, 9), state.position, state, status))
    picked.sort(key=lambda item: (item[0], item[1]))
    lines = [_row_html(state, status, _now(state, waiting)) for _o, _p, state, status in picked[:limit]]
    rest = picked[limit:]
    if rest:
        by: dict[str, int] = {}
        for _o, _p, _s, status in rest:
            by[status] = by.get(status, 0) + 1
        what = ", ".join(f"{n} {status}" for status, n in sorted(by.items(), key=lambda kv: _ORDER.get(kv[0], 9)))
        lines.append(f'<tr><td colspan="6"><i>… {len(rest)} more rows ({what}): pick a filter</i></td></tr>')
    if not picked:
        lines.append('<tr><td colspan="6"><i>no row</i></td></tr>')
    return f'<table class="kandev-fleet-table {_NO_MATH}">{_HEAD}{"".join(lines)}</table>'


_SAVED_KINDS: Final = (("error", "error", "errors", True), ("stopped", "stopped", "stopped", False))


def _size(text: str) -> int:
    return len(text.encode())


def _saved_section(kind: str, title: str, states: list[tuple[RowState, str]], open_: bool, budget: int) -> str:
    """One ``<details>`` of the saved board: `title` and the first rows of `states` (at most
    :data:`SAVED_ROWS`, and as many as fit in `budget` bytes), the rest counted."""
    lines: list[str] = []
    used = 600  # the section's own markup and its "more" line
    for state, now in states[:SAVED_ROWS]:
        line = _row_html(state, state.status, now)
        if used + _size(line) > budget:
            break
        lines.append(line)
        used += _size(line)
    shown = f" (the first {len(lines)})" if len(lines) < len(states) else ""
    if len(lines) < len(states):
        lines.append(
            f'<tr><td colspan="6"><i>… {len(states) - len(lines)} more: the result frame '
            "(kandev_nb.fleet_results(name) for a named fleet) has every row</i></td></tr>"
        )
    table = f'<table class="kandev-fleet-table">{_HEAD}{"".join(lines)}</table>'
    return (
        f'<details class="kandev-fleet-saved-{kind}"{" open" if open_ else ""}>'
        f"<summary>{html.escape(title)}{shown}</summary>{table}</details>"
    )


def _saved_rows(fleet: Fleet, budget: int) -> str:
    """The saved board's rows in at most `budget` bytes, a ``<details>`` per kind (the saved
    form of the filters): the rows that failed (open), those stopped, and those that waited
    for a person; each lists its first rows in frame order (at most :data:`SAVED_ROWS`, and
    a share of `budget`) and counts the rest."""
    sections: list[tuple[str, str, list[tuple[RowState, str]], bool]] = []
    for status, one, many, open_ in _SAVED_KINDS:
        states = [
            (s, s.result.error or "" if s.result is not None else "") for s in fleet.rows.values() if s.status == status
        ]
        if states:
            sections.append((status, f"{len(states)} {one if len(states) == 1 else many}", states, open_))
    waited = [
        (s, s.result.error or "" if s.result is not None else s.activity)
        for s in fleet.rows.values()
        if s.key in fleet.waited
    ]
    if waited:
        sections.append(("waited", f"{len(waited)} waited for a person", waited, False))
    parts = []
    left = budget - 200
    for n, (kind, title, states, open_) in enumerate(sections):
        part = _saved_section(kind, title, states, open_, left // (len(sections) - n))
        parts.append(part)
        left -= _size(part)
    return f'<div class="kandev-fleet-saved-rows">{"".join(parts)}</div>' if parts else ""


def _rules_html(fleet: Fleet, limit: int = 10) -> str:
    rules = list(fleet.queue.rules)
    items = "".join(
        f"<li>{html.escape(r.behavior)} for all rows: <code>{html.escape(_short(r.rule, 200))}</code> "
        f"(given on {html.escape(_short(r.given_for, 160))})</li>"
        for r in rules[:limit]
    )
    if len(rules) > limit:
        items += f"<li><i>… {len(rules) - limit} more rules</i></li>"
    return f"<ul>{items}</ul>" if items else ""


def _preview(result: pd.DataFrame, rows: int = 3, columns: int = 12, chars: int = 60) -> str:
    """The result's first `rows` rows and `columns` columns as HTML, each cell cut to `chars`."""
    head = result.iloc[:rows, :columns].copy()
    for column in head.columns:
        if head[column].dtype == object or str(head[column].dtype) in ("string", "str"):
            head[column] = head[column].map(lambda v: _short(v, chars) if isinstance(v, str) else v)
    shape = f"{len(result)} rows × {len(result.columns)} columns"
    return f"<details><summary>result: {shape}; the first {min(rows, len(result))}</summary>{head.to_html()}</details>"


SAVED_BYTES: Final = 56_000
"""The saved board's size limit in bytes (UTF-8): under 60 KB at any row count."""


def board_html(fleet: Fleet, result: pd.DataFrame | None = None) -> str:
    """The board as static HTML (the saved notebook's view), at most :data:`SAVED_BYTES`:
    title, the status summary, the fleet-wide rules, the rows that failed, stopped or waited
    for a person (each kind a ``<details>``, its first rows), and the result's first rows
    when given; never the whole table."""
    title = html.escape(_short(f"claude fleet · {fleet.name or 'unnamed'} · {fleet.total} rows", 200))
    progress = html.escape(_short(progress_text(fleet), 1000))
    head = f'{TABLE_STYLE}<b>{title}</b><div class="kandev-fleet-progress">{progress}</div>'
    rules = _rules_html(fleet)
    if _size(rules) > 8_000:
        rules = f"<ul><li>{len(fleet.queue.rules)} fleet-wide rules (fleet.queue.rules)</li></ul>"
    preview = _preview(result) if result is not None else ""
    if _size(preview) > 8_000:
        preview = f"<div>result: {len(result)} rows × {len(result.columns)} columns</div>" if result is not None else ""
    wrapper = f'<div class="kandev-fleet-board {_NO_MATH}"></div>'
    budget = SAVED_BYTES - _size(head) - _size(rules) - _size(preview) - _size(wrapper)
    body = head + rules + _saved_rows(fleet, budget) + preview
    return f'<div class="kandev-fleet-board {_NO_MATH}">{body}</div>'


def _no_math(text: str) -> str:
    """`text` (HTML) inside an element MathJax leaves alone (a widget's content is typeset
    from its own element down, so the class goes inside the value)."""
    return f'<div class="{_NO_MATH}">{text}</div>' if text else ""


class FleetBoard:
    """The live board of one fleet; :meth:`display` it, the fleet runs, :meth:`finish` it.

    Attributes:
        root: the board's ``VBox`` (``kandev-fleet-board``).
        redraws: how many times the board was redrawn (bounded by :data:`REFRESH_HZ`).
        clock: the seconds the ticker's table budget is counted in (``time.monotonic``).
    """

    def __init__(self, fleet: Fleet) -> None:
        import ipywidgets as w

        from kandev_nb.notebook.widgets.cards import WidgetFactory

        self.fleet = fleet
        self.factory = WidgetFactory()
        f = self.factory
        name = fleet.name or "unnamed"
        self.title = f.html(TABLE_STYLE + f"<b>{html.escape(f'claude fleet · {name} · {fleet.total} rows')}</b>")
        self.bar = f.track(w.IntProgress(value=0, min=0, max=fleet.total))
        self.progress = f.html("", "kandev-fleet-progress")
        self.stop_all = f.button("Stop all", "kandev-fleet-stop-all", button_style="danger")
        self.stop_all.on_click(lambda _b: self._soon(lambda: fleet.stop(reason=STOP_ALL_REASON)))
        self.queue_box = f.vbox((), "kandev-fleet-queue")
        self.rules = f.html("")
        self.filter = f.track(
            w.ToggleButtons(options=list(FILTERS), value="all", _dom_classes=("kandev-fleet-filter",))
        )
        self.filter.style.button_width = "auto"
        self.filter.observe(lambda _change: self.refresh(force=True), names="value")
        self.table = f.html("")
        self.stops = f.hbox((), "kandev-fleet-stops")
        self.pick = f.track(w.Dropdown(options=[(f"row {s.position} · {s.key}", s.key) for s in fleet.rows.values()]))
        self.open_row_button = f.button("Show the row's turn", "kandev-fleet-open-row")
        self.open_row_button.on_click(lambda _b: self._soon(lambda: self.open_row(self.pick.value)))
        self.row_box = f.vbox((), "kandev-fleet-row-turn")
        self.root = f.vbox(
            (
                self.title,
                self.queue_box,
                f.hbox((self.bar, self.progress, self.stop_all)),
                self.rules,
                self.filter,
                self.table,
                self.stops,
                f.hbox((self.pick, self.open_row_button)),
                self.row_box,
            ),
            "kandev-fleet-board",
            *_NO_MATH.split(),
        )
        self.shown_row: Any = None
        self._view: Any = None
        self.redraws = 0
        self._dirty = True
        self._card_for: QueuedApproval | None = None
        self._queued: tuple[Any, ...] = ()
        self._card: Any = None
        self._queue_label: Any = None
        self._running: tuple[Any, ...] = ()
        self._stop_buttons: dict[Any, Any] = {}
        self.clock: Callable[[], float] = time.monotonic
        self._table_next = 0.0
        self._table_stale = True
        self._handle: Any = None
        self._ticker: asyncio.Task[None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        fleet.listeners.append(self.mark)

    def mark(self) -> None:
        """The fleet changed: redraw at the next tick."""
        self._dirty = True

    def _soon(self, action: Any) -> None:
        loop = self._loop
        if loop is None:
            action()
        else:
            loop.call_soon_threadsafe(action)

    def display(self) -> None:
        """Show the board under a display_id and start the ticker (needs a running loop)."""
        from IPython.display import display

        self._loop = asyncio.get_running_loop()
        self.refresh()
        self._handle = display(self.root, display_id=True)  # type: ignore[no-untyped-call, unused-ignore]
        self._ticker = self._loop.create_task(self._tick())

    async def _tick(self) -> None:
        while True:
            await asyncio.sleep(1 / REFRESH_HZ)
            self.tick()

    def tick(self) -> None:
        """One tick of the ticker: :meth:`refresh`, with the table redrawn only when its
        byte budget allows (:data:`TABLE_BYTES_PER_S`); a table left stale is drawn at a
        later tick, changes or not."""
        self.refresh(table=False)
        if self._table_stale and self.clock() >= self._table_next:
            self._draw_table()

    def _draw_table(self) -> None:
        value = table_html(self.fleet, self.filter.value)
        self.table.value = value
        self._table_stale = False
        self._table_next = self.clock() + max(1 / REFRESH_HZ, len(value) / TABLE_BYTES_PER_S)

    def refresh(self, *, force: bool = False, table: bool = True) -> None:
        """Redraw what changed (a no-op when nothing did, unless `force`); `table`: the
        table too (else it is only marked stale, for :meth:`tick`)."""
        if not (self._dirty or force):
            if self._card is not None:
                self._card.tick()
            return
        self._dirty = False
        self.redraws += 1
        fleet = self.fleet
        self.bar.value = fleet.finished
        self.progress.value = _no_math(html.escape(progress_text(fleet)))
        self._table_stale = True
        if table or force:
            self._draw_table()
        self.rules.value = _no_math(
            "".join(
                f"<div>{html.escape(r.behavior)} for all rows: <code>{html.escape(r.rule)}</code></div>"
                for r in fleet.queue.rules
            )
        )
        self._show_queue()
        self._show_stops()
        if self._view is not None and self.fleet.rows[self.shown_row].result is not None:
            self.open_row(self.shown_row)  # the row ended: its saved rendering

    def _show_queue(self) -> None:
        from kandev_nb.agent.questions import QUESTION_TOOL
        from kandev_nb.notebook.widgets.approval import ApprovalCard
        from kandev_nb.notebook.widgets.questions import card_for

        head = self.fleet.queue.head
        waiting = len(self.fleet.queue.pending)
        text = f"<b>{html.escape(head.label)}</b> · {waiting} waiting" if head is not None else ""
        if head is self._card_for:
            if self._queue_label is not None:
                self._queue_label.value = text  # more rows may be waiting behind it now
            queued = (tuple(i.approval.request_id for i in self.fleet.queue.pending), len(self.fleet.queue.rules))
            if self._card is not None and queued != self._queued:  # the rule's count follows the queue,
                self._queued = queued  # recounted only when the queue changed (not at each row's event)
                self._card.refresh_rows()
            return
        self._card_for = head
        if head is None:
            self.queue_box.children = ()
            self._card = self._queue_label = None
            return
        f = self.factory
        label = self._queue_label = f.html(text, "kandev-fleet-queue-label")
        if head.event.tool_name == QUESTION_TOOL:  # a question is answered row by row, on its card
            self._card = card_for(head.event, f)
        else:
            self._card = ApprovalCard(head.event, f, rows=RowsAnswer(self.fleet.queue, head))
        self._queued = (tuple(i.approval.request_id for i in self.fleet.queue.pending), len(self.fleet.queue.rules))
        self.queue_box.children = (label, self._card.box)

    def _show_stops(self) -> None:
        """A Stop button per running row: made when the row starts, closed when it ends (one
        comm_open and one comm_close per row, not a new set at every change)."""
        running = tuple(k for k, s in self.fleet.rows.items() if s.status == "running")
        if running == self._running:
            return
        self._running = running
        buttons = self._stop_buttons
        for key in [k for k in buttons if k not in set(running)]:
            button = buttons.pop(key)
            button.close()
            with contextlib.suppress(ValueError):
                self.factory.created.remove(button)
        for key in running:
            if key not in buttons:
                button = self.factory.button(f"Stop {key}", "kandev-fleet-stop-row", tooltip=f"Stop row {key}")
                button.on_click(lambda _b, k=key: self._soon(lambda: self.fleet.stop(k)))
                buttons[key] = button
        self.stops.children = tuple(buttons[k] for k in running)

    def open_row(self, key: Any) -> None:
        """Show row `key`'s turn under the table: live (the usual turn view, fed with the
        row's events so far and then as they come) while it runs, its saved rendering once
        finished, or why there is none."""
        from kandev_nb.notebook.widgets.view import TurnView
        from kandev_nb.render.static import render_html

        self._close_view()
        state = self.fleet.rows[key]
        self.shown_row = key
        session = state.session
        if state.status == "running" and session is not None:
            view = TurnView(state.prompt, session_name=session.name, on_stop=lambda: self.fleet.stop(key))
            for event in list(session.turns[-1].events) if session.turns else []:
                view.handle(event)
            state.watchers.append(view.handle)
            self._view = view
            self.row_box.children = (view.root,)
            return
        turn = state.result.turn if state.result is not None else None
        if turn is not None:
            body = render_html(turn)
        elif state.result is not None and state.result.from_ledger:
            body = f"<i>read back from the ledger</i>: {html.escape(state.result.answer or str(state.result.output))}"
        else:
            body = f"<i>{html.escape(state.status)}</i> {html.escape(state.result.error or '' if state.result else '')}"
        self.row_box.children = (self.factory.html(body, "kandev-fleet-row-static"),)

    def _close_view(self) -> None:
        view, self._view = self._view, None
        if view is None or self.shown_row is None:
            return
        state = self.fleet.rows[self.shown_row]
        if view.handle in state.watchers:
            state.watchers.remove(view.handle)
        view.finish(state.result.turn if state.result is not None else None)

    def finish(self, result: pd.DataFrame | None) -> None:
        """Stop the ticker; the output becomes the static board and result table."""
        if self._ticker is not None:
            self._ticker.cancel()
        self._close_view()
        bundle = {"text/html": board_html(self.fleet, result), "text/plain": progress_text(self.fleet)}
        if self._handle is not None:
            with contextlib.suppress(Exception):
                self._handle.update(bundle, raw=True)
        self.factory.close_all()
