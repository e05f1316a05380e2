"""The buttons under a finished turn: Retry, Send again, Undo this turn's file changes, Restore cell.

After each `%%claude` cell with a live view, the magic shows one :class:`TurnActions`
anywidget (dom class ``kandev-turn-actions``) under the turn. It says which turn this is
("Turn 3 of session default · In [12]", the number ``%claude_undo --turn`` takes) and offers:

* **Retry** (``kandev-retry``, only after a failed or stopped turn) and **Send again**
  (``kandev-send-again``): a copy of the cell (``%%claude --retry ...`` for Retry) is put in a
  new cell right below it through the tab bridge (:mod:`kandev_nb.notebook.bridge`, the
  ``insert`` request); the person runs it (Shift+Enter), so nothing reaches Claude unseen;
* **Undo this turn's file changes** (``kandev-undo``, when the turn changed files): the CLI's
  ``rewind_files`` for this turn and the later ones, as ``%claude_undo --turn N`` does; the
  turn's file cards are marked undone (``Turn.meta["undone_tools"]``) and the files are named;
* **Permissions** (``kandev-permissions-toggle``): the session's ``%claude_permissions`` panel
  opens under the buttons (a grant is revoked there with one click);
* **Restore cell** (``kandev-restore``, one per cell the ``delete_cell`` notebook tool deleted
  in this turn): the cell goes back below the cell that was above it.

The buttons are shown only when a notebook tab is connected (the bridge got its hello):
a headless run saves none. Each click is ONE custom message ``{"action": "retry" | "send_again" | "undo" | "restore",
"id": <cell id for restore>}``; the outcome is the ``message`` trait. With no notebook tab
(nbclient, a console) Retry, Send again and Restore say so and change nothing.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import logging
from collections.abc import Coroutine
from typing import Any

import anywidget
import ipywidgets as widgets
import traitlets

from kandev_nb.errors import NoNotebookViewError
from kandev_nb.kernel_tools import _deleted
from kandev_nb.notebook.page_code import page_text
from kandev_nb.notebook.turn_numbers import note_undone
from kandev_nb.notebook.widget_messages import TurnPress, read

__all__ = ["TAB_ONLY", "TurnActions", "show"]

TAB_ONLY = "kandev_nb/tab_only"
"""The output metadata key (True) of a display that only means something while its kernel
runs (the turn's buttons): src/tabonly.ts hides it once its widget is gone."""

log = logging.getLogger("kandev_nb")


def _running_cell_id() -> str | None:
    """The running cell's id (the execute request's ``metadata.cellId``), or None."""
    try:
        from IPython.core.getipython import get_ipython

        kernel = getattr(get_ipython(), "kernel", None)  # type: ignore[no-untyped-call, unused-ignore]
        parent = kernel.get_parent("shell") if kernel is not None else {}
    except Exception:  # noqa: BLE001 - an older kernel or no kernel
        return None
    cell_id = (parent.get("metadata") or {}).get("cellId") if isinstance(parent, dict) else None
    return cell_id if isinstance(cell_id, str) else None


class TurnActions(anywidget.AnyWidget):
    """The footer buttons of one finished turn (see the module docstring).

    Args:
        session: the turn's :class:`~kandev_nb.agent.session.Session`.
        turn: the finished :class:`~kandev_nb.agent.turn.Turn` (``meta["number"]`` /
            ``meta["cell"]`` from :func:`kandev_nb.notebook.turn_numbers.mark`).
        source: the cell's source (``%%claude <options>\\n<body>``), copied by Retry / Send again.
        cell_id: the running cell's id in the tab (the copy goes below it), or None.
        handle: the ``DisplayHandle`` of the turn's output; after an undo it is redrawn, its
            file cards marked "undone".
    """

    _esm = page_text("turn_actions.js")  # src/widgets/turn_actions.ts
    _css = page_text("turn_actions.css")  # style/widgets/turn_actions.css
    info = traitlets.Unicode("").tag(sync=True)
    failed = traitlets.Bool(False).tag(sync=True)
    can_undo = traitlets.Bool(False).tag(sync=True)
    undone = traitlets.Bool(False).tag(sync=True)
    restores = traitlets.Unicode("[]").tag(sync=True)
    message = traitlets.Unicode("").tag(sync=True)
    permissions_open = traitlets.Bool(False).tag(sync=True)

    def __init__(self, session: Any, turn: Any, source: str, cell_id: str | None, handle: Any = None) -> None:
        super().__init__()
        self.handle = handle  # the turn's display (a DisplayHandle): redrawn when its files are undone
        from kandev_nb.agent.controls import changed_files

        self.add_class("kandev-turn-actions")
        self.session, self.turn, self.source, self.cell_id = session, turn, source, cell_id
        number, cell = turn.meta.get("number"), turn.meta.get("cell")
        self.info = f"Turn {number or '?'} of session {session.name}" + (f" · In [{cell}]" if cell else "")
        self.failed = turn.error is not None or bool(turn.interrupted)
        self.can_undo = bool(changed_files([turn]))
        self.restores = json.dumps(
            [{"id": cid, "label": f"Restore deleted cell {cid[:8]}"} for cid in _deleted.claim()]
        )
        self.tasks: set[asyncio.Task[None]] = set()
        self.slot = widgets.Box(layout={"display": "block"})  # the permissions panel, when open
        self.on_msg(self._on_view_msg)

    def _on_view_msg(self, _widget: Any, content: Any, _buffers: Any) -> None:
        pressed = read(TurnPress, content) if isinstance(content, dict) else None
        if pressed is None:
            return
        action = pressed.action
        work: Coroutine[Any, Any, None]
        if action in ("retry", "send_again"):
            work = self.copy_below(retry=action == "retry")
        elif action == "permissions":
            work = self.toggle_permissions()
        elif action == "undo":
            work = self.undo()
        elif action == "restore":
            work = self.restore(str(pressed.id))
        else:
            return
        task = asyncio.get_event_loop().create_task(self._guard(work))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def _guard(self, work: Coroutine[Any, Any, None]) -> None:
        try:
            await work
        except Exception as exc:  # noqa: BLE001 - a click's failure is shown, never lost
            log.warning("kandev-nb turn action failed: %r", exc)
            self.message = f"⚠ {exc or type(exc).__name__}"

    async def _insert(self, args: dict[str, Any]) -> dict[str, Any]:
        from kandev_nb.notebook.bridge import ensure_bridge

        bridge = ensure_bridge()
        try:
            if bridge is None:
                raise NoNotebookViewError()
            return await bridge.request("insert", args)
        except NoNotebookViewError:
            raise RuntimeError("no notebook tab answered (nbclient or a console?); nothing was changed") from None

    async def copy_below(self, *, retry: bool) -> None:
        """Put a copy of the cell (``%%claude --retry`` for `retry`) in a new cell below it."""
        first, _, body = self.source.partition("\n")
        if retry and "--retry" not in first.split():
            first = first.replace("%%claude", "%%claude --retry", 1)
        args: dict[str, Any] = {"cell_type": "code", "source": f"{first}\n{body}"}
        if self.cell_id:
            args["after_ids"] = [self.cell_id]
        done = await self._insert(args)
        self.message = f"A copy of this cell is below (cell {done.get('index')}): run it with Shift+Enter."

    async def toggle_permissions(self) -> None:
        """Open (or close) the session's permissions panel under the buttons
        (:class:`~kandev_nb.notebook.permissions_panel.PermissionsPanel`)."""
        # imported by name: a static import would close the cycle magic -> here -> commands -> magic
        panel_of = importlib.import_module("kandev_nb.notebook.permissions_panel").panel_of
        if self.permissions_open:
            self.slot.children = ()
            self.permissions_open = False
            return
        self.slot.children = (await panel_of(self.session),)
        self.permissions_open = True

    async def undo(self) -> None:
        """Undo the file changes of this turn and the later ones (``rewind_files``)."""
        turns = self.session.turns
        if self.turn not in turns:
            raise RuntimeError("this turn is no longer in its session (restarted?); use %claude_undo")
        index = turns.index(self.turn)
        report = await self.session.undo_files(index)
        note_undone(turns, index, list(report.files))
        self.undone = True
        if self.handle is not None:  # the saved cards say "undone" too
            from kandev_nb.notebook.answers import tab_bundle

            bundle, metadata = tab_bundle(self.turn)
            self.handle.update(bundle, metadata=metadata, raw=True)
        kept = [f"{path}: your version kept in {copy}" for path, copy in report.copies.items() if copy]
        self.message = (
            f"↩ Undid the file changes of turn {index + 1}: "
            + (", ".join(report.files) or "no file")
            + ("\n" + "\n".join(kept) if kept else "")
        )

    async def restore(self, cell_id: str) -> None:
        """Put the cell `cell_id` that ``delete_cell`` deleted back where it was."""
        record = _deleted.deleted(cell_id)
        if record is None:
            raise RuntimeError(f"cell {cell_id} was not deleted in this kernel; nothing to restore")
        args: dict[str, Any] = {"cell_type": record["cell_type"], "source": record["source"]}
        if record["after_id"]:
            args["after_ids"] = [record["after_id"]]
        if record["index"] is not None:
            args["index"] = record["index"]
        done = await self._insert(args)
        restores = json.loads(self.restores)
        for item in restores:
            if item["id"] == cell_id:
                item["done"] = True
        self.restores = json.dumps(restores)
        self.message = f"Restored the deleted cell as cell {done.get('index')}."


class _Bar(widgets.VBox):  # type: ignore[misc]
    """The buttons and the permissions slot; saved without widget state (a reload, nbconvert,
    nbclient), the output reads as its text/plain: "Turn 3 of session default · In [12]"."""

    def __init__(self, actions: TurnActions) -> None:
        super().__init__([actions, actions.slot])
        self.actions = actions

    def __repr__(self) -> str:
        return self.actions.info


def show(session: Any, turn: Any, view: Any, source: str = "") -> TurnActions | None:
    """Display the :class:`TurnActions` of `turn` under its `view` (a finished
    :class:`~kandev_nb.notebook.widgets.TurnView`, or a StaticView, which has a display handle
    only if it became live; None with ``--quiet``: no buttons), when a
    notebook tab said hello to the bridge: a headless run (nbclient, papermill) saves no
    buttons that would read "model not found" once reopened. Returns it, or None (no view, no
    tab, or the widget could not be made: logged)."""
    from kandev_nb.notebook.bridge import bridge

    tab = bridge()
    if view is None or tab is None or not tab.views:  # headless (nbclient, papermill): no buttons saved
        return None
    try:
        from IPython.display import display

        handle = getattr(view, "_handle", None)
        actions = TurnActions(session, turn, source or f"%%claude\n{turn.prompt}", _running_cell_id(), handle)
        # tab-only: kandev-nb's JupyterLab extension hides it in a notebook reopened with a new
        # kernel, where its widget is gone (instead of "Error displaying widget: model not found")
        display(_Bar(actions), metadata={TAB_ONLY: True})  # type: ignore[no-untyped-call, unused-ignore]
    except Exception:
        log.warning("kandev-nb could not show the turn's buttons", exc_info=True)
        return None
    return actions
