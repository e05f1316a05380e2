"""No fleet row's CLI outlives the reason it runs, on a Dask worker (issue 33, point 4).

Dask never cancels a task that runs. ``client.cancel(future)``, a client that leaves (the
kernel died, restarted or closed its client: the scheduler releases the keys it wanted) and
any other release of a running task's key only mark the task "cancelled" on its worker,
which then waits for it to finish (distributed 2026.8,
``WorkerState._transition_executing_released``: "We can't stop executing a task just because
the scheduler asked us to"). A fleet row's task would run its CLI to the end of its answer:
measured, a cancelled row's CLI lived 60 s (the scripted answer's length), and so did those
of a client that left. So each worker that runs a row gets a watchdog, all Dask's own parts:

- :class:`RowWatchdog`, a ``distributed.WorkerPlugin``: its ``transition`` hook sees a row's
  key leave "executing" for anything but a result and cancels the row's asyncio task, which
  kills its CLI and every process the CLI started (:func:`kandev_nb.wire.transport.kill_tree`)
  at once; its ``teardown`` (the worker closes) kills the CLIs still there.
- ``Worker.close`` (the scheduler went away: the worker closes itself; the nanny restarts it)
  cancels the async tasks running on it: the same path.
- the CLI's parent-death signal (``PR_SET_PDEATHSIG``, :class:`~kandev_nb.wire.transport.StdioTransport`)
  kills it when the worker process dies, by SIGKILL too (measured: gone within 0.1 s).

And a :class:`LeaveKernelGroup` plugin keeps a ``LocalCluster`` made in the notebook's kernel
alive through the notebook's interrupt. Jupyter's interrupt signals the kernel's whole process
group (``jupyter_client``'s ``LocalProvisioner.send_signal``: ``os.killpg``), and the worker
processes of ``LocalCluster(processes=True)`` are spawned into it: measured, one SIGINT ended
both worker processes and left the cluster with no worker, nothing restarted them. The plugin
moves each worker process of the kernel's own host and process group into a process group of
its own (``os.setpgid(0, 0)``) as it starts, a worker a nanny starts again included; measured:
both workers then lived through the SIGINT, and a kernel SIGKILLed still took them with it
(within 0.2 s: they lose their nanny and scheduler, which live in the kernel). A fleet on a
cluster registers it when it starts (:class:`~kandev_nb.fleet.cluster.ClusterFleet`);
:func:`local_cluster` makes a LocalCluster with it from the start, so that an interrupt of
any cell, before any fleet ran, leaves the cluster up.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import logging
import os
import socket
from collections.abc import Iterator
from typing import Any, Final

from kandev_nb.fleet.reaper import kill_cli
from kandev_nb.fleet.spec import FleetError

__all__ = ["WATCHDOG", "LeaveKernelGroup", "RowGuard", "RowWatchdog", "leave_kernel_group", "local_cluster", "watched"]

log = logging.getLogger("kandev_nb")

WATCHDOG: Final = "kandev-nb-fleet-watchdog"
"""The name of the :class:`RowWatchdog` plugin on every worker that runs a fleet row."""

try:
    _plugin_base: Any = importlib.import_module("distributed.diagnostics.plugin").WorkerPlugin
except ImportError:  # the module documents itself without dask; nothing here runs without it
    _plugin_base = object


class RowGuard:
    """One row's task on this worker, as the watchdog sees it.

    Attributes:
        key: the row's Dask task key.
        task: the asyncio task running :func:`~kandev_nb.fleet.cluster_worker.run_row`.
        session: the row's :class:`~kandev_nb.agent.session.Session` once made, else None.
        cancelled: why the watchdog cancelled the task (None while it runs on).
    """

    def __init__(self, key: str, task: asyncio.Task[Any]) -> None:
        self.key, self.task = key, task
        self.session: Any = None
        self.cancelled: str | None = None

    def cancel(self, why: str) -> None:
        """Cancel the row's task (its CLI is killed as the cancellation reaches the turn)."""
        if self.cancelled is None:
            self.cancelled = why
            log.warning("kandev_nb fleet: row task %s cancelled on this worker: %s", self.key, why)
        self.task.get_loop().call_soon_threadsafe(self.task.cancel)

    def kill(self) -> None:
        """SIGKILL the row's CLI now with what it started (no waiting); a no-op without one."""
        kill_cli(self.session)


_rows: dict[str, RowGuard] = {}
"""The rows running on this worker process, by Dask key."""


@contextlib.contextmanager
def watched(key: str) -> Iterator[RowGuard]:
    """Register the running asyncio task as row `key` for the watchdog while the block runs."""
    task = asyncio.current_task()
    assert task is not None, "watched() runs inside the row's task"
    guard = _rows[key] = RowGuard(key, task)
    try:
        yield guard
    finally:
        if _rows.get(key) is guard:
            del _rows[key]


