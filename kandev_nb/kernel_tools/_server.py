"""The `kernel` MCP server: the notebook's live state as tools for Claude.

Tools (the model sees them as ``mcp__kernel__<tool>``):

- ``list_variables``: the user's variables (name, type, shape, size, short summary).
- ``inspect_variable``: dtypes/head/describe/null counts of a DataFrame, stats of an
  array, a capped repr and attributes of anything else.
- ``run_code``: run Python in the user's namespace; stdout, stderr, the result's repr, the
  exception; figures come back as images and show on the run_code tool card.
- ``recent_history``: the last cells the user ran and the last error.

Every text is cut to ``options.max_output_chars`` (saying so) and, unless
``options.reveal_secrets``, the values of secret-looking variables are replaced by
``<redacted>`` wherever they would appear.
"""

from __future__ import annotations

import base64
import contextvars
import logging
import sys
import types
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import mcp.types as mt
from mcp.server import Server

from kandev_nb.kernel_tools._bridge import McpBridge
from kandev_nb.kernel_tools._history import format_history
from kandev_nb.kernel_tools._namespace import (
    cap,
    describe_variables,
    inspect_value,
    is_secret_name,
    secret_values,
)
from kandev_nb.kernel_tools._notebook import INSTRUCTIONS as NOTEBOOK_INSTRUCTIONS
from kandev_nb.kernel_tools._notebook import TOOL_NAMES as NOTEBOOK_TOOL_NAMES
from kandev_nb.kernel_tools._notebook import NotebookTools, NotebookView, ViewProvider
from kandev_nb.kernel_tools._options import KernelToolsOptions, options
from kandev_nb.kernel_tools._reach import refusal, refused_ids, step
from kandev_nb.kernel_tools._run import CodeRunner, RunResult
from kandev_nb.policy.binding import META_KEY, BoundPayload, Shown, check
from kandev_nb.redact import configured_secrets, redact_text

__all__ = ["KernelTools", "ToolCallRecord"]

log = logging.getLogger("kandev_nb")

SERVER_NAME = "kernel"
READ_ONLY = frozenset(
    {
        "mcp__kernel__list_variables",
        "mcp__kernel__inspect_variable",
        "mcp__kernel__recent_history",
        "mcp__kernel__read_notebook",
    }
)
"""The tools that only read (``kandev_nb.kernel_tools.READ_ONLY_TOOLS``)."""

INSTRUCTIONS = (
    "Tools on the live Jupyter kernel the user's notebook runs in. The user's data lives in "
    "its variables (DataFrames, arrays, models): list_variables and inspect_variable read them, "
    "recent_history shows the cells the user ran and the last error, run_code runs Python in the "
    "same namespace (the user approves each run; variables it creates stay for the notebook)."
)


@dataclass(frozen=True)
class ToolCallRecord:
    """One tool call the server answered (``KernelTools.calls``).

    Attributes:
        tool: the tool name without the ``mcp__kernel__`` prefix.
        arguments: the call's arguments (from `tools/call` ``params.arguments``).
        text: the text answer as the model got it (redacted and capped).
        images: how many images were attached.
        is_error: whether the answer was marked ``isError``.
    """

    tool: str
    arguments: dict[str, Any]
    text: str
    images: int
    is_error: bool


_STRING = {"type": "string"}


def _tool_list() -> list[mt.Tool]:
    read_only = mt.ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=False)
    return [
        mt.Tool(
            name="list_variables",
            description="List the variables in the user's live notebook kernel: name, type, shape or "
            "length, memory size and a short summary (DataFrame columns, array dtype, repr). "
            "Modules, private names and IPython internals are left out.",
            input_schema={
                "type": "object",
                "properties": {
                    "type_filter": {**_STRING, "description": "keep types whose name contains this, e.g. DataFrame"},
                    "name_pattern": {**_STRING, "description": "keep names matching this glob (df_*) or substring"},
                },
            },
            annotations=read_only,
        ),
        mt.Tool(
            name="inspect_variable",
            description="Describe one variable of the notebook kernel in detail: for a DataFrame its "
            "shape, dtypes, head, describe() and null counts; for an array its shape, dtype "
            "and statistics; otherwise its repr and attributes. Dotted paths work (model.coef_).",
            input_schema={"type": "object", "properties": {"name": _STRING}, "required": ["name"]},
            annotations=read_only,
        ),
        mt.Tool(
            name="run_code",
            description="Run Python code in the user's notebook kernel, in the same namespace as their "
            "cells (new variables stay). Returns stdout, stderr, the repr of the last "
            "expression and any exception with traceback; matplotlib figures are shown in "
            "the notebook (on this call's card) and returned as images. The user approves every run.",
            input_schema={"type": "object", "properties": {"code": _STRING}, "required": ["code"]},
            annotations=mt.ToolAnnotations(read_only_hint=False, destructive_hint=True, open_world_hint=False),
        ),
        mt.Tool(
            name="recent_history",
            description="The last cells the user ran in the notebook (source and result) and the last "
            "error with its traceback.",
            input_schema={
                "type": "object",
                "properties": {
                    "cells": {"type": "integer", "minimum": 1, "maximum": 50, "description": "how many cells"},
                },
            },
            annotations=read_only,
        ),
    ]


