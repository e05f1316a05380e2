"""A turn's output where no page shows widgets: its static rendering only (issue 37 point 8).

:class:`StaticView` is what `%%claude` makes in place of :class:`~kandev_nb.notebook.widgets.view.TurnView`
when :func:`kandev_nb.notebook.bridge.page_shown` is False (``jupyter execute``, nbclient,
papermill, a console).
"""

from __future__ import annotations

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
    so saves no widget state (issue 37: the executed notebook within 20% of the one Lab saves).

    Should a page say "present" after all while the turn runs (a busy tab that ran the bridge's
    first page code late), the turn gets its live view then: `live_later` makes it, it is shown
    every event so far and gets every later one, so a tab's turn never waits for an approval
    with no card to answer it.

    Args: as :class:`TurnView`'s `budget_usd`, `budget_scope` and `spent_before_usd` (USD);
        `live_later`: makes and displays the turn's :class:`TurnView` (None: never).
    """

    live = False
    """No widgets: nothing for a reloaded tab to get back (:mod:`kandev_nb.notebook.reattach`)."""

    def __init__(
        self,
        budget_usd: float | None,
        budget_scope: str | None,
        spent_before_usd: float,
        live_later: Callable[[], TurnView] | None = None,
    ) -> None:
        self.budget_usd, self.budget_scope, self.spent_before_usd = budget_usd, budget_scope, spent_before_usd
        self.finished = False
        self.live_later = live_later
        self.upgraded: TurnView | None = None
        """The live view made once a page said "present" during the turn, else None."""
        self._seen: list[ev.AgentEvent] = []

    def handle(self, event: ev.AgentEvent) -> None:
        """Take one AgentEvent: show nothing (the turn records it), unless a page has said
        "present" since the turn began (then the live view shows it, see the class)."""
        if self.upgraded is not None:
            self.upgraded.handle(event)
            return
        if self.live_later is None or self.finished:
            return
        self._seen.append(event)
        if _page_present():
            self.upgraded = self.live_later()
            seen, self._seen = self._seen, []
            for past in seen:
                self.upgraded.handle(past)

    def finish(self, turn: Turn) -> dict[str, Any]:
        """Display `turn`'s static rendering once; returns its MIME bundle (the live view's
        :meth:`TurnView.finish` when the turn got one)."""
        from IPython.display import display

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
        self._seen = []
        if self.upgraded is not None:
            self.upgraded.close()


def mark_budget(turn: Turn, budget_usd: float | None, scope: str | None, spent_before_usd: float) -> None:
    """The footer's "$x of $budget" figures on `turn.meta` (USD), when a budget is set."""
    if budget_usd and turn.stats is not None:
        turn.meta["budget_usd"] = budget_usd
        turn.meta["budget_scope"] = scope
        turn.meta["spent_usd"] = spent_before_usd + turn.stats.cost_usd


def _page_present() -> bool:
    """A page has said "present" to the notebook bridge (:attr:`NotebookBridge.present`)."""
    from kandev_nb.notebook.bridge import bridge

    b = bridge()
    return b is not None and b.present
