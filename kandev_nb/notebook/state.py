"""The notebook's state: one :class:`NotebookState` per kernel, made by ``%load_ext kandev_nb``.

It holds the notebook-wide settings (:func:`configure`), the `%%claude` sessions by name,
the turns of this kernel (:func:`last_turn`, the spend the notebook budget counts), the
configuration each session was asked for and its transport, and the WebSocket transport's
server. ``kandev_nb.settings``, ``kandev_nb.sessions``, ``kandev_nb.configure`` and
``kandev_nb.last_turn`` read the current one (:func:`current`); tests install a fresh one
(:func:`install`) so nothing leaks from one test to the next.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, fields
from typing import Any

from kandev_nb.agent.config import SessionConfig
from kandev_nb.agent.permissions import MODES, ApprovalPolicy
from kandev_nb.agent.session import Session
from kandev_nb.agent.session_store import SessionStore
from kandev_nb.agent.turn import Turn

__all__ = ["NotebookSettings", "NotebookState", "configure", "current", "install", "last_turn"]


@dataclass
class NotebookSettings:
    """Notebook-wide defaults for every `%%claude` cell (see :func:`configure`).

    Attributes:
        mode: the permission mode of every cell that does not say ``--mode`` ("supervised");
            a mode given on one cell never carries over to the next.
        approval_timeout: seconds an approval card waits before denying (default 300; None
            waits forever). ``KANDEV_NB_APPROVAL_TIMEOUT`` overrides the default.
        approve: a notebook-wide approval policy (callable or :class:`~kandev_nb.Rules`).
        answer: answers AskUserQuestion when nobody clicks: ``(questions) -> labels | None``.
        env: extra environment for the CLI (e.g. ANTHROPIC_BASE_URL for the scripted model).
        cwd: the CLI's working directory (default: the kernel's).
        cli_path: an explicit `claude` binary.
        model: default model.
        budget_usd: spend limit in USD of the scope and period (None: no limit).
        budget_scope, budget_period: whose spend the budget counts, since when
            (:mod:`kandev_nb.notebook.ledger_hooks`: "notebook" | "user" | "team"; "day" | "month" | None).
        record: write each turn to the ledger.
        interpolate: expand ``{name}`` with notebook variables in prompts.
        hooks: Python hooks for every session, ``{event: [HookMatcher]}`` (:mod:`kandev_nb.agent.hooks`).
        kernel_tools: give Claude the ``kernel`` MCP tools on this kernel's variables
            (:mod:`kandev_nb.kernel_tools`); applies to sessions started afterwards.
        background: every cell runs as with ``--background`` (returns at once; blocking
            anyway under nbclient/papermill and Run All, see :mod:`kandev_nb.notebook.background_turns`).
        session_store: mirror every session's transcripts to this
            :class:`~kandev_nb.agent.session_store.SessionStore` (a folder, the team ledger's
            database), so ``%%claude --resume <id>`` works on another machine or after the
            local transcript is gone; applies to sessions started afterwards.
        forward_subagent_text: show what a subagent writes (and thinks) inside its Agent card,
            not only its tool calls (the Agent SDK's ``forward_subagent_text``; default True);
            applies to sessions started afterwards.
    """

    mode: str = "supervised"
    approval_timeout: float | None = field(
        default_factory=lambda: float(os.environ.get("KANDEV_NB_APPROVAL_TIMEOUT", "300"))
    )
    approve: ApprovalPolicy | None = None
    answer: Any = None  # AskUserQuestion's answers when nobody clicks (kandev_nb.agent.questions)
    env: dict[str, str] = field(default_factory=dict)
    cwd: str | None = None
    cli_path: str | None = None
    model: str | None = None
    budget_usd: float | None = None
    budget_scope: str = "notebook"
    budget_period: str | None = None
    inactivity_timeout: float | None = 300.0
    record: bool = True
    interpolate: bool = True
    allow_root_bypass: bool = False
    kernel_tools: bool = True
    hooks: dict[str, Any] = field(default_factory=dict)  # {event: [HookMatcher]}; live sessions restart with them
    background: bool = False  # issue 27: turns that do not block the kernel
    forward_subagent_text: bool = True  # issue 34.10: a subagent's text inside its card
    session_store: Any = None  # issue 34.10: transcripts mirrored (kandev_nb.agent.session_store)


def configure(**changes: Any) -> None:
    """Change notebook-wide defaults, e.g. ``configure(mode="acceptEdits", approval_timeout=60)``.

    Changes apply to sessions started afterwards (use ``%%claude --new`` to restart the
    default one), except `approve` and `approval_timeout`, which apply at once (every cell
    passes them to :meth:`Session.run <kandev_nb.Session.run>`), and `mode`, which the
    next cell without ``--mode`` runs in (the live CLI gets a ``set_permission_mode``
    control request; it also replaces a mode chosen on an approval card).

    Returns None (so a setup cell ending with it prints nothing); read ``kandev_nb.settings``.

    Raises:
        TypeError: an unknown setting name, or a value of the wrong type.
        ValueError: an unknown mode. Nothing changes when one value is rejected.
    """
    names = {f.name for f in fields(NotebookSettings)}
    for key, value in changes.items():
        if key not in names:
            raise TypeError(f"unknown setting {key!r}; known: {', '.join(sorted(names))}")
        _check_setting(key, value)
    settings = current().settings
    for key, value in changes.items():
        setattr(settings, key, value)
    current().configured.update(changes)  # these win over Lab's settings (lab_channel.apply_settings)
    if "mode" in changes:  # the notebook's mode, from now on: it replaces a card's choice
        current().card_modes.clear()


_SECONDS = ("approval_timeout", "inactivity_timeout", "budget_usd")


def _check_setting(key: str, value: Any) -> None:
    """Raise TypeError/ValueError for a value the setting cannot take."""
    if key in _SECONDS and value is not None:
        if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
            raise TypeError(f"{key} must be a non-negative number (seconds or USD) or None, not {value!r}")
    elif key in ("budget_scope", "budget_period"):
        from kandev_nb.notebook import ledger_hooks

        ledger_hooks.check_setting(key, value)
    elif key == "mode" and value not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}, not {value!r}")
    elif key == "env" and not (isinstance(value, dict) and all(isinstance(v, str) for v in value.values())):
        raise TypeError("env must be a dict of strings")
    elif key == "hooks":
        from kandev_nb.agent.hooks import HookRegistry

        HookRegistry(value)  # HookError (a ValueError) names the bad event or hook
    elif key in ("background", "forward_subagent_text") and not isinstance(value, bool):
        raise TypeError(f"{key} must be True or False, not {value!r}")
    elif key == "session_store" and value is not None and not isinstance(value, SessionStore):
        raise TypeError(f"session_store must have append, load and list_subkeys (a SessionStore), not {value!r}")
    elif key in ("approve", "answer") and value is not None and not callable(value):
        raise TypeError("approve must be a callable policy (e.g. kandev_nb.Rules(...)) or None")


@dataclass
class NotebookState:
    """Everything the notebook keeps between cells.

    Attributes:
        settings: the notebook-wide defaults (:func:`configure`).
        sessions: the `%%claude` sessions by ``--session`` name (also ``kandev_nb.sessions``).
        turns: every `%%claude` turn of this kernel, in order.
        requested: by session name, the :class:`SessionConfig` the magic asked for before
            the kernel tools were added (the base a later cell's options apply to).
        transports: by session name, "stdio" or "websocket".
        extras: by session name, the launch flags of :mod:`kandev_nb.notebook.live_options`.
        websocket_factory: the WebSocket transport's factory (one server per kernel), made
            on first use.
        shell: the IPython shell it belongs to (None outside IPython).
        card_modes: by session name, the mode a person chose on an approval card ("Allow, and
            switch to acceptEdits mode for this session"); that session's cells without
            ``--mode`` run in it until ``--new`` or ``configure(mode=...)``.
        configured: the settings :func:`configure` set in this kernel (they win over Lab's).
        lab_settings: the settings of kandev-nb's JupyterLab extension (the settings registry),
            when a page of it is connected (:mod:`kandev_nb.notebook.lab_channel`), else None.
    """

    settings: NotebookSettings = field(default_factory=NotebookSettings)
    sessions: dict[str, Session] = field(default_factory=dict)
    turns: list[Turn] = field(default_factory=list)
    requested: dict[str, SessionConfig] = field(default_factory=dict)
    transports: dict[str, str] = field(default_factory=dict)
    extras: dict[str, tuple[tuple[str, Any], ...]] = field(default_factory=dict)
    websocket_factory: Any = None
    shell: Any = None
    card_modes: dict[str, str] = field(default_factory=dict)
    configured: set[str] = field(default_factory=set)
    lab_settings: Any = None

    def spent(self) -> float:
        """USD spent by this kernel's `%%claude` turns (per-turn `total_cost_usd` of the results)."""
        return sum(t.stats.cost_usd for t in self.turns if t.stats)

    def last_turn(self) -> Turn | None:
        """The latest turn, or None."""
        return self.turns[-1] if self.turns else None

    def websocket(self) -> Any:
        """The WebSocket transport factory of this notebook (made on first use)."""
        if self.websocket_factory is None:
            from kandev_nb.wire.websocket import websocket_transport_factory

            self.websocket_factory = websocket_transport_factory()
        return self.websocket_factory


_current: NotebookState | None = None


def current() -> NotebookState:
    """The notebook's state (made on first use outside ``%load_ext``, e.g. in a script)."""
    global _current
    if _current is None:
        _current = NotebookState()
    return _current


def install(state: NotebookState | None = None, *, shell: Any = None) -> NotebookState:
    """Make `state` (default: a new one) the current state and return it.

    ``load_ipython_extension`` calls ``install(shell=ip)``: the state of an earlier
    ``%load_ext`` on the same shell (or one made before it by ``configure``) is kept, so a
    ``%reload_ext`` loses no session; a state of another shell is replaced.
    """
    global _current
    if state is None:
        existing = _current
        if existing is not None and shell is not None and existing.shell in (None, shell):
            existing.shell = shell
            return existing
        state = NotebookState(shell=shell)
    _current = state
    return state


def last_turn() -> Turn | None:
    """The most recent `%%claude` turn of this kernel (it has a rich display), or None."""
    return current().last_turn()
