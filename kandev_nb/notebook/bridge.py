"""The notebook bridge: a widget through which the kernel edits the notebook in the user's tab.

The bridge is an anywidget that is never displayed. Its module (``src/widgets/bridge.ts``) runs in
every frontend widget manager that creates its model (one per open tab of the notebook) and
reaches the tab's notebook model: through kandev-nb's JupyterLab extension where it runs
(``INotebookTracker``'s panel of this kernel, documented API; the hello says ``via:
"extension"``), else, in JupyterLab 4 and Notebook 7, the widget manager's ``context``, whose
``model.sharedModel`` is the tab's YNotebook (``via: "widget manager"``). Each such view says hello
with an id of its own; the kernel sends requests (``read``, ``insert``, ``edit``, ``delete``,
``set_outputs``) over the widget's comm to the view that said hello last, and awaits its
answer while the `%%claude` cell blocks (ipykernel >= 7.4 delivers comm messages during a
top-level await). A reloaded page says hello again and becomes the view in use.

The model starts with a few lines of page code (``bridge_stub.ts``) that only say "present";
the kernel answers by setting `_esm` to the whole bridge, which anywidget loads in its place.
So a headless run saves the stub in its widget state, not the bridge, and :func:`page_shown`
tells a turn whether any page shows this kernel's widgets (a live view) or none does (its
static rendering only, :class:`~kandev_nb.notebook.widgets.static_view.StaticView`).

No view (nbclient, papermill, `jupyter execute`, a console): no hello ever arrives, a ping
gets no answer within :data:`~kandev_nb.kernel_tools._notebook.PING_TIMEOUT_S` (no ping at all
once the bridge is :data:`QUIET_AFTER_S` old without any hello), and the
request raises :class:`~kandev_nb.errors.NoNotebookViewError`.

The same module carries ``answer_actions.ts`` (Insert / Copy on answers, the header chips:
:mod:`kandev_nb.notebook.answers`) and ``cell_language.ts`` (``%%claude`` bodies highlighted as
Markdown), which act on the tab this bridge runs in.

``widget_manager.context`` (the fallback where no extension runs) is not documented API:
pyproject pins the anywidget and jupyterlab_widgets ranges this was tested with, and
``tests/browser/test_notebook_tools_in_lab.py`` guards it.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import time
from collections.abc import Callable
from pathlib import Path, PurePosixPath
from typing import Any

import anywidget
import traitlets

from kandev_nb.errors import NoNotebookViewError, NotebookViewError
from kandev_nb.kernel_tools._notebook import PING_TIMEOUT_S
from kandev_nb.notebook.page_code import page_text
from kandev_nb.notebook.widget_messages import (
    BridgeAnswer,
    BridgeGoodbye,
    BridgeHello,
    BridgePresent,
    BridgeRequest,
    ChipNext,
    read_from_tab,
)

__all__ = ["NotebookBridge", "bridge", "ensure_bridge", "open_notebook_guard", "page_shown", "tab_path"]

log = logging.getLogger("kandev_nb")

BRIDGE_ESM = page_text("bridge.js")
"""The whole bridge's page code (``src/widgets/bridge.ts`` with ``answer_actions.ts`` and
``cell_language.ts``), sent once a page said it is there."""
QUEUED_GRACE_S = 0.2
"""How long :meth:`NotebookBridge.page_shown` lets messages queued while cells ran arrive."""
LOAD_S = 10.0
"""How long a view that a page loads (it said "present") may take to say hello."""
QUIET_AFTER_S = 5.0
"""A bridge that no view said hello to this long after it was made answers "no view" at once
(a tab says hello as soon as it gets the widget; one opened later says hello by itself), and
:meth:`NotebookBridge.page_shown` waits for a page's "present" until the bridge is this old."""


