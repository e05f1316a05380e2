"""The frozen configuration of a :class:`~kandev_nb.agent.session.Session`.

:class:`SessionConfig` is checked once, when made; the fields a CLI process is launched with
keep the names of :class:`~kandev_nb.wire.cli.LaunchOptions`, and
:meth:`SessionConfig.launch_options` is the one place that turns a config into launch
options. Values for one turn only (a policy, an approval timeout) are arguments of
:meth:`Session.run <kandev_nb.agent.session.Session.run>`, never fields changed and restored.
"""

from __future__ import annotations

import enum
import math
import os
from dataclasses import dataclass, field, fields
from typing import Any, Final

from kandev_nb.agent.controls import CHECKPOINT_ARGS, CHECKPOINT_ENV
from kandev_nb.agent.file_guard import FileGuard
from kandev_nb.agent.permissions import MODES, ApprovalPolicy, cli_permission_mode
from kandev_nb.agent.questions import AnswerPolicy
from kandev_nb.agent.session_store import SessionStore
from kandev_nb.wire.cli import LaunchOptions

__all__ = ["UNSET", "SessionConfig", "Unset", "check_seconds"]


class Unset(enum.Enum):
    """The type of :data:`UNSET`."""

    UNSET = "unset"


UNSET: Final = Unset.UNSET
"""The default of per-turn arguments of :meth:`Session.run`: "the session's own value"."""


def check_seconds(name: str, value: object) -> None:
    """Raise TypeError unless `value` is None or a non-negative number of seconds."""
    if value is not None and (
        isinstance(value, bool) or not isinstance(value, int | float) or value < 0 or math.isnan(value)
    ):
        raise TypeError(f"{name} must be a non-negative number of seconds or None, not {value!r}")


