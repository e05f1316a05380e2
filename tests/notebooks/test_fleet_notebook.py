"""notebooks/fleet.ipynb runs top to bottom offline (nbclient, a fresh kernel, nobody clicks)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kandev_nb.ledger import RunLedger
from tests.notebooks.test_notebooks import execute

pytestmark = pytest.mark.timeout(300)


def test_fleet_notebook_runs_a_row_per_agent_and_its_rerun_sends_nothing(tmp_path: Path) -> None:
    done = execute("fleet.ipynb", tmp_path)
    result = done.text("result")
    dtypes = dict(line.split() for line in result.splitlines() if len(line.split()) == 2)
    assert dtypes["priority"] == "category" and dtypes["summary"] == "string" and dtypes["cost_usd"] == "Float64"
    rerun = done.text("rerun")
    assert "requests sent by the rerun: 0" in rerun and "same answers: True" in rerun
    runs = RunLedger(done.ledger).runs(fleet="triage-demo")
    assert len(runs) == 5 and set(runs["fleet_key"]) == {f'"T-{i}"' for i in range(1, 6)}
    assert "text/html" in done.mime_types("fleet")  # the saved board
    board = next(o for o in done.cell("fleet")["outputs"] if "text/html" in o.get("data", {}))
    assert "kandev-fleet-board" in board["data"]["text/html"] and "5 of 5 rows" in board["data"]["text/html"]
