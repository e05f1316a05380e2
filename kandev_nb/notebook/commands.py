"""``%claude_undo`` and ``%claude_mcp``: line magics that await a live control request.

A line magic cannot await, and the CLI's answer comes on the kernel's own event loop; so,
like ``%%claude``, these lines are rewritten by an input transformer
(:func:`transform_lines`) into a top-level ``await`` of :func:`undo` / :func:`mcp`.

- ``%claude_undo [--turn N | --cell C] [--session NAME] [--dry-run]``: restore the files as they were
  before turn N of the session (1-based, as the turn headers show; or the turn of cell ``In [C]``;
  default: its last turn; :mod:`kandev_nb.notebook.turn_numbers`), with the CLI's ``rewind_files``
  (:meth:`~kandev_nb.agent.controls.LiveControls.undo_files`); it says which files it
  restored, or why it cannot (then nothing changed). A file edited after the turn is first
  copied beside itself (``name.kandev-undo-<UTC time>.bak``) and the answer says so;
  ``--dry-run`` lists what would change and changes nothing.
- ``%claude_mcp [--session NAME] [--reconnect SERVER] [--enable SERVER] [--disable SERVER]``:
  the CLI's ``mcp_status`` as a table (server, status, tools), after an optional
  ``mcp_reconnect`` / ``mcp_toggle``.
"""

from __future__ import annotations

import argparse
import re
import shlex
from typing import Any

from kandev_nb.agent.file_states import UndoReport
from kandev_nb.notebook.turn_numbers import note_undone, turn_index, turn_label

__all__ = ["Undone", "mcp", "transform_lines", "undo"]

_LINE = re.compile(r"^%(claude_undo|claude_mcp|claude_permissions)\b(.*)$")
_CALLS = {
    "claude_undo": "commands.undo",
    "claude_mcp": "commands.mcp",
    "claude_permissions": "permissions_panel.permissions",
}


def transform_lines(lines: list[str]) -> list[str]:
    """IPython cleanup transformer: a ``%claude_undo ...`` / ``%claude_mcp ...`` line becomes an await."""
    out = []
    for line in lines:
        match = _LINE.match(line.rstrip("\n"))
        if match is None or match.group(2).strip() in ("?", "??"):  # `%claude_undo?`: IPython's help
            out.append(line)
            continue
        module, _, name = _CALLS[match.group(1)].partition(".")
        out.append(
            f"await __import__('kandev_nb.notebook.{module}').notebook.{module}.{name}({match.group(2).strip()!r})\n"
        )
    return out


def _parser(prog: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=prog, add_help=False, exit_on_error=False)
    parser.add_argument("--session", default="default")
    return parser


def _parse(parser: argparse.ArgumentParser, line: str) -> argparse.Namespace:
    from IPython.core.error import UsageError

    try:
        args, extra = parser.parse_known_args(shlex.split(line))
    except (argparse.ArgumentError, ValueError) as exc:
        raise UsageError(f"{parser.prog}: {exc}") from None
    if extra:
        raise UsageError(f"{parser.prog}: unknown arguments {' '.join(extra)}")
    return args


def _session(name: str, prog: str) -> Any:
    from IPython.core.error import UsageError

    from kandev_nb.notebook import magic

    session = magic.sessions.get(name)
    if session is None:
        raise UsageError(f"{prog}: no session {name!r} in this kernel; run a %%claude cell first")
    return session


