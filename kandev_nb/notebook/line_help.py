"""``%claude_undo?``, ``%claude_mcp?``, ``%claude_permissions?``: IPython's help for the awaiting line magics.

Those lines are rewritten into a top-level ``await`` by
:func:`kandev_nb.notebook.commands.transform_lines`, so IPython never knew them as magics and
``%claude_undo?`` answered "unknown arguments ?". The transformer now leaves a line ending in
``?`` / ``??`` alone, and :func:`register` registers a line magic of each name whose
docstring is the command's help; it only runs when the transformer did not (then it says so).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["register"]


def _stub(name: str, doc: str | None) -> Callable[[str], None]:
    def magic(line: str) -> None:
        print(f"%{name} lines are run by kandev_nb's input transformer; reload with %reload_ext kandev_nb")

    magic.__doc__ = doc
    magic.__name__ = name
    return magic


def register(ip: Any) -> None:
    """Register ``claude_undo``, ``claude_mcp`` and ``claude_permissions`` as line magics of `ip`
    (an ``InteractiveShell``) for their ``?`` help."""
    from kandev_nb.notebook import commands, permissions_panel

    for name, fn in (
        ("claude_undo", commands.undo),
        ("claude_mcp", commands.mcp),
        ("claude_permissions", permissions_panel.permissions),
    ):
        ip.register_magic_function(_stub(name, fn.__doc__), "line", name)
