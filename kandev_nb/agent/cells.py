"""The `kernel` MCP server's notebook tools as a :class:`NotebookCell` payload (issue 13).

``mcp__kernel__read_notebook``, ``insert_cell``, ``edit_cell``, ``delete_cell`` and
``run_cell`` work on the cells of the notebook open in the user's tab. Their `tool_use`
input names a cell by ``index`` or ``cell_id`` and, for insert and edit, gives the whole new
``source``; what the cell held before is known only to the kernel tools. They register a
:data:`CellLookup` with :func:`set_cell_lookup` (the cells as the agent last read them), so
that the payload of an edit carries the diff, and that of a run or delete the source it acts
on, for the tool card; and a :data:`CellResolver` with :func:`set_cell_resolver` (the cell in
the user's tab now), which the approval card uses when it is built (:func:`card_cell`): the
person sees the cell as it is, and the allow binds to it (:func:`bound_payload`, issue 23).
"""

from __future__ import annotations

import asyncio
import difflib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from kandev_nb.policy.binding import BoundPayload, Shown

__all__ = [
    "CARD_RESOLVE_TIMEOUT_S",
    "NOTEBOOK_TOOLS",
    "CellLookup",
    "CellResolver",
    "CellSnapshot",
    "NotebookCell",
    "acts_on_cell",
    "bound_payload",
    "card_cell",
    "notebook_cell",
    "set_cell_lookup",
    "set_cell_resolver",
]

NOTEBOOK_TOOLS: dict[str, Literal["read", "insert", "edit", "delete", "run"]] = {
    "mcp__kernel__read_notebook": "read",
    "mcp__kernel__insert_cell": "insert",
    "mcp__kernel__edit_cell": "edit",
    "mcp__kernel__delete_cell": "delete",
    "mcp__kernel__run_cell": "run",
}
"""The tool names (as the model calls them) and the operation of each."""


@dataclass(frozen=True)
class CellSnapshot:
    """A cell as the agent last read or wrote it: nbformat `id`, 0-based `index`, `cell_type`, `source`."""

    cell_id: str
    index: int | None
    cell_type: str
    source: str


CellLookup = Callable[[str | None, int | None], CellSnapshot | None]
"""``lookup(cell_id, index) -> CellSnapshot | None``: the cell named by id (else by index)."""

_lookup: CellLookup | None = None

CellResolver = Callable[[str | None, int | None], Awaitable[CellSnapshot | None]]
"""``await resolve(cell_id, index) -> CellSnapshot | None``: the cell named by id (else by
index) in the user's tab now; None when there is no tab or no such cell."""

_resolver: CellResolver | None = None

CARD_RESOLVE_TIMEOUT_S = 3.0
"""How long an approval card waits for the tab's cell before it falls back to the cell as the
agent last read it."""


def set_cell_lookup(lookup: CellLookup | None) -> None:
    """Register where the cells as last read come from (the kernel tools do; None: nowhere)."""
    global _lookup
    _lookup = lookup


def set_cell_resolver(resolver: CellResolver | None) -> None:
    """Register where the cells as the tab holds them now come from (the kernel tools do)."""
    global _resolver
    _resolver = resolver


def acts_on_cell(name: str) -> bool:
    """Whether tool `name` acts on an existing cell (``edit_cell``, ``delete_cell``, ``run_cell``)."""
    return NOTEBOOK_TOOLS.get(name) in ("edit", "delete", "run")


async def card_cell(name: str, tool_input: dict[str, Any]) -> NotebookCell | None:
    """The approval card's payload of a notebook tool that acts on an existing cell (edit,
    delete, run), built from the cell in the user's tab now: an ``index`` is resolved here,
    once, and the card shows that cell (its id goes into the allow's binding).

    Returns:
        None when `name` is no such tool, nothing is registered, the call names no cell, or
        the tab does not answer within :data:`CARD_RESOLVE_TIMEOUT_S` (the card then shows the
        cell as the agent last read it). Never raises.
    """
    if not acts_on_cell(name) or _resolver is None:
        return None
    cell_id, index = _str(tool_input.get("cell_id")), _int(tool_input.get("index"))
    if cell_id is None and index is None:
        return None
    try:
        now = await asyncio.wait_for(_resolver(cell_id, index), CARD_RESOLVE_TIMEOUT_S)
    except Exception:  # noqa: BLE001 - no tab, a slow tab: the card falls back to the last read
        return None
    return notebook_cell(name, tool_input, known=now) if now is not None else None


