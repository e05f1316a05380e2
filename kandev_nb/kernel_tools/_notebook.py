"""The open notebook as Claude's workspace: the `kernel` server's cell tools (issue 13).

Tools (the model sees ``mcp__kernel__<tool>``):

- ``read_notebook {start?, stop?}``: the cells with their outputs as the user sees them.
- ``insert_cell {source, cell_type?, index?}``: a new cell, by default below the running
  `%%claude` cell and below the cells this turn inserted before.
- ``edit_cell {index | cell_id, source}``: the cell's whole new source; refused when the
  cell changed since the agent last read it, and for the running `%%claude` cell.
- ``delete_cell {index | cell_id}``.
- ``run_cell {index | cell_id}``: runs the cell's source in the user's namespace; its own
  output area gets what it produces, with an execution count.

A call that a person (or a policy) allowed on its approval card acts only on what that card
showed (issue 23): the cell it resolved when the card was built (by id, also for an
``index``) and its source then. The card gets that cell from the tab (:func:`_resolve_any`,
registered with :func:`~kandev_nb.agent.cells.set_cell_resolver`); the call carries the
record (:class:`~kandev_nb.policy.binding.BoundPayload`) and anything different is refused
with :func:`~kandev_nb.policy.binding.check`'s text.

The tools act on the notebook through a :class:`NotebookView` that the notebook layer
gives (``kandev_nb.notebook.bridge``: a widget whose JavaScript edits the tab's own
notebook model), so nothing here imports the notebook layer. Without a view (nbclient,
papermill, a console) every tool answers at once that there is no open notebook view.

Cells are addressed by their nbformat ``id``; an ``index`` is resolved when the call arrives.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

import mcp.types as mt

from kandev_nb.agent.cells import CellSnapshot, set_cell_lookup, set_cell_resolver
from kandev_nb.errors import NoNotebookViewError, NotebookViewError
from kandev_nb.kernel_tools import _deleted
from kandev_nb.kernel_tools._cell_outputs import MAX_CELL_OUTPUT_CHARS, MAX_IMAGE_CHARS, MAX_IMAGES, outputs_text
from kandev_nb.kernel_tools._cell_outputs import text_of as _text
from kandev_nb.kernel_tools._notebook_schema import tool_list
from kandev_nb.kernel_tools._run import CodeRunner, capture_display, nbformat_outputs
from kandev_nb.policy.binding import BoundPayload, Shown, check
from kandev_nb.redact import REDACTED

if TYPE_CHECKING:
    from kandev_nb.kernel_tools._server import KernelTools

__all__ = [
    "CHANGE_TOOLS",
    "TOOL_NAMES",
    "NotebookTools",
    "NotebookView",
    "set_view_provider",
]

TOOL_NAMES = ("read_notebook", "insert_cell", "edit_cell", "delete_cell", "run_cell")
"""The notebook tools' names on the `kernel` server."""

CHANGE_TOOLS = tuple(f"mcp__kernel__{n}" for n in TOOL_NAMES[1:])
"""The notebook tools that change the notebook or the kernel: the CLI asks for approval."""

INSTRUCTIONS = (
    " The notebook open in the user's tab is your workspace too: read_notebook shows its cells "
    "with their outputs; insert_cell, edit_cell, delete_cell and run_cell change and run them "
    "live in the tab (the user approves each). Use these tools, not NotebookEdit or Write, for "
    "the open notebook."
)

PING_TIMEOUT_S = 1.5
"""How long a tool waits for any tab to answer when none said hello."""
REQUEST_TIMEOUT_S = 10.0
"""How long a tool waits for the tab's answer to one request."""

_NO_VIEW = (
    "There is no open notebook view: this kernel's notebook is not open in a JupyterLab 4 or "
    "Notebook 7 tab (it runs under nbclient, papermill, `jupyter execute`, a console, or a frontend "
    "without widgets). The notebook tools need the tab; run_code and the variable tools still work."
)


