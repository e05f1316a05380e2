"""kandev-nb: drive Claude Code from Jupyter.

``%load_ext kandev_nb`` registers the `%%claude` cell magic (see :mod:`kandev_nb.notebook.magic`).
Everything the magic does is one Python call away: :class:`Session` runs turns,
:func:`runs` and :func:`tool_calls` read the ledger as DataFrames, :func:`last_turn` gives
the latest turn, :func:`configure` sets notebook-wide defaults.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kandev_nb._version import __version__
from kandev_nb.agent.hooks import HookMatcher
from kandev_nb.agent.origin import Origin
from kandev_nb.agent.permissions import Approval, Decision, Rules
from kandev_nb.agent.session import Session, SessionConfig
from kandev_nb.agent.session_store import FolderSessionStore, SessionKey, SessionStore
from kandev_nb.agent.subagents import (
    SessionMessage,
    SubagentInfo,
    get_subagent_messages,
    list_subagents,
    subagent_info,
)
from kandev_nb.agent.turn import DISPLAY_RENDERERS, ToolRecord, Turn
from kandev_nb.errors import (
    AttachmentError,
    CLIInstallError,
    CLINotFoundError,
    CLIProcessError,
    ControlError,
    ControlTimeoutError,
    HookError,
    HookWarning,
    KandevError,
    LedgerError,
    McpBridgeError,
    NoNotebookViewError,
    NoStructuredOutputError,
    NotebookViewError,
    NotLiveError,
    PostgresNotInstalled,
    PromptError,
    QuestionError,
    ResumeRejectedError,
    RootBypassError,
    RuleError,
    SessionClosedError,
    SessionError,
    StructuredOutputError,
    TransportClosedError,
    TransportError,
    TurnInProgressError,
)
from kandev_nb.fleet import FRONTEND as _FLEET_FRONTEND
from kandev_nb.notebook.state import configure, last_turn
from kandev_nb.render.static import render_html, render_markdown
from kandev_nb.wire.cli import find_cli

DISPLAY_RENDERERS.update({"text/html": render_html, "text/markdown": render_markdown})


async def _notebook_fleet(frame: Any, prompt_template: Any, **options: Any) -> Any:
    """``kandev_nb.fleet(...)`` with the notebook's defaults and the board
    (:func:`kandev_nb.notebook.fleet_magic.run_fleet`; `background`, `dry_run`)."""
    from kandev_nb.notebook.fleet_magic import run_fleet

    return await run_fleet(frame, prompt_template, **options)


_FLEET_FRONTEND.append(_notebook_fleet)  # kandev_nb.fleet(...): the notebook's defaults and the board


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
    "FolderSessionStore",
    "HookError",
    "HookMatcher",
    "HookWarning",
    "KandevError",
    "LedgerError",
    "LedgerSessionStore",
    "McpBridgeError",
    "NoNotebookViewError",
    "NoStructuredOutputError",
    "NotLiveError",
    "NotebookViewError",
    "Origin",
    "PostgresNotInstalled",
    "PromptError",
    "QuestionError",
    "ResumeRejectedError",
    "RootBypassError",
    "RuleError",
    "Rules",
    "Session",
    "SessionClosedError",
    "SessionConfig",
    "SessionError",
    "SessionKey",
    "SessionMessage",
    "SessionStore",
    "StructuredOutputError",
    "SubagentInfo",
    "TransportClosedError",
    "TransportError",
    "Turn",
    "TurnInProgressError",
    "__version__",
    "claude_sessions",
    "configure",
    "find_cli",
    "fleet",
    "fleet_cleanup",
    "fleet_results",
    "get_subagent_messages",
    "last_turn",
    "ledger_flush",
    "list_subagents",
    "load_ipython_extension",
    "pending",
    "runs",
    "sessions",
    "settings",
    "subagent_info",
    "tool_call",
    "tool_calls",
    "unload_ipython_extension",
    "wait",
]

MIN_IPYKERNEL = (7, 4)


def __getattr__(name: str) -> Any:
    """``kandev_nb.settings`` (:class:`~kandev_nb.notebook.state.NotebookSettings`) and
    ``kandev_nb.sessions`` (the `%%claude` sessions by name): those of the notebook's
    current :class:`~kandev_nb.notebook.state.NotebookState`; ``kandev_nb.LedgerSessionStore``
    (:class:`kandev_nb.ledger.session_store.LedgerSessionStore`)."""
    if name in ("settings", "sessions"):
        from kandev_nb.notebook.state import current

        return getattr(current(), name)
    if name == "LedgerSessionStore":  # imported on use: SQLAlchemy only when the ledger is needed
        from kandev_nb.ledger.session_store import LedgerSessionStore

        return LedgerSessionStore
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


async def wait(session: str | None = None) -> Any:
    """``await kandev_nb.wait()``: wait for the running and queued ``%%claude --background``
    turns and background fleets (of `session`, or all) and return the last :class:`Turn`
    that ended, or the result frame (a DataFrame) when that was a fleet
    (``%%claude --over FRAME --background``, ``fleet(..., background=True)``), or
    ``last_turn()`` when none runs. Raises the first waited turn's error (see
    :func:`kandev_nb.notebook.background_turns.wait`)."""
    from kandev_nb.notebook import background_turns

    return await background_turns.wait(session)


def pending() -> Any:
    """The approvals waiting in every `%%claude` session of this kernel (a
    :class:`~kandev_nb.notebook.pending.PendingList`: ``pending()[0].allow()`` / ``.deny("why")``)."""
    from kandev_nb.notebook.pending import pending as waiting

    return waiting()


def runs(**filters: Any) -> pd.DataFrame:
    """One row per turn from the ledger (see :func:`kandev_nb.ledger.runs` for filters)."""
    from kandev_nb import ledger

    return ledger.runs(**filters)


def fleet_results(name: str, **options: Any) -> pd.DataFrame:
    """A fleet's result frame rebuilt from the ledger (:func:`kandev_nb.fleet.api.fleet_results`)."""
    from kandev_nb.fleet.api import fleet_results as rebuild

    return rebuild(name, **options)