class Undone(list[str]):
    """The paths ``%claude_undo`` restored (or, with ``--dry-run``, would restore); shown as
    "Undid the file changes of ... (N files restored)", then each file changed after its turn
    and where the copy of the user's version was kept."""

    def __init__(self, report: UndoReport, which: str) -> None:
        super().__init__(report.files)
        self.which = which
        self.report = report

    def _lines(self) -> tuple[str, list[str]]:
        n = len(self)
        files = f"{n} file{'s' if n != 1 else ''}"
        if self.report.dry_run:
            head = f"Dry run: would undo the file changes of {self.which} ({files} to restore); nothing changed"
        else:
            head = f"Undid the file changes of {self.which} ({files} restored)"
        notes = []
        for path in self.report.changed_since:
            copy = self.report.copies.get(path)
            if copy:
                notes.append(f"{path} had changed since that turn: your version is kept in {copy}")
            elif self.report.dry_run:
                notes.append(f"{path} has changed since that turn: a copy of it would be kept beside it")
            else:
                notes.append(f"{path} had changed since that turn (it did not exist: nothing to keep)")
        return head, notes

    def _repr_html_(self) -> str:
        from kandev_nb.render.html import esc

        head, notes = self._lines()
        items = "".join(f"<li><code>{esc(f)}</code></li>" for f in self)
        warned = "".join(f"<li>⚠ {esc(note)}</li>" for note in notes)
        return (
            f'<div class="kandev-undo">↩ {esc(head)}<ul>{items}</ul>'
            + (f"<ul>{warned}</ul>" if warned else "")
            + "</div>"
        )

    def __repr__(self) -> str:
        head, notes = self._lines()
        return "\n".join([f"{head}: {', '.join(self) or 'no file'}", *(f"⚠ {note}" for note in notes)])


async def undo(line: str) -> Undone:
    """``%claude_undo [--turn N | --cell C] [--session NAME] [--dry-run]``: undo turn N's file changes
    (and later turns'). N counts from 1 as the turn headers show ("turn 2"; ``-1`` is the last
    turn, the default); ``--cell C`` names the turn by its cell's ``In [C]``. A file changed
    after the turn that wrote it is first copied beside itself (``name.kandev-undo-<UTC
    time>.bak``) and the answer says so; ``--dry-run`` only lists
    what would be restored and which files changed since.

    Returns:
        The restored paths, an :class:`Undone` (shown as HTML).

    Raises:
        UsageError: bad arguments, no such session or turn, no checkpoint, the CLI cannot
            rewind (its reason), a copy could not be written; nothing changed.
    """
    from IPython.core.error import UsageError

    from kandev_nb.errors import ControlError, ControlTimeoutError, NotLiveError

    parser = _parser("%claude_undo")
    parser.add_argument("--turn", type=int, default=None)
    parser.add_argument("--cell", type=int, default=None)
    parser.add_argument("--dry-run", action="store_true")
    args = _parse(parser, line)
    session = _session(args.session, "%claude_undo")
    try:
        index = turn_index(session.turns, args.turn, args.cell)
        report = await session.undo_files(index, dry_run=args.dry_run)
    except (ControlError, ControlTimeoutError, NotLiveError, IndexError, ValueError, OSError) as exc:
        raise UsageError(f"%claude_undo: {exc}; nothing was changed") from None
    undone = Undone(report, turn_label(session.turns, index))
    if not args.dry_run:
        note_undone(session.turns, index, list(undone))
    return undone


async def mcp(line: str) -> Any:
    """``%claude_mcp [--session NAME] [--reconnect SERVER] [--enable SERVER] [--disable SERVER]``:
    the CLI's MCP servers (its ``mcp_status``) as a DataFrame (server, status, tools, error),
    after an optional ``mcp_reconnect`` / ``mcp_toggle``.

    Raises:
        UsageError: bad arguments, no session or process, the CLI refused (its reason).
    """
    import pandas as pd
    from IPython.core.error import UsageError

    from kandev_nb.errors import ControlError, ControlTimeoutError, NotLiveError

    parser = _parser("%claude_mcp")
    for flag in ("--reconnect", "--enable", "--disable"):
        parser.add_argument(flag, metavar="SERVER")
    args = _parse(parser, line)
    session = _session(args.session, "%claude_mcp")
    try:
        if args.reconnect:
            await session.mcp_reconnect(args.reconnect)
        if args.enable or args.disable:
            await session.mcp_toggle(args.enable or args.disable, bool(args.enable))
        servers = await session.mcp_status()
    except (ControlError, ControlTimeoutError, NotLiveError) as exc:
        raise UsageError(f"%claude_mcp: {exc}") from None
    rows = [
        {
            "server": s.get("name"),
            "status": s.get("status"),
            "tools": ", ".join(str(t.get("name", t)) if isinstance(t, dict) else str(t) for t in s.get("tools") or []),
            "error": s.get("error") or "",
        }
        for s in servers
    ]
    return pd.DataFrame(rows, columns=["server", "status", "tools", "error"])
