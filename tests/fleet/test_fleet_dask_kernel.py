"""``%%claude --over df -o out --cluster client`` in a real kernel (the frontend played by the
harness), with a real ``distributed.LocalCluster(n_workers=2, processes=True)`` made inside the
kernel, the real CLI on its workers against the scripted model (issue 26).

The kernel's own settings point the CLI at a closed port: only rows that run on the workers,
whose environment (``LocalCluster(env=...)``) points at the scripted model, can finish.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from kandev_nb.testing import ScriptedModelServer
from tests.fleet.conftest import answer_per_row, triage_answer
from tests.kernel.conftest import kernel, ledger_path  # noqa: F401 - fixtures
from tests.kernel.kernel_harness import KernelHarness

distributed = pytest.importorskip("distributed")

pytestmark = [pytest.mark.timeout(300), pytest.mark.cluster]

NOWHERE = "http://127.0.0.1:9"
"""The kernel's ANTHROPIC_BASE_URL: a row run in the kernel instead of a worker cannot finish."""

SETUP = """
%load_ext kandev_nb
import kandev_nb
kandev_nb.configure(env={kernel_env!r}, cwd={cwd!r})
import pandas as pd
from typing import Literal
from pydantic import BaseModel
from distributed import Client, LocalCluster

class Triage(BaseModel):
    ticket: int
    priority: Literal["low", "high"]

tickets = pd.DataFrame({{"id": [1, 2, 3, 4]}}, index=["w", "x", "y", "z"])
cluster = LocalCluster(n_workers=2, threads_per_worker=2, processes=True, dashboard_address=None, env={worker_env!r})
client = Client(cluster)
"""

CELL = """%%claude --over tickets -o triage --schema Triage --concurrency 2 --fleet on-dask --cluster {name}
Classify ticket {{id}}."""


def _shown(run: object) -> str:
    """What a failed cell showed: IPython prints a UsageError on stderr (stdout() has both)."""
    error = getattr(run, "error", None) or {}
    return str(error.get("evalue", "")) + run.stdout()  # type: ignore[attr-defined]


def test_over_with_cluster_runs_the_rows_on_a_local_cluster_made_in_the_kernel_and_refuses_a_non_client(
    kernel: KernelHarness,  # noqa: F811 - the fixture
    scripted_model: ScriptedModelServer,
    claude_env: dict[str, str],
    claude_cli: Path,
    claude_workdir: Path,
    feed: Callable[..., None],
) -> None:
    feed(answer_per_row(triage_answer), 12)
    worker_env = {**claude_env, "KANDEV_CLAUDE_CLI": str(claude_cli)}
    kernel_env = {**claude_env, "ANTHROPIC_BASE_URL": NOWHERE}
    kernel.execute(SETUP.format(kernel_env=kernel_env, cwd=str(claude_workdir), worker_env=worker_env), timeout=120)
    try:
        # A variable that is not a distributed.Client: one clear line, nothing sent, nothing lost.
        kernel.execute("triage = 'kept'")
        refused = kernel.wait(kernel.start(CELL.format(name="cluster")))
        assert refused.status == "error"
        shown = _shown(refused)
        assert "cluster must be a distributed.Client (client = Client(cluster)), not LocalCluster" in shown, shown
        assert "Traceback" not in shown
        missing = kernel.wait(kernel.start(CELL.format(name="no_such_client")))
        assert missing.status == "error"
        assert "--cluster no_such_client: no notebook variable of that name" in _shown(missing)
        assert scripted_model.main_requests == [] and kernel.eval("triage") == "kept"
        # The Client: every row runs on a worker and comes back typed, recorded by the kernel.
        run = kernel.execute(CELL.format(name="client"), timeout=240)
        got = kernel.eval(
            "[list(triage.index), list(triage['status']), [int(t) for t in triage['ticket']], "
            "str(triage['ticket'].dtype), list(triage['priority'].astype(str)), "
            "sorted(kandev_nb.runs(fleet='on-dask')['fleet_key']), len(client.scheduler_info()['workers'])]"
        )
        assert got == [
            ["w", "x", "y", "z"],
            ["done"] * 4,
            [1, 2, 3, 4],
            "Int64",
            ["high", "low", "high", "low"],
            ["w", "x", "y", "z"],
            2,
        ]
        assert len(scripted_model.main_requests) >= 4
        assert "kandev-fleet-board" in str(run.outputs) and "4 done of 4" in str(run.outputs)
        # The cluster takes clients without TLS: the cell said so, naming the secure setups (issue 32).
        assert "OpenClusterWarning" in str(run.outputs) and "LocalCluster(security=True)" in str(run.outputs)
    finally:
        kernel.execute("client.close(); cluster.close()", timeout=60)
