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
import os
import signal
import time
from typing import Any

import pandas as pd
import psutil
import pytest

from kandev_nb.fleet import build_fleet
from kandev_nb.fleet.cluster import ClusterFleet
from kandev_nb.testing import RecordedRequest, Reply, text
from tests.fleet.conftest import answer_per_row
from tests.fleet.test_fleet_dask import Cluster, cluster, config, on_cluster, until  # noqa: F401 - fixtures
from tests.fleet.test_fleet_stop_clis import STOP_S, gone, kill_left, seconds_until_gone

distributed = pytest.importorskip("distributed")

pytestmark = [pytest.mark.timeout(300), pytest.mark.cluster, pytest.mark.slow]


def slow(number: int, request: RecordedRequest) -> Reply:
    """A long streamed answer (about 60 s): the row is still streaming when it is stopped."""
    return Reply(text(f"row {number} " + "slow " * 300, chunk_size=5, delay=0.2))


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


async def running_pids(fleet: ClusterFleet, keys: list[Any]) -> list[int]:
    """The CLI pids of rows `keys`, once each row's CLI runs on its worker."""
    pids: dict[Any, int] = {}
    for _ in range(2400):
        for key in keys:
            if key not in pids and (pid := await row_pid(fleet, key)) is not None:
                pids[key] = pid
        if len(pids) == len(keys):
            return [pids[key] for key in keys]
        await asyncio.sleep(0.05)
    raise AssertionError(f"rows {keys} never ran a CLI: {pids}")


@pytest.mark.parametrize("doing", ["streaming", "deaf to the interrupt"])
async def test_stop_on_a_row_and_stop_all_end_the_rows_clis_on_their_workers_within_10_s(
    doing: str, on_cluster: Cluster
) -> None:
    on_cluster.server.push(*[answer_per_row(slow) for _ in range(10)])
    fleet = build_fleet(
        frame(3), "Handle ticket {id}.", concurrency=2, config=config(on_cluster), ledger=None, cluster=on_cluster.client
    )
    assert isinstance(fleet, ClusterFleet)
    run = asyncio.create_task(fleet.run())
    pids = await running_pids(fleet, ["r1", "r2"])
    await until(lambda: on_cluster.server.in_flight == 2, "two rows streaming")
    if doing == "deaf to the interrupt":  # a CLI that can no longer answer (stopped, swapping, hung)
        for pid in pids:
            os.kill(pid, signal.SIGSTOP)
    fleet.stop("r1")  # the row's Stop button
    took_row = await seconds_until_gone([pids[0]])
    assert not gone(pids[1]), "Stop on row 1 ended row 2's CLI"
    fleet.stop(reason="stopped by you (Stop all)")
    took_all = await seconds_until_gone([pids[1]])
    kill_left(pids)
    result = await asyncio.wait_for(run, 60)
    print(f"cluster, {doing}: Stop on a row {took_row:.1f} s, Stop all {took_all:.1f} s")
    assert took_row < STOP_S, f"row 1's CLI lived {took_row:.1f} s after its Stop"
    assert took_all < STOP_S, f"row 2's CLI lived {took_all:.1f} s after Stop all"
    assert list(result["status"]) == ["stopped", "stopped", "skipped"], result["error"].tolist()
    assert on_cluster.claude_processes() == []


async def test_the_kernels_interrupt_ends_every_rows_cli_on_the_workers_within_10_s(on_cluster: Cluster) -> None:
    on_cluster.server.push(*[answer_per_row(slow) for _ in range(10)])
    fleet = build_fleet(
        frame(6, 301), "Handle ticket {id}.", concurrency=4, config=config(on_cluster), ledger=None, cluster=on_cluster.client
    )
    assert isinstance(fleet, ClusterFleet)
    run = asyncio.create_task(fleet.run())
    pids = await running_pids(fleet, ["r301", "r302", "r303", "r304"])
    await until(lambda: on_cluster.server.in_flight == 4, "four rows streaming", 60)
    print("IN FLIGHT", on_cluster.server.in_flight, len(on_cluster.server.main_requests))
    run.cancel()  # what the kernel's interrupt does to the awaiting cell
    took = await seconds_until_gone(pids)
    kill_left(pids)
    result = await asyncio.wait_for(run, 60)
    print(f"cluster, the kernel's interrupt: last CLI gone after {took:.1f} s")
    assert took < STOP_S, f"a row's CLI lived {took:.1f} s after the kernel's interrupt"
    assert list(result["status"]) == ["stopped"] * 4 + ["skipped"] * 2, result["error"].tolist()
    assert all("kernel's interrupt" in e for e in result["error"])
    assert on_cluster.claude_processes() == []


async def test_a_departed_client_ends_its_rows_clis_on_the_workers_within_10_s(on_cluster: Cluster) -> None:
    # the kernel's death seen from the cluster: its client's connection closes mid-run
    on_cluster.server.push(*[answer_per_row(slow) for _ in range(10)])
    address = on_cluster.client.scheduler.address
    client = await distributed.Client(address, asynchronous=True)
    fleet = build_fleet(frame(2, 401), "Handle ticket {id}.", concurrency=2, config=config(on_cluster), ledger=None, cluster=client)
    assert isinstance(fleet, ClusterFleet)
    run = asyncio.create_task(fleet.run())
    pids = await running_pids(fleet, ["r401", "r402"])
    await until(lambda: on_cluster.server.in_flight == 2, "two rows streaming")
    start = time.monotonic()
    await client.close()
    took = await seconds_until_gone(pids)
    kill_left(pids)
    run.cancel()
    await asyncio.gather(run, return_exceptions=True)
    print(f"cluster, the client gone: last CLI gone after {took:.1f} s ({time.monotonic() - start:.1f} s)")
    assert took < STOP_S, f"a row's CLI lived {took:.1f} s after its client left"
    assert on_cluster.claude_processes() == []


def medium(number: int, request: RecordedRequest) -> Reply:
    """A streamed answer of about 15 s."""
    return Reply(text(f"row {number} " + "mid " * 60, chunk_size=4, delay=0.25))


async def test_a_sigkilled_workers_cli_is_gone_within_10_s_and_the_row_finishes_on_the_other_worker(
    on_cluster: Cluster,
) -> None:
    on_cluster.server.push(*[answer_per_row(medium) for _ in range(4)])
    fleet = build_fleet(frame(1, 501), "Handle ticket {id}.", config=config(on_cluster), ledger=None, cluster=on_cluster.client)
    assert isinstance(fleet, ClusterFleet)
    run = asyncio.create_task(fleet.run())
    (pid,) = await running_pids(fleet, ["r501"])
    await until(lambda: on_cluster.server.in_flight == 1, "the row streaming")
    killed = fleet.where["r501"][0]
    worker_pid = (await asyncio.to_thread(on_cluster.client.run, os.getpid))[killed]
    assert pid in [p.pid for p in psutil.Process(worker_pid).children(recursive=True)]
    os.kill(worker_pid, signal.SIGKILL)
    took = await seconds_until_gone([pid])
    kill_left([pid])
    print(f"cluster, a SIGKILLed worker: its CLI gone after {took:.1f} s")
    assert took < STOP_S, f"the killed worker's CLI lived {took:.1f} s"
    result = await asyncio.wait_for(run, 120)
    assert list(result["status"]) == ["done"], result["error"].tolist()
    assert fleet.where["r501"][0] != killed
    await until(lambda: len(on_cluster.client.scheduler_info()["workers"]) == 2, "the nanny's new worker")
