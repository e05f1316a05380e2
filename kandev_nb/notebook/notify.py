"""Approvals you cannot miss: toasts, a tab badge and the page title (issue 27, point 2).

:class:`ApprovalNotifier` is an anywidget that is never displayed (like the notebook bridge):
its module (``src/widgets/notify.ts``) runs once per frontend widget manager that creates its model,
that is in every open tab of this kernel's notebook. The kernel keeps its `items` trait equal
to the waiting approvals (:func:`~kandev_nb.notebook.pending.waiting`, checked every
:data:`POLL_S` s while the kernel's event loop runs, which it does while a `%%claude` cell
awaits its turn). For each item the page shows:

* a notification naming the notebook, the tool, what it will do and the time left, with
  Allow / Deny / Show. JupyterLab 4's own (the ``apputils:notify`` command) when the page
  exposes the app as ``window.jupyterapp`` (``--LabApp.expose_app_in_browser``, or dev mode);
  otherwise no documented way leads from a widget to the app, and the notifier shows a toast
  of its own in the page's corner, drawn with JupyterLab's theme variables;
* a badge on the notebook's tab and the count in the page title (``(1) ⏳ name.ipynb``).

Allow and Deny in the toast answer through :meth:`PendingApproval.allow_shown` /
:meth:`~kandev_nb.notebook.pending.PendingApproval.deny` (bound to the payload of the card).
A toast shows one line of the request; it offers Allow only when that line is the whole payload
(the item's ``complete``, computed here: :func:`~kandev_nb.agent.surface.line_of`), otherwise
Show and Deny (issue 32, point 3). Its Allow carries the line's ``digest``, and the broker
refuses an allow whose digest is that of a line that was not the whole payload.
Show scrolls to the card and focuses it (Enter allows, Escape opens the reason box). The toast
works when the card is gone (a reload of an unsaved notebook whose cell cannot be found).

Messages (widget comm, "msg:custom"): tab -> kernel ``{kind: "answer", id, action: "allow" |
"deny", reason?, digest?}`` (`digest`: of the line the toast showed); kernel -> tab
``{kind: "answered", id, ok, error?}``.

"Wait and remind" (:func:`turn_timeout`): with a tab attached, an unanswered card no longer
denies at the approval timeout; half of that timeout on, the item is marked `reminded` and the
page shows a reminder. A cell's own ``--approval-timeout`` still denies, and so does every
headless run (nbclient, papermill: no tab ever said hello to the bridge).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from typing import Any

import anywidget
import traitlets

from kandev_nb.notebook.page_code import page_file
from kandev_nb.notebook.pending import PendingApproval, waiting
from kandev_nb.notebook.widget_messages import ToastAnswer, ToastAnswered, read
from kandev_nb.render.card_view import tool_label

__all__ = ["POLL_S", "ApprovalNotifier", "ensure_notifier", "notifier", "turn_timeout"]

log = logging.getLogger("kandev_nb")

POLL_S = 0.5
"""Seconds between two looks at the waiting approvals (only changes are sent to the page)."""


class ApprovalNotifier(anywidget.AnyWidget):
    """The kernel's end of the notifications (see the module docstring).

    Attributes:
        items: JSON list, one object per waiting approval: ``id`` (`request_id`), ``tool``
            (short tool name), ``full_tool`` (`tool_name`), ``summary``, ``cell`` (``In [n]``
            count or null), ``notebook`` (the tab's path, from the bridge's hello), ``left_s``
            (seconds left before the approval timeout when sent, null: none), ``age_s``,
            ``question`` (an AskUserQuestion), ``reminded`` (half the reminder time passed),
            ``complete`` (the summary is the whole payload: the toast may offer Allow) and
            ``digest`` (of the summary; an Allow sends it back).
        remind_after_s: seconds after which an unanswered approval is `reminded` (None: never);
            set per turn by :func:`turn_timeout`.
        answers: ``(request_id, action, ok)`` of every answer the page sent (tests read it).
    """

    _esm = page_file("notify.js")  # src/widgets/notify.ts
    items = traitlets.Unicode("[]").tag(sync=True)

    def __init__(self) -> None:
        super().__init__()
        self.remind_after_s: float | None = None
        self.answers: list[tuple[str, str, bool]] = []
        self._task: asyncio.Task[None] | None = None
        self.on_msg(self._on_msg)

    # -- the page's answers ----------------------------------------------------------------

    def _on_msg(self, _widget: Any, content: Any, _buffers: Any) -> None:
        message = read(ToastAnswer, content) if isinstance(content, dict) else None
        if message is None:
            return
        request_id, action, reason = message.id, message.action, message.reason
        error = ""
        item = next((p for p in self._waiting() if p.request_id == request_id), None)
        try:
            if item is None:
                raise RuntimeError("this approval is no longer waiting")
            if action == "allow":
                item.allow_shown(message.digest)  # refused unless the line was the whole payload
            else:
                item.deny(reason)
        except (RuntimeError, ValueError, TypeError) as exc:
            error = str(exc)
        self.answers.append((request_id, action, not error))
        self.send(ToastAnswered(id=request_id, ok=not error, error=error).model_dump())
        self.refresh()

    # -- the waiting approvals -------------------------------------------------------------

    def _waiting(self) -> list[PendingApproval]:
        from kandev_nb.notebook.state import current

        return list(waiting(current().sessions))

    def refresh(self) -> None:
        """Set `items` from the waiting approvals (sent to the page only when they changed)."""
        from kandev_nb.notebook.bridge import tab_path

        notebook = tab_path()
        items = [
            {
                "id": p.request_id,
                "tool": tool_label(p.tool),
                "full_tool": p.tool,
                "summary": p.summary,
                "cell": p.cell,
                "notebook": notebook,
                "left_s": None if p.left_s is None else round(p.left_s, 1),
                "age_s": round(p.age_s, 1),
                "question": p.question,
                "reminded": self.remind_after_s is not None and p.age_s >= self.remind_after_s,
                "complete": p.complete,
                "digest": p.line.digest if p.line is not None else None,
            }
            for p in self._waiting()
        ]

        # what the page must redraw for: the set, a reminder; not the seconds (it counts down itself)
        def key_of(i: dict[str, Any]) -> tuple[Any, ...]:
            return (i["id"], i["reminded"], i["notebook"], i["left_s"] is None, i.get("digest"))

        if [key_of(i) for i in items] != [key_of(i) for i in json.loads(self.items)]:
            self.items = json.dumps(items)

    def start(self) -> None:
        """Keep `items` current in a task of the running event loop (once)."""
        if self._task is not None and not self._task.done():
            return
        with contextlib.suppress(RuntimeError):  # no running loop: refreshed by the next cell
            self._task = asyncio.get_running_loop().create_task(self._poll())

    async def _poll(self) -> None:
        while True:
            try:
                self.refresh()
            except Exception:  # never let a broken refresh stop the notifications
                log.exception("kandev-nb notifier: refresh failed")
            await asyncio.sleep(POLL_S)


_notifier: ApprovalNotifier | None = None


def notifier() -> ApprovalNotifier | None:
    """The kernel's notifier, or None when there is none yet."""
    return _notifier