def bound_payload(tool_use_id: str, tool_name: str, payload: Any, tool_input: dict[str, Any]) -> BoundPayload:
    """The binding of an allowed approval: what its card showed (`payload`, the
    PermissionRequest's `normalized`) and the input allowed (`tool_input`: the person's edited
    input, else the request's `input`).

    For a notebook tool the cell it acts on (id, position, source as shown) and the new source;
    for ``run_code`` the code; for any other tool only the input (sent back as `updatedInput`).
    """
    shown = Shown()
    if isinstance(payload, NotebookCell) and payload.tool == tool_name:
        new = _str(tool_input.get("source"))
        if payload.operation == "edit":
            shown = Shown(cell_id=payload.cell_id, index=payload.index, source=payload.old_source, new_source=new)
        elif payload.operation in ("run", "delete"):
            shown = Shown(cell_id=payload.cell_id, index=payload.index, source=payload.source)
        elif payload.operation == "insert":
            shown = Shown(new_source=new)
    elif tool_name == "mcp__kernel__run_code":
        shown = Shown(code=_str(tool_input.get("code")))
    return BoundPayload(tool_use_id, tool_name, shown, dict(tool_input))


class NotebookCell(BaseModel):
    """One call of a notebook tool on the open notebook.

    Attributes:
        tool: the full tool name (``mcp__kernel__edit_cell``...).
        operation: read, insert, edit, delete or run.
        cell_id, index: the cell the call names (input ``cell_id`` / ``index``; for insert
            the requested position, None: below the running `%%claude` cell).
        cell_type: "code" or "markdown" (input ``cell_type`` for insert, else as last read).
        source: insert / edit: the new source (input ``source``); run / delete: the cell's
            source: on the approval card as the tab held it when the card was built, else as
            the agent last read it (None when unknown).
        old_source: edit: the source it replaces, known the same way (None when unknown: no diff then).
        diff, added, removed: edit: the unified diff old -> new and its line counts.
        start, stop: read: the requested range of cell indices.
        output: the tool_result text.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: Literal["notebook_cell"] = "notebook_cell"
    tool: str
    operation: Literal["read", "insert", "edit", "delete", "run"]
    cell_id: str | None = None
    index: int | None = None
    cell_type: str = "code"
    source: str | None = None
    old_source: str | None = None
    diff: str = ""
    added: int = 0
    removed: int = 0
    start: int | None = None
    stop: int | None = None
    output: str | None = None

    @property
    def where(self) -> str:
        """``cell 3`` / ``cell ab12cd`` / ``below the running cell`` (for titles)."""
        if self.operation == "read":
            if self.start is None and self.stop is None:
                return "all cells"
            return f"cells {self.start or 0}..{'' if self.stop is None else self.stop}"
        short = self.cell_id if self.cell_id is None or len(self.cell_id) <= 12 else self.cell_id[:8] + "…"
        if self.index is not None:
            return f"cell {self.index}" + (f" ({short})" if short else "")
        if short:
            return f"cell {short}"
        return "below the running cell" if self.operation == "insert" else "a cell"


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _diff(old: str, new: str, label: str) -> tuple[str, int, int]:
    # Cell sources end without a newline: compare whole lines (no "\ No newline at end of file").
    old, new = (text if text.endswith("\n") or not text else text + "\n" for text in (old, new))
    lines = list(
        difflib.unified_diff(
            old.splitlines(keepends=True), new.splitlines(keepends=True), fromfile=f"a/{label}", tofile=f"b/{label}"
        )
    )
    added = sum(1 for ln in lines if ln.startswith("+") and not ln.startswith("+++"))
    removed = sum(1 for ln in lines if ln.startswith("-") and not ln.startswith("---"))
    return "".join(ln if ln.endswith("\n") else ln + "\n\\ No newline at end of file\n" for ln in lines), added, removed


def notebook_cell(name: str, tool_input: dict[str, Any], *, known: CellSnapshot | None = None) -> NotebookCell:
    """The payload of a notebook tool's `tool_use` (`name` must be a key of :data:`NOTEBOOK_TOOLS`).

    Args:
        known: the cell the call acts on (the tab's, from :func:`card_cell`); None: the
            registered lookup's cell as the agent last read it.

    Never raises: odd input gives a payload with the fields left None.
    """
    operation = NOTEBOOK_TOOLS[name]
    cell_id, index = _str(tool_input.get("cell_id")), _int(tool_input.get("index"))
    if operation == "read":
        return NotebookCell(
            tool=name, operation=operation, start=_int(tool_input.get("start")), stop=_int(tool_input.get("stop"))
        )
    if operation == "insert":
        return NotebookCell(
            tool=name,
            operation=operation,
            index=index,
            source=_str(tool_input.get("source")) or "",
            cell_type=_str(tool_input.get("cell_type")) or "code",
        )
    if known is None and _lookup is not None and (cell_id is not None or index is not None):
        try:
            known = _lookup(cell_id, index)
        except Exception:  # noqa: BLE001 - a card without the old source is still a card
            known = None
    fields: dict[str, Any] = {"tool": name, "operation": operation, "cell_id": cell_id, "index": index}
    if known is not None:
        fields.update(cell_id=known.cell_id, index=known.index if index is None else index, cell_type=known.cell_type)
    if operation == "edit":
        new = _str(tool_input.get("source")) or ""
        fields["source"] = new
        if known is not None:
            diff, added, removed = _diff(known.source, new, f"cell {fields['index']}")
            fields.update(old_source=known.source, diff=diff, added=added, removed=removed)
    elif known is not None:
        fields["source"] = known.source
    return NotebookCell(**fields)
