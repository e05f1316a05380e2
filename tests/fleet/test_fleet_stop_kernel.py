"""Stop means stop from a real kernel (issue 33, point 4): the notebook's interrupt (a real
SIGINT to the kernel's process group, as Jupyter sends it), a SIGKILLed kernel and a kernel
restart end every row's CLI on the workers of a real ``distributed.LocalCluster`` within
10 s, checked by PID; a LocalCluster made in the kernel lives through the interrupt.

Before the watchdog (:mod:`kandev_nb.fleet.watchdog`): with the cluster made in the kernel,
the SIGINT also ended both worker processes (they were in the kernel's process group) and
the cluster was left with no worker; with the cluster outside the kernel, the rows' CLIs
ran on to the end of their answers (Dask marks a cancelled running task, or one whose client
died, "cancelled" and lets it run).
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest

from kandev_nb.testing import RecordedRequest, Reply, ScriptedModelServer, text, tool_use
from tests.fleet.conftest import answer_per_row
from tests.kernel.conftest import kernel, ledger_path  # noqa: F401 - fixtures
from tests.kernel.kernel_harness import KernelHarness
from tests.kernel.test_lifecycle import mortal_kernel  # noqa: F401 - fixture

distributed = pytest.importorskip("distributed")

pytestmark = [pytest.mark.timeout(300), pytest.mark.cluster, pytest.mark.slow]

STOP_S = 10.0
NOWHERE = "http://127.0.0.1:9"
"""The kernel's ANTHROPIC_BASE_URL: only rows run on the workers reach the scripted model."""

SETUP = """
%load_ext kandev_nb
import kandev_nb, os
kandev_nb.configure(env={kernel_env!r}, cwd={cwd!r})
import pandas as pd
from distributed import Client, LocalCluster
tickets = pd.DataFrame({{"id": [1, 2, 3, 4, 5, 6]}}, index=list("abcdef"))
"""

IN_KERNEL = """
cluster = LocalCluster(n_workers=2, threads_per_worker=4, processes=True, dashboard_address=None, env={worker_env!r})
client = Client(cluster)
"""

OUTSIDE = """
client = Client({address!r})
"""

CELL = """%%claude --over tickets -o out --concurrency 4 --cluster client
Handle ticket {id}."""


def slow(number: int, request: RecordedRequest) -> Reply:
    """A long streamed answer (about 60 s)."""
    return Reply(text(f"row {number} " + "slow " * 300, chunk_size=5, delay=0.2))


def clis(home: Path) -> list[int]:
    """Running ``claude`` processes (the CLI, and a Bash call's shell naming ~/.claude) whose
    HOME is the test's: the rows' CLIs on the workers (the kernel starts none here)."""
    found = []
    for proc in psutil.process_iter(["pid"]):
        try:
            ours = proc.environ().get("HOME") == str(home) and "claude" in " ".join(proc.cmdline())
            if ours and proc.status() != psutil.STATUS_ZOMBIE:
                found.append(proc.pid)
        except (psutil.Error, OSError):
            continue
    return found


def wait_for(condition: Callable[[], Any], what: str, seconds: float = 120) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if condition():
            return
        time.sleep(0.1)
    raise AssertionError(f"never happened: {what}")


def seconds_until_gone(home: Path, pids: list[int], pump: Callable[[float], None], limit: float = 60) -> float:
    """Seconds until none of `pids` nor any other CLI of `home` runs (at most `limit`)."""
    start = time.monotonic()
    while time.monotonic() - start < limit:
        alive = [pid for pid in pids if psutil.pid_exists(pid) and psutil.Process(pid).status() != "zombie"]
        if not alive and not clis(home):
            return time.monotonic() - start
        pump(0.1)
    return limit


def kill_left(home: Path) -> None:
    for pid in clis(home):
        os.kill(pid, signal.SIGKILL)


@pytest.fixture
def outside(claude_env: dict[str, str], claude_cli: Path) -> Iterator[Any]:
    """A LocalCluster of the test process (for the kernel, a cluster elsewhere: the notebook's
    interrupt never reaches its workers)."""
    env = {**claude_env, "KANDEV_CLAUDE_CLI": str(claude_cli)}
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=4, processes=True, dashboard_address=None, env=env
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        yield client


