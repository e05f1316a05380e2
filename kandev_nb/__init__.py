"""kandev-nb: drive Claude Code from Jupyter.

``%load_ext kandev_nb`` registers the `%%claude` cell magic (see :mod:`kandev_nb.notebook.magic`).
Everything the magic does is one Python call away: :class:`Session` runs turns,
:func:`runs` and :func:`tool_calls` read the ledger as DataFrames, :func:`last_turn` gives
the latest turn, :func:`configure` sets notebook-wide defaults.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kandev_nb._version import __version__
from kandev_nb.agent.permissions import Approval, Decision, Rules
from kandev_nb.agent.session import Session, SessionConfig
from kandev_nb.agent.turn import DISPLAY_RENDERERS, Turn
from kandev_nb.errors import (
    AttachmentError,
    CLIInstallError,
    CLINotFoundError,
    CLIProcessError,
    ControlError,
    ControlTimeoutError,
    KandevError,
    LedgerError,
    McpBridgeError,
    NoNotebookViewError,
    NotebookViewError,
    PromptError,
    RootBypassError,
    SessionClosedError,
    SessionError,
    TransportClosedError,
    TransportError,
    TurnInProgressError,
)
from kandev_nb.notebook.magic import configure, last_turn, sessions, settings
from kandev_nb.render.static import render_html, render_markdown
from kandev_nb.wire.cli import find_cli

DISPLAY_RENDERERS.update({"text/html": render_html, "text/markdown": render_markdown})

if TYPE_CHECKING:
    import pandas as pd
    from IPython.core.interactiveshell import InteractiveShell

__all__ = [
    "Approval",
    "AttachmentError",
    "CLIInstallError",
    "CLINotFoundError",
    "CLIProcessError",
    "ControlError",
    "ControlTimeoutError",
    "Decision",
    "KandevError",
    "LedgerError",
    "McpBridgeError",
    "NoNotebookViewError",
    "NotebookViewError",
    "PromptError",
    "RootBypassError",
    "Rules",
    "Session",
    "SessionClosedError",
    "SessionConfig",
    "SessionError",
    "TransportClosedError",
    "TransportError",
    "Turn",
    "TurnInProgressError",
    "__version__",
    "configure",
    "find_cli",
    "last_turn",
    "load_ipython_extension",
    "runs",
    "sessions",
    "settings",
    "tool_calls",
    "unload_ipython_extension",
]

MIN_IPYKERNEL = (7, 4)


def runs(**filters: Any) -> pd.DataFrame:
    """One row per turn from the ledger (see :func:`kandev_nb.ledger.runs` for filters)."""
    from kandev_nb import ledger

    return ledger.runs(**filters)


def tool_calls(**filters: Any) -> pd.DataFrame:
    """One row per tool call from the ledger (see :func:`kandev_nb.ledger.tool_calls`)."""
    from kandev_nb import ledger

    return ledger.tool_calls(**filters)


def _check_ipykernel() -> None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        found = version("ipykernel")
    except PackageNotFoundError:
        return  # plain IPython (a terminal): the transformer still works with autoawait
    parts = tuple(int(p) for p in found.split(".")[:2] if p.isdigit())
    if parts < MIN_IPYKERNEL:
        raise ImportError(
            f"kandev_nb needs ipykernel >= 7.4 (this kernel has {found}): only from 7.4 on "
            "can a %%claude cell wait for its turn while Allow/Deny clicks still reach Python. "
            "Upgrade with: pip install -U 'ipykernel>=7.4', then restart the kernel."
        )


def load_ipython_extension(ip: InteractiveShell) -> None:
    """``%load_ext kandev_nb``: register the `%%claude` transformer and magics.

    Raises:
        ImportError: ipykernel is older than 7.4 (the message says why and how to upgrade).
    """
    from kandev_nb.notebook import magic

    _check_ipykernel()
    if magic.transform_cell not in ip.input_transformers_cleanup:
        ip.input_transformers_cleanup.append(magic.transform_cell)
    ip.register_magic_function(magic.claude_cell, "cell", "claude")  # type: ignore[arg-type]
    ip.register_magic_function(magic.claude_stats, "line", "claude_stats")  # type: ignore[arg-type]
    from kandev_nb.notebook.bridge import ensure_bridge

    ensure_bridge()  # the open tab says hello before the first tool call needs it


def unload_ipython_extension(ip: InteractiveShell) -> None:
    """``%unload_ext kandev_nb``: remove the transformer."""
    from kandev_nb.notebook import magic

    if magic.transform_cell in ip.input_transformers_cleanup:
        ip.input_transformers_cleanup.remove(magic.transform_cell)
