"""The fleet on a real ``distributed.LocalCluster(n_workers=2, processes=True)``, the real CLI
(2.1.332) on the workers against the scripted model (issue 26).

The cluster is shared by the module's tests. Its workers get the scripted model's URL, the
fake API key and the CLI as a user would give them: the cluster's worker environment
(``LocalCluster(env=...)``); the kernel's own config carries no env at all.
"""

from __future__ import annotations

import asyncio
import os
import pickle
import signal
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Literal

import pandas as pd
import psutil
import pytest
from pydantic import BaseModel

from kandev_nb.agent.session import SessionConfig
from kandev_nb.fleet import build_fleet
from kandev_nb.fleet.cluster import WORKER_LOST, ClusterFleet
from kandev_nb.ledger import RunLedger
from kandev_nb.testing import RecordedRequest, Reply, ScriptedModelServer, Usage, text, tool_use
from kandev_nb.testing.clis import pinned_cli, scripted_env
from tests.fleet.conftest import answer_per_row, triage_answer

distributed = pytest.importorskip("distributed")

pytestmark = [pytest.mark.timeout(240), pytest.mark.cluster]

KERNEL_SECRET = "sk-ant-kernel-only-secret-0123456789"


class Triage(BaseModel):
    ticket: int
    priority: Literal["low", "high"]


class Cluster:
    """The module's LocalCluster, its Client, the scripted model and the workers' HOME."""

    def __init__(self, server: ScriptedModelServer, home: Path, workdir: Path, client: Any) -> None:
        self.server, self.home, self.workdir, self.client = server, home, workdir, client

    def reset(self) -> None:
        with self.server._lock:  # the script is shared by the module's tests
            self.server._script.clear()

    def claude_processes(self) -> list[psutil.Process]:
        """Live CLI processes started by the cluster's workers (their HOME is the module's)."""
        found = []
        for proc in psutil.process_iter(["pid"]):
            try:
                ours = proc.environ().get("HOME") == str(self.home) and "claude" in " ".join(proc.cmdline())
                if ours and proc.status() != psutil.STATUS_ZOMBIE:
                    found.append(proc)
            except (psutil.Error, OSError):
                continue
        return found


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    from kandev_nb.testing.model_server import ScriptedModelServer

    root = tmp_path_factory.mktemp("dask")
    home, workdir = root / "home", root / "project"
    workdir.mkdir()
    with ScriptedModelServer() as server:
        env = {**scripted_env(server, home), "KANDEV_CLAUDE_CLI": str(pinned_cli())}
        with (
            distributed.LocalCluster(
                n_workers=2, threads_per_worker=4, processes=True, dashboard_address=None, env=env
            ) as local,
            distributed.Client(local) as client,
        ):
            made = Cluster(server, home, workdir, client)
            yield made
            assert made.claude_processes() == []


@pytest.fixture
def on_cluster(cluster: Cluster) -> Cluster:
    cluster.reset()
    return cluster


def config(cluster: Cluster, **env: str) -> SessionConfig:
    """The kernel's config: a cwd, timeouts, and only kernel-side env (never sent to workers)."""
    return SessionConfig(cwd=cluster.workdir, env=dict(env), approval_timeout=60, inactivity_timeout=120)


def tickets(n: int) -> pd.DataFrame:
    return pd.DataFrame({"id": range(1, n + 1)}, index=pd.Index([f"T{i}" for i in range(1, n + 1)], name="key"))


async def until(condition: Callable[[], Any], what: str, seconds: float = 120) -> None:
    for _ in range(int(seconds / 0.05)):
        if condition():
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"never happened: {what}")


