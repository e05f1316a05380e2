"""A turn's output where no page shows widgets: its static rendering only (issue 37 point 8).

:class:`StaticView` is what `%%claude` makes in place of :class:`~kandev_nb.notebook.widgets.view.TurnView`
when :func:`kandev_nb.notebook.bridge.page_shown` is False (``jupyter execute``, nbclient,
papermill, a console).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from kandev_nb.agent import events as ev
from kandev_nb.agent.turn import Turn
from kandev_nb.render import static

if TYPE_CHECKING:
    from kandev_nb.notebook.widgets.view import TurnView

__all__ = ["StaticView", "mark_budget"]


class StaticView:
    """A turn's output where no page shows widgets (``jupyter execute``, nbclient, papermill, a
    console: no page said "present" to the notebook bridge): nothing while the turn runs, then the
    static rendering :meth:`TurnView.finish` leaves, as a plain display output. A headless run
    so saves no widget of its own (issue 37: the executed notebook within 20% of the one Lab saves).

    Should a page say "present" after all while the turn runs (a busy tab that ran the bridge's
    first page code late), the turn gets its live view at once (:meth:`watch`): it is shown every
    event so far and gets every later one, so a tab's turn never waits for an approval with no
    card to answer it.

    Args: as :class:`TurnView`'s `budget_usd`, `budget_scope` and `spent_before_usd` (USD).

    Attributes:
        upgraded: the live view made when a page said "present" during the turn, else None.
        reattach: what gives a reloaded tab the upgraded view back (set by the `live_later`
            of :meth:`watch`), else None.
    """

    def __init__(self, budget_usd: float | None, budget_scope: str | None, spent_before_usd: float) -> None:
        self.budget_usd, self.budget_scope, self.spent_before_usd = budget_usd, budget_scope, spent_before_usd
        self.finished = False
        self.upgraded: TurnView | None = None
        self.reattach: Any = None
        self._live_later: Callable[[], TurnView] | None = None
        self._seen: list[ev.AgentEvent] = []
        self._watching: Any = None  # the bridge whose on_present calls us

    @property
    def live(self) -> bool:
        """Widgets a reloaded tab could get back: only once the turn got its live view."""
        return self.upgraded is not None

    @property
    def _handle(self) -> Any:
        """The live view's display handle (Undo redraws the turn through it), else None."""
        return getattr(self.upgraded, "_handle", None)

    def watch(self, live_later: Callable[[], TurnView]) -> None:
        """Make the live view with `live_later` (it displays it) as soon as a page says "present"
        to the notebook bridge, in the context of the cell that made this view (so its output
        goes to that cell): at once if one already has. Call it in the cell, on the kernel's loop."""
        from kandev_nb.notebook.bridge import bridge

        b = bridge()
        if b is None:
            return
        self._live_later = live_later
        loop, context = asyncio.get_running_loop(), contextvars.copy_context()

        def present() -> None:
            loop.call_soon_threadsafe(self._upgrade, context=context)

        self._watching = (b, present)
        b.on_present.append(present)
        if b.present:
            present()

    def _upgrade(self) -> None:
        self._unwatch()
        if self.finished or self.upgraded is not None or self._live_later is None:
            return
        self.upgraded = self._live_later()
        seen, self._seen = self._seen, []
        for past in seen:
            self.upgraded.handle(past)

    def _unwatch(self) -> None:
        if self._watching is not None:
            b, present = self._watching
            self._watching = None
            with contextlib.suppress(ValueError):
                b.on_present.remove(present)

    def handle(self, event: ev.AgentEvent) -> None:
        """Take one AgentEvent: the live view's once there is one (see the class); until then it
        is kept for it (when :meth:`watch` waits for a page), and shows nothing."""
        if self.upgraded is not None:
            self.upgraded.handle(event)
        elif self._watching is not None and not self.finished:
            self._seen.append(event)

    def finish(self, turn: Turn) -> dict[str, Any]:
        """Display `turn`'s static rendering once; returns its MIME bundle (the live view's
        :meth:`TurnView.finish` when the turn got one)."""
        from IPython.display import display

        self._unwatch()
        self._seen = []
        if self.upgraded is not None:
            return self.upgraded.finish(turn)
        mark_budget(turn, self.budget_usd, self.budget_scope, self.spent_before_usd)
        bundle = static.mime_bundle(turn)
        if not self.finished:
            self.finished = True
            display(bundle, raw=True)  # type: ignore[no-untyped-call, unused-ignore]  # typed from IPython 9
        return bundle

    def close(self) -> None:
        """Close the live view if the turn got one; nothing else to free."""
        self.finished = True
        self._unwatch()
        self._seen = []
        if self.upgraded is not None:
            self.upgraded.close()


def mark_budget(turn: Turn, budget_usd: float | None, scope: str | None, spent_before_usd: float) -> None:
    """The footer's "$x of $budget" figures on `turn.meta` (USD), when a budget is set."""
    if budget_usd and turn.stats is not None:
        turn.meta["budget_usd"] = budget_usd
        turn.meta["budget_scope"] = scope
        turn.meta["spent_usd"] = spent_before_usd + turn.stats.cost_usd