class KernelTools:
    """An in-process MCP server over a kernel's user namespace, for ``Session(mcp_servers=...)``.

    Args:
        shell: the IPython shell (default: ``get_ipython()``; None outside IPython).
        namespace: the namespace to serve instead of ``shell.user_ns`` (tests, scripts).
        options: its own :class:`KernelToolsOptions` (default: the module's ``options``,
            read at each call).

    ``await handle(message)`` answers one JSON-RPC message of an `mcp_message` control
    request (see :class:`~kandev_nb.kernel_tools._bridge.McpBridge`). The tool methods
    (:meth:`list_variables`, ...) are the same tools called directly.
    """

    def __init__(
        self,
        shell: Any = None,
        *,
        namespace: dict[str, Any] | None = None,
        options: KernelToolsOptions | None = None,
        notebook_view: NotebookView | ViewProvider | None = None,
    ) -> None:
        if shell is None and namespace is None:
            try:
                from IPython.core.getipython import get_ipython

                shell = get_ipython()  # type: ignore[no-untyped-call, unused-ignore]  # typed from IPython 9
            except ImportError:
                shell = None
        self.shell = shell
        self._namespace = namespace
        self._options = options
        self.calls: list[ToolCallRecord] = []
        self._cell: contextvars.Context | None = None
        # No `display` of the last expression's value: its repr is on the run_code card ("result:"),
        # and a display from the tool landed below the turn's footer (issue 28.11).
        self.runner = CodeRunner(self.namespace, display_hook=self._png_hook())
        self.notebook = NotebookTools(self, notebook_view)
        self.server: Server[Any] = Server(
            SERVER_NAME,
            instructions=INSTRUCTIONS + NOTEBOOK_INSTRUCTIONS,
            on_list_tools=self._on_list_tools,
            on_call_tool=self._on_call_tool,
        )
        self.bridge = McpBridge(self.server, SERVER_NAME)

    # -- plumbing --------------------------------------------------------------------------

    @property
    def options(self) -> KernelToolsOptions:
        """The options in force: this server's own, else the module's ``options``."""
        return self._options or options

    def namespace(self) -> dict[str, Any]:
        """The namespace the tools read and run in (``shell.user_ns``, or the one given)."""
        if self._namespace is not None:
            return self._namespace
        if self.shell is not None:
            ns: dict[str, Any] = self.shell.user_ns
            return ns
        self._namespace = {}
        return self._namespace

    def bind_cell(self, context: contextvars.Context | None = None) -> None:
        """Send rich output of later tool calls to the cell running now (its contextvars,
        which carry the kernel's parent header). Called by `%%claude` before each turn."""
        self._cell = context or contextvars.copy_context()
        self.notebook.bind_cell()

    def needs_approval(self, tool: str) -> bool:
        """Whether the tool `tool` (no ``mcp__kernel__`` prefix) changes state, so that
        :class:`~kandev_nb.agent.session.Session` runs its `tools/call` only once a person (or a
        policy) allowed it: everything but the read-only tools."""
        return f"mcp__{SERVER_NAME}__{tool}" not in READ_ONLY

    def stop(self) -> bool:
        """Stop a running ``run_code`` or ``run_cell``. Returns whether one was running."""
        return self.runner.stop() | self.notebook.runner.stop()

    async def handle(self, message: dict[str, Any]) -> dict[str, Any]:
        """Answer one JSON-RPC message from the CLI (a `mcp_message` control request's
        `message`). Returns the JSON-RPC response, or ``{"jsonrpc": "2.0", "result": {}}``
        as the acknowledgement of a notification. Never raises: a message that cannot be
        handled (not JSON-RPC, server stopped) is answered with a JSON-RPC error (-32603)."""
        try:
            reply = await self.bridge.handle(message)
        except Exception as exc:  # noqa: BLE001 - the CLI's MCP client fails this one request
            log.warning("kernel MCP server could not handle %r: %r", message.get("method"), exc)
            return {
                "jsonrpc": "2.0",
                "id": message.get("id"),
                "error": {"code": -32603, "message": f"{type(exc).__name__}: {exc}"},
            }
        return reply if reply is not None else {"jsonrpc": "2.0", "result": {}}

    async def aclose(self) -> None:
        """Stop the server's connection (a running ``run_code`` is stopped too)."""
        self.stop()
        await self.bridge.aclose()

    def _png_hook(self) -> Callable[[Callable[[bytes], None]], Callable[[], None]] | None:
        publisher = getattr(self.shell, "display_pub", None)
        if publisher is None:
            return None

        def install(callback: Callable[[bytes], None]) -> Callable[[], None]:
            had_own = "publish" in vars(publisher)
            original = publisher.publish

            def publish(data: Any, *args: Any, **kwargs: Any) -> Any:
                png = data.get("image/png") if isinstance(data, dict) else None
                if isinstance(png, str):
                    callback(base64.b64decode(png))
                    return None  # the run_code card shows it, beside its call
                if isinstance(png, bytes):
                    callback(png)
                    return None
                return original(data, *args, **kwargs)

            publisher.publish = publish

            def uninstall() -> None:
                if vars(publisher).get("publish") is publish:
                    if had_own:
                        publisher.publish = original
                    else:
                        del publisher.publish

            return uninstall

        return install

    def _redact(self, text: str) -> str:
        if self.options.reveal_secrets:
            return text
        # the one routine (kandev_nb/redact.py): known values, credentials by shape, code
        return redact_text(text, secret_values(self.namespace(), extra=_configured_secrets()), code=True)

    def _answer(self, text: str) -> str:
        return cap(self._redact(text), self.options.max_output_chars)

    # -- the tools -------------------------------------------------------------------------

    def list_variables(self, type_filter: str | None = None, name_pattern: str | None = None) -> str:
        """The ``list_variables`` tool: a text table of the user's variables."""
        hidden = getattr(self.shell, "user_ns_hidden", None)
        namespace = self.namespace()
        return self._answer(
            describe_variables(
                namespace,
                hidden=hidden,
                type_filter=type_filter or None,
                name_pattern=name_pattern or None,
                reveal_secrets=self.options.reveal_secrets,
                refused=refused_ids(namespace, self.shell),
            )
        )

    def inspect_variable(self, name: str) -> str:
        """The ``inspect_variable`` tool: a description of `name` (a dotted path allowed).

        Each step of the path is read statically (:func:`~kandev_nb.kernel_tools._reach.step`):
        an instance attribute, a slot, a class attribute; never a property, a descriptor or
        ``__getattr__``. Frames, code, generators, coroutines, tracebacks, IPython's shell and its
        managers, the user namespace and IPython's history lists are refused wherever the path
        reaches them (:func:`~kandev_nb.kernel_tools._reach.refusal`).

        Raises:
            KeyError: no such variable; a private, missing or computed attribute
                (:func:`~kandev_nb.kernel_tools._reach.step`); a refused object.
        """
        root, *attrs = name.strip().split(".")
        namespace = self.namespace()
        if root in _REFUSED_ROOTS or root.startswith("_"):  # In, Out, _ih, _oh, _i3, _, __ ...
            raise KeyError(
                f"{root!r} is IPython's own or private (cell history, outputs); "
                "inspect_variable does not read it; recent_history shows the cells, redacted"
            )
        if root not in namespace:
            raise KeyError(f"no variable {root!r} in the notebook's namespace; list_variables shows what exists")
        value = namespace[root]
        if is_secret_name(root) and not self.options.reveal_secrets:
            return self._answer(inspect_value(root, value, reveal_secrets=False))
        refused = refused_ids(namespace, self.shell)
        path = root
        for attr in [None, *attrs]:
            if attr is not None:  # read statically: no property, descriptor or __getattr__ runs
                value, path = step(value, attr, path), f"{path}.{attr}"
            if isinstance(value, types.ModuleType):
                raise KeyError(
                    f"{path!r} is a module; inspect_variable does not read modules or their "
                    "attributes (os.environ and other process state); use list_variables"
                )
            why = refusal(value) or refused.get(id(value))
            if why:  # by what was reached, not by the name typed (ip.user_ns, gen.gi_frame)
                raise KeyError(f"{path!r} is {why}; inspect_variable does not read it or anything under it")
        return self._answer(inspect_value(name, value, reveal_secrets=self.options.reveal_secrets, refused=refused))

    def recent_history(self, cells: int | None = None) -> str:
        """The ``recent_history`` tool: the last cells and the last error."""
        if self.shell is None:
            return "No IPython shell: there is no cell history."
        return self._answer(format_history(self.shell, cells or self.options.history_cells))

    async def run_code(self, code: str) -> RunResult:
        """The ``run_code`` tool, without approval (called over MCP, the session checks that
        a person or a policy allowed it, see :meth:`needs_approval`).

        Rich output goes to the cell bound with :meth:`bind_cell` (else the current one).
        """
        return await self.runner.run(code, timeout_s=self.options.run_timeout_s, context=self._cell)

    def format_run(self, result: RunResult) -> str:
        """A :class:`RunResult` as the text the model gets (redacted, capped)."""
        parts = []
        if result.stdout:
            parts.append(f"stdout:\n{result.stdout.rstrip()}")
        if result.stderr:
            parts.append(f"stderr:\n{result.stderr.rstrip()}")
        if result.result_repr is not None:
            parts.append(f"result:\n{result.result_repr}")
        if result.error:
            parts.append(f"error:\n{result.error}")
        if result.timed_out:
            parts.append(f"stopped: the code ran longer than the {self.options.run_timeout_s:g} s timeout")
        elif result.stopped:
            parts.append("stopped: the user stopped the code")
        if result.still_running:
            parts.append("warning: the code did not stop; it keeps running in a background thread")
        if result.images:
            n = len(result.images)
            parts.append(f"{n} image{'s' if n != 1 else ''} shown in the notebook and attached")
        if not parts:
            parts.append("ok (no output)")
        parts.append(f"took {result.duration_s:.2f} s")
        return self._answer("\n\n".join(parts))

    # -- MCP handlers ----------------------------------------------------------------------

    async def _on_list_tools(self, ctx: Any, params: Any) -> mt.ListToolsResult:
        return mt.ListToolsResult(tools=_tool_list() + self.notebook.tools())

    async def _on_call_tool(self, ctx: Any, params: mt.CallToolRequestParams) -> mt.CallToolResult:
        args: dict[str, Any] = dict(params.arguments or {})
        raw_bound = params.meta.get(META_KEY) if isinstance(params.meta, dict) else None
        try:  # what the approval card showed (set by the session's broker, issue 23)
            bound = BoundPayload.from_meta(raw_bound) if raw_bound is not None else None
        except (TypeError, ValueError) as exc:
            text = self._answer(f"{params.name} refused: its approval record is unreadable ({exc}); ask again")
            self.calls.append(ToolCallRecord(params.name, args, text, 0, True))
            return mt.CallToolResult(content=[mt.TextContent(text=text)], is_error=True)
        if params.name in NOTEBOOK_TOOL_NAMES:  # the open notebook's cells (_notebook.py)
            text, images, failed = await self.notebook.call(params.name, args, bound)
            self.calls.append(ToolCallRecord(params.name, args, text, len(images), failed))
            return mt.CallToolResult(content=[mt.TextContent(text=text), *images], is_error=failed)
        content: list[mt.TextContent | mt.ImageContent] = []
        is_error = False
        try:
            if params.name == "list_variables":
                text = self.list_variables(_opt_str(args, "type_filter"), _opt_str(args, "name_pattern"))
            elif params.name == "inspect_variable":
                text = self.inspect_variable(_req_str(args, "name"))
            elif params.name == "recent_history":
                cells = args.get("cells")
                text = self.recent_history(int(cells) if isinstance(cells, (int, float)) else None)
            elif params.name == "run_code":
                code = _req_str(args, "code")
                refusal = check(bound, Shown(code=code)) if bound is not None else None
                if refusal is not None:
                    raise ValueError(refusal)
                result = await self.run_code(code)
                text = self.format_run(result)
                is_error = bool(result.error or result.timed_out or result.stopped)
                content.extend(
                    mt.ImageContent(data=base64.b64encode(png).decode("ascii"), mime_type="image/png")
                    for png in result.images
                )
            else:
                raise KeyError(f"unknown tool {params.name!r}")
        except (KeyError, ValueError, TypeError) as exc:
            text, is_error = self._answer(str(exc.args[0] if exc.args else exc)), True
        except Exception as exc:
            log.exception("kernel tool %s failed", params.name)
            text, is_error = self._answer(f"{type(exc).__name__}: {exc}"), True
        self.calls.append(ToolCallRecord(params.name, args, text, len(content), is_error))
        return mt.CallToolResult(content=[mt.TextContent(text=text), *content], is_error=is_error)


_REFUSED_ROOTS = frozenset({"In", "Out", "exit", "quit", "get_ipython", "open"})


def _configured_secrets() -> list[str]:
    """Values given to ``kandev_nb.configure(env=...)`` that must not reach the model
    (:func:`kandev_nb.redact.configured_secrets`)."""
    magic = sys.modules.get("kandev_nb.notebook.magic")
    env = getattr(getattr(magic, "settings", None), "env", None)
    return configured_secrets(env) if isinstance(env, Mapping) else []


def _opt_str(args: dict[str, Any], key: str) -> str | None:
    value = args.get(key)
    return value if isinstance(value, str) and value else None


def _req_str(args: dict[str, Any], key: str) -> str:
    value = args.get(key)
    if not isinstance(value, str):
        raise TypeError(f"argument {key!r} (a string) is required")
    return value
