"""`notebooks/notebook_tools.ipynb` runs top to bottom offline, headless (issue 13).

nbclient is a frontend without a notebook tab, so every notebook tool answers at once that
there is no open notebook view, and each turn still ends with the model's answer.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.notebooks.test_notebooks import execute

pytestmark = pytest.mark.timeout(300)


def test_notebook_tools_notebook_shows_the_no_view_answers_headless(tmp_path: Path) -> None:
    executed = execute("notebook_tools.ipynb", tmp_path)

    answers = executed.text("answers").splitlines()
    assert answers[-1] == "no open notebook view: True"
    assert len(answers) == 3  # read_notebook, then insert_cell; run_cell never came (nothing to run)
    assert "There is no open notebook view" in executed.text("read")
    assert "cannot add cells here" in executed.text("insert")
    assert [c.id for c in executed.nb.cells].count("insert") == 1  # the file got no new cell
