"""Which view a `%%claude` cell's turn gets, and what follows a page that shows up mid-turn.

Where a page shows this kernel's widgets (:func:`kandev_nb.notebook.bridge.page_shown`), the
turn gets a live :class:`~kandev_nb.notebook.widgets.TurnView` (streaming text, tool cards,
approval cards, Stop) and, while it runs, a reloaded tab gets that view back
(:func:`watch_reloads`). Where none does (``jupyter execute``, nbclient, papermill, a console),
it gets a :class:`~kandev_nb.notebook.widgets.static_view.StaticView`: no widgets, the static
rendering at the end. Should a page say "present" while that turn runs (a busy tab that ran
the bridge's first page code late), the StaticView becomes the live view at once (see
:func:`turn_view`): the card of an approval already waiting shows its own countdown, and the
turn's later approvals wait as a tab's do (:func:`kandev_nb.notebook.notify.turn_timeout`).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from kandev_nb.agent.session import Session
from kandev_nb.notebook import ledger_hooks, notify, turn_numbers
from kandev_nb.notebook.bridge import ensure_bridge
from kandev_nb.notebook.cell_prompt import notebook_path
from kandev_nb.notebook.state import current
from kandev_nb.notebook.widgets.static_view import StaticView
from kandev_nb.notebook.widgets.view import TurnView

__all__ = ["interrupt_soon", "spent_usd", "turn_view", "watch_reloads"]

log = logging.getLogger("kandev_nb")


def turn_view(prompt: str, session: Session, shown: bool, source: str, cell_timeout: float | None) -> Any:
    """The view of `session`'s turn of `prompt`: a displayed :class:`TurnView` whose Stop button
    interrupts `session` when `shown` (a page shows widgets), else a :class:`StaticView` that
    becomes one should a page say "present" during the turn.

    Args:
        prompt: the cell's prompt (the static rendering's header).
        session: the turn's session (its name, mode, model; Stop interrupts it).
        shown: :func:`~kandev_nb.notebook.bridge.page_shown`'s answer for this turn.
        source: the cell's source (``%%claude ...``), by which a reloaded tab finds the cell.
        cell_timeout: the cell's ``--approval-timeout`` in seconds (None: not given).
    """
    settings = current().settings
    scope = ledger_hooks.budget_label(settings) if settings.budget_usd else None
    spent, number = spent_usd(), turn_numbers.next_number(session)  # this turn's, as %claude_undo --turn takes it

    def live() -> TurnView:
        view = TurnView(
            prompt,
            session_name=session.name,
            budget_usd=settings.budget_usd,
            spent_before_usd=spent,
            on_stop=lambda: interrupt_soon(session),
            budget_scope=scope,
            mode=session.config.mode,
            model=session.model or session.config.model,
            number=number,
        )
        view.display()
        return view

    if shown:
        return live()
    static = StaticView(settings.budget_usd, scope, spent)
    index = len(session.turns)  # where Session.run will put this cell's turn

    def upgrade() -> TurnView:
        """Run in the cell's context (its output): the live view, and a tab's approval timing."""
        view = live()
        static.reattach = watch_reloads(view, source)
        task = asyncio.ensure_future(_as_a_tab(session, index, static, cell_timeout))
        _tasks.add(task)
        task.add_done_callback(_done)
        return view

    static.watch(upgrade)
    return static


async def _as_a_tab(session: Session, index: int, view: StaticView, cell_timeout: float | None) -> None:
    """The rest of this turn's approvals wait as a tab's do (unless the cell gave
    ``--approval-timeout``): :func:`~kandev_nb.notebook.notify.turn_timeout` asked again now
    that a page is there, and its notifier started. The turn is ``session.turns[index]``: a
    page may say "present" while the CLI still starts, before the turn has begun; the new
    timeout is given to that turn only while it runs, never to another."""
    if cell_timeout is not None:
        return
    while len(session.turns) <= index:  # not begun yet (Session.run appends it after begin_turn)
        if view.finished:
            return
        await asyncio.sleep(0.01)  # the CLI's start: a second or two; its first request comes later
    turn = session.turns[index]

    def running() -> bool:
        return not view.finished and not turn.done and session.turns[-1] is turn

    attached = await notify.interactive()  # up to LOAD_S while the page loads the whole bridge
    if running():
        timeout = await notify.turn_timeout(None, current().settings.approval_timeout, attached)
        if running():
            session.broker.set_turn_timeout(timeout)


_tasks: set[asyncio.Future[None]] = set()  # running _as_a_tab tasks (the loop keeps only weak references)


def _done(task: asyncio.Future[None]) -> None:
    _tasks.discard(task)
    if not task.cancelled() and task.exception() is not None:
        log.warning("kandev-nb: the turn's approvals keep their headless timeout", exc_info=task.exception())


def watch_reloads(view: Any, source: str) -> Any:
    """Create the notebook bridge if needed; while the turn runs, a tab that says hello anew
    gets the live `view` back (:class:`~kandev_nb.notebook.reattach.Reattach`), or None
    (no bridge, no live view)."""
    bridge = ensure_bridge()
    if bridge is None or view is None or not view.live:
        return None
    from IPython.core.getipython import get_ipython

    from kandev_nb.notebook.reattach import Reattach

    kernel = getattr(get_ipython(), "kernel", None)  # type: ignore[no-untyped-call, unused-ignore]  # typed from IPython 9
    try:
        parent = kernel.get_parent("shell") if kernel is not None else {}
    except Exception:  # noqa: BLE001 - an older kernel: match the cell by its source only
        parent = {}
    cell_id = (parent.get("metadata") or {}).get("cellId") if isinstance(parent, dict) else None
    client = (parent.get("header") or {}).get("session") if isinstance(parent, dict) else None
    return Reattach(
        bridge, view, cell_id if isinstance(cell_id, str) else None, source, client if isinstance(client, str) else None
    )


def interrupt_soon(session: Session) -> None:
    """Interrupt `session`'s turn from any thread (a Stop button's click)."""
    loop = asyncio.get_event_loop()
    loop.call_soon_threadsafe(lambda: loop.create_task(session.interrupt()))


def spent_usd() -> float:
    """USD spent in the budget's scope and period (:func:`ledger_hooks.spent`; read from the ledger)."""
    from IPython.core.getipython import get_ipython

    ip = get_ipython()
    state = current()
    return ledger_hooks.spent(state.settings, state.turns, notebook_path(ip.user_ns if ip is not None else {}))
