"""Stopping a running turn and changing a live session's permission mode.

:class:`TurnControls` is mixed into :class:`~kandev_nb.agent.session.Session`: the protocol's
`interrupt` (the Stop button) and `set_permission_mode` (``Session.set_mode``), with what
each does to waiting approvals and to the process (DESIGN.md: an interrupt keeps the
process and the conversation; autonomous mode needs a process started in it).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import TYPE_CHECKING, Any

from kandev_nb.agent.permissions import cli_permission_mode
from kandev_nb.agent.state import SessionState
from kandev_nb.errors import TurnInProgressError

if TYPE_CHECKING:
    from kandev_nb.agent.approvals import ApprovalBroker
    from kandev_nb.agent.background import BackgroundWatch
    from kandev_nb.agent.config import SessionConfig
    from kandev_nb.agent.connection import CLIConnection
    from kandev_nb.agent.turn import Turn
    from kandev_nb.wire.cli import LaunchOptions

__all__ = ["TurnControls"]


class TurnControls:
    """Interrupts and mode changes (mixed into Session, which owns the state read here)."""

    turns: list[Turn]
    state: SessionState
    connection: CLIConnection | None
    broker: ApprovalBroker
    background: BackgroundWatch
    _config: SessionConfig
    _interrupt_task: asyncio.Task[None] | None
    _interrupted_at: float | None

    @property
    def launch_options(self) -> LaunchOptions:
        raise NotImplementedError

    def _set_mode(self, mode: str, **changes: Any) -> None:
        raise NotImplementedError

    async def _teardown(self) -> None:
        raise NotImplementedError

    async def stop_background(self) -> list[str]:
        raise NotImplementedError

    def _begin_interrupt(self, turn: Turn | None) -> None:
        """Mark `turn` interrupted and send the protocol's `interrupt` once, in the background."""
        if turn is not None and not turn.done:
            turn.interrupted = True
            if self._interrupted_at is None:
                self._interrupted_at = time.monotonic()
        if self._interrupt_task is None or self._interrupt_task.done():
            self._interrupt_task = asyncio.get_running_loop().create_task(self._interrupt_and_settle())

    async def _interrupt_and_settle(self) -> None:
        # The CLI withdraws each waiting can_use_tool (control_cancel_request, which closes
        # its card) before it answers the interrupt; anything still open after the answer
        # is denied so the CLI is never left waiting.
        if self.connection is not None:
            with contextlib.suppress(Exception):
                await self.connection.request("interrupt", timeout=10)
        self.broker.deny_all("The user interrupted the turn.")

    async def interrupt(self) -> None:
        """Stop the running turn with the protocol's `interrupt` (the Stop button).

        Waiting approvals are withdrawn by the CLI (PermissionCancelled). The turn ends with
        the CLI's interrupted result (`error_during_execution`); the process and the
        conversation stay for the next turn. A no-op between turns. Returns once the CLI
        answered the interrupt (at most 10 s).
        """
        if self.turns and self.background.holds(self.turns[-1]):  # the turn waits for background work
            await self.stop_background()
            return
        turn = self.turns[-1] if self.turns and not self.turns[-1].done else None
        if turn is None or self.state is not SessionState.RUNNING:
            return
        self._begin_interrupt(turn)
        if self._interrupt_task is not None:
            await asyncio.shield(self._interrupt_task)

    async def set_mode(self, mode: str, *, allow_root_bypass: bool | None = None) -> None:
        """Change the permission mode of the live session, without a restart.

        Sends the control request ``set_permission_mode`` to the running CLI (same process,
        same conversation); the CLI then reports ``system/status`` with ``permissionMode``,
        which reaches the next turn as a SessionMode event. Before the first turn it only
        changes the mode the process will be started in.

        The one exception is switching to "autonomous" a process that was not started in it:
        the CLI refuses that ("the session was not launched with
        --dangerously-skip-permissions"), so the process is closed and the next turn starts
        a new one in bypassPermissions mode that resumes the conversation (``--resume``).

        Args:
            mode: "supervised", "plan", "acceptEdits" or "autonomous".
            allow_root_bypass: if given, the session's opt-in for autonomous as root from now on.

        Raises:
            ValueError, RootBypassError: see :func:`kandev_nb.agent.permissions.cli_permission_mode`.
            ControlError: the CLI refused the mode.
            ControlTimeoutError: the CLI did not answer within 30 s.
        """
        bypass = self._config.allow_root_bypass if allow_root_bypass is None else allow_root_bypass
        cli_mode = cli_permission_mode(mode, allow_root_bypass=bypass)
        if self.connection is None or self.state is SessionState.NEW:
            self._set_mode(mode, allow_root_bypass=bypass)
            return
        if cli_mode == "bypassPermissions" and self.launch_options.permission_mode != "bypassPermissions":
            if self.state is SessionState.RUNNING:
                raise TurnInProgressError("autonomous mode needs a new CLI process; switch between turns")
            self._set_mode(mode, allow_root_bypass=bypass)
            await self._teardown()
            return
        await self.connection.request("set_permission_mode", mode=cli_mode, timeout=30)
        self._set_mode(mode, allow_root_bypass=bypass)
