"""A real Jupyter kernel driven from a test that plays the frontend.

`KernelHarness.execute` runs a cell and collects its iopub messages; while the cell runs,
`click(description)` finds a Button widget by its description (from the comm_open /
comm_msg state updates the kernel sent) and sends the `comm_msg` a browser would send.

The streaming text widget (:class:`kandev_nb.notebook.widgets.stream.StreamText`) sends its text as
custom messages, never as state: ``{"type": "append", "at": N, "text": s}`` and
``{"type": "reset", "text": all}``. :class:`WidgetModel` rebuilds that text the way the
browser's view does (``src/widgets/kandev_lib.ts``: an append at the current length
is added, one that overlaps adds only its new part, one past a gap asks for a ``sync``), so
``KernelHarness.live_texts()`` is what a person watching the cell saw.

Like a page's widget manager, the harness runs the notebook bridge's first page code
(``src/widgets/bridge_stub.ts``): it says "present" when the bridge's model opens, so the kernel
knows a page shows its widgets and a turn gets its live view. When the kernel then sends the
whole bridge (``_esm``), the harness answers as that bridge does in a frontend that gives widgets
no notebook document (VS Code, Colab): ``hello`` with ``ok: false``, at load and whenever the
kernel asks for a hello. ``KernelHarness(..., page=False)`` plays no page (nbclient).
"""

from __future__ import annotations

import queue
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

from jupyter_client.manager import KernelManager


@dataclass
class WidgetModel:
    """One widget model as the frontend holds it.

    Attributes:
        state: the synced traits, from comm_open and "update" comm_msgs.
        live_text: the text a streaming view shows, rebuilt from "append"/"reset" custom
            messages; None for a widget that never sent one.
        gaps: offsets of "append" messages that came after a gap (each answered by a sync).
    """

    comm_id: str
    state: dict[str, Any] = field(default_factory=dict)
    closed: bool = False
    live_text: str | None = None
    gaps: list[int] = field(default_factory=list)

    def on_custom(self, content: Any) -> int | None:
        """Apply one custom message from the kernel; returns the `have` of a sync to send, if any."""
        if not isinstance(content, dict):
            return None
        if content.get("type") == "reset":
            self.live_text = str(content.get("text") or "")
        elif content.get("type") == "append":
            have = self.live_text or ""
            at, new = int(content.get("at") or 0), str(content.get("text", ""))
            if at == len(have):
                self.live_text = have + new
            elif at < len(have):  # overlaps what the view has: only the new part counts
                self.live_text = have + new[len(have) - at :]
            else:
                self.gaps.append(at)
                self.live_text = have
                return len(have)
        return None


@dataclass
class CellRun:
    msg_id: str
    outputs: list[dict[str, Any]] = field(default_factory=list)
    status: str | None = None
    error: dict[str, Any] | None = None
    done: bool = False
    reply: dict[str, Any] = field(default_factory=dict)

    def stdout(self) -> str:
        return "".join(m["content"]["text"] for m in self.outputs if m["msg_type"] == "stream")

    def data(self, mime: str) -> list[Any]:
        """Every `mime` payload displayed, updated or returned by the cell, in order."""
        found = []
        for m in self.outputs:
            kinds = ("display_data", "update_display_data", "execute_result")
            if m["msg_type"] in kinds and mime in m["content"]["data"]:
                found.append(m["content"]["data"][mime])
        return found


