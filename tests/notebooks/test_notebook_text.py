"""What the notebooks and the README say about permission modes and unanswered cards (issue
34, points 4 and 5): one rule for an unanswered card, stated once in the README and matched by
every notebook's comments; what acceptEdits runs unasked, and the one-line policy that makes
the destructive commands ask. Text only: no kernel."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

REPO = Path(__file__).resolve().parents[2]
README = (REPO / "README.md").read_text()
NOTEBOOKS = sorted((REPO / "notebooks").glob("*.ipynb"))
POLICY = re.search(r"`(kandev_nb\.configure\(approve=kandev_nb\.Rules\(ask=\[[^`]*\]\)\))`", README)


def _cells(path: Path) -> list[nbformat.NotebookNode]:
    return list(nbformat.read(path, as_version=4).cells)


def _text(path: Path) -> str:
    return "\n".join(c.source for c in _cells(path))


def test_the_readme_states_the_rule_for_an_unanswered_card_once() -> None:
    assert README.count("### An unanswered card") == 1
    section = README.split("### An unanswered card", 1)[1].split("\n## ", 1)[0].split("\n### ", 1)[0]
    for said in ("denied after that long, tab or not", "**waits** for you", "is **denied** after the notebook's"):
        assert said in section, said
    assert "row of a fleet" in section  # a fleet's cards follow the same rule
    # nowhere else does the README say when a card is denied: it points to the rule
    rest = README.replace(section, "")
    assert (
        "instead of denying it" not in rest
        and "deny an unanswered approval after this long (default 300 s)" not in rest
    )


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_every_notebook_says_the_readme_rule_where_it_sets_a_timeout(path: Path) -> None:
    for cell in _cells(path):
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None  # saved without outputs
        found = re.search(r"approval_timeout=(\d+)\)?,?\n", cell.source) if cell.cell_type == "code" else None
        if found is None or "configure(" not in cell.source:
            continue
        seconds = int(found.group(1))
        comment = " ".join(line.strip(" #") for line in cell.source.splitlines() if line.strip().startswith("#"))
        assert 'README, "An unanswered card"' in comment, cell.source
        assert "in JupyterLab it waits for your click" in comment, comment
        assert f"reminds you after {seconds // 2} s" in comment, comment  # half of it, as the notifier does
        assert re.search(rf"denied after (approval_timeout=)?{seconds} s", comment), comment


def test_no_notebook_says_a_card_is_denied_in_jupyterlab_by_the_notebooks_timeout() -> None:
    quickstart, approvals = (_text(REPO / "notebooks" / n) for n in ("quickstart.ipynb", "approvals.ipynb"))
    assert "without one it is denied after the\n`approval_timeout` set above" not in quickstart
    assert "In JupyterLab the card waits for your answer" in quickstart
    assert "let the 10 s timeout (the setup cell's) deny it" not in approvals
    assert "change 3 here and 10 in the setup cell to 120" not in approvals  # a tab never needed it
    assert "in JupyterLab too" in approvals  # a cell's own --approval-timeout denies with a tab as well


def test_the_tutorials_say_what_accept_edits_runs_unasked_and_the_one_line_policy() -> None:
    assert POLICY is not None
    quickstart, approvals = (_text(REPO / "notebooks" / n) for n in ("quickstart.ipynb", "approvals.ipynb"))
    assert "(other tools still ask;" not in quickstart
    assert "shell commands that are not\nread-only still ask" not in approvals
    for text in (quickstart, approvals, README):
        assert "`mkdir`, `touch`, `rm`" in text and "`mv`, `cp` and `sed`" in text
        assert "allowed by acceptEdits mode" in text
        assert POLICY.group(1) in text  # the same one line everywhere