def fleet_cleanup(name: str, cwd: Any = None, *, delete_branches: bool = False) -> list[str]:
    """Remove a fleet's git worktrees (:func:`kandev_nb.fleet.worktrees.cleanup`); returns the folders."""
    from kandev_nb.fleet.worktrees import cleanup

    return cleanup(name, cwd, delete_branches=delete_branches)


def claude_sessions(cwd: str | None = None) -> pd.DataFrame:
    """The CLI's saved conversations of project `cwd` (default: ``configure(cwd=...)``, else
    the kernel's directory) as a DataFrame, newest activity first: session_id, title,
    first_prompt, started, last_active, turns, cwd, path, and cost_usd (USD) /
    input_tokens / output_tokens / ledger_turns joined from the ledger by `session_id`.
    These are what ``%%claude --resume SESSION_ID`` picks from. The transcripts are read
    from the config directory the notebook's CLI uses (``CLAUDE_CONFIG_DIR`` in
    ``configure(env=...)``, else ``~/.claude``); unreadable ones are skipped and counted
    in ``frame.attrs["skipped"]`` (see :func:`kandev_nb.ledger.transcripts.claude_sessions`).
    """
    from kandev_nb.ledger import transcripts
    from kandev_nb.notebook import magic

    return transcripts.claude_sessions(cwd or magic.settings.cwd, config=transcripts.config_dir(magic.settings.env))


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
    from kandev_nb.notebook.state import current

    turns = current().turns
    for turn in reversed(turns):
        record = turn.tools.get(tool_use_id)
        if record is not None:
            return record
    raise KeyError(
        f"no tool call {tool_use_id!r} in this kernel's %%claude turns "
        f"({len(turns)} turns kept; a restarted kernel keeps none)"
    )


def tool_calls(**filters: Any) -> pd.DataFrame:
    """One row per tool call from the ledger (see :func:`kandev_nb.ledger.tool_calls`)."""
    from kandev_nb import ledger

    return ledger.tool_calls(**filters)


def ledger_flush() -> int:
    """Write the turns kept in the spool while the ledger did not answer; each lands once.

    Returns how many were written. Raises LedgerError when the ledger still does not
    answer (they stay spooled). See :func:`kandev_nb.ledger.ledger_flush`.
    """
    from kandev_nb import ledger

    return ledger.ledger_flush()


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
    """``%load_ext kandev_nb``: make the notebook's state (:class:`~kandev_nb.notebook.state.NotebookState`,
    kept by a ``%reload_ext`` on the same shell) and register the `%%claude` transformer and magics.

    Raises:
        ImportError: ipykernel is older than 7.4 (the message says why and how to upgrade).
    """
    from kandev_nb.notebook import magic, state

    _check_ipykernel()
    state.install(shell=ip)
    if magic.transform_cell not in ip.input_transformers_cleanup:
        ip.input_transformers_cleanup.append(magic.transform_cell)
    from kandev_nb.notebook import commands  # issue 19: %claude_undo, %claude_mcp

    if commands.transform_lines not in ip.input_transformers_cleanup:
        ip.input_transformers_cleanup.append(commands.transform_lines)
    ip.register_magic_function(magic.claude_cell, "cell", "claude")  # type: ignore[arg-type]
    ip.register_magic_function(magic.claude_stats, "line", "claude_stats")  # type: ignore[arg-type]
    from kandev_nb.notebook import line_help

    line_help.register(ip)  # %claude_undo? and the others print their help
    from kandev_nb.notebook.bridge import ensure_bridge

    ensure_bridge()  # the open tab says hello before the first tool call needs it
    from kandev_nb.notebook import lab_channel

    lab_channel.register(ip)  # the JupyterLab extension's panel and notifications reach this kernel


def unload_ipython_extension(ip: InteractiveShell) -> None:
    """``%unload_ext kandev_nb``: remove the transformer."""
    from kandev_nb.notebook import magic

    if magic.transform_cell in ip.input_transformers_cleanup:
        ip.input_transformers_cleanup.remove(magic.transform_cell)
    from kandev_nb.notebook import commands

    if commands.transform_lines in ip.input_transformers_cleanup:
        ip.input_transformers_cleanup.remove(commands.transform_lines)


def _jupyter_labextension_paths() -> list[dict[str, str]]:
    """Where the prebuilt JupyterLab / Notebook 7 extension is (``jupyter labextension develop .``
    links ``share/jupyter/labextensions/kandev-nb`` to it; the wheel installs it there itself)."""
    return [{"src": "labextension", "dest": "kandev-nb"}]