class NotebookView(Protocol):
    """The tab that holds the notebook, as the notebook layer provides it.

    ``await request(op, args, timeout_s=...)`` sends one request (``read``, ``cells``, ``insert``,
    ``edit``, ``delete``, ``set_outputs``) and returns the tab's ``result`` dict.
    It raises :class:`~kandev_nb.errors.NoNotebookViewError` when no tab answers a
    ping within :data:`PING_TIMEOUT_S`, :class:`~kandev_nb.errors.NotebookViewError` when the tab
    answers with an error or not within `timeout_s`. A view may also have
    ``select_client(client_id)``: :meth:`NotebookTools.bind_cell` then names the kernel client
    (the execute request's header `session`) whose tab runs the turn.
    """

    async def request(self, op: str, args: dict[str, Any], *, timeout_s: float) -> dict[str, Any]: ...


ViewProvider = Callable[[], "NotebookView | None"]
_provider: ViewProvider | None = None


def set_view_provider(provider: ViewProvider | None) -> None:
    """Register where :class:`NotebookTools` get their view (the notebook layer calls this
    with the bridge; None: no view, the tools answer that there is none)."""
    global _provider
    _provider = provider


_servers: list[weakref.ref[NotebookTools]] = []


def _register(tools: NotebookTools) -> None:
    _servers[:] = [ref for ref in _servers if ref() is not None and ref() is not tools]
    _servers.append(weakref.ref(tools))


def _lookup_any(cell_id: str | None, index: int | None) -> CellSnapshot | None:
    """The cards' lookup over every live server of the kernel (sessions side by side), latest first."""
    for ref in reversed(_servers):
        tools = ref()
        found = tools.lookup(cell_id, index) if tools is not None else None
        if found is not None:
            return found
    return None


async def _resolve_any(cell_id: str | None, index: int | None) -> CellSnapshot | None:
    """The approval cards' cell as the tab holds it now, through the latest live server."""
    for ref in reversed(_servers):
        tools = ref()
        if tools is not None:
            return await tools.tab_cell(cell_id, index)
    return None


set_cell_lookup(_lookup_any)
set_cell_resolver(_resolve_any)


def _index_arg(args: dict[str, Any]) -> tuple[str | None, int | None]:
    cell_id = args.get("cell_id")
    index = args.get("index")
    if cell_id is not None and not isinstance(cell_id, str):
        raise TypeError("argument 'cell_id' must be a string (a cell's id from read_notebook)")
    if index is not None and (isinstance(index, bool) or not isinstance(index, int)):
        raise TypeError("argument 'index' must be an integer (0-based, as read_notebook shows)")
    if cell_id is None and index is None:
        raise TypeError("give the cell's 'cell_id' (preferred) or its 'index'")
    return cell_id, index


def _check_bound(bound: BoundPayload | None, now: Shown) -> None:
    """Refuse (ValueError with :func:`check`'s text) what the approval card did not show."""
    refusal = check(bound, now) if bound is not None else None
    if refusal is not None:
        raise ValueError(refusal)


def _check_cell(bound: BoundPayload | None, cell: dict[str, Any], new_source: str | None = None) -> None:
    """:func:`_check_bound` of the tab's `cell` (``cells`` answer: id, index, source) now."""
    at = cell.get("index")
    _check_bound(
        bound, Shown(str(cell.get("id")), at if isinstance(at, int) else None, _text(cell.get("source")), new_source)
    )