def start_fleet(
    harness: KernelHarness,
    scripted_model: ScriptedModelServer,
    claude_env: dict[str, str],
    claude_cli: Path,
    claude_workdir: Path,
    address: str | None,
) -> tuple[Any, int, list[int]]:
    """Set up the kernel (its cluster, or a client of `address`), start the fleet cell, and
    wait until four rows stream. Returns the running cell, the kernel's pid and its
    workers' pids (asked before the cell: the kernel runs one cell at a time)."""
    scripted_model.push(*[answer_per_row(slow) for _ in range(12)])
    worker_env = {**claude_env, "KANDEV_CLAUDE_CLI": str(claude_cli)}
    kernel_env = {**claude_env, "ANTHROPIC_BASE_URL": NOWHERE}
    harness.execute(SETUP.format(kernel_env=kernel_env, cwd=str(claude_workdir)), timeout=120)
    if address is None:
        harness.execute(IN_KERNEL.format(worker_env=worker_env), timeout=120)
    else:
        harness.execute(OUTSIDE.format(address=address), timeout=60)
    pid, workers = harness.eval("[os.getpid(), sorted(client.run(os.getpid).values())]")
    run = harness.start(CELL)
    end = time.monotonic() + 180
    while len(scripted_model.main_requests) < 4:
        assert time.monotonic() < end, "four rows never streamed"
        harness.pump_for(0.2)
    return run, pid, workers


@pytest.mark.parametrize("where", ["cluster made in the kernel", "cluster outside the kernel"])
def test_the_notebooks_interrupt_ends_every_rows_cli_within_10_s_and_the_cluster_lives_on(
    where: str,
    kernel: KernelHarness,  # noqa: F811 - the fixture
    scripted_model: ScriptedModelServer,
    claude_env: dict[str, str],
    claude_cli: Path,
    claude_home: Path,
    claude_workdir: Path,
    request: pytest.FixtureRequest,
) -> None:
    client = request.getfixturevalue("outside") if where == "cluster outside the kernel" else None
    address = client.scheduler.address if client is not None else None
    try:
        run, _, workers = start_fleet(kernel, scripted_model, claude_env, claude_cli, claude_workdir, address)
        pids = clis(claude_home)
        assert len(pids) >= 4, pids
        kernel.km.interrupt_kernel()  # Jupyter's interrupt: SIGINT to the kernel's process group
        took = seconds_until_gone(claude_home, pids, kernel.pump_for)
        kernel.wait(run, timeout=60)
        kill_left(claude_home)
        print(f"{where}: the notebook's interrupt, last CLI gone after {took:.1f} s")
        assert took < STOP_S, f"a row's CLI lived {took:.1f} s after the notebook's interrupt"
        statuses = kernel.eval("sorted(out['status'].astype(str))")
        assert statuses.count("stopped") == 4 and set(statuses) <= {"stopped", "skipped"}, statuses
        # the cluster lived through it: the same worker processes, and they still run tasks
        assert kernel.eval("sorted(client.run(os.getpid).values())") == workers
        assert kernel.eval("client.submit(lambda: 41 + 1).result(timeout=30)") == 42
    finally:
        kill_left(claude_home)
        if address is None:
            kernel.execute("client.close(); cluster.close()", timeout=60)


def sigkill(harness: KernelHarness, pid: int) -> None:
    os.kill(pid, signal.SIGKILL)


def restart(harness: KernelHarness, pid: int) -> None:
    harness.km.restart_kernel(now=False)


@pytest.mark.parametrize("end", [sigkill, restart], ids=["sigkill", "restart"])
def test_the_kernels_death_or_restart_ends_its_rows_clis_on_the_workers_within_10_s(
    end: Callable[[KernelHarness, int], None],
    mortal_kernel: KernelHarness,  # noqa: F811 - the fixture
    scripted_model: ScriptedModelServer,
    claude_env: dict[str, str],
    claude_cli: Path,
    claude_home: Path,
    claude_workdir: Path,
    outside: Any,
) -> None:
    try:
        kernel = mortal_kernel
        _, pid, _ = start_fleet(
            kernel, scripted_model, claude_env, claude_cli, claude_workdir, outside.scheduler.address
        )
        pids = clis(claude_home)
        assert len(pids) >= 4, pids
        start = time.monotonic()
        end(kernel, pid)  # its client leaves the scheduler, which releases its keys
        seconds_until_gone(claude_home, pids, lambda s: time.sleep(s))
        took = time.monotonic() - start
        print(f"the kernel's {end.__name__}: last CLI on the workers gone after {took:.1f} s")
        assert took < STOP_S, f"a row's CLI lived {took:.1f} s after the kernel's {end.__name__}"
        assert outside.submit(lambda: 41 + 1).result(timeout=30) == 42
    finally:
        kill_left(claude_home)


