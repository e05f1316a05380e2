"""What a `%%claude --schema ... -o VAR` cell made, shown under the turn (issue 27, point 7).

After ``-o months`` the cell shows one line naming the variable, its type and shape, and the
first rows::

    → months: DataFrame 4 × 3 (month string, revenue Float64, customers Int64)

followed by an HTML table of the first :data:`ROWS` rows (a list of records the same way; a
single record as a one-row table). This is what was assigned, not the CLI's `result` text
(the minified JSON of `result.structured_output` with our ``{"items": ...}`` wrapper).
:func:`summary_bundle` gives ``text/html``, ``text/markdown`` and ``text/plain`` so the saved
notebook and nbconvert show the same.

Importable without a kernel: pandas, no ipywidgets.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from kandev_nb.render import html as r
from kandev_nb.render import mdsafe as ms

__all__ = ["ROWS", "summary_bundle", "summary_line"]

ROWS = 5
"""How many first rows the table shows."""

_CELL_CHARS = 80
"""A table cell longer than this is cut (with "…"); the variable holds the whole value."""


def _type_name(value: Any) -> str:
    return type(value).__name__


def _record(value: Any) -> dict[str, Any] | None:
    """A pydantic model, dataclass instance or dict as ``{field: value}``; None for anything else."""
    dump = getattr(value, "model_dump", None)
    if callable(dump) and not isinstance(value, type):
        out = dump()
        return out if isinstance(out, dict) else None
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        return value
    return None


def _frame_of(value: Any) -> Any:
    """A DataFrame of the first rows of `value` (a DataFrame, a list of records, or one record), or None."""
    import pandas as pd

    if isinstance(value, pd.DataFrame):
        return value.head(ROWS)
    if isinstance(value, list | tuple):
        records = [_record(v) for v in value[:ROWS]]
        if records and all(rec is not None for rec in records):
            return pd.DataFrame.from_records(records)
        return None
    rec = _record(value)
    return pd.DataFrame.from_records([rec]) if rec else None


def summary_line(name: str, value: Any) -> str:
    """``"→ NAME: DataFrame 4 × 3 (month string, revenue Float64, customers Int64)"``.

    A list reads ``"→ NAME: list of 3 Person"``, a record ``"→ NAME: Person (2 fields)"``,
    anything else ``"→ NAME: int 42"`` (its repr, cut at 80 characters).
    """
    import pandas as pd

    if isinstance(value, pd.DataFrame):
        rows, cols = value.shape
        dtypes = ", ".join(f"{c} {t}" for c, t in value.dtypes.items())
        return f"→ {name}: DataFrame {rows} × {cols}" + (f" ({dtypes})" if dtypes else "")
    if isinstance(value, list | tuple):
        kinds = sorted({_type_name(v) for v in value})
        return f"→ {name}: {_type_name(value)} of {len(value)}" + (f" {' | '.join(kinds)}" if kinds else "")
    rec = _record(value)
    if rec is not None:
        return f"→ {name}: {_type_name(value)} ({len(rec)} field{'s' if len(rec) != 1 else ''})"
    text = repr(value)
    return f"→ {name}: {_type_name(value)} {text[:_CELL_CHARS]}{'…' if len(text) > _CELL_CHARS else ''}"


def _cell(value: Any) -> str:
    text = "" if value is None else str(value)
    text = " ".join(text.split())
    return text[:_CELL_CHARS] + ("…" if len(text) > _CELL_CHARS else "")


def _more(value: Any) -> str:
    total = len(value) if hasattr(value, "__len__") and not isinstance(value, dict) else 1
    if _record(value) is not None and not isinstance(value, list | tuple):
        total = 1
    extra = total - ROWS
    return f"… {extra} more row{'s' if extra != 1 else ''}" if extra > 0 else ""


def _html_table(frame: Any) -> str:
    cell = 'style="border:1px solid var(--jp-border-color2,#d0d7de);padding:1px 6px;text-align:left"'
    head = "".join(f"<th {cell}>{r.esc(str(c))}</th>" for c in frame.columns)
    body = "".join(
        "<tr>" + "".join(f"<td {cell}>{r.esc(_cell(v))}</td>" for v in row) + "</tr>"
        for row in frame.itertuples(index=False, name=None)
    )
    return (
        '<table class="kandev-output-rows" style="border-collapse:collapse;font-size:90%;margin:2px 0">'
        f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
    )


def _md_table(frame: Any) -> str:
    def esc(text: str) -> str:
        return ms.plain(text).replace("|", "\\|")

    lines = [
        "| " + " | ".join(esc(str(c)) for c in frame.columns) + " |",
        "|" + "---|" * len(frame.columns),
    ]
    lines += ["| " + " | ".join(esc(_cell(v)) for v in row) + " |" for row in frame.itertuples(index=False, name=None)]
    return "\n".join(lines)


def summary_bundle(name: str, value: Any) -> dict[str, str]:
    """The display of ``-o NAME``'s new value: ``{"text/html", "text/markdown", "text/plain"}``.

    The line of :func:`summary_line`, then the first :data:`ROWS` rows as a table when
    `value` is a DataFrame, a list of records (pydantic models, dataclasses, dicts) or one
    record; a note counts the rows not shown. Values are escaped (no markup from the model
    reaches the page) and cut at 80 characters per cell.
    """
    line = summary_line(name, value)
    frame = _frame_of(value)
    more = _more(value)
    style = "color:var(--jp-content-font-color1,#1f2328);font-size:90%"
    html = f'<div class="kandev-output-summary" style="{style}">'
    html += f'<div class="kandev-output-line"><b>{r.esc(line)}</b></div>'
    md = f"**{ms.plain(line)}**\n"
    plain = line
    if frame is not None and len(frame.columns):
        html += _html_table(frame)
        md += "\n" + _md_table(frame) + "\n"
        plain += "\n" + frame.to_string(index=False, max_colwidth=_CELL_CHARS)
    if more:
        html += f'<div style="color:var(--jp-content-font-color2,#57606a)">{r.esc(more)}</div>'
        md += f"\n*{more}*\n"
        plain += "\n" + more
    return {"text/html": html + "</div>", "text/markdown": md, "text/plain": plain}