class NotebookTools:
    """The notebook tools of one :class:`~kandev_nb.kernel_tools.KernelTools` server.

    Args:
        server: the server (its shell, namespace, options and redaction are used).
        view: the notebook view, or a callable returning it (None: the registered
            provider, see :func:`set_view_provider`).

    State kept between calls: the cells as the agent last read or wrote them (by id, for
    the stale-read check and the approval cards' diffs), the running `%%claude` cell's id
    (:meth:`bind_cell`) and the last cell inserted in this turn.
    """

    def __init__(self, server: KernelTools, view: NotebookView | ViewProvider | None = None) -> None:
        self.server = server
        self._view = view
        self.known: dict[str, CellSnapshot] = {}
        self.order: list[str] = []
        self.running_cell_id: str | None = None
        self.last_inserted: str | None = None
        self.runner = CodeRunner(server.namespace, display=self._collect_value)
        self._outputs: list[dict[str, Any]] | None = None
        self._count: int | None = None
        _register(self)

    # -- plumbing --------------------------------------------------------------------------

    @staticmethod
    def tools() -> list[mt.Tool]:
        """The notebook tools' MCP definitions (see :func:`tool_list`)."""
        return tool_list()

    def view(self) -> NotebookView | None:
        """The view in force: the one given, else the registered provider's (None: none)."""
        view = self._view if self._view is not None else _provider
        if view is None:
            return None
        if callable(view) and not hasattr(view, "request"):
            return view()
        return view  # type: ignore[return-value]

    def bind_cell(self) -> None:
        """Remember the running cell (``cellId`` of the execute request's metadata, set by
        JupyterLab and Notebook 7) and start a new turn's insert position. Called in the
        `%%claude` cell's own context, before the turn."""
        self.last_inserted = None
        _register(self)  # the latest bound server answers the cards' index lookups first
        kernel = getattr(self.server.shell, "kernel", None)
        try:
            parent = kernel.get_parent("shell") if kernel is not None else None
        except Exception:  # noqa: BLE001 - an older kernel: no cell id
            parent = None
        metadata = parent.get("metadata") if isinstance(parent, dict) else None
        cell_id = metadata.get("cellId") if isinstance(metadata, dict) else None
        self.running_cell_id = cell_id if isinstance(cell_id, str) else None
        header = parent.get("header") if isinstance(parent, dict) else None
        client = header.get("session") if isinstance(header, dict) else None
        view = self.view()
        select = getattr(view, "select_client", None)
        if callable(select):  # several tabs: act in the one whose cell runs the turn
            select(client if isinstance(client, str) else None)

    def lookup(self, cell_id: str | None, index: int | None) -> CellSnapshot | None:
        """The cell as last read or written, by id, else by its index then (for the cards)."""
        if cell_id is not None:
            return self.known.get(cell_id)
        if index is not None and 0 <= index < len(self.order):
            snap = self.known.get(self.order[index])
            return CellSnapshot(snap.cell_id, index, snap.cell_type, snap.source) if snap else None
        return None

    async def tab_cell(self, cell_id: str | None, index: int | None) -> CellSnapshot | None:
        """The cell named by id (else by index) as the tab holds it now; None when there is no
        view or no such cell. Raises :class:`~kandev_nb.errors.NotebookViewError` when the tab
        does not answer."""
        try:
            cell, _cells = await self._resolve({"cell_id": cell_id, "index": index})
        except (NoNotebookViewError, KeyError, TypeError):
            return None
        at = cell.get("index")
        return CellSnapshot(
            str(cell.get("id")),
            at if isinstance(at, int) else index,
            str(cell.get("cell_type") or "code"),
            _text(cell.get("source")),
        )

    def _remember(self, cell_id: str, index: int | None, cell_type: str, source: str) -> None:
        self.known[cell_id] = CellSnapshot(cell_id, index, cell_type, source)

    async def _request(self, op: str, args: dict[str, Any]) -> dict[str, Any]:
        view = self.view()
        if view is None:
            raise NoNotebookViewError(_NO_VIEW)
        return await view.request(op, args, timeout_s=REQUEST_TIMEOUT_S)

    async def _cells(self, op: str = "read") -> list[dict[str, Any]]:
        cells = (await self._request(op, {})).get("cells")
        if not isinstance(cells, list):
            raise NotebookViewError("the tab's answer to read has no cells")
        return [c for c in cells if isinstance(c, dict)]

    async def _resolve(self, args: dict[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """The cell named by `args` (``cell_id`` or ``index``) in the tab now, and all cells."""
        cell_id, index = _index_arg(args)
        cells = await self._cells("cells")  # ids and sources only
        if cell_id is not None:
            for cell in cells:
                if cell.get("id") == cell_id:
                    return cell, cells
            raise KeyError(f"no cell with id {cell_id!r} in the notebook now; read_notebook shows the cells")
        assert index is not None
        if not 0 <= index < len(cells):
            raise KeyError(f"no cell at index {index}: the notebook has {len(cells)} cells (0..{len(cells) - 1})")
        return cells[index], cells

    def _check_fresh(self, cell: dict[str, Any], what: str) -> None:
        """Refuse to act on a cell the agent has not read, or that changed since it read it."""
        cell_id = str(cell.get("id"))
        known = self.known.get(cell_id)
        now = _text(cell.get("source"))
        if known is None:
            raise ValueError(
                f"{what} refused: you have not read cell {cell.get('index')} (id {cell_id}) yet; "
                "call read_notebook first"
            )
        if known.source != now:
            raise ValueError(
                f"{what} refused: cell {cell.get('index')} (id {cell_id}) changed since you last "
                "read it (the user edited it?); nothing was changed. Its source now:\n" + now
            )

    # -- calls -----------------------------------------------------------------------------

    async def call(
        self, name: str, args: dict[str, Any], bound: BoundPayload | None = None
    ) -> tuple[str, list[mt.ImageContent], bool]:
        """Run tool `name` (without prefix) with `args`.

        Args:
            bound: what the approval card of this call showed (None: no card, e.g. a tool
                allowed for the session); the call acts only on that.

        Returns:
            ``(text, images, is_error)`` for the `tools/call` result; the text is redacted
            and capped by the server. Never raises for bad input or a missing view.
        """
        images: list[mt.ImageContent] = []
        try:
            if name == "read_notebook":
                text, images = await self.read_notebook(args.get("start"), args.get("stop"))
            elif name == "insert_cell":
                _check_bound(bound, Shown(new_source=args.get("source")))
                text = await self.insert_cell(args.get("source"), args.get("cell_type") or "code", args.get("index"))
            elif name == "edit_cell":
                text = await self.edit_cell(args, args.get("source"), bound)
            elif name == "delete_cell":
                text = await self.delete_cell(args, bound)
            elif name == "run_cell":
                text, images, failed = await self.run_cell(args, bound)
                return self.server._answer(text), images, failed
            else:
                raise KeyError(f"unknown tool {name!r}")
        except NoNotebookViewError as exc:
            return self.server._answer(str(exc) or _NO_VIEW), [], True
        except NotebookViewError as exc:
            return self.server._answer(f"the notebook tab could not do it: {exc}"), [], True
        except (KeyError, ValueError, TypeError) as exc:
            return self.server._answer(str(exc.args[0] if exc.args else exc)), [], True
        return self.server._answer(text), images, False

    async def read_notebook(self, start: Any = None, stop: Any = None) -> tuple[str, list[mt.ImageContent]]:
        """The ``read_notebook`` tool: ``(text, images)``; every cell shown is remembered."""
        for name, value in (("start", start), ("stop", stop)):
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
                raise TypeError(f"argument {name!r} must be a non-negative integer")
        cells = await self._cells()
        self.order = [str(c.get("id")) for c in cells]
        first = start or 0
        last = len(cells) if stop is None else min(stop, len(cells))
        budget = self.server.options.max_output_chars - 400
        parts = [
            (
                f"{len(cells)} cells; showing {first}..{max(first, last - 1)}. Images: at most {MAX_IMAGES} "
                f"attached, each at most {MAX_IMAGE_CHARS // 1000} kB (base64); each output cut to "
                f"{MAX_CELL_OUTPUT_CHARS} characters (head and tail)."
            )
        ]
        images: list[mt.ImageContent] = []
        used = len(parts[0])
        for position in range(first, last):
            cell = cells[position]
            cell_id, kind, source = str(cell.get("id")), str(cell.get("cell_type") or "code"), _text(cell.get("source"))
            self._remember(cell_id, position, kind, source)
            block = self._cell_text(position, cell, images)
            if used + len(block) > budget and position > first:
                parts.append(
                    f"[cells {position}..{last - 1} not shown (answer size); call read_notebook with start={position}]"
                )
                break
            parts.append(block)
            used += len(block)
        return "\n\n".join(parts), images

    def _cell_text(self, position: int, cell: dict[str, Any], images: list[mt.ImageContent]) -> str:
        cell_id, kind = str(cell.get("id")), str(cell.get("cell_type") or "code")
        head = f"--- cell {position} · {kind} · id {cell_id}"
        if kind == "code":
            count = cell.get("execution_count")
            head += f" · [{count if count is not None else ' '}]"
        if cell_id == self.running_cell_id:
            head += " · the running %%claude cell (this turn)"
        lines = [head + " ---", _text(cell.get("source"))]
        outputs = cell.get("outputs") if kind == "code" else None
        if isinstance(outputs, list) and outputs:
            lines.append(f"[outputs of cell {position}]")
            lines.append(outputs_text(outputs, position, images))
        return "\n".join(lines)

    async def insert_cell(self, source: Any, cell_type: Any = "code", index: Any = None) -> str:
        """The ``insert_cell`` tool. Returns the answer naming the new cell's id and index."""
        if not isinstance(source, str):
            raise TypeError("argument 'source' (a string) is required")
        if cell_type not in ("code", "markdown"):
            raise ValueError(f"cell_type must be 'code' or 'markdown', not {cell_type!r}")
        if index is not None and (isinstance(index, bool) or not isinstance(index, int) or index < 0):
            raise TypeError("argument 'index' must be a non-negative integer")
        request: dict[str, Any] = {"source": source, "cell_type": cell_type}
        if index is not None:
            request["index"] = index
        else:
            request["after_ids"] = [i for i in (self.last_inserted, self.running_cell_id) if i]
        try:
            made = await self._request("insert", request)
        except NoNotebookViewError:
            fallback = self._next_input(source)
            if fallback is None:
                raise
            return fallback
        cell_id, at = str(made.get("id")), made.get("index")
        self.last_inserted = cell_id
        self._remember(cell_id, at if isinstance(at, int) else None, cell_type, source)
        if isinstance(at, int):
            self.order.insert(min(at, len(self.order)), cell_id)
        return f"inserted a {cell_type} cell at index {at} with id {cell_id}"

    def _next_input(self, source: str) -> str | None:
        """No view, but a frontend that honours IPython's ``set_next_input`` (VS Code sets
        ``__vsc_ipynb_file__``): one new cell, shown after the turn. None: no such frontend."""
        shell = self.server.shell
        if shell is None or "__vsc_ipynb_file__" not in self.server.namespace():
            return None
        if self.last_inserted == "set_next_input":
            raise ValueError(
                "insert_cell: this frontend (VS Code) takes only one new cell per turn, and it is "
                "already set; say what else to add in your answer instead"
            )
        shell.set_next_input(source, replace=False)
        self.last_inserted = "set_next_input"
        return (
            "There is no open notebook view the kernel can edit, but this frontend (VS Code) shows one new "
            "cell below the running one after the turn (IPython's set_next_input). It has no id yet: it "
            "cannot be run, edited or deleted with these tools in this turn, and only one cell per turn works."
        )

    async def edit_cell(self, args: dict[str, Any], source: Any, bound: BoundPayload | None = None) -> str:
        """The ``edit_cell`` tool: the whole new source, refused on a stale read, for the running
        `%%claude` cell, and when it is not what the approval card showed (`bound`)."""
        if not isinstance(source, str):
            raise TypeError("argument 'source' (the cell's whole new source) is required")
        cell, _cells = await self._resolve(args)
        cell_id = str(cell.get("id"))
        if cell_id == self.running_cell_id:
            raise ValueError("edit_cell refused: that is the running %%claude cell")
        _check_cell(bound, cell, source)
        self._check_fresh(cell, "edit_cell")
        shown = self.server._answer(self.known[cell_id].source)
        if REDACTED in source and REDACTED in shown and REDACTED not in self.known[cell_id].source:
            raise ValueError(  # the secret it stood for would be lost (kandev_nb/redact.py)
                f"edit_cell refused: cell {cell.get('index', '')} (id {cell_id}) holds a secret you were shown as "
                f"{REDACTED}; writing it back would erase the user's value. Nothing was changed; insert a new "
                "cell instead, or ask the user to make this edit."
            )
        done = await self._request(
            "edit", {"id": cell_id, "source": source, "expected_source": self.known[cell_id].source}
        )
        if done.get("stale"):
            raise ValueError(
                f"edit_cell refused: cell {done.get('index')} (id {cell_id}) changed a moment ago; "
                "nothing was changed. Its source now:\n" + _text(done.get("source"))
            )
        self._remember(cell_id, done.get("index"), str(cell.get("cell_type") or "code"), source)
        cleared = " (its outputs were cleared)" if cell.get("cell_type") == "code" and cell.get("has_outputs") else ""
        return f"cell {done.get('index')} (id {cell_id}) now has the new source{cleared}"

    async def delete_cell(self, args: dict[str, Any], bound: BoundPayload | None = None) -> str:
        """The ``delete_cell`` tool (refused like :meth:`edit_cell`)."""
        cell, _cells = await self._resolve(args)
        cell_id = str(cell.get("id"))
        if cell_id == self.running_cell_id:
            raise ValueError("delete_cell refused: that is the running %%claude cell")
        _check_cell(bound, cell)
        self._check_fresh(cell, "delete_cell")
        done = await self._request("delete", {"id": cell_id, "expected_source": _text(cell.get("source"))})
        if done.get("stale"):
            raise ValueError(
                f"delete_cell refused: cell {done.get('index')} (id {cell_id}) changed a moment ago; "
                "nothing was deleted. Its source now:\n" + _text(done.get("source"))
            )
        self.known.pop(cell_id, None)
        at = self.order.index(cell_id) if cell_id in self.order else -1
        _deleted.remember(  # its card can put it back ("Restore cell", notebook/turn_actions.py)
            cell_id,
            _text(done.get("source")),
            str(done.get("cell_type") or "code"),
            done.get("index"),
            self.order[at - 1] if at > 0 else None,
        )
        if cell_id in self.order:
            self.order.remove(cell_id)
        return f"deleted cell {done.get('index')} (id {cell_id})"

    async def run_cell(
        self, args: dict[str, Any], bound: BoundPayload | None = None
    ) -> tuple[str, list[mt.ImageContent], bool]:
        """The ``run_cell`` tool: ``(text, images, failed)``; the cell's output area gets the outputs.
        Runs exactly the source compared with the approval card's (`bound`)."""
        cell, _cells = await self._resolve(args)
        cell_id = str(cell.get("id"))
        if cell.get("cell_type") != "code":
            raise ValueError(f"run_cell: cell {cell.get('index')} (id {cell_id}) is a {cell.get('cell_type')} cell")
        if cell_id == self.running_cell_id:
            raise ValueError("run_cell refused: that is the running %%claude cell")
        _check_cell(bound, cell)
        self._check_fresh(cell, "run_cell")
        source = _text(cell.get("source"))
        shell = self.server.shell
        code = shell.transform_cell(source) if shell is not None else source
        count = self._next_count()
        self._outputs, self._count = [], count
        try:
            with capture_display(getattr(self.server.shell, "display_pub", None), self._outputs):
                result = await self.runner.run(code, timeout_s=self.server.options.run_timeout_s, echo=False)
            outputs = nbformat_outputs(result, self._outputs)
        finally:
            self._outputs = None
        await self._request("set_outputs", {"id": cell_id, "outputs": outputs, "execution_count": count})
        images: list[mt.ImageContent] = []
        shown = outputs_text(outputs, int(cell.get("index") or 0), images)
        failed = bool(result.error or result.timed_out or result.stopped)
        head = f"ran cell {cell.get('index')} (id {cell_id}) as [{count}]; its output area now shows:"
        notes = []
        if result.timed_out:
            notes.append(f"stopped: it ran longer than the {self.server.options.run_timeout_s:g} s timeout")
        elif result.stopped:
            notes.append("stopped: the user stopped it")
        tail = "\n".join(notes + [f"took {result.duration_s:.2f} s"])
        return f"{head}\n{shown or '(no output)'}\n{tail}", images, failed

    def _next_count(self) -> int | None:
        """An execution count of its own for the run cell: the shell's counter moves on by one."""
        shell = self.server.shell
        count = getattr(shell, "execution_count", None)
        if not isinstance(count, int):
            return None
        shell.execution_count = count + 1
        return count

    def _collect_value(self, value: Any) -> None:
        """CodeRunner's display: the last expression's value (or an open figure) as an output."""
        if self._outputs is None:
            return
        shell = self.server.shell
        formatter = getattr(shell, "display_formatter", None)
        if formatter is not None:
            data, metadata = formatter.format(value)
        else:
            data, metadata = {"text/plain": repr(value)}, {}
        if type(value).__name__ == "Image" and "image/png" in data:  # a figure the code left open
            self._outputs.append({"output_type": "display_data", "data": data, "metadata": metadata})
        else:
            self._outputs.append(
                {"output_type": "execute_result", "data": data, "metadata": metadata, "execution_count": self._count}
            )
