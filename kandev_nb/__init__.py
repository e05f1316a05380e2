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
from kandev_nb.agent.turn import DISPLAY_RENDERERS, ToolRecord, Turn
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
    NotLiveError,
    PromptError,
    QuestionError,
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
    "NotLiveError",
    "PromptError",
    "QuestionError",
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
    "tool_call",
    "tool_calls",
    "unload_ipython_extension",
]

MIN_IPYKERNEL = (7, 4)


def runs(**filters: Any) -> pd.DataFrame:
    """One row per turn from the ledger (see :func:`kandev_nb.ledger.runs` for filters)."""
    from kandev_nb import ledger

    return ledger.runs(**filters)


def tool_call(tool_use_id: str) -> ToolRecord:
    """One tool call of this kernel's `%%claude` turns, by its `tool_use_id` (newest turn first).

    This is the expression a cut tool card names (``kandev_nb.tool_call('toolu_01').update.output``):
    the record keeps the full texts the card only previews.

    Args:
        tool_use_id: the `tool_use.id` shown on the card (e.g. ``"toolu_01AbC..."``).

    Returns:
        The :class:`~kandev_nb.agent.turn.ToolRecord`: `.call` (ToolCall), `.update` (ToolUpdate:
        `.output` is the full result text, `.normalized` the NormalizedPayload, diffs in
        ``.normalized.mutations[i].diff``) and `.decision` (PermissionDecided or None).

    Raises:
        KeyError: no turn of this kernel has a call with that id (the turns of another
            kernel, or of a notebook reopened later, are not kept in memory).
    """
    from kandev_nb.notebook import magic

    for turn in reversed(magic._turns):
        record = turn.tools.get(tool_use_id)
        if record is not None:
            return record
    raise KeyError(f"no tool call {tool_use_id!r} in this kernel's %%claude turns "
                   f"({len(magic._turns)} turns kept; a restarted kernel keeps none)")


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
    from kandev_nb.notebook import commands  # issue 19: %claude_undo, %claude_mcp

    if commands.transform_lines not in ip.input_transformers_cleanup:
        ip.input_transformers_cleanup.append(commands.transform_lines)
    ip.register_magic_function(magic.claude_cell, "cell", "claude")  # type: ignore[arg-type]
    ip.register_magic_function(magic.claude_stats, "line", "claude_stats")  # type: ignore[arg-type]


def unload_ipython_extension(ip: InteractiveShell) -> None:
    """``%unload_ext kandev_nb``: remove the transformer."""
    from kandev_nb.notebook import magic

    if magic.transform_cell in ip.input_transformers_cleanup:
        ip.input_transformers_cleanup.remove(magic.transform_cell)
    from kandev_nb.notebook import commands

    if commands.transform_lines in ip.input_transformers_cleanup:
        ip.input_transformers_cleanup.remove(commands.transform_lines)
