"""Tool-card bodies of the notebook tools (:class:`~kandev_nb.agent.cells.NotebookCell`).

Insert and run show the cell's source highlighted, edit a diff of the cell (the source as the
agent last read it -> the new one), delete the source it removes; each then the tool_result
text. The parts come from :func:`kandev_nb.render.card_view.card_view`, like every card's.
"""

from __future__ import annotations

from kandev_nb.agent.cells import NotebookCell
from kandev_nb.render import card_html, card_md
from kandev_nb.render.card_view import card_view

__all__ = ["notebook_cell_html", "notebook_cell_markdown"]


def notebook_cell_html(
    p: NotebookCell, output: str = "", *, status: str = "complete", full: bool = False, where: str = ""
) -> str:
    """HTML for one notebook tool call: what it does to which cell, then its answer.

    Args:
        p: the call's payload; output: the tool_result text when `p.output` is not set yet;
        status: "running", "complete" or "error"; full / where: as for
        :func:`kandev_nb.render.card_html.parts_html`.
    """
    return card_html.parts_html(card_view("", "", p, output, status=status).parts, where=where, full=full)


def notebook_cell_markdown(p: NotebookCell, output: str = "") -> str:
    """Markdown for one notebook tool call (the saved rendering's text/markdown)."""
    return card_md.parts_markdown(card_view("", "", p, output, status="complete").parts)
