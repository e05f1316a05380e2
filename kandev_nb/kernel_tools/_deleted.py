"""The cells the ``delete_cell`` tool deleted in this kernel, so a card can put one back.

Each record is what the tab answered for the ``delete`` request (``src/widgets/bridge.ts``): the cell's
``source``, ``cell_type`` and ``index``, plus ``after_id``, the id of the cell that was
above it (the restored cell goes back under that one, else at ``index``).
"""

from __future__ import annotations

from typing import Any

__all__ = ["claim", "deleted", "remember"]

_DELETED: dict[str, dict[str, Any]] = {}
_CLAIMED: set[str] = set()


def remember(cell_id: str, source: str, cell_type: str, index: Any, after_id: str | None) -> None:
    """Keep the deleted cell `cell_id` (its `source`, `cell_type`, `index` and the id above it)."""
    _DELETED[cell_id] = {
        "source": source,
        "cell_type": cell_type,
        "index": index if isinstance(index, int) else None,
        "after_id": after_id,
    }


def deleted(cell_id: str) -> dict[str, Any] | None:
    """The record of the deleted cell `cell_id`, or None when this kernel did not delete it."""
    return _DELETED.get(cell_id)


def claim() -> list[str]:
    """The ids of the cells deleted since the last call, oldest first (the turn that just
    ended deleted them: its buttons offer to restore them)."""
    fresh = [cell_id for cell_id in _DELETED if cell_id not in _CLAIMED]
    _CLAIMED.update(fresh)
    return fresh