async def test_twelve_rows_on_two_workers_typed_recorded_by_the_kernel_with_no_secret_in_tasks(
    on_cluster: Cluster, tmp_path: Path
) -> None:
    on_cluster.server.push(*[answer_per_row(triage_answer) for _ in range(12)])
    with RunLedger(tmp_path / "ledger.sqlite") as ledger:
        fleet = build_fleet(
            tickets(12),
            "Classify ticket {id}.",
            schema=Triage,
            concurrency=4,
            name="dask-triage",
            config=config(on_cluster, ANTHROPIC_API_KEY=KERNEL_SECRET, GITHUB_TOKEN=KERNEL_SECRET),
            ledger=ledger,
            cluster=on_cluster.client,
        )
        assert isinstance(fleet, ClusterFleet)
        result = await asyncio.wait_for(fleet.run(), 200)
        runs = ledger.runs(fleet="dask-triage")
    assert list(result["status"]) == ["done"] * 12, result["error"].tolist()
    assert list(result["ticket"]) == list(range(1, 13)) and str(result["ticket"].dtype) == "Int64"
    assert list(result["priority"]) == ["high" if i % 2 else "low" for i in range(1, 13)]
    assert list(result.index) == [f"T{i}" for i in range(1, 13)]
    # Both workers ran rows; each row recorded once, by the kernel, with its worker's host.
    workers = {fleet.where[k][0] for k in fleet.rows}
    assert workers == set(on_cluster.client.scheduler_info()["workers"]), workers
    assert sorted(runs["fleet_key"]) == sorted(f"T{i}" for i in range(1, 13))
    assert set(runs["host"]) == {o.host for o in fleet.outcomes.values()}
    # No kernel secret (nor the worker's own key) inside any task's argument or result.
    worker_key = scripted_env(on_cluster.server, on_cluster.home)["ANTHROPIC_API_KEY"].encode()
    for key in fleet.rows:
        for blob in (pickle.dumps(fleet.jobs[key]), pickle.dumps(fleet.outcomes[key])):
            assert KERNEL_SECRET.encode() not in blob and worker_key not in blob
    assert str(on_cluster.workdir).encode() in pickle.dumps(fleet.jobs["T1"])  # the blob is the real one


def touch_then_answer(number: int, request: RecordedRequest) -> Reply:
    """A prompt asks ``touch out-N.txt`` (the CLI asks); its tool_result gets a text answer."""
    if request.last_user_text():
        return Reply(tool_use("Bash", {"command": f"touch out-{number}.txt", "description": "make a file"}))
    return Reply(text(f"made out-{number}.txt"))


async def test_an_approval_from_a_worker_is_answered_in_the_kernel_and_allow_for_all_rows_reaches_every_worker(
    on_cluster: Cluster,
) -> None:
    on_cluster.server.push(*[answer_per_row(touch_then_answer) for _ in range(20)])
    frame = pd.DataFrame({"id": [101, 102, 103, 104]}, index=[1, 2, 3, 4])
    fleet = build_fleet(
        frame, "Handle ticket {id}.", concurrency=4, config=config(on_cluster), ledger=None, cluster=on_cluster.client
    )
    run = asyncio.create_task(fleet.run())
    await until(lambda: fleet.queue.head is not None, "a first queued approval")
    first = fleet.queue.head
    assert first is not None
    worker, host = fleet.where[first.key]
    assert first.label == f"row {first.position} of 4 · Bash · touch out-{first.key + 100}.txt · on {worker} ({host})"
    assert first.approval.allow()  # the card's "Allow": this row only
    await until(lambda: fleet.queue.head not in (None, first), "a second approval")
    second = fleet.queue.head
    assert second is not None
    assert fleet.queue.allow_all(second) == "Bash(touch:*)"
    result = await asyncio.wait_for(run, 180)
    assert list(result["status"]) == ["done"] * 4, result["error"].tolist()
    assert sorted(p.name for p in on_cluster.workdir.glob("out-1*.txt")) == [f"out-{i}.txt" for i in range(101, 105)]
    decided = {}
    for key, state in fleet.rows.items():
        assert state.result is not None and state.result.turn is not None
        records = list(state.result.turn.tools.values())
        assert len(records) == 1 and records[0].decision is not None
        decided[key] = records[0].decision.decided_by
    assert decided[first.key] == decided[second.key] == "person"
    assert {decided[k] for k in decided if k not in (first.key, second.key)} == {"policy"}
    assert len({fleet.where[k][0] for k in fleet.rows}) == 2  # rows on both workers took the rule


