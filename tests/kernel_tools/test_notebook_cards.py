"""The notebook tools' payloads and card bodies (no kernel): source highlighted, a cell's diff."""

from __future__ import annotations

import html
import re
from collections.abc import Iterator

import pytest

from kandev_nb.agent import tools as t
from kandev_nb.agent.cells import CellSnapshot, NotebookCell, set_cell_lookup
from kandev_nb.render import html as r
from kandev_nb.render.cells import notebook_cell_markdown


@pytest.fixture
def read_cells() -> Iterator[None]:
    """The cells as the agent last read them: cell 1 is ``data``."""
    known = {"data": CellSnapshot("data", 1, "code", "x = 41\nprint('saved output')")}
    set_cell_lookup(lambda cell_id, index: known.get(cell_id or "") or (known["data"] if index == 1 else None))
    yield
    set_cell_lookup(None)


def test_an_edit_card_shows_the_diff_of_the_cell_as_last_read(read_cells: None) -> None:
    payload = t.normalize_tool_call("mcp__kernel__edit_cell", {"index": 1, "source": "x = 100\nprint('saved output')"})
    assert isinstance(payload, NotebookCell) and payload.cell_id == "data"
    assert (payload.added, payload.removed) == (1, 1) and "No newline" not in payload.diff
    body = r.card_body_html(payload)
    shown = html.unescape(re.sub(r"<[^>]+>", "", body))  # the text a person reads (word marks are spans)
    assert 'class="kandev-diff"' in body and "x = 100" in shown and "x = 41" in shown
    assert '"source"' not in body  # no JSON input
    assert "```diff\n" in notebook_cell_markdown(payload) and "-x = 41" in notebook_cell_markdown(payload)
    assert t.tool_title("mcp__kernel__edit_cell", payload) == "cell 1 (data)"  # the label names the tool


def test_insert_and_run_cards_show_the_source_highlighted(read_cells: None) -> None:
    insert = t.normalize_tool_call("mcp__kernel__insert_cell", {"source": "import math\nmath.pi"})
    assert 'class="kandev-code"' in r.card_body_html(insert) and "<span" in r.card_body_html(insert)
    run = t.normalize_tool_call("mcp__kernel__run_cell", {"cell_id": "data"})
    assert run.source == "x = 41\nprint('saved output')" and "saved output" in r.card_body_html(run)
    done = t.normalize_tool_result(run, [{"type": "text", "text": "ran cell 1 (id data) as [3]"}], False)
    assert "ran cell 1 (id data) as [3]" in r.card_body_html(done)


def test_a_cell_never_read_says_so_instead_of_guessing() -> None:
    run = t.normalize_tool_call("mcp__kernel__run_cell", {"index": 7})
    assert run.source is None and "source not read yet" in r.card_body_html(run)
    edit = t.normalize_tool_call("mcp__kernel__edit_cell", {"cell_id": "zz", "source": "y = 2"})
    assert edit.diff == "" and "kandev-code" in r.card_body_html(edit) and "cell zz" in r.card_body_html(edit)
