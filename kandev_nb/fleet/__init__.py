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
``api``         :func:`fleet`, :func:`fleet_results`, :func:`build_fleet`
==============  ===========================================================================

The board widget and the ``%%claude --over`` option live in the notebook layer
(:mod:`kandev_nb.notebook.fleet_board`, :mod:`kandev_nb.notebook.fleet_magic`).

This package is callable: ``kandev_nb.fleet(...)`` is :func:`kandev_nb.fleet.api.fleet`
(the package and the function share the name ``kandev_nb.fleet``).
"""

from __future__ import annotations

import sys
import types
from typing import Any

from kandev_nb.fleet import api
from kandev_nb.fleet.api import FRONTEND, build_fleet, fleet_results
from kandev_nb.fleet.queue import ApprovalQueue, FleetRule, QueuedApproval
from kandev_nb.fleet.results import STAT_COLUMNS, RowResult
from kandev_nb.fleet.runner import Fleet, RowState
from kandev_nb.fleet.spec import FleetError, FleetSpec
from kandev_nb.fleet.worktrees import cleanup as fleet_cleanup

__all__ = [
    "FRONTEND",
    "STAT_COLUMNS",
    "ApprovalQueue",
    "Fleet",
    "FleetError",
    "FleetRule",
    "FleetSpec",
    "QueuedApproval",
    "RowResult",
    "RowState",
    "build_fleet",
    "fleet_cleanup",
    "fleet_results",
]


class _CallableModule(types.ModuleType):
    """``kandev_nb.fleet(...)`` calls :func:`kandev_nb.fleet.api.fleet`."""

    def __call__(self, frame: Any, prompt_template: Any, **options: Any) -> Any:
        return api.fleet(frame, prompt_template, **options)


sys.modules[__name__].__class__ = _CallableModule