class NotebookBridge(anywidget.AnyWidget):
    """The kernel's end of the bridge (see the module docstring).

    Attributes:
        views: hello messages by view id (``{"view", "ok", "path", "client"}``), in arrival order.
        current_view: the id of the view that said hello last, or None.
        client: the kernel client id (the execute request's header `session`) of the tab whose
            cell runs the turn (:meth:`select_client`); its view is used when it said hello.
        on_hello: callbacks ``(view_id, hello)`` run when a view says hello (re-attach).
        on_present: callbacks run (with no argument, on the comm's thread) when a page first says
            it is there (its "present", or a hello): a headless turn's view becomes live.
        handlers: callbacks by message `kind` for the tab's other messages (``"next"``: a
            header chip chose the next turn's mode or model, :mod:`kandev_nb.notebook.answers`).
        round_trips_ms: the duration of each answered request (ms), for the benchmark.
    """

    # src/widgets/bridge_stub.ts, until a page says it is there: then BRIDGE_ESM
    _esm = page_text("bridge_stub.js")
    kernel = traitlets.Unicode("").tag(sync=True)
    """This kernel's token (:data:`kandev_nb.notebook.answers.KERNEL_TOKEN`): the tab decorates only
    the outputs that carry it."""

    def __init__(self) -> None:
        from kandev_nb.notebook.answers import KERNEL_TOKEN

        super().__init__(kernel=KERNEL_TOKEN)
        self.views: dict[str, dict[str, Any]] = {}
        self.current_view: str | None = None
        self.client: str | None = None
        self.on_hello: list[Callable[[str, dict[str, Any]], None]] = []
        self.on_present: list[Callable[[], None]] = []
        self.round_trips_ms: list[float] = []
        self.handlers: dict[str, Callable[[dict[str, Any]], None]] = {}
        self._ids = itertools.count(1)
        self._created = time.monotonic()
        self._forgot = False  # a view stopped answering: it might still be there, so ping
        self.present = False
        """A page holds this model (its first page code said "present", or a view said hello)."""
        self._present_at: float | None = None  # when the first "present" came (monotonic s)
        self._said_hello = False  # any hello, with a notebook document or not
        self._answers: dict[int, tuple[asyncio.AbstractEventLoop, asyncio.Future[dict[str, Any]]]] = {}
        self._hello_waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Future[str]]] = []
        self.on_msg(self._on_msg)

    def _on_msg(self, _widget: Any, content: Any, _buffers: Any) -> None:
        if not isinstance(content, dict):
            return
        message = read_from_tab(content)
        if isinstance(message, BridgePresent | BridgeHello) and not self.present:
            self.present = True
            self._present_at = time.monotonic()
            for on_present in list(self.on_present):
                try:
                    on_present()
                except Exception:  # a broken callback must not break the bridge
                    log.exception("kandev-nb bridge: present callback failed")
        if isinstance(message, BridgePresent):
            if self._esm != BRIDGE_ESM:
                self._esm = BRIDGE_ESM  # anywidget loads it in place of the stub; each view says hello
        elif isinstance(message, BridgeHello):
            self._said_hello = True
            view = message.view
            if not message.ok:
                log.debug("kandev-nb bridge: view %s has no notebook: %s", view, message.reason)
                return
            hello = message.model_dump()
            self.views.pop(view, None)
            self.views[view] = hello  # the latest hello last
            self.current_view = view
            waiters, self._hello_waiters = self._hello_waiters, []
            for loop, future in waiters:
                loop.call_soon_threadsafe(_settle, future, view)
            for callback in list(self.on_hello):
                try:
                    callback(view, hello)
                except Exception:  # a broken callback must not break the bridge
                    log.exception("kandev-nb bridge: hello callback failed")
        elif isinstance(message, ChipNext) and message.kind in self.handlers:  # a header chip (answers.py)
            try:
                self.handlers[message.kind](message.model_dump())
            except Exception:  # a broken handler must not break the bridge
                log.exception("kandev-nb bridge: %s handler failed", message.kind)
        elif isinstance(message, BridgeGoodbye):
            self.forget(message.view)
        elif isinstance(message, BridgeAnswer):
            entry = self._answers.pop(message.id, None)
            if entry is not None:
                answer_loop, answer = entry
                answer_loop.call_soon_threadsafe(_settle, answer, message.model_dump())

    def forget(self, view: str) -> None:
        """Stop addressing `view` (it said goodbye, or did not answer)."""
        gone = self.views.pop(view, None)
        self._forgot = True
        if self.current_view == view:
            self.current_view = next(reversed(self.views), None)
        if (
            gone is not None
            and self.client is not None
            and gone.get("client") == self.client
            and not any(hello.get("client") == self.client for hello in self.views.values())
        ):
            self.client = None  # that tab is gone (reloaded): the latest view acts now

    def select_client(self, client: str | None) -> None:
        """Prefer the view of the tab with this kernel client id (the running cell's tab)."""
        self.client = client

    def _chosen(self) -> str | None:
        """The latest view of the preferred tab, else the latest view of any tab."""
        if self.client is not None:
            mine = [v for v, hello in self.views.items() if hello.get("client") == self.client]
            if mine:
                return mine[-1]
        return self.current_view

    def tab_path(self) -> str | None:
        """The path of the notebook in the view the bridge talks to now (the running cell's
        tab when it said hello, else the latest view of any tab): its hello's `path`, relative
        to the Jupyter server's root with ``/`` separators (``work/errs.ipynb``). None while no
        view said hello (nbclient, papermill, a console) or a view's hello had no path."""
        hello = self.views.get(self._chosen() or "")
        path = hello.get("path") if hello else None
        return str(PurePosixPath(path)) if isinstance(path, str) and path else None

    async def find_view(self, timeout_s: float = PING_TIMEOUT_S) -> str | None:
        """The view in use; without one, ask every view to say hello and wait `timeout_s` s
        (not when no view ever said hello and the bridge is older than :data:`QUIET_AFTER_S`).
        A page that said "present" but no hello yet loads the whole bridge: it is waited for
        until :data:`LOAD_S` s after its "present", never longer.

        Returns:
            A view id, or None when no view answered in time.
        """
        chosen = self._chosen()
        if chosen is not None:
            return chosen
        now = time.monotonic()
        load_left = LOAD_S - (now - self._present_at) if self._present_at is not None and not self._said_hello else 0.0
        if not self.views and not self._forgot and load_left <= 0 and now - self._created > QUIET_AFTER_S:
            return None  # never a hello, long after the widget was made: no frontend (nbclient, console)
        timeout_s = max(timeout_s, load_left)
        loop = asyncio.get_running_loop()
        future: asyncio.Future[str] = loop.create_future()
        self._hello_waiters.append((loop, future))
        self.send(BridgeRequest(op="hello", id=0, view=None).model_dump())
        try:
            return await asyncio.wait_for(future, timeout_s)
        except TimeoutError:
            return None
        finally:
            self._hello_waiters = [(lp, f) for lp, f in self._hello_waiters if f is not future]

    async def page_shown(self, other_page: Callable[[], bool] = lambda: False) -> bool:
        """True when a page shows this kernel's widgets (JupyterLab, Notebook 7, VS Code,
        Colab: its widget manager ran the bridge's page code, :attr:`present`) or `other_page()`
        says one is there; False for nbclient, papermill, ``jupyter execute``, a console.

        Waits :data:`QUEUED_GRACE_S` s for messages that arrived while cells ran, and for a
        bridge made moments ago (a Run All right after ``%load_ext``, a busy page that has not
        run the stub yet) until it is :data:`QUIET_AFTER_S` s old: a headless run's first turn
        so waits up to that long once, and a tab is not taken for a headless run."""
        deadline = max(time.monotonic() + QUEUED_GRACE_S, self._created + QUIET_AFTER_S)
        while not (self.present or other_page()) and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
        return self.present or other_page()

    async def request(
        self, op: str, args: dict[str, Any], *, timeout_s: float = 10.0, view: str | None = None
    ) -> dict[str, Any]:
        """Send one request to the view in use and return its answer's ``result``.

        Args:
            op: ``read``, ``cells`` (ids and sources only), ``insert``, ``edit``, ``delete``,
                ``set_outputs``, ``attach`` or ``ping``.
            args: the request's arguments (see ``src/widgets/bridge.ts``).
            timeout_s: seconds to wait for the answer.
            view: the view to ask (default: the running cell's tab, else the latest).

        Raises:
            NoNotebookViewError: no view said hello and none answered a ping.
            NotebookViewError: the view answered with an error, or not within `timeout_s`
                (it is then forgotten: the next request pings again).
        """
        view = view or await self.find_view()
        if view is None:
            raise NoNotebookViewError()
        request_id = next(self._ids)
        loop = asyncio.get_running_loop()
        future: asyncio.Future[dict[str, Any]] = loop.create_future()
        self._answers[request_id] = (loop, future)
        started = time.perf_counter()
        self.send(BridgeRequest(id=request_id, view=view, op=op, args=args).model_dump())
        try:
            answer = await asyncio.wait_for(future, timeout_s)
        except TimeoutError:
            self._answers.pop(request_id, None)
            self.forget(view)
            raise NotebookViewError(
                f"the notebook tab did not answer {op!r} within {timeout_s:g} s (closed or reloading?); try again"
            ) from None
        self.round_trips_ms.append((time.perf_counter() - started) * 1000)
        if not answer.get("ok"):
            raise NotebookViewError(str(answer.get("error") or "unknown error"))
        result = answer.get("result")
        return result if isinstance(result, dict) else {}