class RowWatchdog(_plugin_base):  # type: ignore[misc]
    """The worker plugin that ends a fleet row's CLI when its task goes (see the module).

    Installed by the first row that runs on a worker (:func:`install`); idempotent, one per
    worker whichever fleets and kernels use it.
    """

    idempotent = True
    name = WATCHDOG

    def __init__(self) -> None:
        self.worker: Any = None

    def setup(self, worker: Any) -> None:
        self.worker = worker

    def transition(self, key: Any, start: str, finish: str, *args: Any, **kwargs: Any) -> None:
        """A row's key left "executing" for anything but a result: cancel the row's task."""
        guard = _rows.get(key) if isinstance(key, str) else None
        if guard is not None and start in ("executing", "long-running") and finish not in ("memory", "error"):
            guard.cancel(f"its Dask task went from {start} to {finish} (cancelled, or its client left)")

    def teardown(self, worker: Any) -> None:
        """The worker closes: kill every row's CLI still running on it (a plugin replaced by
        another registration, on a worker that runs on, leaves them)."""
        status = str(getattr(worker, "status", ""))
        if not any(word in status for word in ("closing", "closed", "failed")):
            return
        for guard in list(_rows.values()):
            guard.kill()


_installing: dict[int, asyncio.Lock] = {}


async def install(worker: Any) -> None:
    """Add the :class:`RowWatchdog` to `worker` unless it has one (Dask's ``plugin_add``)."""
    if WATCHDOG in worker.plugins:
        return
    lock = _installing.setdefault(id(worker), asyncio.Lock())
    async with lock:
        if WATCHDOG not in worker.plugins:
            await worker.plugin_add(RowWatchdog(), name=WATCHDOG)


class LeaveKernelGroup(_plugin_base):  # type: ignore[misc]
    """A worker plugin: a worker process in the process group of the kernel on `host` moves
    to a process group of its own as it starts, so the notebook's interrupt (SIGINT to the
    kernel's group) reaches the kernel, not the cluster's workers (see the module).

    Args:
        host: the kernel's ``socket.gethostname()``.
        pgid: the kernel's process group (``os.getpgrp()``).
    """

    idempotent = True

    def __init__(self, host: str, pgid: int) -> None:
        self.host, self.pgid = host, pgid

    @property
    def name(self) -> str:
        return f"kandev-nb-leave-kernel-group-{self.host}-{self.pgid}"

    def setup(self, worker: Any) -> None:
        if socket.gethostname() != self.host or os.getpgrp() != self.pgid or os.getpid() == self.pgid:
            return
        try:
            os.setpgid(0, 0)
        except OSError as exc:  # a session leader cannot: it is not in the kernel's group then
            log.warning("kandev_nb fleet: worker %s stays in the kernel's process group: %s", worker.address, exc)


async def leave_kernel_group(client: Any, call: Any) -> None:
    """Register :class:`LeaveKernelGroup` for this process on `client`'s cluster (a fleet
    starts with it): each of its worker processes in this process's group moves to its own,
    now and when one starts again; a failure is logged (the fleet runs on).

    Args:
        client: the ``distributed.Client``.
        call: ``await call(fn, *args, **kwargs)`` calls `fn` of a synchronous or asynchronous
            client from the kernel's loop (``ClusterFleet._call``).
    """
    plugin = LeaveKernelGroup(socket.gethostname(), os.getpgrp())
    try:
        await call(client.register_plugin, plugin, name=plugin.name)
    except Exception as exc:  # noqa: BLE001 - the fleet runs; an interrupt may end local workers
        log.warning("kandev_nb fleet: workers in the kernel's process group stay there: %s", exc)


def local_cluster(**kwargs: Any) -> Any:
    """``distributed.LocalCluster(**kwargs)`` whose worker processes live through the
    notebook's interrupt (the kernel's Stop button): each leaves the kernel's process group
    as it starts (:class:`LeaveKernelGroup`), so Jupyter's interrupt stops the cell and the
    fleet's rows, never the cluster. Use it in place of ``LocalCluster`` in a notebook:

    >>> cluster = kandev_nb.fleet.local_cluster(n_workers=2, env={"ANTHROPIC_API_KEY": key})  # doctest: +SKIP
    >>> client = Client(cluster)                                                              # doctest: +SKIP

    A fleet started on any cluster registers the same plugin itself; this one does it before
    any cell can be interrupted.
    """
    from kandev_nb.fleet.cluster import require_distributed

    distributed = require_distributed()
    if kwargs.get("asynchronous"):
        raise FleetError(
            "local_cluster() makes a synchronous LocalCluster; for an asynchronous one, "
            "await client.register_plugin(LeaveKernelGroup(socket.gethostname(), os.getpgrp()))"
        )
    cluster = distributed.LocalCluster(**kwargs)
    try:
        with distributed.Client(cluster, set_as_default=False) as client:
            plugin = LeaveKernelGroup(socket.gethostname(), os.getpgrp())
            client.register_plugin(plugin, name=plugin.name)
    except BaseException:
        cluster.close()
        raise
    return cluster