@dataclass(frozen=True)
class SessionConfig:
    """Everything a session is started with. All fields have defaults; frozen and checked
    once, here (a changed copy is ``dataclasses.replace(config, ...)``).

    The fields that a CLI process is launched with have the names of
    :class:`~kandev_nb.wire.cli.LaunchOptions` (see :meth:`launch_options`); the others
    belong to the session.

    Attributes:
        cwd: the CLI's working directory (default: the current directory).
        mode: "supervised" (default), "plan", "acceptEdits" or "autonomous".
        approve: an approval policy ``(tool_name, tool_input) -> "allow"|"deny"|None``.
        approval_timeout: seconds an approval may wait before it is denied (None: forever).
        inactivity_timeout: seconds without any CLI message before the turn is interrupted
            (paused while an approval waits). Default 300.
        env: extra environment for the CLI (e.g. ANTHROPIC_BASE_URL).
        cli_path: explicit binary (else KANDEV_CLAUDE_CLI, PATH, the SDK's bundled one).
        resume, resume_session_at, fork: start from an existing conversation.
        resume_drops_turn: with `resume_session_at`, the prompt uuid (``Turn.prompt_uuid``) of
            the turn this resume drops: the CLI refuses the resume (ResumeRejectedError) when
            anything else would be dropped too. The Agent SDK's option; the first process only.
        allowed_tools, disallowed_tools: ``--allowedTools`` / ``--disallowedTools`` rules; the
            plain deny rules of `approve` are added to ``--disallowedTools``
            (``approve.cli_disallowed_tools()``, :func:`kandev_nb.policy.enforce.disallowed_tools`).
        allow_root_bypass: the explicit opt-in for autonomous mode as root (sets IS_SANDBOX=1).
        initialize_timeout: seconds the CLI has to answer `initialize`.
        mcp_servers: in-process MCP servers by name, answering `mcp_message` control requests.
        mcp_config, mcp_config_files: ``--mcp-config`` (the user's path or inline JSON) and
            more config files after it (the ``kernel`` entry, in a private file).
        file_guard: ``(tool_name, tool_input) -> reason | None`` asked through a PreToolUse
            hook (`hook_callback`) before every NotebookEdit, Write, Edit and MultiEdit, in
            every mode: a reason denies the call with it (the notebook layer refuses edits
            of the notebook whose tab is open).
        extra_args: more CLI flags (``--add-dir``, ``--effort``...; :mod:`kandev_nb.notebook.live_options`).
        agents: subagent definitions ``{name: {"description", "prompt", ...}}`` (a dict, or its
            JSON text), sent in `initialize`, never on the command line (LaunchOptions.agents).
        file_checkpoints: launch with file checkpoints (``CLAUDE_CODE_ENABLE_SDK_FILE_CHECKPOINTING=1``
            and ``--replay-user-messages``), so :meth:`Session.rewind_files` can undo a turn.
        answer: a policy answering AskUserQuestion (:data:`kandev_nb.agent.questions.AnswerPolicy`).
        hooks: Python hooks, ``{event: [HookMatcher, ...]}`` (:mod:`kandev_nb.agent.hooks`),
            registered in `initialize`; changing them restarts the CLI, resuming.
        session_store: where the session's transcripts are mirrored (the Agent SDK's option; a
            :class:`~kandev_nb.agent.session_store.SessionStore`): the CLI runs with
            ``--session-mirror``, and a resume whose transcript is not on this machine is
            written back from the store first (:func:`~kandev_nb.agent.session_store.materialize`).
        forward_subagent_text: the Agent SDK's option: subagents' text and thinking arrive as
            events whose `parent_tool_use_id` is their Agent call's (shown inside its card);
            sent in `initialize` (:class:`~kandev_nb.wire.cli.LaunchOptions`).

    Raises:
        TypeError: a value of the wrong type (a timeout that is not a number, a policy that
            is not callable, ``allowed_tools="Read"``...).
        ValueError: an unknown mode (and the checks of LaunchOptions).
        RootBypassError: mode "autonomous" as root without `allow_root_bypass`.
    """

    cwd: str | os.PathLike[str] | None = None
    mode: str = "supervised"
    model: str | None = None
    approve: ApprovalPolicy | None = None
    approval_timeout: float | None = None
    inactivity_timeout: float | None = 300.0
    env: dict[str, str] = field(default_factory=dict)
    cli_path: str | os.PathLike[str] | None = None
    resume: str | None = None
    resume_session_at: str | None = None
    resume_drops_turn: str | None = None
    fork: bool = False
    max_turns: int | None = None
    max_budget_usd: float | None = None
    mcp_config: str | None = None
    mcp_config_files: tuple[str, ...] = ()
    system_prompt: str | None = None
    append_system_prompt: str | None = None
    allowed_tools: tuple[str, ...] = ()
    disallowed_tools: tuple[str, ...] = ()
    allow_root_bypass: bool = False
    include_partial_messages: bool = True
    initialize_timeout: float = 90.0
    mcp_servers: dict[str, Any] = field(default_factory=dict)
    file_guard: FileGuard | None = None
    hooks: dict[str, Any] = field(default_factory=dict)
    extra_args: tuple[str, ...] = ()
    agents: dict[str, Any] | None = None
    file_checkpoints: bool = False
    answer: AnswerPolicy | None = None
    forward_subagent_text: bool = False
    session_store: Any = None

    def __post_init__(self) -> None:
        from kandev_nb.agent.hooks import HookRegistry

        HookRegistry(self.hooks)  # HookError (a ValueError) names a bad event, matcher or hook
        if self.mode not in MODES:
            raise ValueError(f"unknown permission mode {self.mode!r}; expected one of {', '.join(MODES)}")
        for name in ("approval_timeout", "inactivity_timeout", "initialize_timeout"):
            check_seconds(name, getattr(self, name))
        if self.initialize_timeout is None:
            raise TypeError("initialize_timeout must be a non-negative number of seconds, not None")
        if self.approve is not None and not callable(self.approve):
            raise TypeError(
                f"approve must be a callable policy (e.g. kandev_nb.Rules(...)) or None, not {self.approve!r}"
            )
        if self.session_store is not None and not isinstance(self.session_store, SessionStore):
            raise TypeError(f"session_store must have append, load and list_subkeys, not {self.session_store!r}")
        if not isinstance(self.mcp_servers, dict):
            raise TypeError(f"mcp_servers must be a dict of in-process MCP servers by name, not {self.mcp_servers!r}")
        for name in ("fork", "allow_root_bypass"):
            if not isinstance(getattr(self, name), bool):
                raise TypeError(f"{name} must be True or False, not {getattr(self, name)!r}")
        for name in ("allowed_tools", "disallowed_tools", "mcp_config_files"):
            value = getattr(self, name)
            if isinstance(value, list):
                object.__setattr__(self, name, tuple(value))
        self.launch_options()  # the launch fields are checked by LaunchOptions

    def launch_options(self, **changes: Any) -> LaunchOptions:
        """The :class:`~kandev_nb.wire.cli.LaunchOptions` of a process of this config, with
        `changes` (e.g. ``resume=``) applied.

        Raises:
            ValueError, RootBypassError: see :func:`~kandev_nb.agent.permissions.cli_permission_mode`.
        """
        from kandev_nb.policy.enforce import disallowed_tools

        shared = {name: getattr(self, name) for name in _LAUNCH_FIELDS}
        denied = tuple(r for r in disallowed_tools(self.approve) if r not in self.disallowed_tools)
        if denied and isinstance(self.disallowed_tools, tuple):  # the policy's plain deny rules too
            shared["disallowed_tools"] = (*self.disallowed_tools, *denied)
        permission_mode = cli_permission_mode(self.mode, allow_root_bypass=self.allow_root_bypass)
        shared.update(
            permission_mode=permission_mode,
            fork_session=self.fork,
            is_sandbox=self.allow_root_bypass and permission_mode == "bypassPermissions",
            session_mirror=self.session_store is not None,
        )
        if self.file_checkpoints:  # rewind_files needs both (DESIGN.md: file checkpoints)
            shared.update(extra_args=(*self.extra_args, *CHECKPOINT_ARGS), env={**CHECKPOINT_ENV, **self.env})
        shared.update(changes)
        return LaunchOptions(**shared)


_LAUNCH_FIELDS: Final = tuple(
    f.name for f in fields(LaunchOptions) if f.name in {g.name for g in fields(SessionConfig)}
)
"""The fields SessionConfig and LaunchOptions share (same name, same meaning)."""
