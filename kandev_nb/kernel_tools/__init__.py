"""The live kernel as Claude's workspace: an in-process MCP server named ``kernel``.

`%%claude` starts the CLI with ``--mcp-config <file>``, a private file holding
``{"mcpServers":{"kernel":{"type":"sdk","name":"kernel"}}}``; the CLI then sends that
server's JSON-RPC traffic as `mcp_message` control requests, which :class:`KernelTools`
answers from the kernel the cell runs in. The model sees four tools,
``mcp__kernel__list_variables``, ``mcp__kernel__inspect_variable``,
``mcp__kernel__recent_history`` (read-only, allowed without asking) and
``mcp__kernel__run_code`` (asks for approval every time, through the normal card; a
`tools/call` that arrives without an allowed can_use_tool asks too, in every mode).
Five more work on the notebook open in the user's tab (:mod:`kandev_nb.kernel_tools._notebook`,
issue 13): ``mcp__kernel__read_notebook`` (read-only) and ``insert_cell``, ``edit_cell``,
``delete_cell``, ``run_cell`` (each asks, like run_code); the notebook layer gives them the
tab through :func:`set_view_provider`.

>>> import kandev_nb
>>> kandev_nb.kernel_tools.options.reveal_secrets = False   # the default
>>> kandev_nb.configure(kernel_tools=False)                 # doctest: +SKIP
>>> # or per cell:  %%claude --no-kernel-tools

Using a :class:`~kandev_nb.agent.session.Session` directly::

    config = with_kernel_tools(SessionConfig(cwd="."))
    session = Session(config)

The ``mcp`` library (2.x) is needed; without it the feature is off and
:func:`with_kernel_tools` returns the config unchanged (logged at INFO level).
"""

from __future__ import annotations

import importlib.util
import json
import logging
import os
import warnings
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Final

from kandev_nb.kernel_tools._options import KernelToolsOptions, options
from kandev_nb.wire.cli import private_file

log = logging.getLogger("kandev_nb")

if TYPE_CHECKING:
    from kandev_nb.agent.session import Session, SessionConfig
    from kandev_nb.kernel_tools._notebook import set_view_provider
    from kandev_nb.kernel_tools._run import RunResult
    from kandev_nb.kernel_tools._server import KernelTools, ToolCallRecord

__all__ = [
    "NOTEBOOK_CHANGE_TOOLS",
    "READ_ONLY_TOOLS",
    "RUN_CODE_TOOL",
    "SERVER_NAME",
    "KernelTools",
    "KernelToolsOptions",
    "RunResult",
    "ToolCallRecord",
    "available",
    "follow_cell",
    "mcp_config_with_kernel",
    "options",
    "set_view_provider",
    "user_mcp_servers",
    "with_kernel_tools",
]

SERVER_NAME = "kernel"
"""The server's name in the CLI's MCP config; its tools are ``mcp__kernel__<tool>``."""

READ_ONLY_TOOLS = (
    "mcp__kernel__list_variables",
    "mcp__kernel__inspect_variable",
    "mcp__kernel__recent_history",
    "mcp__kernel__read_notebook",
)
"""The tools that only read the kernel's state: allowed without asking."""

RUN_CODE_TOOL = "mcp__kernel__run_code"
"""The tool that changes the kernel's state: the CLI asks for approval (can_use_tool), and
a `tools/call` that no allowed can_use_tool covered asks a person itself (see
:meth:`kandev_nb.agent.session.Session` and ``KernelTools.needs_approval``)."""

NOTEBOOK_CHANGE_TOOLS = (
    "mcp__kernel__insert_cell",
    "mcp__kernel__edit_cell",
    "mcp__kernel__delete_cell",
    "mcp__kernel__run_cell",
)
"""The tools that change the open notebook (or run one of its cells): approval asked, as for run_code."""


def __getattr__(name: str) -> Any:
    if name in ("KernelTools", "ToolCallRecord"):
        from kandev_nb.kernel_tools import _server

        return getattr(_server, name)
    if name == "set_view_provider":
        from kandev_nb.kernel_tools._notebook import set_view_provider

        return set_view_provider
    if name == "RunResult":
        from kandev_nb.kernel_tools._run import RunResult

        return RunResult
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def available() -> bool:
    """True when the ``mcp`` library (2.x, with ``mcp.types.jsonrpc_message_adapter``) is installed."""
    if importlib.util.find_spec("mcp") is None:
        return False
    import mcp.types

    return hasattr(mcp.types, "jsonrpc_message_adapter")


