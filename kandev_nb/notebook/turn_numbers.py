"""Turn numbers: the 1-based number of a turn in its session, as headers, footers and ``%claude_undo`` say it.

``Session.turns`` is a Python list (index 0 is the first turn); everything a person reads or
types counts from 1: the turn header says "turn 3", ``%claude_undo --turn 3`` undoes that
turn's file changes (and the later turns'), and ``%claude_undo --cell 12`` names the turn by
the ``In [12]`` of the `%%claude` cell that ran it (``Turn.meta["cell"]``, set by the magic).
A negative ``--turn`` counts from the end as before (``-1``: the last turn); ``--turn 0``
is refused (it used to mean the first turn).

A session that a new CLI process continues (``--retry``, a changed launch option: a new
:class:`~kandev_nb.agent.session.Session` resuming the same conversation) keeps counting
(:func:`continue_numbering`): its first turn is the next number, and a ``--retry``'s turn
takes the number of the failed turn it retries (``Turn.meta["retry_of"]`` says so). So one
session never shows two "turn 1"s, and ``--turn N`` names one turn.
"""

from __future__ import annotations

import weakref
from typing import Any

__all__ = ["continue_numbering", "next_number", "turn_index", "turn_label"]

_BASE: weakref.WeakKeyDictionary[Any, int] = weakref.WeakKeyDictionary()
"""Session -> how many turns of its conversation ran before its own first turn."""
_RETRIES: weakref.WeakSet[Any] = weakref.WeakSet()
"""Sessions whose first turn retries the failed last turn of the one they replaced."""


def continue_numbering(session: Any, replaced: Any, *, retry: bool) -> None:
    """Number `session`'s turns after those of `replaced` when it continues the same
    conversation (``session.config.resume == replaced.session_id``); with `retry`, its first
    turn retries `replaced`'s failed last turn and takes its number. Nothing for another
    conversation (``--new``, ``--resume`` of another session) or the same session object."""
    if replaced is None or session is replaced or not getattr(replaced, "session_id", None):
        return
    if getattr(session.config, "resume", None) != replaced.session_id:
        return
    turns = getattr(replaced, "turns", [])
    before = _BASE.get(replaced, 0) + len(turns)
    if retry and turns:
        before -= 1
        _RETRIES.add(session)
    _BASE[session] = before


def next_number(session: Any) -> int:
    """The number the next turn of `session` gets (:func:`mark`), for the live header."""
    return _BASE.get(session, 0) + len(getattr(session, "turns", [])) + 1


def _number(turns: list[Any], index: int) -> int:
    """The number a person reads for ``turns[index]`` (its ``meta["number"]``, else index + 1)."""
    number = getattr(turns[index], "meta", {}).get("number")
    return number if isinstance(number, int) else index % len(turns) + 1


def turn_index(turns: list[Any], turn: int | None, cell: int | None) -> int:
    """The list index into `turns` (a session's ``Session.turns``) that `turn` / `cell` name.

    Args:
        turns: the session's turns, oldest first.
        turn: the 1-based turn number, a negative index from the end, or None.
        cell: the execution count ``In [n]`` of the cell that ran the turn, or None.

    Returns:
        0-based index; ``-1`` (the last turn) when both are None.

    Raises:
        ValueError: both given, ``turn == 0``, no such turn, no turn ran in that cell.
    """
    if turn is not None and cell is not None:
        raise ValueError("give --turn or --cell, not both")
    if cell is not None:
        found = [i for i, t in enumerate(turns) if getattr(t, "meta", {}).get("cell") == cell]
        if not found:
            cells = ", ".join(f"In [{t.meta['cell']}]" for t in turns if t.meta.get("cell") is not None)
            raise ValueError(f"no turn of this session ran in cell In [{cell}] (its cells: {cells or 'none'})")
        return found[-1]
    if turn is None:
        return -1
    if turn == 0:
        raise ValueError("turns count from 1, as the turn headers show; --turn 0 is no turn")
    if -turn > len(turns):
        raise ValueError(f"no turn {turn}: this session has {len(turns)} turn(s)")
    if turn < 0:
        return turn
    found = [i for i in range(len(turns)) if _number(turns, i) == turn]
    if not found:
        shown = f"turns {_number(turns, 0)}-{_number(turns, -1)}" if turns else "no turns"
        raise ValueError(f"no turn {turn} in this session's process (it has {shown})")
    return found[-1]


def turn_label(turns: list[Any], index: int) -> str:
    """``"turn 3 (In [12])"``, or ``"the last turn"`` for index -1: what a person reads."""
    if index == -1:
        return "the last turn"
    number = _number(turns, index) if turns else index + 1
    cell = turns[index].meta.get("cell") if turns else None
    return f"turn {number}" + (f" (In [{cell}])" if cell is not None else "")


def mark(session: Any, turn: Any, cell: int | None) -> None:
    """Note on `turn` (``Turn.meta``) its 1-based ``number`` in `session`'s conversation
    (counting on from the sessions it continues, :func:`continue_numbering`), ``retry_of``
    (the number of the failed turn it retries, the same) and the ``cell`` (``In [n]``) that
    ran it, so the header says "turn 3" and ``--cell`` finds it."""
    turns = getattr(session, "turns", [])
    index = next((i for i, t in enumerate(turns) if t is turn), None)
    if index is not None:
        turn.meta["number"] = _BASE.get(session, 0) + index + 1
        if index == 0 and session in _RETRIES:
            turn.meta["retry_of"] = turn.meta["number"]
    if cell is not None:
        turn.meta["cell"] = cell


def note_undone(turns: list[Any], index: int, files: list[str]) -> list[str]:
    """Mark the file tool calls of ``turns[index:]`` that wrote one of `files` as undone
    (``Turn.meta["undone_tools"]``: tool_use ids; the saved card shows "undone").

    Returns:
        The tool_use ids marked.
    """
    from kandev_nb.agent import events as ev
    from kandev_nb.agent.tools import ModifyFile

    wanted, marked = set(files), []
    for turn in turns[index:]:
        ids = [
            e.tool_call_id
            for e in turn.events
            if isinstance(e, ev.ToolCall) and isinstance(e.normalized, ModifyFile) and e.normalized.file_path in wanted
        ]
        if ids:
            turn.meta["undone_tools"] = sorted({*turn.meta.get("undone_tools", ()), *ids})
            marked += ids
    return marked
