"""What the user did lately: the last cells run in this kernel and the last error.

Read from the IPython shell: ``history_manager.input_hist_raw`` (the cells as typed,
index = execution count), ``user_ns["Out"]`` (their results) and ``sys.last_value`` (the
exception IPython showed last, with its traceback).
"""

from __future__ import annotations

import sys
import traceback
from typing import Any

from kandev_nb.kernel_tools._bounded import bounded_repr
from kandev_nb.kernel_tools._namespace import is_secret_name
from kandev_nb.redact import redact_assignments

__all__ = ["format_history", "redact_assignments"]


def _short(value: Any, limit: int = 300) -> str:
    """A cell result's repr in `limit` characters, 10 items per container read without a copy
    (a 3-million-entry dict in ``Out`` is not ``repr``-ed whole), secret-looking keys redacted."""
    return bounded_repr(value, chars=limit, items=10, is_secret=is_secret_name)


def _last_error(shell: Any) -> str | None:
    exc = getattr(sys, "last_value", None)
    if exc is None:
        return None
    cells: dict[str, int] = dict(getattr(getattr(shell, "compile", None), "_filename_map", {}) or {})
    tb = exc.__traceback__
    # Start at the first frame of a notebook cell, dropping IPython's own frames.
    first = tb
    while first is not None and first.tb_frame.f_code.co_filename not in cells:
        first = first.tb_next
    text = "".join(traceback.format_exception(type(exc), exc, first or tb)).rstrip()
    for filename, count in cells.items():
        text = text.replace(f'File "{filename}"', f"Cell In[{count}]")
    return text


def format_history(shell: Any, cells: int = 8) -> str:
    """The last `cells` cells the user ran (source, and result if any) and the last error.

    Args:
        shell: the IPython ``InteractiveShell`` of the kernel.
        cells: how many of the most recent cells to show (the running one excluded).

    Returns:
        Plain text: ``In [n]:`` blocks, with ``Out [n]:`` reprs (300 chars), then
        ``Last error:`` and its traceback, or "(no error so far)". Assignments of
        secret-looking names are redacted (:func:`kandev_nb.redact.redact_assignments`); the
        kernel tools then pass the whole answer through :func:`kandev_nb.redact.redact_text`.
    """
    raw: list[str] = list(getattr(getattr(shell, "history_manager", None), "input_hist_raw", []) or [])
    outputs: dict[int, Any] = dict(getattr(shell, "user_ns", {}).get("Out", {}) or {})
    running = getattr(shell, "execution_count", len(raw))
    # IPython stores a cell before running it: the running one is number `execution_count`.
    numbered = [(n, src) for n, src in enumerate(raw) if 0 < n < running and src.strip()]
    parts = []
    for n, source in numbered[-cells:]:
        body = source.rstrip()
        if body.startswith("%%claude"):
            first, _, _ = body.partition("\n")
            body = f"{first}\n[a prompt to you, omitted]"
        parts.append(f"In [{n}]:\n{redact_assignments(body)}")
        if n in outputs:
            parts.append(f"Out [{n}]: {_short(outputs[n])}")
    error = _last_error(shell)
    parts.append(f"Last error:\n{error}" if error else "Last error: (no error so far)")
    return "\n\n".join(parts) if parts else "No cells have been run yet."
