"""notebooks/structured_output.ipynb runs top to bottom offline (nbclient, a fresh kernel,
the real CLI, the scripted model) and shows what it claims."""

from __future__ import annotations

from pathlib import Path

import pytest

from kandev_nb.ledger import RunLedger
from tests.notebooks.test_notebooks import execute, printed_path

pytestmark = pytest.mark.timeout(300)


def test_structured_output_notebook_extracts_a_table_plots_it_and_a_hook_keeps_the_agent_inside(
    tmp_path: Path,
) -> None:
    done = execute("structured_output.ipynb", tmp_path)
    project = printed_path(done, "setup", "project in")

    dtypes = dict(line.split() for line in done.text("frame").split("\n\n")[0].splitlines())
    assert dtypes == {"month": "string", "revenue": "Float64", "customers": "Int64"}
    assert "image/png" in done.mime_types("plot")

    after = done.text("hook-after").splitlines()
    assert after[0].startswith("Read") and after[0].endswith("-> deny by hook stay_inside")
    assert "notes.md" in after[1] and "deny" not in after[1]
    assert "is outside the project" in done.text("hooked")  # the card and the model's answer say why
    assert "stay_inside" in done.text("hooked")

    runs = RunLedger(done.ledger).runs()
    assert len(runs) == 3 and runs["session_id"].nunique() == 1 and not runs["is_error"].any()
    conversations = done.text("sessions")
    assert str(runs["session_id"].iloc[0]) in conversations
    assert project.is_dir()
