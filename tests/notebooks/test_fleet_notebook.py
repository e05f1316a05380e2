"""notebooks/fleet.ipynb runs top to bottom offline (nbclient, a fresh kernel, nobody clicks)."""

from __future__ import annotations

import pytest

from kandev_nb.ledger import RunLedger
from tests.notebooks.test_notebooks import Executed, execute

pytestmark = [pytest.mark.timeout(300), pytest.mark.cluster]


@pytest.fixture(scope="module")
def done(tmp_path_factory: pytest.TempPathFactory) -> Executed:
    """The notebook run once for the module's tests (its Dask section needs distributed)."""
    pytest.importorskip("distributed")
    return execute("fleet.ipynb", tmp_path_factory.mktemp("fleet-notebook"))


def test_fleet_notebook_runs_a_row_per_agent_and_its_rerun_sends_nothing(done: Executed) -> None:
    result = done.text("result")
    dtypes = dict(line.split() for line in result.splitlines() if len(line.split()) == 2)
    assert dtypes["priority"] == "category" and dtypes["summary"] == "string" and dtypes["cost_usd"] == "Float64"
    rerun = done.text("rerun")
    assert "requests sent by the rerun: 0" in rerun and "same answers: True" in rerun
    runs = RunLedger(done.ledger).runs(fleet="triage-demo")
    assert len(runs) == 5 and set(runs["fleet_key"]) == {f"T-{i}" for i in range(1, 6)}
    assert "text/html" in done.mime_types("fleet")  # the saved board
    board = next(o for o in done.cell("fleet")["outputs"] if "text/html" in o.get("data", {}))
    assert "kandev-fleet-board" in board["data"]["text/html"] and "5 done of 5" in board["data"]["text/html"]


def test_fleet_notebook_runs_the_same_fleet_on_a_local_dask_cluster_recorded_once_per_row(done: Executed) -> None:
    assert "2 workers" in done.text("cluster-start")
    shown = done.text("cluster-result")
    assert "same answers: True" in shown and shown.count("done") == 5, shown
    runs = RunLedger(done.ledger).runs(fleet="triage-cluster")
    assert sorted(runs["fleet_key"]) == [f"T-{i}" for i in range(1, 6)] and runs["host"].notna().all()
    assert "text/html" in done.mime_types("cluster-fleet")  # the board, fed by the workers
