"""Tool-card bodies of the notebook tools (:class:`~kandev_nb.agent.cells.NotebookCell`).

Insert and run show the cell's source highlighted, edit a diff of the cell (the source as the
agent last read it -> the new one), delete the source it removes; each then the tool_result
text. Used by the live cards, the approval card and the saved rendering alike.
"""

from __future__ import annotations

from kandev_nb.agent.cells import NotebookCell
from kandev_nb.render import html as r

__all__ = ["notebook_cell_html", "notebook_cell_markdown"]

_VERB = {"read": "read", "insert": "insert", "edit": "edit", "delete": "delete", "run": "run"}


def _language(p: NotebookCell) -> str:
    return "markdown" if p.cell_type == "markdown" else "python"


def notebook_cell_html(p: NotebookCell, output: str = "", *, status: str = "complete", full: bool = False,
                       where: str = "") -> str:
    """HTML for one notebook tool call: what it does to which cell, then its answer.

    Args:
        p: the call's payload; output: the tool_result text when `p.output` is not set yet;
        status: "running", "complete" or "error"; full / where: as for ``card_body_html``.
    """
    head = f'<div class="kandev-cell-target">{r.esc(_VERB[p.operation])} <b>{r.esc(p.where)}</b>'
    if p.operation == "edit" and p.diff:
        head += f' <span style="color:var(--jp-success-color1,#1a7f37)">+{p.added}</span> <span style="color:var(--jp-error-color1,#cf222e)">-{p.removed}</span>'
    parts = [head + "</div>"]
    if p.operation == "edit":
        parts.append(r.diff_html(p.diff) if p.diff else r.code_html(p.source or "", _language(p)))
    elif p.operation in ("insert", "run", "delete") and p.source is not None:
        parts.append(r.code_html(p.source, _language(p)))
    elif p.operation in ("run", "delete"):
        parts.append('<div style="color:#888">(source not read yet)</div>')
    answer = p.output if p.output is not None else output
    if answer:
        label = "error" if status == "error" else "answer"
        parts.append(r._block(label, answer, full=full, where=where, cls="kandev-output",
                              style=";color:var(--jp-error-color1,#cf222e)" if status == "error" else ""))
    return "".join(parts)


def _fence(text: str, lang: str = "") -> str:
    ticks = "````" if "```" in text else "```"
    return f"{ticks}{lang}\n{text.rstrip(chr(10))}\n{ticks}\n"


def notebook_cell_markdown(p: NotebookCell, output: str = "") -> str:
    """Markdown for one notebook tool call (the saved rendering's text/markdown)."""
    parts = [f"{_VERB[p.operation]} **{p.where}**\n"]
    if p.operation == "edit" and p.diff:
        parts.append(_fence(p.diff, "diff"))
    elif p.source is not None and p.operation != "read":
        parts.append(_fence(p.source, _language(p)))
    answer = p.output if p.output is not None else output
    if answer:
        parts.append(_fence(r.cut(r.strip_ansi(answer)).shown))
    return "\n".join(parts)
