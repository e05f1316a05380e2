"""A Python stand-in of the notebook tab for the kernel's notebook tools (a ``NotebookView``).

It answers the bridge's requests (``read``, ``cells``, ``insert``, ``edit``, ``delete``,
``set_outputs``) over a list of cells the way ``src/widgets/bridge.ts`` does over the
tab's YNotebook, including the tab-side ``expected_source`` check of ``edit`` and ``delete``.
A test changes :attr:`StandInTab.cells` directly to play the person typing in the tab.
"""

from __future__ import annotations

import asyncio
from typing import Any


class StandInTab:
    """The open notebook, as the kernel tools see it through the bridge.

    Args:
        cells: ``(id, cell_type, source)`` of each cell, in order.

    Attributes:
        cells: nbformat-like dicts (``id``, ``cell_type``, ``source``, ``outputs``,
            ``execution_count``), in order.
        ops: every request's ``(op, args)``, in arrival order.
        changed: set each time a request changed the notebook (insert, edit, delete).
    """

    def __init__(self, cells: list[tuple[str, str, str]]) -> None:
        self.cells: list[dict[str, Any]] = [
            {"id": i, "cell_type": t, "source": s, "outputs": [], "execution_count": None} for i, t, s in cells
        ]
        self.ops: list[tuple[str, dict[str, Any]]] = []
        self.changed = asyncio.Event()
        self._made = 0

    def source(self, cell_id: str) -> str:
        """The source of the cell with this id now."""
        return str(next(c for c in self.cells if c["id"] == cell_id)["source"])

    def type_in(self, cell_id: str, source: str) -> None:
        """The person replaces the cell's source in the tab."""
        next(c for c in self.cells if c["id"] == cell_id)["source"] = source

    def insert_by_person(self, index: int, cell_id: str, source: str) -> None:
        """The person inserts a code cell at `index`."""
        self.cells.insert(
            index, {"id": cell_id, "cell_type": "code", "source": source, "outputs": [], "execution_count": None}
        )

    def _find(self, cell_id: Any) -> int:
        for i, cell in enumerate(self.cells):
            if cell["id"] == cell_id:
                return i
        raise KeyError(f"no cell with id {cell_id}")

    async def request(self, op: str, args: dict[str, Any], *, timeout_s: float) -> dict[str, Any]:
        """One bridge request; returns its ``result`` like ``bridge.ts``."""
        self.ops.append((op, dict(args)))
        await asyncio.sleep(0)  # an answer always comes back later, as over the comm
        if op == "read":
            return {"cells": [{**c, "index": i} for i, c in enumerate(self.cells)]}
        if op == "cells":
            return {
                "cells": [
                    {
                        "index": i,
                        "id": c["id"],
                        "cell_type": c["cell_type"],
                        "source": c["source"],
                        "has_outputs": bool(c["outputs"]),
                    }
                    for i, c in enumerate(self.cells)
                ]
            }
        if op == "insert":
            index = args.get("index")
            if isinstance(args.get("after_ids"), list):
                index = len(self.cells)
                for after in args["after_ids"]:
                    if any(c["id"] == after for c in self.cells):
                        index = self._find(after) + 1
                        break
            index = len(self.cells) if index is None or index > len(self.cells) else max(0, index)
            self._made += 1
            made = f"new{self._made}"
            self.cells.insert(
                index,
                {"id": made, "cell_type": args["cell_type"], "source": args["source"], "outputs": []}
                | ({"execution_count": None} if args["cell_type"] == "code" else {}),
            )
            self.changed.set()
            return {"id": made, "index": index}
        index = self._find(args.get("id"))
        cell = self.cells[index]
        expected = args.get("expected_source")
        if op in ("edit", "delete") and expected is not None and cell["source"] != expected:
            return {"stale": True, "index": index, "source": cell["source"]}
        if op == "edit":
            old, cell["source"] = cell["source"], args["source"]
            if cell["cell_type"] == "code":
                cell["outputs"], cell["execution_count"] = [], None
            self.changed.set()
            return {"index": index, "id": cell["id"], "old_source": old}
        if op == "delete":
            del self.cells[index]
            self.changed.set()
            return {"index": index, "id": cell["id"], "source": cell["source"], "cell_type": cell["cell_type"]}
        if op == "set_outputs":
            cell["outputs"], cell["execution_count"] = args.get("outputs") or [], args.get("execution_count")
            return {"index": index, "id": cell["id"]}
        raise ValueError(f"unknown request {op}")
