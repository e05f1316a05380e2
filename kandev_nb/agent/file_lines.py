"""An Edit's proposal at the file's own line numbers (the approval card's diff).

An Edit's `old_string` -> `new_string` diff counts lines from 1 of the snippet; before the
call runs, the file still holds `old_string`, so its line in the file is known.
"""

from __future__ import annotations

import re
from pathlib import Path

from kandev_nb.agent.tools import ModifyFile, NormalizedPayload

__all__ = ["shift_hunks", "with_file_lines"]

_HUNK = re.compile(r"^@@ -(\d+)(,\d+)? \+(\d+)(,\d+)? @@", re.MULTILINE)


def shift_hunks(diff: str, by: int) -> str:
    """`diff` with every hunk header's line numbers moved down by `by` lines."""
    return _HUNK.sub(lambda m: f"@@ -{int(m[1]) + by}{m[2] or ''} +{int(m[3]) + by}{m[4] or ''} @@", diff)


def with_file_lines(payload: NormalizedPayload) -> NormalizedPayload:
    """An Edit's proposal (before it runs) with its hunks at the file's own line numbers: the
    file is read now and each `old_string` found in it; unchanged when the file cannot be read
    or a snippet is not in it."""
    if not isinstance(payload, ModifyFile) or not payload.file_path.startswith("/"):
        return payload
    try:
        text = Path(payload.file_path).read_text(errors="replace")
    except (OSError, ValueError):
        return payload
    shifted = tuple(
        m.model_copy(update={"diff": shift_hunks(m.diff, text.count("\n", 0, at))})
        if m.type == "replace" and m.old_content and (at := text.find(m.old_content)) > 0
        else m
        for m in payload.mutations
    )
    return payload.model_copy(update={"mutations": shifted})