def user_mcp_servers(user_config: str | None) -> dict[str, Any]:
    """The servers of the user's ``--mcp-config`` (JSON text or a path to a JSON file).

    Raises:
        ValueError: the user's config is not JSON (text or file), or it already has a
            server named ``kernel``.
    """
    if not user_config:
        return {}
    text = user_config
    if not user_config.lstrip().startswith("{"):
        if not os.path.isfile(user_config):
            raise ValueError(f"--mcp-config {user_config!r} is neither JSON nor a file")
        with open(user_config, encoding="utf-8") as handle:
            text = handle.read()
    try:
        parsed = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"--mcp-config is not valid JSON: {exc}") from exc
    servers = dict(parsed.get("mcpServers") or {}) if isinstance(parsed, dict) else {}
    if SERVER_NAME in servers:
        raise ValueError(f"--mcp-config already has a server named {SERVER_NAME!r}")
    return servers


KERNEL_ENTRY: Final = {"type": "sdk", "name": SERVER_NAME, "alwaysLoad": True}
"""The ``kernel`` server's ``--mcp-config`` entry. ``alwaysLoad``: CLI 2.1.332 otherwise defers
MCP tools behind ToolSearch (only their names in a system message), so a model would need a
ToolSearch round trip before each first call."""


def mcp_config_with_kernel(user_config: str | None) -> str:
    """The user's servers plus the ``kernel`` sdk server as one JSON text
    ``{"mcpServers": {..., "kernel": {"type": "sdk", "name": "kernel", "alwaysLoad": true}}}``
    (for display and tests: the CLI gets the user's config as given and the kernel entry
    in a private file, :func:`with_kernel_tools`).

    Raises:
        ValueError: see :func:`user_mcp_servers`.
    """
    servers = user_mcp_servers(user_config)
    servers[SERVER_NAME] = dict(KERNEL_ENTRY)
    return json.dumps({"mcpServers": servers})


def with_kernel_tools(config: SessionConfig, server: KernelTools | None = None) -> SessionConfig:
    """`config` with the kernel tools added: the ``kernel`` entry's private file in
    ``mcp_config_files`` (the user's ``mcp_config`` stays as given, a path made absolute),
    ``mcp_servers["kernel"]`` and the read-only tools in ``allowed_tools``.

    Args:
        config: the session's configuration (not modified).
        server: the server to use (default: a new :class:`KernelTools` on ``get_ipython()``).

    Returns:
        A new config; `config` itself when ``mcp`` is missing (logged) or the user's MCP
        config cannot be merged (with a warning).
    """
    if not available():
        log.info("kandev-nb kernel tools need the `mcp` library (2.x); they are off")
        return config
    try:
        user_mcp_servers(config.mcp_config)  # a bad config or a second "kernel" turns the tools off
    except ValueError as exc:
        warnings.warn(f"kandev-nb kernel tools are off for this session: {exc}", stacklevel=2)
        return config
    user = config.mcp_config
    if user and not user.lstrip().startswith("{"):
        user = os.path.abspath(user)  # the CLI may run in another folder
    # Files, not their content, on the command line (issue 24): the user's own as it is, and
    # the kernel entry in a private one (0600 in a 0700 folder, removed when the kernel exits).
    kernel_file = private_file(json.dumps({"mcpServers": {SERVER_NAME: KERNEL_ENTRY}}), ".json")
    if server is None:
        from kandev_nb.kernel_tools._server import KernelTools

        server = KernelTools()
    allowed = config.allowed_tools + tuple(t for t in READ_ONLY_TOOLS if t not in config.allowed_tools)
    return replace(
        config,
        mcp_config=user,
        mcp_config_files=(*config.mcp_config_files, kernel_file),
        mcp_servers={**config.mcp_servers, SERVER_NAME: server},
        allowed_tools=allowed,
    )


def follow_cell(session: Session) -> None:
    """Point the session's kernel tools at the cell running now (rich output of `run_code`
    goes there). A no-op for a session without kernel tools."""
    server = session.config.mcp_servers.get(SERVER_NAME)
    bind = getattr(server, "bind_cell", None)
    if callable(bind):
        bind()