async def test_a_worker_killed_mid_row_closes_its_card_and_the_row_finishes_on_the_other_worker_recorded_once(
    on_cluster: Cluster, tmp_path: Path
) -> None:
    on_cluster.server.push(*[answer_per_row(touch_then_answer) for _ in range(10)])
    frame = pd.DataFrame({"id": [201]}, index=["only"])
    with RunLedger(tmp_path / "ledger.sqlite") as ledger:
        fleet = build_fleet(
            frame,
            "Handle ticket {id}.",
            name="dask-kill",
            config=config(on_cluster),
            ledger=ledger,
            cluster=on_cluster.client,
        )
        run = asyncio.create_task(fleet.run())
        await until(lambda: fleet.queue.head is not None, "the row's approval")
        card = fleet.queue.head
        assert card is not None
        killed = fleet.where["only"][0]
        pids = on_cluster.client.run(os.getpid)
        os.kill(pids[killed], signal.SIGKILL)
        await until(lambda: card.approval.decision is not None, "the card closed")
        assert card.approval.decision is not None and card.approval.decision.message == WORKER_LOST
        await until(lambda: fleet.queue.head not in (None, card), "the retried row's approval", 180)
        retried = fleet.queue.head
        assert retried is not None and retried.approval.allow()
        result = await asyncio.wait_for(run, 180)
        runs = ledger.runs(fleet="dask-kill")
    assert list(result["status"]) == ["done"], result["error"].tolist()
    assert fleet.where["only"][0] != killed
    assert len(runs) == 1 and runs.loc[0, "fleet_key"] == "only"
    assert (on_cluster.workdir / "out-201.txt").exists()
    await until(lambda: on_cluster.client.scheduler_info()["workers"].__len__() == 2, "the nanny's new worker")


def slow(number: int, request: RecordedRequest) -> Reply:
    return Reply(text(f"slow {number} " * 50, chunk_size=5, delay=0.5))


async def test_the_fleet_interrupted_mid_run_leaves_no_claude_process_on_any_worker(on_cluster: Cluster) -> None:
    on_cluster.server.push(*[answer_per_row(slow) for _ in range(10)])
    fleet = build_fleet(
        pd.DataFrame({"id": range(301, 307)}),
        "Handle ticket {id}.",
        concurrency=2,
        config=config(on_cluster),
        ledger=None,
        cluster=on_cluster.client,
    )
    run = asyncio.create_task(fleet.run())
    await until(lambda: len(on_cluster.claude_processes()) == 2, "two CLIs running on the workers")
    await until(lambda: len(on_cluster.server.main_requests) > 0 and len(fleet.where) == 2, "two rows started")
    run.cancel()  # what the kernel's interrupt does to the awaiting cell
    result = await asyncio.wait_for(run, 60)
    assert set(result["status"]) <= {"stopped", "skipped"} and "stopped" in set(result["status"]), result
    assert all("kernel's interrupt" in e for e in result["error"])
    await until(lambda: on_cluster.claude_processes() == [], "every CLI on the workers ended", 60)


def rm_then_answer(number: int, request: RecordedRequest) -> Reply:
    """`rm -f keep-<n>.txt` (a call acceptEdits runs unasked in its folder), then a text answer."""
    if request.last_user_text():
        return Reply(tool_use("Bash", {"command": f"rm -f keep-{number}.txt", "description": "clean up"}))
    return Reply(text(f"done {number}"))


async def test_a_deny_rule_holds_on_the_workers_in_accept_edits_mode(on_cluster: Cluster) -> None:
    # the worker's session had no policy: in acceptEdits the CLI ran rm in its folder unasked, past the
    # fleet's Bash(rm:*) deny rule, which only the kernel's queue (never asked) knew
    from kandev_nb.policy import Rules

    on_cluster.server.push(*[answer_per_row(rm_then_answer) for _ in range(4)])
    for number in (201, 202):
        (on_cluster.workdir / f"keep-{number}.txt").write_text("data\n")
    frame = pd.DataFrame({"id": [201, 202]}, index=["a", "b"])
    fleet = build_fleet(
        frame,
        "Handle ticket {id}.",
        mode="acceptEdits",
        approve=Rules(deny=["Bash(rm:*)"]),
        config=config(on_cluster),
        ledger=None,
        cluster=on_cluster.client,
    )
    result = await asyncio.wait_for(fleet.run(), 180)
    assert list(result["status"]) == ["done", "done"], result["error"].tolist()
    assert (on_cluster.workdir / "keep-201.txt").exists() and (on_cluster.workdir / "keep-202.txt").exists()
    for state in fleet.rows.values():
        assert state.result is not None and state.result.turn is not None
        (record,) = state.result.turn.tools.values()
        assert record.decision is not None and record.decision.behavior == "deny", record.decision
        assert record.decision.rule == "Bash(rm:*)", record.decision


