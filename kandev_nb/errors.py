"""Every error kandev-nb raises, in one tree.

Catch :class:`KandevError` for anything of ours; each class also keeps the built-in base
that callers caught before the tree existed (``except FileNotFoundError`` still catches
:class:`CLINotFoundError`)::

    KandevError
    ├── CLINotFoundError          (FileNotFoundError)  no `claude` binary in the four places we look
    ├── CLIInstallError           (RuntimeError)       a pinned test CLI could not be installed
    ├── TransportError                                 the connection to the CLI process
    │   ├── TransportClosedError  (ConnectionError)    writing to a CLI that exited or was closed
    │   └── CLIProcessError       (RuntimeError)       the CLI exited unexpectedly: exit_code, stderr
    │       ├── SdkUrlUnsupportedError                 this CLI refuses --sdk-url (kandev_nb.wire.websocket)
    │       └── ResumeRejectedError                    --resume-drops-turn: the range dropped is not that turn
    ├── ControlError              (RuntimeError)       the CLI answered a control_request with an error
    ├── ControlTimeoutError       (TimeoutError)       no control_response in time: subtype, timeout_s
    ├── SessionError                                   misuse of a Session
    │   ├── SessionClosedError    (RuntimeError)       the session was closed
    │   ├── TurnInProgressError   (RuntimeError)       a turn is already running
    │   └── NotLiveError          (RuntimeError)       a live control request with no CLI process
    ├── RootBypassError           (RuntimeError)       autonomous mode as root without the opt-in
    ├── McpBridgeError            (RuntimeError)       the in-kernel MCP server is not running
    ├── NotebookViewError         (RuntimeError)       the open notebook's tab refused or did not answer
    │   └── NoNotebookViewError                        no tab holds this kernel's notebook (nbclient, console)
    ├── LedgerError               (RuntimeError)       the ledger could not be opened, written or read: url
    ├── PromptError               (ValueError)         `{name}` in a prompt names no notebook variable
    ├── AttachmentError           (ValueError)         an --attach item is no file and no image value
    ├── StructuredOutputError     (ValueError)         a structured answer did not validate: raw, turn
    │   └── NoStructuredOutputError                    the turn gave no structured answer at all
    ├── HookError                 (ValueError)         a hooks configuration that cannot be registered
    ├── HookWarning               (UserWarning)        a Python hook raised, timed out or returned junk
    ├── QuestionError             (ValueError)         an AskUserQuestion input or answer we cannot use
    └── RuleError                 (ValueError)         a permission rule the policy does not understand: rule

Outside the tree on purpose: :class:`kandev_nb.kernel_tools.RunStopped`, a ``BaseException``
raised *inside* the user's running code to stop it (so a bare ``except Exception`` there
cannot swallow it). It never reaches a caller of kandev-nb.

This module imports nothing else of kandev-nb, so every layer can raise these.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

__all__ = [
    "AttachmentError",
    "CLIInstallError",
    "CLINotFoundError",
    "CLIProcessError",
    "ControlError",
    "ControlTimeoutError",
    "HookError",
    "HookWarning",
    "KandevError",
    "LedgerError",
    "McpBridgeError",
    "NoNotebookViewError",
    "NoStructuredOutputError",
    "NotLiveError",
    "NotebookViewError",
    "PostgresNotInstalled",
    "PromptError",
    "QuestionError",
    "ResumeRejectedError",
    "RootBypassError",
    "RuleError",
    "SessionClosedError",
    "SessionError",
    "StructuredOutputError",
    "TransportClosedError",
    "TransportError",
    "TurnInProgressError",
]


class KandevError(Exception):
    """The base of every error kandev-nb raises (see the tree in this module's docstring)."""


class CLINotFoundError(KandevError, FileNotFoundError):
    """No Claude Code binary was found in any of the four places we look.

    Raised by :func:`kandev_nb.wire.cli.find_cli` (and so by ``Session.start`` and the first
    `%%claude` cell): the message names the explicit path, ``KANDEV_CLAUDE_CLI``, ``PATH``
    and the `claude-agent-sdk` wheel, in that order.
    """


class CLIInstallError(KandevError, RuntimeError):
    """Installing a pinned CLI failed (:mod:`kandev_nb.testing.clis`).

    Attributes:
        version: The CLI version that was being installed.
        detail: The tail of the installer's output, or what was wrong.
    """

    def __init__(self, version: str, detail: str) -> None:
        super().__init__(f"installing Claude Code CLI {version} failed: {detail}")
        self.version = version
        self.detail = detail


class TransportError(KandevError):
    """The connection to the CLI process failed (stdio or WebSocket)."""


class TransportClosedError(TransportError, ConnectionError):
    """Writing to a transport whose CLI has exited or was closed."""


class CLIProcessError(TransportError, RuntimeError):
    """The CLI process exited unexpectedly.

    Raised by ``Session.start`` when the CLI exits before it answers ``initialize``, and by
    a turn whose CLI dies mid-turn.

    Attributes:
        exit_code: the process's return code (negative: killed by that signal).
        stderr: the last lines it wrote to stderr (at most 64 KiB).
    """

    def __init__(self, message: str, exit_code: int | None, stderr: str) -> None:
        super().__init__(message)
        self.exit_code = exit_code
        self.stderr = stderr


class ResumeRejectedError(CLIProcessError):
    """A resume that would drop more than the turn it was told to drop was refused.

    The CLI, started with ``--resume-session-at <uuid> --resume-drops-turn <prompt uuid>``,
    checks that every transcript entry after the resume point belongs to that prompt's turn;
    when one does not (another turn, a message the session took in meanwhile), it prints an
    error result and exits (code 1) before answering ``initialize``, with ``Resume rejected by
    --resume-drops-turn: ...`` on stderr (measured on CLI 2.1.332). The refusal is
    deterministic: resume without dropping, or at another point, rather than again.

    Attributes:
        resume_session_at: the resume point asked for.
        resume_drops_turn: the prompt uuid of the turn that was to be dropped.
        exit_code, stderr: as :class:`CLIProcessError` (the CLI's reason is in `stderr`).
    """

    def __init__(
        self, message: str, exit_code: int | None, stderr: str, *, resume_session_at: str, resume_drops_turn: str
    ) -> None:
        super().__init__(message, exit_code, stderr)
        self.resume_session_at = resume_session_at
        self.resume_drops_turn = resume_drops_turn


class ControlError(KandevError, RuntimeError):
    """The CLI answered one of our control_requests with ``subtype: "error"``.

    Attributes:
        subtype: the request's subtype ("initialize", "interrupt", ...).
        error: the CLI's error text (the control_response's ``error`` field).
    """

    def __init__(self, subtype: str, error: str) -> None:
        super().__init__(f"the CLI refused {subtype}: {error}")
        self.subtype = subtype
        self.error = error


class ControlTimeoutError(KandevError, TimeoutError):
    """The CLI did not answer a control_request in time.

    Attributes:
        subtype: the request's subtype ("initialize", "set_permission_mode", ...).
        timeout_s: how long we waited, in seconds.
    """

    def __init__(self, subtype: str, timeout_s: float) -> None:
        super().__init__(f"no answer to {subtype} within {timeout_s:g} s")
        self.subtype = subtype
        self.timeout_s = timeout_s


class SessionError(KandevError):
    """A :class:`~kandev_nb.agent.session.Session` was used in a way its state forbids."""


class SessionClosedError(SessionError, RuntimeError):
    """The session was closed; make a new one."""


class TurnInProgressError(SessionError, RuntimeError):
    """A turn is already running in this session; wait for it or interrupt it."""


class RootBypassError(KandevError, RuntimeError):
    """Autonomous mode was asked for as root without the explicit opt-in.

    The CLI refuses ``bypassPermissions`` as root unless ``IS_SANDBOX=1`` is set; kandev-nb
    never sets it on its own.
    """


class McpBridgeError(KandevError, RuntimeError):
    """The in-process MCP server is not running (it failed, or the bridge was closed)."""


class NotebookViewError(KandevError, RuntimeError):
    """A request to the notebook open in the user's tab (the notebook bridge) failed: the
    tab answered with an error, or did not answer in time."""


class NoNotebookViewError(NotebookViewError):
    """No tab holds this kernel's notebook: no view said hello and none answered a ping
    (nbclient, papermill, `jupyter execute`, a console, a frontend without the bridge)."""


class LedgerError(KandevError, RuntimeError):
    """The ledger could not be opened, written or read; the cause is ``__cause__``.

    Raised by :meth:`~kandev_nb.ledger.RunLedger.record` when the write fails (disk full,
    database locked for longer than the busy timeout, server gone) and by the constructor
    when the schema cannot be created. Nothing was written when it is raised by ``record``.

    A turn ``record`` could not write is kept in the ledger's spool and written later
    (``spooled`` is its file); nothing of it is in the database yet.

    Attributes:
        url: the ledger's URL, with any password masked.
        spooled: the spool file holding the turn ``record`` could not write, else None.
    """

    def __init__(self, message: str, *, url: str, spooled: Path | None = None) -> None:
        super().__init__(message)
        self.url = url
        self.spooled = spooled


class PostgresNotInstalled(KandevError, RuntimeError):
    """No PostgreSQL server binaries (``initdb``, ``pg_ctl``) for the test cluster
    (:mod:`kandev_nb.testing.postgres`); the message names the install command."""


class PromptError(KandevError, ValueError):
    """The prompt refers to a notebook variable that does not exist (``{name}``)."""


class AttachmentError(KandevError, ValueError):
    """An --attach item is neither an existing file nor an image value we can save."""


class StructuredOutputError(KandevError, ValueError):
    """A turn asked for structured output (``--schema``, ``output_type=``) and its answer
    did not validate into the requested type.

    The message is pydantic's in one line (``name.field: message; ...``).

    Attributes:
        raw: the answer as the CLI gave it (`result.structured_output`, JSON values).
        turn: the :class:`~kandev_nb.agent.turn.Turn` (its ``output_raw`` is ``raw``).
    """

    def __init__(self, message: str, *, raw: Any = None, turn: Any = None) -> None:
        super().__init__(message)
        self.raw = raw
        self.turn = turn


class NoStructuredOutputError(StructuredOutputError):
    """The turn ended with no structured answer at all: the model never called the
    `StructuredOutput` tool (`result.subtype` ``error_max_structured_output_retries``), or
    the turn failed or was stopped first. ``raw`` is None."""


class HookError(KandevError, ValueError):
    """A hooks configuration cannot be used: an unknown event name (the message lists the
    known ones), a matcher that is not a :class:`~kandev_nb.agent.hooks.HookMatcher`, or a
    hook that is not callable. Raised before anything is sent to the CLI."""


class HookWarning(KandevError, UserWarning):
    """A Python hook raised, timed out or returned something malformed; the CLI got a deny
    (gating events) or no decision (the others), with the error text. Shown in the cell."""


class QuestionError(KandevError, ValueError):
    """An AskUserQuestion input or answer kandev-nb cannot use (kandev_nb.agent.questions):
    no questions or more than four, a question with fewer than two or more than four
    options, or an answer naming no option of its question."""


class RuleError(KandevError, ValueError):
    """A permission rule kandev_nb.policy does not understand, raised when the policy is built
    (``Rules(allow=[...])``), never when a tool call is judged.

    Attributes:
        rule: the rule as given.
        reason: what is wrong with it.
    """

    def __init__(self, rule: str, reason: str) -> None:
        self.rule = rule
        self.reason = reason
        super().__init__(f"permission rule {rule!r}: {reason}")


class NotLiveError(SessionError, RuntimeError):
    """A live control (set_model, rewind_files, mcp_status...) needs a running CLI process
    (kandev_nb.agent.controls); run a turn first."""
