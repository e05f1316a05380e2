"""Stop means stop on a Dask cluster (issue 33, point 4), with a real
``distributed.LocalCluster(n_workers=2, processes=True)`` and the real CLI on its workers:
Stop on a row, Stop all, the kernel's interrupt, the client going away and a SIGKILLed worker
each end the rows' CLI processes on the workers within 10 s, checked by PID.

Why these fail without the worker's watchdog (:mod:`kandev_nb.fleet.watchdog`): Dask never
cancels a task that runs (``client.cancel`` and a departed client only mark it "cancelled" on
its worker, which waits for it to finish), so a cancelled row's CLI ran on until its answer
ended; and a CLI that no longer answers the protocol's interrupt lived 25 s (the interrupt's
grace, then stdin EOF, SIGTERM and SIGKILL 5 s apart).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import psutil
import pytest

from kandev_nb.agent.session import SessionConfig
from kandev_nb.fleet import build_fleet
from kandev_nb.fleet.cluster import ClusterFleet
from kandev_nb.testing import RecordedRequest, Reply, text, tool_use
from kandev_nb.testing.clis import pinned_cli
from tests.fleet.conftest import answer_per_row, row_of
from tests.fleet.test_fleet_dask import Cluster, cluster, config, on_cluster, until  # noqa: F401 - fixtures
from tests.fleet.test_fleet_stop_clis import STOP_S, allow_all, gone, kill_left, seconds_until_gone, with_tools

distributed = pytest.importorskip("distributed")

pytestmark = [pytest.mark.timeout(300), pytest.mark.cluster, pytest.mark.slow]


def slow(number: int, request: RecordedRequest) -> Reply:
    """A long streamed answer (about 60 s): the row is still streaming when it is stopped."""
    return Reply(text(f"row {number} " + "slow " * 300, chunk_size=5, delay=0.2))


def asked(where: Cluster, rows: dict[Any, int]) -> bool:
    """Whether the model has a request from each of `rows` (keys ``r<ticket>``): they stream."""
    return {int(str(key)[1:]) for key in rows} <= {row_of(request) for request in where.server.main_requests}


def frame(n: int, first: int = 1) -> pd.DataFrame:
    return pd.DataFrame({"id": range(first, first + n)}, index=[f"r{i}" for i in range(first, first + n)])


async def row_pid(fleet: ClusterFleet, key: Any) -> int | None:
    """The CLI pid the row's task stored in its ``distributed.Variable`` (sealed), or None yet."""
    job = fleet.jobs.get(key)
    if job is None:
        return None
    variable = distributed.Variable(job.session_var, client=fleet.client)
    try:
        wire = await asyncio.to_thread(variable.get, timeout=2)
    except TimeoutError:
        return None
    pid = fleet.channel.open_value(wire, job.session_var).get("pid")
    return pid if isinstance(pid, int) else None


async def running(fleet: ClusterFleet, n: int) -> dict[Any, int]:
    """By row key, the CLI pids of the first `n` rows whose CLI runs on a worker (Dask starts
    the rows in no fixed order)."""
    pids: dict[Any, int] = {}
    for _ in range(1200):
        for key in fleet.rows:
            if key not in pids and (pid := await row_pid(fleet, key)) is not None:
                pids[key] = pid
        if len(pids) >= n:
            return pids
        await asyncio.sleep(0.1)
    raise AssertionError(f"{n} rows never ran a CLI: {pids}")


@pytest.mark.parametrize("doing", ["streaming", "deaf to the interrupt"])
async def test_stop_on_a_row_and_stop_all_end_the_rows_clis_on_their_workers_within_10_s(
    doing: str,
    on_cluster: Cluster,  # noqa: F811 - the fixture
) -> None:
    on_cluster.server.push(*[answer_per_row(slow) for _ in range(10)])
    first = 1 if doing == "streaming" else 11
    fleet = build_fleet(
        frame(3, first),
        "Handle ticket {id}.",
        concurrency=2,
        config=config(on_cluster),
        ledger=None,
        cluster=on_cluster.client,
    )
    assert isinstance(fleet, ClusterFleet)
    run = asyncio.create_task(fleet.run())
    rows = await running(fleet, 2)  # concurrency 2: these two, the third waits
    (one, other), pids = list(rows), list(rows.values())
    await until(lambda: asked(on_cluster, rows), "both rows streaming")
    if doing == "deaf to the interrupt":  # a CLI that can no longer answer (stopped, swapping, hung)
        for pid in pids:
            os.kill(pid, signal.SIGSTOP)
    fleet.stop(one)  # the row's Stop button
    took_row = await seconds_until_gone([pids[0]])
    assert not gone(pids[1]), "Stop on one row ended the other's CLI"
    fleet.stop(reason="stopped by you (Stop all)")  # the stopped row's place went to the third, which may have started
    took_all = await seconds_until_gone(pids[1:] + [p.pid for p in on_cluster.claude_processes()])
    kill_left(pids)
    result = await asyncio.wait_for(run, 60)
    print(f"cluster, {doing}: Stop on a row {took_row:.1f} s, Stop all {took_all:.1f} s")
    assert took_row < STOP_S, f"the row's CLI lived {took_row:.1f} s after its Stop"
    assert took_all < STOP_S, f"a CLI lived {took_all:.1f} s after Stop all"
    assert result.loc[one, "status"] == result.loc[other, "status"] == "stopped", result["error"].tolist()
    assert [result.loc[one, "error"], result.loc[other, "error"]] == ["stopped by you", "stopped by you (Stop all)"]
    assert set(result["status"]) <= {"stopped", "skipped"}, result["error"].tolist()
    assert on_cluster.claude_processes() == []