async def test_costs_add_up_on_the_cluster_after_stop_all_and_a_rerun(on_cluster: Cluster, tmp_path: Path) -> None:
    """Issue 33.5 on the cluster: rows 3 and 4 wait for a person (their first request paid),
    Stop all stops them; the rerun finishes them. The frame's cost is every attempt's, and
    its sum is the ledger's and the model server's (its own record of what it answered)."""
    from tests.fleet.test_fleet_truth import server_cost

    phase = {"run": 1}

    def answer(number: int, request: RecordedRequest) -> Reply:
        usage = Usage(input_tokens=1000 + number, output_tokens=50 + number)
        if phase["run"] == 1 and number in (3, 4) and request.last_user_text():
            call = {"command": f"touch cost-{number}.txt", "description": "a file"}
            return Reply(tool_use("Bash", call), usage=usage)
        return Reply(text(f"answer {number}"), usage=usage)

    on_cluster.server.push(*[answer_per_row(answer) for _ in range(30)])
    since = len(on_cluster.server.requests)
    frame = pd.DataFrame({"id": range(1, 9)}, index=[f"c{i}" for i in range(1, 9)])
    with RunLedger(tmp_path / "ledger.sqlite") as ledger:
        options: dict[str, Any] = {"concurrency": 4, "name": "dask-costs", "ledger": ledger}
        options |= {"config": config(on_cluster), "cluster": on_cluster.client}
        fleet = build_fleet(frame, "Handle ticket {id}.", **options)
        run = asyncio.create_task(fleet.run())
        await until(
            lambda: len(fleet.queue.pending) == 2 and sum(s.status == "done" for s in fleet.rows.values()) == 6,
            "6 rows done, 2 waiting",
        )
        fleet.stop(reason="stopped by you (Stop all)")
        first = await asyncio.wait_for(run, 120)
        assert first["status"].tolist() == ["done", "done", "stopped", "stopped", "done", "done", "done", "done"]
        phase["run"] = 2
        second = await asyncio.wait_for(build_fleet(frame, "Handle ticket {id}.", **options).run(), 180)
        ledger_sum = ledger.runs(fleet="dask-costs")["cost_usd"].sum()
    assert second["status"].tolist() == ["done"] * 8 and second["attempts"].tolist() == [1, 1, 2, 2, 1, 1, 1, 1]
    assert second["cost_usd"].sum() == pytest.approx(ledger_sum, abs=1e-9)
    assert ledger_sum == pytest.approx(server_cost(on_cluster.server, since), abs=1e-9)


async def test_pending_lists_rows_waiting_on_workers_and_allow_all_rows_answers_them_on_every_worker(
    on_cluster: Cluster,
) -> None:
    """Issue 33 point 3: a row waiting on a worker is listed by ``kandev_nb.pending()`` (the kernel
    holds the cluster's queue); one ``.allow_all_rows()`` answers the rows of both workers."""
    import kandev_nb
    from kandev_nb.notebook.pending import FleetPendingApproval
    from tests.fleet.test_fleet_all_rows import RULE, TEMPLATE, profile_then_answer, rows

    on_cluster.server.push(*[answer_per_row(profile_then_answer) for _ in range(20)])
    frame = rows(on_cluster.workdir, 4)
    fleet = build_fleet(
        frame, TEMPLATE, concurrency=4, config=config(on_cluster), ledger=None, cluster=on_cluster.client
    )
    run = asyncio.create_task(fleet.run())
    await until(lambda: any(isinstance(p, FleetPendingApproval) for p in kandev_nb.pending()), "a row waiting")
    item = next(p for p in kandev_nb.pending() if isinstance(p, FleetPendingApproval))
    assert item.fleet_row == f"row {item.item.position} of 4" and item.item.where  # named, on its worker
    assert item.proposal.rules == (RULE,)
    assert item.allow_all_rows() == RULE
    result = await asyncio.wait_for(run, 200)
    assert list(result["status"]) == ["done"] * 4, result["error"].tolist()
    decided = []
    for state in fleet.rows.values():
        assert state.result is not None and state.result.turn is not None
        records = list(state.result.turn.tools.values())
        assert len(records) == 1 and records[0].decision is not None
        decided.append(records[0].decision.decided_by)
    assert decided.count("person") == 1 and decided.count("policy") == 3, decided
    assert len({fleet.where[k][0] for k in fleet.rows}) == 2  # rows on both workers took the rule
