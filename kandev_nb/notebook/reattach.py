"""A reloaded or newly opened tab gets the running turn back (issue 13).

While a `%%claude` cell runs, a tab that says hello to the notebook bridge for the first time
(a page reload, or the notebook opened elsewhere) does not show the turn: the notebook was
not saved, so that cell has no outputs, and the tab never receives the run's display
messages. :class:`Reattach` puts the live :class:`~kandev_nb.notebook.widgets.TurnView` back:
through the bridge it sets the running cell's outputs in that tab to a widget-view of the
view's root widget (the widget manager restored its models from the kernel before the
bridge's hello) and marks the cell trusted, so the user can still click Allow and watch the
rest of the turn. When the turn ends, the static rendering is written into that cell the same
way (the tab never gets the run's `update_display_data`), with the execution count.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from kandev_nb.notebook.bridge import NotebookBridge

__all__ = ["Reattach"]

log = logging.getLogger("kandev_nb")

WIDGET_MIME = "application/vnd.jupyter.widget-view+json"


class Reattach:
    """Watches the bridge's hellos during one turn.

    Args:
        bridge: the kernel's notebook bridge.
        view: the turn's live view (its ``root`` widget is shown again).
        cell_id: the running cell's id (the execute request's ``metadata.cellId``), or None.
        source: the running cell's source (to find the cell when its id changed).
        client: the kernel client id of the tab that runs the cell (the execute request's
            header `session`): its views get the run's own messages and are left alone.

    Attributes:
        attached: the views the live view was put back into.
    """

    def __init__(
        self, bridge: NotebookBridge, view: Any, cell_id: str | None, source: str, client: str | None = None
    ) -> None:
        self.bridge, self.view, self.cell_id, self.source, self.client = bridge, view, cell_id, source, client
        self.known = set(bridge.views)
        self.attached: list[str] = []
        self._tasks: set[asyncio.Task[None]] = set()
        bridge.on_hello.append(self._hello)

    def _hello(self, view_id: str, hello: dict[str, Any]) -> None:
        if view_id in self.known or (self.client is not None and hello.get("client") == self.client):
            return  # known, or the running tab's own first hello (a Run All right after %load_ext)
        self.known.add(view_id)
        root = getattr(self.view, "root", None)
        if root is None:
            return
        outputs = [
            {
                "output_type": "display_data",
                "metadata": {},
                "data": {
                    WIDGET_MIME: {"model_id": root.model_id, "version_major": 2, "version_minor": 0},
                    "text/plain": "kandev-nb: this turn is still running (shown again after a reload)",
                },
            }
        ]
        task = asyncio.get_running_loop().create_task(self._attach(view_id, outputs))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _attach(self, view_id: str, outputs: list[dict[str, Any]], count: int | None = None) -> None:
        args: dict[str, Any] = {"id": self.cell_id, "source": self.source, "outputs": outputs}
        if count is not None:
            args["execution_count"] = count
        try:
            await self.bridge.request("attach", args, view=view_id)
        except Exception as exc:  # noqa: BLE001 - the original tab still has the turn
            log.info("kandev-nb could not show the running turn in a new tab: %r", exc)
            return
        if view_id not in self.attached:
            self.attached.append(view_id)

    async def finish(self, bundle: dict[str, Any] | None, execution_count: int | None) -> None:
        """Stop watching; write the turn's static rendering (`bundle`) into every re-attached tab."""
        if self._hello in self.bridge.on_hello:
            self.bridge.on_hello.remove(self._hello)
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
        if not bundle:
            return
        outputs = [{"output_type": "display_data", "metadata": {}, "data": bundle}]
        for view_id in list(self.attached):
            if view_id in self.bridge.views:
                await self._attach(view_id, outputs, execution_count)