def _settle(future: asyncio.Future[Any], value: Any) -> None:
    if not future.done():
        future.set_result(value)


_bridge: NotebookBridge | None = None


def bridge() -> NotebookBridge | None:
    """The kernel's bridge, or None when there is none (no ipykernel, or not created yet)."""
    return _bridge


def tab_path() -> str | None:
    """The path of the notebook tab this kernel's turns run in, relative to the Jupyter
    server's root (:meth:`NotebookBridge.tab_path`); None without a bridge or a tab that said
    hello. What the notifications and kandev-nb's JupyterLab panel name the notebook by."""
    return _bridge.tab_path() if _bridge is not None else None


async def page_shown() -> bool:
    """:meth:`NotebookBridge.page_shown` of the kernel's bridge (made here if needed), where a
    JupyterLab page connected to this kernel through kandev-nb's extension
    (:mod:`kandev_nb.notebook.lab_channel`) counts as a page too; False outside an ipykernel."""
    b = ensure_bridge()
    return b is not None and await b.page_shown(_lab_page)


def _lab_page() -> bool:
    """A page of kandev-nb's JupyterLab extension holds a channel to this kernel."""
    from kandev_nb.notebook.lab_channel import channel

    lab = channel()
    return lab is not None and bool(lab.comms)


def ensure_bridge() -> NotebookBridge | None:
    """Create the kernel's bridge once (at ``%load_ext`` and at each `%%claude`) and register
    it as the kernel tools' notebook view. None outside an ipykernel (nothing to talk to)."""
    global _bridge
    if _bridge is not None:
        return _bridge
    from IPython.core.getipython import get_ipython

    from kandev_nb.kernel_tools._notebook import set_view_provider

    ip = get_ipython()  # type: ignore[no-untyped-call, unused-ignore]  # typed from IPython 9
    if ip is None or getattr(ip, "kernel", None) is None:
        return None
    try:
        _bridge = NotebookBridge()
    except Exception as exc:  # noqa: BLE001 - no bridge: the notebook tools answer that there is no view
        log.warning("kandev-nb could not create the notebook bridge: %r", exc)
        return None
    set_view_provider(bridge)
    from kandev_nb.notebook import answers

    answers.install(_bridge)
    return _bridge


