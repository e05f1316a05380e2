"""kandev-nb's file guard: a function that refuses file tools on some paths (the notebook open
in a tab, see :func:`kandev_nb.notebook.bridge.open_notebook_guard`).

It is asked by kandev-nb's PreToolUse hook (:mod:`kandev_nb.policy.enforce`), which the CLI
calls before every tool call in every permission mode, for the file tools
(:data:`kandev_nb.policy.enforce.GUARDED_TOOLS`): a reason refuses the call with it, and the
model sees it (CLI 2.1.332: the tool result reads ``PreToolUse:<tool> hook error: <reason>``).
The CLI checks a tool's own preconditions first (Write/NotebookEdit of an existing file it
has not read fails before). The user's Python hooks are :mod:`kandev_nb.agent.hooks`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["FileGuard"]

FileGuard = Callable[[str, dict[str, Any]], "str | None"]
"""``(tool_name, tool_input) -> reason | None``: a reason refuses the call with it."""
