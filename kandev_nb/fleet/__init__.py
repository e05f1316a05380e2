"""Agents over data: one Claude Code agent per row of a DataFrame (issue 25).

``await kandev_nb.fleet(frame, "Read ticket {id} ...", schema=Triage, concurrency=8,
budget_usd=5, name="triage-dec")`` runs one fresh :class:`~kandev_nb.agent.session.Session`
per row and returns a typed DataFrame with the input's index. Modules:

==============  ===========================================================================
``spec``        the checked request: frame, template, each row's prompt, fingerprint
``runner``      :class:`Fleet`: futures per row, concurrency, budget, stop, ledger rows
``queue``       :class:`ApprovalQueue`: every row's approvals, one FIFO, fleet-wide rules
``results``     :class:`RowResult` and the result frame
``pacing``      the concurrency limit, halved while the API rate-limits
``worktrees``   one git worktree per row (``worktree=True``), :func:`fleet_cleanup`
``estimate``    the dry run (``dry_run=True``): :class:`FleetEstimate`, prompts and a cost estimate
``api``         :func:`fleet`, :func:`fleet_results`, :func:`build_fleet`
==============  ===========================================================================

On a Dask cluster (``cluster=client``, issue 26): ``cluster`` (:class:`ClusterFleet`, the
kernel side) and ``cluster_worker`` (:func:`run_row`, the task each worker runs).

The board widget and the ``%%claude --over`` option live in the notebook layer
(:mod:`kandev_nb.notebook.fleet_board`, :mod:`kandev_nb.notebook.fleet_magic`).

This package is callable: ``kandev_nb.fleet(...)`` is :func:`kandev_nb.fleet.api.fleet`
(the package and the function share the name ``kandev_nb.fleet``).
"""

from __future__ import annotations

import importlib
import sys
import types
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kandev_nb.fleet.api import build_fleet, fleet_results
    from kandev_nb.fleet.estimate import FleetEstimate
    from kandev_nb.fleet.queue import ApprovalQueue, FleetRule, QueuedApproval
    from kandev_nb.fleet.results import STAT_COLUMNS, RowResult
    from kandev_nb.fleet.runner import Fleet, RowState
    from kandev_nb.fleet.spec import FleetError, FleetSpec
    from kandev_nb.fleet.watchdog import local_cluster
    from kandev_nb.fleet.worktrees import cleanup as fleet_cleanup

__all__ = [
    "FRONTEND",
    "STAT_COLUMNS",
    "ApprovalQueue",
    "Fleet",
    "FleetError",
    "FleetEstimate",
    "FleetRule",
    "FleetSpec",
    "QueuedApproval",
    "RowResult",
    "RowState",
    "build_fleet",
    "fleet_cleanup",
    "fleet_results",
    "local_cluster",
]

FRONTEND: list[Callable[..., Any]] = []
"""The notebook's runner (``(frame, template, **options) -> awaitable DataFrame``), registered
by ``kandev_nb/__init__.py``; :func:`kandev_nb.fleet.api.fleet` calls it when present. Kept
here, in the light package module, so registering it imports nothing heavy."""

_WHERE = {
    "build_fleet": "api",
    "fleet_results": "api",
    "FleetEstimate": "estimate",
    "ApprovalQueue": "queue",
    "FleetRule": "queue",
    "QueuedApproval": "queue",
    "STAT_COLUMNS": "results",
    "RowResult": "results",
    "Fleet": "runner",
    "RowState": "runner",
    "FleetError": "spec",
    "FleetSpec": "spec",
    "fleet_cleanup": "worktrees",
    "local_cluster": "watchdog",
}


def __getattr__(name: str) -> Any:
    """The names of :data:`__all__`, imported on first use (pandas comes with them)."""
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module = importlib.import_module(f"{__name__}.{_WHERE[name]}")
    value = getattr(module, "cleanup" if name == "fleet_cleanup" else name)
    globals()[name] = value
    return value


class _CallableModule(types.ModuleType):
    """``kandev_nb.fleet(...)`` calls :func:`kandev_nb.fleet.api.fleet`."""

    def __call__(self, frame: Any, prompt_template: Any, **options: Any) -> Any:
        api = importlib.import_module(f"{__name__}.api")
        return api.fleet(frame, prompt_template, **options)


sys.modules[__name__].__class__ = _CallableModule