def ensure_notifier() -> ApprovalNotifier | None:
    """Create the kernel's notifier once and start its refresh task; None outside an ipykernel."""
    global _notifier
    if _notifier is None:
        from IPython.core.getipython import get_ipython

        ip = get_ipython()  # type: ignore[no-untyped-call, unused-ignore]  # typed from IPython 9
        if ip is None or getattr(ip, "kernel", None) is None:
            return None
        try:
            _notifier = ApprovalNotifier()
        except Exception as exc:  # noqa: BLE001 - no toasts: the cards still answer
            log.warning("kandev-nb could not create the approval notifier: %r", exc)
            return None
    _notifier.start()
    return _notifier


async def interactive() -> bool:
    """True when a tab is attached: a view with a notebook document said hello to the notebook
    bridge (JupyterLab, Notebook 7); False for nbclient, papermill, a console, and pages that
    show widgets without a notebook (VS Code, Colab). Without a hello yet, the views are asked
    for one (:meth:`NotebookBridge.find_view`: at most
    :data:`~kandev_nb.kernel_tools._notebook.PING_TIMEOUT_S` s, or until
    :data:`~kandev_nb.notebook.bridge.LOAD_S` s after a page said "present")."""
    from kandev_nb.notebook.bridge import bridge

    b = bridge()
    if b is None:
        return False
    return bool(b.views) or await b.find_view() is not None


async def turn_timeout(cell_timeout: float | None, setting: float | None, attached: bool | None = None) -> float | None:
    """The approval timeout of a `%%claude` turn, and the notifier's reminder for it.

    Args:
        cell_timeout: the cell's ``--approval-timeout`` in seconds (None: not given).
        setting: the notebook's `approval_timeout` setting in seconds (None: forever).
        attached: :func:`interactive`'s answer when the caller has it (None: asked here).

    Returns:
        `cell_timeout` when given (it denies, as asked); else, when Lab's settings say
        "deny-after" (:mod:`kandev_nb.notebook.lab_channel`; unless ``configure(approval_timeout=...)``
        was called in this kernel), their `denyAfterSeconds`; else, with a tab attached
        (:func:`interactive`), None: the card waits and the page reminds at half of `setting`;
        else (headless) `setting`, which denies an unanswered card.
    """
    from kandev_nb.notebook.state import current

    lab = current().lab_settings
    deny_after = lab is not None and lab.unansweredCard == "deny-after"
    if cell_timeout is None and deny_after and "approval_timeout" not in current().configured:
        cell_timeout = float(lab.denyAfterSeconds)
    if attached is None:
        attached = await interactive()
    # headless (nbclient, papermill): no page shows toasts, and a widget would only be saved
    note = ensure_notifier() if attached else notifier()
    if cell_timeout is not None or not attached:
        if note is not None:
            note.remind_after_s = None
        return cell_timeout if cell_timeout is not None else setting
    if note is not None:
        note.remind_after_s = setting / 2 if setting else None
    return None
