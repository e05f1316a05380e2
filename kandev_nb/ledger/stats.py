"""`Stats`: the ledger's summary as a display object, what ``%claude_stats`` shows.

>>> Stats(kandev_nb.ledger.summary())     # doctest: +SKIP

In a notebook it renders as HTML tables (``_repr_html_``); in a terminal, ``nbconvert
--to script`` or a log, as aligned plain text (``__repr__``). The numbers are those of
:meth:`kandev_nb.ledger.RunLedger.summary`: totals per scope (today, all, this notebook,
this session), spend by model and the most used tools. Every turn's tokens come from the
same `result.modelUsage` deltas as its cost, so the "all" row and the per-model table add
up for turns recorded by this version.
"""

from __future__ import annotations

import datetime as dt
import html
import math
from collections.abc import Iterator, Mapping
from typing import Any

__all__ = ["Stats"]

_SCOPES = (
    ("today", "today"),
    ("month", "this month"),
    ("notebook", "this notebook"),
    ("session", "this session"),
    ("all", "all time"),
)
_FRAMES = (
    ("by_user", "Per user", "user"),
    ("by_notebook", "Per notebook", "notebook"),
    ("by_model", "By model", "model"),
    ("top_tools", "Top tools", "tool"),
)
_TOTAL_COLUMNS = (
    ("turns", "turns"),
    ("cost_usd", "cost"),
    ("input_tokens", "tokens in"),
    ("output_tokens", "tokens out"),
    ("tool_calls", "tool calls"),
    ("errors", "errors"),
    ("denials", "denials"),
    ("interrupted", "stopped"),
    ("first", "first"),
    ("last", "last"),
)

_LABELS = (
    dict(_TOTAL_COLUMNS)
    | {"mean_duration_ms": "mean time", "calls": "calls", "denied": "denied"}
    | {
        f"{key}_{period}": f"{label} {period}"
        for period in ("today", "month")
        for key, label in (
            ("turns", "turns"),
            ("cost", "cost"),
            ("tokens_in", "tokens in"),
            ("tokens_out", "tokens out"),
        )
    }
)


def _when(value: Any) -> str:
    """A UTC datetime as local date and minute (``2026-12-01 09:14``); '' for None."""
    if not isinstance(value, dt.datetime):
        return "" if value is None else str(value)
    return value.astimezone().strftime("%Y-%m-%d %H:%M")


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value)) or str(value) in ("<NA>", "NaT")


def _cell(key: str, value: Any) -> str:
    """One table cell: dates as dates, USD with 4 decimals, ms as seconds, counts with commas."""
    if _missing(value):
        return ""
    if key in ("first", "last"):
        return _when(value)
    if key == "cost_usd" or key.startswith("cost_"):
        return f"${float(value):.4f}"
    if key == "mean_duration_ms":
        return f"{float(value) / 1000:.1f} s"
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if hasattr(value, "item"):  # numpy / pandas scalars
        value = value.item()
    return f"{value:,}" if isinstance(value, int) else str(value)


class Stats(Mapping[str, Any]):
    """A rendered ``%claude_stats`` summary; also a read-only mapping over the summary dict.

    Args:
        summary: a :meth:`RunLedger.summary <kandev_nb.ledger.RunLedger.summary>` dict:
            totals dicts under "today", "all" and optionally "notebook" and "session";
            DataFrames under "by_model" and "top_tools"; or a :meth:`RunLedger.team
            <kandev_nb.ledger.RunLedger.team>` dict (``%claude_stats --team``): totals under
            "today" and "month", DataFrames under "by_user" and "by_notebook".

    Attributes:
        summary: that dict, unchanged (for code that reads the numbers).
        rows: the totals table as ``[(scope label, {column: text})]``.
    """

    def __init__(self, summary: Mapping[str, Any]) -> None:
        self.summary = dict(summary)
        self.rows = [
            (label, {k: _cell(k, self.summary[key].get(k)) for k, _ in _TOTAL_COLUMNS})
            for key, label in _SCOPES
            if key in self.summary
        ]

    def __getitem__(self, key: str) -> Any:
        """``stats["all"]["cost_usd"]``: the summary's values, as before."""
        return self.summary[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.summary)

    def __len__(self) -> int:
        return len(self.summary)

    def _tables(self) -> list[tuple[str, list[str], list[list[str]]]]:
        """(title, header, rows) of each table, as text cells."""
        tables = [
            (
                "Totals",
                ["", *(label for _, label in _TOTAL_COLUMNS)],
                [[scope, *(cells[k] for k, _ in _TOTAL_COLUMNS)] for scope, cells in self.rows],
            )
        ]
        for key, title, first in _FRAMES:
            frame = self.summary.get(key)
            if frame is None or len(frame) == 0:
                continue
            columns = [str(c) for c in frame.columns]
            rows = [
                ["" if _missing(index) else str(index), *(_cell(c, v) for c, v in zip(columns, values, strict=True))]
                for index, values in zip(frame.index, frame.itertuples(index=False), strict=True)
            ]
            header = [first, *(_LABELS.get(c, c.replace("_", " ")) for c in columns)]
            tables.append((title, header, rows))
        return tables

    def _repr_html_(self) -> str:
        """HTML tables, numbers right-aligned, in JupyterLab's theme colours."""
        parts = ['<div class="kandev-stats mathjax_ignore tex2jax_ignore">']  # "$0.01 ... $0.02" is not LaTeX
        for title, header, rows in self._tables():
            head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
            body = "".join(
                "<tr>"
                + "".join(
                    f'<td style="text-align:{"left" if i == 0 else "right"}">{html.escape(c)}</td>'
                    for i, c in enumerate(row)
                )
                + "</tr>"
                for row in rows
            )
            parts.append(
                f'<h4 style="margin:0.6em 0 0.2em">{html.escape(title)}</h4>'
                f'<table class="kandev-stats-table"><thead><tr>{head}</tr></thead>'
                f"<tbody>{body}</tbody></table>"
            )
        if not self.rows or not any(cells["turns"] not in ("", "0") for _, cells in self.rows):
            parts.append("<p>No turns in the ledger yet.</p>")
        parts.append("</div>")
        return "".join(parts)

    def __repr__(self) -> str:
        """The same tables as aligned plain text."""
        out = []
        for title, header, rows in self._tables():
            widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
            line = "  ".join(h.ljust(w) if i == 0 else h.rjust(w) for i, (h, w) in enumerate(zip(header, widths)))
            out += [title, line, "-" * len(line)]
            out += [
                "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))) for r in rows
            ]
            out.append("")
        return "\n".join(out).rstrip() + "\n"