async def test_the_kernels_interrupt_ends_every_rows_cli_on_the_workers_within_10_s(
    on_cluster: Cluster,  # noqa: F811 - the fixture
) -> None:
    on_cluster.server.push(*[answer_per_row(slow) for _ in range(10)])
    fleet = build_fleet(
        frame(6, 301),
        "Handle ticket {id}.",
        concurrency=4,
        config=config(on_cluster),
        ledger=None,
        cluster=on_cluster.client,
    )
    assert isinstance(fleet, ClusterFleet)
    run = asyncio.create_task(fleet.run())
    rows = await running(fleet, 4)  # concurrency 4: these four, two wait
    pids = list(rows.values())
    await until(lambda: asked(on_cluster, rows), "four rows streaming")
    run.cancel()  # what the kernel's interrupt does to the awaiting cell
    took = await seconds_until_gone(pids + [p.pid for p in on_cluster.claude_processes()])
    kill_left(pids)
    result = await asyncio.wait_for(run, 60)
    print(f"cluster, the kernel's interrupt: last CLI gone after {took:.1f} s")
    assert took < STOP_S, f"a row's CLI lived {took:.1f} s after the kernel's interrupt"
    assert sorted(result["status"]) == ["skipped"] * 2 + ["stopped"] * 4, result["error"].tolist()
    assert set(result.index[result["status"] == "stopped"]) == set(rows)
    assert all("kernel's interrupt" in e for e in result["error"])
    assert on_cluster.claude_processes() == []


async def test_a_departed_client_ends_its_rows_clis_on_the_workers_within_10_s(
    on_cluster: Cluster,  # noqa: F811 - the fixture
) -> None:
    # the kernel's death seen from the cluster: its client's connection closes mid-run
    on_cluster.server.push(*[answer_per_row(slow) for _ in range(10)])
    address = on_cluster.client.scheduler.address
    client = await distributed.Client(address, asynchronous=True)
    fleet = build_fleet(
        frame(2, 401), "Handle ticket {id}.", concurrency=2, config=config(on_cluster), ledger=None, cluster=client
    )
    assert isinstance(fleet, ClusterFleet)
    run = asyncio.create_task(fleet.run())
    try:
        rows = await running(fleet, 2)
    except AssertionError:
        raise AssertionError(f"{run.done() and (run.exception() or run.result())}") from None
    pids = list(rows.values())
    await until(lambda: asked(on_cluster, rows), "two rows streaming")
    start = time.monotonic()
    await client.close()
    took = await seconds_until_gone(pids)
    kill_left(pids)
    run.cancel()
    await asyncio.gather(run, return_exceptions=True)
    print(f"cluster, the client gone: last CLI gone after {took:.1f} s ({time.monotonic() - start:.1f} s)")
    assert took < STOP_S, f"a row's CLI lived {took:.1f} s after its client left"
    assert on_cluster.claude_processes() == []


def sleep_then_answer(number: int, request: RecordedRequest) -> Reply:
    """A Bash call that runs for two minutes; the attempt that resumes the row answers in text."""
    last = request.last_user_text()
    if last and "cut off" not in last:
        return Reply(tool_use("Bash", {"command": f"python3 -c 'import time; time.sleep(120)' row-{number}"}))
    return Reply(text(f"answered {number}"))


