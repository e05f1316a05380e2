"""Live control requests of a running CLI: model, thinking budget, file rewind, MCP, tasks.

:class:`LiveControls` is mixed into :class:`~kandev_nb.agent.session.Session`; each method
sends one control_request on the live process (no restart, same `pid`, the conversation
intact) with the wire shapes of the Agent SDK's ``_internal/query.py``, confirmed on CLI
2.1.332 (tests/controls):

- ``{"subtype": "set_model", "model": <name>}`` answers ``{"model": <name>}``; the same
  process's next API request uses that model.
- ``{"subtype": "set_max_thinking_tokens", "max_thinking_tokens": N}``.
- ``{"subtype": "rewind_files", "user_message_id": <uuid>}`` (needs
  ``CLAUDE_CODE_ENABLE_SDK_FILE_CHECKPOINTING=1`` and ``--replay-user-messages``, which
  :data:`CHECKPOINT_ENV` / :data:`CHECKPOINT_ARGS` give) answers ``{"canRewind": bool,
  "filesChanged": [...], "error"?: str}``.
- ``mcp_status`` (``{"mcpServers": [{"name", "status", "tools"...}]}``), ``mcp_reconnect``
  and ``mcp_toggle`` (``serverName``, ``enabled``), ``stop_task`` (``task_id``).

Reasoning effort has no control request in 2.1.332 (no ``set_effort`` in the binary): it
is the launch flag ``--effort``, so changing it needs a new process (the magic resumes).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from kandev_nb.agent.file_states import UndoReport, keep_copy, plan, snapshot
from kandev_nb.errors import ControlError, NotLiveError

if TYPE_CHECKING:
    from kandev_nb.wire.control import ControlPlane

__all__ = [
    "CHECKPOINT_ARGS",
    "CHECKPOINT_ENV",
    "CONTROL_TIMEOUT_S",
    "LiveControls",
    "changed_files",
    "with_mcp_failures",
]

CHECKPOINT_ENV = {"CLAUDE_CODE_ENABLE_SDK_FILE_CHECKPOINTING": "1"}
CHECKPOINT_ARGS = ("--replay-user-messages",)
CONTROL_TIMEOUT_S = 30.0
"""Seconds a live control request may take before ControlTimeoutError."""


class LiveControls:
    """Control requests on the live CLI process (mixed into Session).

    Attributes:
        prompt_uuids: turn index (into ``turns``) -> the `uuid` of its prompt as the CLI
            replayed it (``user`` line with ``isReplay: true``; only with file checkpoints).
    """

    model: str | None
    turns: list[Any]
    prompt_uuids: dict[int, str]

    @property
    def cwd(self) -> str:
        """The CLI's working directory (Session's): relative tool paths are under it."""
        raise NotImplementedError

    def note_turn_end(self, turn: Any) -> None:
        """Record, as `turn` ends, the SHA-256 of each file its Edit/Write/MultiEdit/NotebookEdit
        tool_use inputs named (``file_path``/``notebook_path``): the state :meth:`undo_files`
        compares with before it rewinds (:mod:`kandev_nb.agent.file_states`)."""
        paths = changed_files([turn])
        if not hasattr(self, "file_states"):
            self.file_states: dict[int, dict[str, str | None]] = {}
        if paths and turn in self.turns:
            try:
                self.file_states[self.turns.index(turn)] = snapshot(paths, self.cwd)
            except OSError:  # an unreadable path: undo then treats it as changed (keeps a copy)
                pass

    async def undo_files(self, turn: Any = -1, *, dry_run: bool = False) -> UndoReport:
        """:meth:`rewind_files`, guarded: each file the turns `turn`.. wrote is compared with its
        state at the end of the last of them that wrote it (:meth:`note_turn_end`); one that
        changed since (the user's own edits) is first copied beside itself
        (``name.kandev-undo-<UTC time>.bak``), and the report says so.

        Args:
            turn: an index into ``turns`` (``-1``: the last turn), or a Turn of this session.
            dry_run: only say what would be restored and which files changed since; nothing
                is sent to the CLI and nothing is written.

        Returns:
            An :class:`~kandev_nb.agent.file_states.UndoReport`.

        Raises:
            IndexError, ControlError, NotLiveError: as :meth:`rewind_files` (nothing changed).
            OSError: a copy could not be written (nothing was rewound).
        """
        index = self.turns.index(turn) if not isinstance(turn, int) else turn
        if not -len(self.turns) <= index < len(self.turns):
            raise IndexError(f"no turn {turn!r}: this session has {len(self.turns)} turn(s)")
        index %= len(self.turns)
        recorded: dict[str, str | None] = {}
        for n in range(index, len(self.turns)):  # a later turn's state replaces an earlier one's
            recorded.update(getattr(self, "file_states", {}).get(n, {}))
        paths = changed_files(self.turns[index:])
        checks = plan(paths, recorded, self.cwd)
        if dry_run:
            if getattr(self, "prompt_uuids", {}).get(index) is None:
                raise ControlError("rewind_files", f"turn {index + 1} has no file checkpoint")
            return UndoReport(files=paths, checks=checks, dry_run=True)
        if getattr(self, "prompt_uuids", {}).get(index) is not None:  # else rewind_files says why
            copies = {c.path: keep_copy(c.path, self.cwd) for c in checks if c.changed_since and c.exists}
        else:
            copies = {}
        files = await self.rewind_files(index)
        return UndoReport(files=files, checks=checks, copies=copies)

    @property
    def control(self) -> ControlPlane | None:
        """The live process's control plane (Session's), or None."""
        raise NotImplementedError

    def note_replay(self, raw: Mapping[str, Any]) -> None:
        """Keep the `uuid` of a replayed prompt (``isReplay: true``) for the running turn."""
        uuid = raw.get("uuid")
        if raw.get("isReplay") and isinstance(uuid, str) and self.turns:
            if not hasattr(self, "prompt_uuids"):
                self.prompt_uuids = {}
            self.prompt_uuids.setdefault(len(self.turns) - 1, uuid)

    async def rewind_files(self, turn: int = -1) -> list[str]:
        """Undo the file changes of `turn` and every later turn: the files as they were
        before that turn's prompt (``rewind_files`` with its replayed `uuid`).

        Args:
            turn: an index into ``turns`` (``-1``: the last turn), or a Turn of this session.

        Returns:
            The paths restored: the answer's ``filesChanged`` where the CLI gives it (2.1.332
            answers only ``{"canRewind": true}``), else the files the turns' Edit/Write/
            NotebookEdit calls changed (:func:`changed_files`).

        Raises:
            IndexError: no such turn. ControlError: the turn has no checkpoint (the session
                was started without file checkpoints, or the prompt was never replayed),
                or the CLI cannot rewind (``canRewind`` false, an error answer, an older CLI);
                nothing changed. NotLiveError: no process.
        """
        index = self.turns.index(turn) if not isinstance(turn, int) else turn
        if not -len(self.turns) <= index < len(self.turns):
            raise IndexError(f"no turn {turn!r}: this session has {len(self.turns)} turn(s)")
        index %= len(self.turns)
        uuid = getattr(self, "prompt_uuids", {}).get(index)
        if uuid is None:
            raise ControlError(
                "rewind_files",
                f"turn {index + 1} has no file checkpoint (start the session with "
                "file_checkpoints=True; the magic's sessions have them unless KANDEV_NB_FILE_CHECKPOINTS=0)",
            )
        answer = await self.rewind_to(uuid)
        files = answer.get("filesChanged")
        return [str(f) for f in files] if isinstance(files, list) else changed_files(self.turns[index:])

    def _live(self, what: str) -> ControlPlane:
        if self.control is None:
            raise NotLiveError(f"{what} needs a running Claude Code process; run a turn first")
        return self.control

    async def _ask(self, subtype: str, **fields: Any) -> dict[str, Any]:
        """Send one control_request and return its answer.

        Raises:
            NotLiveError: no process. ControlError: the CLI answered with an error (its
            text, e.g. an unknown subtype on an older CLI). ControlTimeoutError: no answer
            within :data:`CONTROL_TIMEOUT_S`.
        """
        answer = await self._live(subtype).request(subtype, timeout=CONTROL_TIMEOUT_S, **fields)
        return answer if isinstance(answer, dict) else {}

    async def set_model(self, model: str) -> str:
        """Switch the live process to `model` (control request ``set_model``).

        Returns:
            The model the CLI says it uses now (answer's ``model``, else `model`).

        Raises:
            ValueError: an empty model name. NotLiveError, ControlError, ControlTimeoutError:
                see :meth:`_ask`; a refusal leaves the process on its model.
        """
        if not isinstance(model, str) or not model.strip():
            raise ValueError("set_model needs a model name, e.g. 'sonnet'")
        answer = await self._ask("set_model", model=model)
        self.model = str(answer.get("model") or model)
        return self.model

    async def set_max_thinking_tokens(self, tokens: int) -> None:
        """Set the live thinking budget in tokens (control request ``set_max_thinking_tokens``).

        Raises:
            ValueError: not a non-negative int. NotLiveError, ControlError (e.g. a CLI
                without it), ControlTimeoutError.
        """
        if isinstance(tokens, bool) or not isinstance(tokens, int) or tokens < 0:
            raise ValueError(f"max thinking tokens must be a non-negative integer, not {tokens!r}")
        await self._ask("set_max_thinking_tokens", max_thinking_tokens=tokens)

    async def mcp_status(self) -> list[dict[str, Any]]:
        """The CLI's MCP servers (answer's ``mcpServers``: ``name``, ``status``, ``tools``...)."""
        answer = await self._ask("mcp_status")
        servers = answer.get("mcpServers")
        return [s for s in servers if isinstance(s, dict)] if isinstance(servers, list) else []

    async def mcp_reconnect(self, name: str) -> None:
        """Reconnect MCP server `name` (control request ``mcp_reconnect``, ``serverName``)."""
        await self._ask("mcp_reconnect", serverName=name)

    async def mcp_toggle(self, name: str, enabled: bool) -> None:
        """Enable or disable MCP server `name` (``mcp_toggle``: ``serverName``, ``enabled``)."""
        await self._ask("mcp_toggle", serverName=name, enabled=bool(enabled))

    async def stop_task(self, task_id: str) -> None:
        """Stop a background task (subagent or shell) by its `task_id` (``stop_task``)."""
        await self._ask("stop_task", task_id=task_id)

    async def stop_background(self) -> list[str]:
        """Send ``stop_task`` for every background task the running turn started
        (:class:`~kandev_nb.agent.background.BackgroundWatch`); returns the stopped `task_id` values.
        A refusal for one task is logged and the others are still stopped."""
        import logging

        stopped = []
        for task_id in list(getattr(getattr(self, "background", None), "open_tasks", {})):
            try:
                await self.stop_task(task_id)
                stopped.append(task_id)
            except (ControlError, NotLiveError, TimeoutError) as exc:
                logging.getLogger("kandev_nb").warning("stop_task %s failed: %s", task_id, exc)
        return stopped

    async def rewind_to(self, user_message_id: str) -> dict[str, Any]:
        """Restore the files as they were before the prompt `user_message_id` (its replayed
        `uuid`), with ``rewind_files``.

        Returns:
            The CLI's answer: ``canRewind`` (bool), ``filesChanged`` (paths), ``error``.

        Raises:
            ControlError: the CLI cannot rewind (``canRewind`` false: its ``error`` text, or
                an error answer, e.g. checkpointing off or an older CLI); nothing changed.
        """
        answer = await self._ask("rewind_files", user_message_id=user_message_id)
        if answer.get("canRewind") is False:
            raise ControlError("rewind_files", str(answer.get("error") or "no file checkpoint for that prompt"))
        return answer


def changed_files(turns: list[Any]) -> list[str]:
    """The paths the `turns`' file tools (ModifyFile payloads of their ToolCall events) changed, in order."""
    from kandev_nb.agent import events as ev
    from kandev_nb.agent.tools import ModifyFile

    paths = [
        e.normalized.file_path
        for t in turns
        for e in getattr(t, "events", ())
        if isinstance(e, ev.ToolCall) and isinstance(e.normalized, ModifyFile)
    ]
    return list(dict.fromkeys(paths))


def with_mcp_failures(events: list[Any], raw: Mapping[str, Any]) -> list[Any]:
    """`events` with the SessionStatus of a `system/init` naming the MCP servers that failed
    to connect (``mcp_servers[].status == "failed"``, measured on 2.1.332) in ``mcp_failed``."""
    from kandev_nb.agent import events as ev

    servers = raw.get("mcp_servers") if raw.get("subtype") == "init" else None
    failed = tuple(str(s.get("name")) for s in servers or () if isinstance(s, dict) and s.get("status") == "failed")
    if not failed:
        return events
    return [e.model_copy(update={"mcp_failed": failed}) if isinstance(e, ev.SessionStatus) else e for e in events]
