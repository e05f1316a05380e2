"""The team ledger from a real kernel: rows name the cell that ran (issue 15, 7), budgets by
scope read from a shared PostgreSQL ledger (5), ``%claude_stats --team`` (2), and the
ledger URL's password in no output, row or spool file (8). Real kernels, the real CLI,
the scripted model, a real PostgreSQL server."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from kandev_nb.ledger import RunLedger
from kandev_nb.testing import Reply, ScriptedModelServer, text
from kandev_nb.testing.postgres import PostgresCluster
from tests.kernel.conftest import setup_code
from tests.kernel.kernel_harness import CellRun, KernelHarness
from tests.ledger.conftest import make_turn

pytestmark = pytest.mark.timeout(240)


def test_a_row_names_the_cell_as_the_execute_reply_does(
    kernel: KernelHarness, scripted_model: ScriptedModelServer, claude_env: dict[str, str], claude_workdir: Path
) -> None:
    scripted_model.push(Reply(text("One.")), Reply(text("Two.")))
    kernel.execute(setup_code(claude_env, claude_workdir))
    kernel.execute("x = 1")
    first = kernel.execute("%%claude\nsay one")
    kernel.execute("y = 2")
    second = kernel.execute("%%claude\nsay two")
    counts = kernel.eval("kandev_nb.runs()['execution_count'].tolist()")
    assert counts == [first.reply["execution_count"], second.reply["execution_count"]]
    assert counts[1] == counts[0] + 2


@pytest.fixture
def team_kernel(postgres_url: str, claude_workdir: Path, tmp_path: Path) -> Iterator[KernelHarness]:
    """A kernel of user "ana" whose ledger is the shared PostgreSQL database."""
    env = dict(
        os.environ, KANDEV_NB_LEDGER=postgres_url, JUPYTERHUB_USER="ana", KANDEV_NB_SPOOL=str(tmp_path / "spool")
    )
    harness = KernelHarness(env=env, cwd=str(claude_workdir))
    try:
        yield harness
    finally:
        harness.close()


def _shown(runs: list[CellRun]) -> str:
    return json.dumps([m["content"] for r in runs for m in r.outputs])


def test_team_budget_reads_the_shared_ledger_and_the_refusal_names_scope_period_and_spend(
    team_kernel: KernelHarness,
    postgres_url: str,
    postgres_cluster: PostgresCluster,
    scripted_model: ScriptedModelServer,
    claude_env: dict[str, str],
    claude_workdir: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("JUPYTERHUB_USER", "ben")  # another user's kernel already spent today
    with RunLedger(postgres_url) as ledger:
        ledger.record(make_turn("ben's work", cost_usd=0.75), notebook="/home/ben/b.ipynb")
    scripted_model.push(Reply(text("Within budget.")), Reply(text("Never sent.")))
    runs = [
        team_kernel.execute(
            setup_code(claude_env, claude_workdir, budget_usd=1.0, budget_scope="user", budget_period="day")
        )
    ]
    runs.append(team_kernel.execute("%%claude\nfirst"))
    footer = "\n".join(runs[-1].data("text/html"))
    assert "budget of user ana, today" in footer
    runs.append(team_kernel.execute("kandev_nb.configure(budget_scope='team', budget_usd=0.75)"))
    refused = team_kernel.wait(team_kernel.start("%%claude\nsecond"))
    message = refused.stdout() + json.dumps(refused.error)
    assert refused.status == "error"
    assert "team, today budget of $0.75 is spent" in message and "team scope" in message
    assert len(scripted_model.main_requests) == 1
    runs.append(team_kernel.execute("kandev_nb.configure(budget_scope='user')"))
    runs.append(team_kernel.execute("%claude_stats --team"))
    table = "\n".join(runs[-1].data("text/plain"))
    assert "Per user" in table and "ana" in table and "ben" in table and "$0.7500" in table
    runs.append(team_kernel.execute("%claude_stats --user ben"))
    assert "$0.7500" in "\n".join(runs[-1].data("text/plain"))
    users = team_kernel.eval("kandev_nb.runs()['user'].tolist()")
    assert users == ["ben", "ana"]
    runs.append(team_kernel.execute("print(kandev_nb.ledger.default_ledger())"))
    assert "***" in runs[-1].stdout()
    runs.append(refused)
    assert postgres_cluster.password not in _shown(runs)


def test_with_the_server_down_a_cell_still_runs_and_its_turn_lands_once_later(
    team_kernel: KernelHarness,
    postgres_url: str,
    postgres_cluster: PostgresCluster,
    scripted_model: ScriptedModelServer,
    claude_env: dict[str, str],
    claude_workdir: Path,
    tmp_path: Path,
) -> None:
    scripted_model.push(Reply(text("While away.")), Reply(text("Back.")))
    runs = [team_kernel.execute(setup_code(claude_env, claude_workdir))]
    postgres_cluster.stop()
    try:
        runs.append(team_kernel.execute("%%claude\nwhile the server is away"))  # status ok: the cell did not fail
        assert "kept in the spool" in runs[-1].stdout() + _shown(runs[-1:])
    finally:
        postgres_cluster.start()
    runs.append(team_kernel.execute("%%claude\nnow it is back"))
    prompts = team_kernel.eval("kandev_nb.runs()['prompt'].tolist()")
    assert prompts == ["while the server is away", "now it is back"]
    assert team_kernel.eval("kandev_nb.ledger_flush()") == 0
    spooled = [p.read_text() for p in (tmp_path / "spool").rglob("*") if p.is_file()]
    assert all(postgres_cluster.password not in body for body in spooled)
    assert postgres_cluster.password not in _shown(runs)
