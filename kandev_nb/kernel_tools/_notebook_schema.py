"""The MCP definitions of the notebook tools (names without the ``mcp__kernel__`` prefix).

Descriptions and input schemas as the model sees them; the behaviour is in
:mod:`kandev_nb.kernel_tools._notebook`.
"""

from __future__ import annotations

from typing import Any

import mcp.types as mt

__all__ = ["tool_list"]


def _cell_schema(extra: dict[str, Any] | None = None, required: list[str] | None = None) -> dict[str, Any]:
    props: dict[str, Any] = {
        "cell_id": {"type": "string", "description": "the cell's id, as read_notebook shows it (preferred)"},
        "index": {"type": "integer", "minimum": 0, "description": "the cell's 0-based position now"},
        **(extra or {}),
    }
    schema: dict[str, Any] = {"type": "object", "properties": props}
    if required:
        schema["required"] = required
    return schema


def tool_list() -> list[mt.Tool]:
    """The five tools' MCP definitions (names without the ``mcp__kernel__`` prefix)."""
    changes = mt.ToolAnnotations(read_only_hint=False, destructive_hint=True, open_world_hint=False)
    source = {"type": "string", "description": "the cell's whole source"}
    return [
        mt.Tool(
            name="read_notebook",
            description="Read the notebook open in the user's tab: every cell (or cells start..stop-1) with "
            "its index, id, type, source, execution count and outputs as the user sees them "
            "(stream text, results, errors, images). The running %%claude cell is marked. "
            "Read before you edit, delete or run a cell.",
            input_schema={
                "type": "object",
                "properties": {
                    "start": {"type": "integer", "minimum": 0, "description": "first cell index (default 0)"},
                    "stop": {"type": "integer", "minimum": 0, "description": "end index, exclusive (default: all)"},
                },
            },
            annotations=mt.ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=False),
        ),
        mt.Tool(
            name="insert_cell",
            description="Insert a new cell in the user's open notebook, live in their tab. By default it goes "
            "right below the running %%claude cell (below the cells you inserted in this turn, so "
            "several inserts read in order); give index to put it elsewhere. Returns its id and "
            "index. The user approves each insert.",
            input_schema={
                "type": "object",
                "properties": {
                    "source": source,
                    "cell_type": {"type": "string", "enum": ["code", "markdown"], "default": "code"},
                    "index": {"type": "integer", "minimum": 0, "description": "position of the new cell (optional)"},
                },
                "required": ["source"],
            },
            annotations=changes,
        ),
        mt.Tool(
            name="edit_cell",
            description="Replace the whole source of a cell of the open notebook (its old outputs are cleared). "
            "Refused when the cell changed since you last read it: read_notebook again then. "
            "The user sees a diff and approves.",
            input_schema=_cell_schema({"source": source}, ["source"]),
            annotations=changes,
        ),
        mt.Tool(
            name="delete_cell",
            description="Delete a cell of the open notebook. The user approves.",
            input_schema=_cell_schema(),
            annotations=changes,
        ),
        mt.Tool(
            name="run_cell",
            description="Run a code cell of the open notebook in the user's kernel (same namespace as their "
            "cells), as if the user ran it: its output area shows stream text, results, errors and "
            "figures with an execution count, and the same comes back to you (figures as images). "
            "The user approves each run.",
            input_schema=_cell_schema(),
            annotations=changes,
        ),
    ]