_REFUSAL = (
    "Refused: {path} is the notebook open in the user's tab; writing the file behind the tab would "
    'fight the editor ("file changed on disk") and lose the user\'s unsaved work. Work on it live with '
    "the kernel tools instead: mcp__kernel__read_notebook, mcp__kernel__insert_cell, "
    "mcp__kernel__edit_cell, mcp__kernel__delete_cell, mcp__kernel__run_cell."
)


def open_notebook_guard(tool_name: str, tool_input: dict[str, Any]) -> str | None:
    """The sessions' ``file_guard``: refuse NotebookEdit / Write / Edit of the open notebook.

    Args:
        tool_name: the tool the CLI is about to run (the PreToolUse hook's `tool_name`).
        tool_input: its input (`notebook_path` or `file_path` is read).

    Returns:
        The refusal sent to the model when the target is the ``.ipynb`` a tab holds open
        (the view's hello `path`, relative to the Jupyter server's root, matched as the end
        of the target's resolved path); None otherwise, and always when no view is open.
    """
    view = _bridge.views.get(_bridge.current_view or "") if _bridge is not None else None
    open_path = view.get("path") if view else None
    target = tool_input.get("notebook_path") or tool_input.get("file_path")
    if not isinstance(open_path, str) or not isinstance(target, str) or not target.endswith(".ipynb"):
        return None
    wanted = Path(open_path).parts
    resolved = Path(target).expanduser().resolve().parts
    if wanted and resolved[-len(wanted) :] == wanted:
        return _REFUSAL.format(path=target)
    return None