def test_a_local_cluster_made_with_kandev_nb_lives_through_the_interrupt_of_any_cell(
    kernel: KernelHarness,  # noqa: F811 - the fixture
) -> None:
    kernel.execute(
        "import kandev_nb, os, time\nfrom distributed import Client\n"
        "cluster = kandev_nb.fleet.local_cluster(n_workers=2, threads_per_worker=1, dashboard_address=None)\n"
        "client = Client(cluster)",
        timeout=120,
    )
    try:
        workers = kernel.eval("sorted(client.run(os.getpid).values())")
        run = kernel.start("time.sleep(60)")
        kernel.pump_for(1)
        kernel.km.interrupt_kernel()
        kernel.wait(run, timeout=30)
        assert run.status == "error" and run.reply["ename"] == "KeyboardInterrupt"
        kernel.pump_for(2)
        assert all(psutil.pid_exists(pid) for pid in workers)
        assert kernel.eval("sorted(client.run(os.getpid).values())") == workers
        assert kernel.eval("client.submit(lambda: 41 + 1).result(timeout=30)") == 42
    finally:
        kernel.execute("client.close(); cluster.close()", timeout=60)


def sleep_in_bash(number: int, request: RecordedRequest) -> Reply:
    """A Bash call that runs for two minutes, then a text answer."""
    if request.last_user_text():
        return Reply(tool_use("Bash", {"command": f"python3 -c 'import time; time.sleep(120)' row-{number}"}))
    return Reply(text(f"slept {number}"))


@pytest.mark.parametrize("end", [sigkill, restart], ids=["sigkill", "restart"])
def test_a_fleet_in_the_kernel_takes_its_clis_and_their_tools_with_a_dying_or_restarting_kernel(
    end: Callable[[KernelHarness, int], None],
    mortal_kernel: KernelHarness,  # noqa: F811 - the fixture
    scripted_model: ScriptedModelServer,
    claude_env: dict[str, str],
    claude_home: Path,
    claude_workdir: Path,
) -> None:
    # each CLI dies with the kernel (its parent-death signal); its Bash call, in a session of its
    # own, lived on (its shell names ~/.claude/shell-snapshots)
    harness = mortal_kernel
    scripted_model.push(*[answer_per_row(sleep_in_bash) for _ in range(4)])
    setup = SETUP.format(kernel_env=claude_env, cwd=str(claude_workdir))
    harness.execute(setup + "allow = lambda tool, data: 'allow'\ntwo = tickets.head(2)\n")
    pid = harness.eval("os.getpid()")
    harness.start("%%claude --over two -o out --concurrency 2 --approve allow\nHandle ticket {id}.")
    try:
        wait_for(lambda: len(clis(claude_home)) >= 4, "two CLIs, each in its Bash call")  # the CLI and its shell
        harness.pump_for(1)
        family = [p for cli in clis(claude_home) for p in [cli, *[c.pid for c in psutil.Process(cli).children(True)]]]
        start = time.monotonic()
        end(harness, pid)
        seconds_until_gone(claude_home, family, lambda s: time.sleep(s))
        took = time.monotonic() - start
        print(f"an in-kernel fleet, the kernel's {end.__name__}: its CLIs and their tools gone after {took:.1f} s")
        assert took < STOP_S, f"a row's CLI or its tools lived {took:.1f} s after the kernel's {end.__name__}"
    finally:
        kill_left(claude_home)
        for each in psutil.process_iter(["cmdline"]):
            if "row-" in " ".join(each.info["cmdline"] or []) and "time.sleep(120)" in " ".join(
                each.info["cmdline"] or []
            ):
                with contextlib.suppress(psutil.Error):
                    each.kill()