class KernelHarness:
    """Start a python3 kernel with `env`, run cells, read widgets, click buttons."""

    def __init__(self, env: dict[str, str], cwd: str, *, page: bool = True) -> None:
        self.page = page
        self.km = KernelManager(kernel_name="python3")
        self.km.start_kernel(env=env, cwd=cwd)
        self.kc = self.km.client()
        self.kc.start_channels()
        self.kc.wait_for_ready(timeout=60)
        self.widgets: dict[str, WidgetModel] = {}
        self.runs: dict[str, CellRun] = {}
        self.comms: dict[str, list[dict[str, Any]]] = {}  # comms this "frontend" opened: data received
        self.closed_comms: set[str] = set()

    def close(self) -> None:
        self.kc.stop_channels()
        self.km.shutdown_kernel(now=False)

    # -- iopub --------------------------------------------------------------------------

    @staticmethod
    def is_bridge(model: WidgetModel) -> bool:
        """Is `model` the notebook bridge (``kandev_nb.notebook.bridge.NotebookBridge``)?"""
        return str(model.state.get("_anywidget_id", "")).endswith(".NotebookBridge")

    def _no_document(self, model: WidgetModel) -> None:
        """What src/widgets/bridge.ts says where the frontend gives widgets no notebook."""
        reason = "this frontend gives widgets no notebook document"
        self.send_custom(
            model, {"kind": "hello", "view": f"harness-{model.comm_id[:8]}", "ok": False, "reason": reason}
        )

    def _pump(self, timeout: float = 0.1) -> None:
        try:
            msg = self.kc.get_iopub_msg(timeout=timeout)
        except queue.Empty:
            return
        kind = msg["msg_type"]
        content = msg["content"]
        if kind == "comm_open":
            model = WidgetModel(content["comm_id"], dict(content.get("data", {}).get("state", {})))
            self.widgets[content["comm_id"]] = model
            if self.page and self.is_bridge(model):
                self.send_custom(model, {"kind": "present"})  # what bridge_stub.ts sends
        elif kind == "comm_msg":
            model = self.widgets.get(content["comm_id"])
            data = content.get("data", {})
            if model is not None and data.get("method") in ("update", "echo_update"):
                model.state.update(data.get("state", {}))
                if self.page and "_esm" in data.get("state", {}) and self.is_bridge(model):
                    self._no_document(model)  # the whole bridge loaded
            elif (
                model is not None
                and self.page
                and self.is_bridge(model)
                and data.get("method") == "custom"
                and (data.get("content") or {}).get("op") == "hello"
            ):
                self._no_document(model)  # the kernel asks every view to say hello
            elif model is not None and data.get("method") == "custom":
                have = model.on_custom(data.get("content"))
                if have is not None:  # what the browser's view does after a gap
                    self.send_custom(model, {"type": "sync", "have": have})
            elif content["comm_id"] in self.comms:
                self.comms[content["comm_id"]].append(data)
        elif kind == "comm_close" and content["comm_id"] in self.widgets:
            self.widgets[content["comm_id"]].closed = True
        elif kind == "comm_close" and content["comm_id"] in self.comms:
            self.closed_comms.add(content["comm_id"])
        parent = msg.get("parent_header", {}).get("msg_id")
        run = self.runs.get(parent)
        if run is None:
            return
        if kind in ("stream", "display_data", "update_display_data", "execute_result", "error"):
            run.outputs.append(msg)
            if kind == "error":
                run.error = content
        elif kind == "status" and content["execution_state"] == "idle":
            run.done = True

    def pump_for(self, seconds: float) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            self._pump()

    # -- cells --------------------------------------------------------------------------

    def start(self, code: str, cell_id: str | None = None) -> CellRun:
        """Send `code` for execution; with `cell_id`, as JupyterLab sends a cell's execution
        (the request's ``metadata.cellId``)."""
        if cell_id is None:
            msg_id = self.kc.execute(code)
        else:
            content = {"code": code, "silent": False, "store_history": True, "user_expressions": {}}
            msg = self.kc.session.msg("execute_request", {**content, "allow_stdin": False, "stop_on_error": True})
            msg["metadata"] = {"cellId": cell_id}
            self.kc.shell_channel.send(msg)
            msg_id = msg["header"]["msg_id"]
        run = CellRun(msg_id)
        self.runs[msg_id] = run
        return run

    def wait(self, run: CellRun, timeout: float = 120) -> CellRun:
        end = time.monotonic() + timeout
        while not run.done:
            if time.monotonic() > end:
                raise TimeoutError(f"cell did not finish in {timeout} s; outputs: {run.outputs[-5:]}")
            self._pump()
        reply = self.kc.get_shell_msg(timeout=30)
        while reply["parent_header"].get("msg_id") != run.msg_id:
            reply = self.kc.get_shell_msg(timeout=30)
        run.status = reply["content"]["status"]
        run.reply = reply["content"]
        return run

    def execute(self, code: str, timeout: float = 120) -> CellRun:
        run = self.wait(self.start(code), timeout)
        assert run.status == "ok", run.error
        return run

    def eval(self, expr: str) -> Any:
        """The value of `expr` evaluated in the kernel, through JSON (tuples become lists,
        numpy scalars plain numbers)."""
        import json

        run = self.execute(
            f"import json as _j\nprint(_j.dumps({expr}, default=lambda o: o.item() if hasattr(o, 'item') else str(o)))"
        )
        return json.loads(run.stdout().strip().splitlines()[-1])

    # -- widgets ------------------------------------------------------------------------

    def find_buttons(self, description: str) -> list[WidgetModel]:
        return [
            w
            for w in self.widgets.values()
            if w.state.get("_model_name") == "ButtonModel"
            and w.state.get("description") == description
            and not w.closed
            and not w.state.get("disabled")
        ]

    def wait_for_button(self, description: str, timeout: float = 60) -> WidgetModel:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            buttons = self.find_buttons(description)
            if buttons:
                return buttons[-1]
            self._pump()
        raise TimeoutError(f"no enabled button {description!r} appeared in {timeout} s")

    def pending_approvals(self) -> list[WidgetModel]:
        """The approval controls (``kandev-approval-controls``) still waiting for an answer."""
        return [
            w
            for w in self.widgets.values()
            if "kandev-approval-controls" in w.state.get("_dom_classes", ()) and w.state.get("pending") and not w.closed
        ]

    def wait_for_approval(self, timeout: float = 60) -> WidgetModel:
        """The newest approval card's controls once one waits for an answer."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            waiting = self.pending_approvals()
            if waiting:
                return waiting[-1]
            self._pump()
        raise TimeoutError(f"no approval card waited for an answer in {timeout} s")

    def answer(self, controls: WidgetModel, action: str, **fields: str) -> None:
        """What the approval card's controls send on a click: ONE custom message carrying
        what the person typed (``{"action": "deny", "reason": ...}``, ``"allow"``, ...)."""
        self.send_custom(controls, {"action": action, **fields})

    def click(self, widget: WidgetModel) -> None:
        """Send what a browser sends when a Button is clicked."""
        self.send_custom(widget, {"event": "click"})

    def open_comm(self, target: str, data: dict[str, Any]) -> str:
        """Open a comm to `target` as a frontend does (``comm_open`` on the shell channel);
        what the kernel sends on it collects in ``comms[comm_id]``. Returns the comm_id."""
        comm_id = uuid.uuid4().hex
        self.comms[comm_id] = []
        msg = self.kc.session.msg("comm_open", {"comm_id": comm_id, "target_name": target, "data": data})
        self.kc.shell_channel.send(msg)
        return comm_id

    def comm_send(self, comm_id: str, data: dict[str, Any]) -> None:
        """Send a ``comm_msg`` with `data` on a comm :meth:`open_comm` opened."""
        self.kc.shell_channel.send(self.kc.session.msg("comm_msg", {"comm_id": comm_id, "data": data}))

    def send_custom(self, widget: WidgetModel, content: dict[str, Any]) -> None:
        """Send a custom comm_msg from the "frontend" to `widget`'s model in the kernel."""
        msg = self.kc.session.msg(
            "comm_msg", {"comm_id": widget.comm_id, "data": {"method": "custom", "content": content}}
        )
        self.kc.shell_channel.send(msg)

    def live_texts(self) -> list[str]:
        """The texts the streaming views showed (closed ones too: a finished turn replaces
        its view by the static rendering), in the order the widgets were opened."""
        return [w.live_text for w in self.widgets.values() if w.live_text is not None]

    def widget_texts(self) -> str:
        """All `value` strings of live HTML/Text widgets and custom models, and the texts
        the streaming views showed (:meth:`live_texts`), joined."""
        parts = []
        for w in self.widgets.values():
            for key in ("value", "text", "markdown"):
                if isinstance(w.state.get(key), str):
                    parts.append(w.state[key])
            if w.live_text is not None:
                parts.append(w.live_text)
        return "\n".join(parts)