async def test_a_sigkilled_workers_cli_and_its_tools_are_gone_within_10_s_and_the_row_finishes_elsewhere(
    on_cluster: Cluster,  # noqa: F811 - the fixture
) -> None:
    # the CLI itself dies with its worker (its parent-death signal); the Bash call it runs, in a
    # process group of its own, lived on after it (its shell names ~/.claude/shell-snapshots)
    on_cluster.server.push(*[answer_per_row(sleep_then_answer) for _ in range(4)])
    fleet = build_fleet(
        frame(1, 501),
        "Handle ticket {id}.",
        approve=allow_all,
        config=config(on_cluster),
        ledger=None,
        cluster=on_cluster.client,
    )
    assert isinstance(fleet, ClusterFleet)
    run = asyncio.create_task(fleet.run())
    (pid,) = (await running(fleet, 1)).values()
    await until(lambda: len(with_tools([pid])) >= 3, "the row's Bash call running (its shell, python3)")
    family = with_tools([pid])
    killed = fleet.where["r501"][0]
    worker_pid = (await asyncio.to_thread(on_cluster.client.run, os.getpid))[killed]
    assert pid in [p.pid for p in psutil.Process(worker_pid).children(recursive=True)]
    os.kill(worker_pid, signal.SIGKILL)
    took = await seconds_until_gone(family)
    kill_left(family)
    print(f"cluster, a SIGKILLed worker: its CLI and its tools gone after {took:.1f} s")
    assert took < STOP_S, f"the killed worker's CLI or its tools lived {took:.1f} s"
    result = await asyncio.wait_for(run, 120)
    assert list(result["status"]) == ["done"], result["error"].tolist()
    assert result.loc["r501", "answer"] == "answered 501"
    assert fleet.where["r501"][0] != killed
    await until(lambda: len(on_cluster.client.scheduler_info()["workers"]) == 2, "the nanny's new worker")


def quick_or_slow(number: int, request: RecordedRequest) -> Reply:
    """Ticket 601 answers at once; the others stream for about 60 s."""
    return Reply(text(f"quick {number}")) if number == 601 else slow(number, request)


@pytest.fixture
def own_scheduler(tmp_path: Path, claude_env: dict[str, str], claude_home: Path) -> Iterator[tuple[Any, Any, Path]]:
    """A ``dask scheduler`` and a ``dask worker`` of their own processes (the scheduler can be
    SIGKILLed), the worker's CLI pointed at the scripted model; yields (scheduler process,
    sync Client, the workers' HOME)."""
    import kandev_nb

    file = tmp_path / "scheduler.json"
    root = str(Path(kandev_nb.__file__).resolve().parents[1])
    env = {**os.environ, **claude_env, "KANDEV_CLAUDE_CLI": str(pinned_cli()), "PYTHONPATH": root}
    scheduler = subprocess.Popen(
        [sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port", "0"]
        + ["--no-dashboard", "--scheduler-file", str(file)],
        env=env,
        start_new_session=True,
    )
    worker = subprocess.Popen(
        [sys.executable, "-m", "distributed.cli.dask_worker", "--scheduler-file", str(file), "--nworkers", "1"]
        + ["--nthreads", "4", "--no-dashboard"],
        env=env,
        start_new_session=True,
    )
    try:
        for _ in range(600):
            if file.exists() and file.stat().st_size:
                break
            time.sleep(0.1)
        client = distributed.Client(scheduler_file=str(file), timeout=60)
        client.wait_for_workers(1, timeout=120)
        yield scheduler, client, claude_home
        client.close(timeout=5)
    finally:
        for process in (worker, scheduler):
            with contextlib.suppress(OSError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait(30)


async def test_the_scheduler_going_away_keeps_the_finished_rows_says_so_and_ends_the_clis(
    own_scheduler: tuple[Any, Any, Path], tmp_path: Path, scripted_model: Any
) -> None:
    scheduler, client, _ = own_scheduler
    scripted_model.push(*[answer_per_row(quick_or_slow) for _ in range(6)])
    workdir = tmp_path / "project"
    workdir.mkdir()
    fleet = build_fleet(
        frame(4, 601),
        "Handle ticket {id}.",
        concurrency=3,
        config=SessionConfig(cwd=workdir, approval_timeout=60, inactivity_timeout=120),
        ledger=None,
        cluster=client,
    )
    assert isinstance(fleet, ClusterFleet)
    run = asyncio.create_task(fleet.run())
    await until(lambda: fleet.rows["r601"].status == "done", "the quick row done")
    rows = await running(fleet, 3)  # r601's CLI among them if it was seen before it ended
    running_now = [key for key in rows if key != "r601"][:2]
    pids = [rows[key] for key in rows if key != "r601"]
    await until(lambda: all(not gone(pid) for pid in pids), "the rows streaming")
    start = time.monotonic()
    os.kill(scheduler.pid, signal.SIGKILL)
    took = await seconds_until_gone(pids)
    result = await asyncio.wait_for(run, 60)
    print(f"the scheduler SIGKILLed: CLIs gone after {took:.1f} s, the frame after {time.monotonic() - start:.1f} s")
    assert took < STOP_S, f"a row's CLI lived {took:.1f} s after the scheduler went away"
    # the finished row kept; the others say why, and so does the fleet (the board's line reads it)
    assert result.loc["r601", "status"] == "done" and result.loc["r601", "answer"] == "quick 601"
    for key in running_now:
        assert result.loc[key, "status"] == "error" and "the Dask scheduler went away" in result.loc[key, "error"]
    (last,) = [key for key in result.index if key not in running_now and key != "r601"]  # its lease, or started
    assert result.loc[last, "status"] in ("skipped", "error") and "scheduler went away" in result.loc[last, "error"]
    assert fleet.lost_scheduler is not None and fleet.stopped_reason == fleet.lost_scheduler
