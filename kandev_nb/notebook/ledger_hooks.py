"""What `%%claude` asks of the ledger: budgets by scope and period, the cell's number,
recording that never fails a cell, and ``%claude_stats``'s options.

Budgets (``configure(budget_usd=..., budget_scope=..., budget_period=...)``): the spend is
read from the (shared) ledger, the sum of ``turns.cost_usd`` (USD, each turn's share of the
CLI's `result.total_cost_usd`) over the scope's rows since the period began:

=============  =============================================================================
scope          rows counted
=============  =============================================================================
``notebook``   this user's turns of this notebook path (without a period or a known
               path: this kernel's own turns, as before team budgets)
``user``       this user's turns (``JUPYTERHUB_USER``, else the OS login), any notebook
``team``       every turn in the ledger (everyone who points at it)
=============  =============================================================================

``budget_period`` is ``"day"`` (from local midnight), ``"month"`` (from the 1st) or None
(all time). A ledger that cannot be read falls back to this kernel's own turns of the
period, with a warning.
"""

from __future__ import annotations

import asyncio
import warnings
from collections.abc import Sequence
from typing import Any, Final, Protocol

from kandev_nb.agent.turn import Turn
from kandev_nb.render.html import fmt_usd

__all__ = [
    "PERIODS",
    "SCOPES",
    "budget_label",
    "cell_number",
    "check_budget",
    "check_setting",
    "record",
    "spent",
    "stats",
]

SCOPES: Final = ("notebook", "user", "team")
"""What ``budget_scope`` can be."""
PERIODS: Final = ("day", "month", None)
"""What ``budget_period`` can be (None: all time)."""
_PERIOD_TEXT: Final = {"day": "today", "month": "this month", None: "so far"}


class _BudgetSettings(Protocol):
    budget_usd: float | None
    budget_scope: str
    budget_period: str | None


def check_setting(key: str, value: Any) -> None:
    """Raise ValueError for a ``budget_scope`` / ``budget_period`` it cannot take."""
    if key == "budget_scope" and value not in SCOPES:
        raise ValueError(f"budget_scope must be one of {', '.join(SCOPES)}, not {value!r}")
    if key == "budget_period" and value not in PERIODS:
        raise ValueError(f"budget_period must be 'day', 'month' or None, not {value!r}")


def budget_label(settings: _BudgetSettings) -> str:
    """Whose budget, for when: ``"notebook"``, ``"user ana, today"``, ``"team, this month"``."""
    from kandev_nb.ledger import current_user

    scope = f"user {current_user()}" if settings.budget_scope == "user" else settings.budget_scope
    return scope if settings.budget_period is None else f"{scope}, {_PERIOD_TEXT[settings.budget_period]}"


def _kernel_spend(turns: Sequence[Turn], period: str | None) -> float:
    from kandev_nb.ledger import period_start

    since = period_start(period) if period is not None else None
    return sum(t.stats.cost_usd for t in turns if t.stats and (since is None or t.started_at >= since))


def spent(settings: _BudgetSettings, turns: Sequence[Turn], notebook: str | None) -> float:
    """USD spent in the budget's scope and period (see the module doc).

    Args:
        settings: the notebook settings (``budget_scope``, ``budget_period``).
        turns: this kernel's turns (the fallback, and the notebook scope without a period).
        notebook: this notebook's path, if known.
    """
    scope, period = settings.budget_scope, settings.budget_period
    if scope == "notebook" and (period is None or notebook is None):
        return _kernel_spend(turns, period)
    from kandev_nb.ledger import LedgerError, current_user, default_ledger, period_start

    filters: dict[str, Any] = {"since": period_start(period) if period is not None else None}
    if scope in ("notebook", "user"):
        filters["user"] = current_user()
    if scope == "notebook":
        filters["notebook"] = notebook
    try:
        return float(default_ledger().totals(**filters)["cost_usd"])
    except LedgerError as exc:
        warnings.warn(f"kandev-nb: the {scope} budget counts only this kernel's turns: {exc}", stacklevel=2)
        return _kernel_spend(turns, period)


def _fmt_budget(usd: float) -> str:
    """A budget as the user set it: whole cents as cents (``$0.50``, ``$5.00``), a smaller
    amount with its own digits (``$0.0010``, never ``$0.00``)."""
    return f"${usd:,.2f}" if usd == round(usd, 2) else fmt_usd(usd)


def check_budget(settings: _BudgetSettings, spent_usd: float) -> None:
    """Refuse a turn once the budget is spent.

    Raises:
        RuntimeError: naming the scope, the period, the budget and the spend (USD).
    """
    if settings.budget_usd is None or spent_usd < settings.budget_usd:
        return
    raise RuntimeError(
        f"the {budget_label(settings)} budget of {_fmt_budget(settings.budget_usd)} is spent: "
        f"{fmt_usd(spent_usd)} {_PERIOD_TEXT[settings.budget_period]} ({settings.budget_scope} scope); "
        "raise it with kandev_nb.configure(budget_usd=...)"
    )


def cell_number(ip: Any) -> int | None:
    """The number the notebook shows for the running cell (``In [n]``), the one its
    execute_input and execute reply carry as ``execution_count``.

    It is the running cell's ``ExecutionResult.execution_count``
    (``ip.displayhook.exec_result``), which IPython fixes when the cell starts, before and
    independently of when it advances ``ip.execution_count`` to the next cell's number.
    Call it when the cell starts. Falls back to ``ip.execution_count``; None outside IPython.
    """
    result = getattr(getattr(ip, "displayhook", None), "exec_result", None)
    count = getattr(result, "execution_count", None)
    if isinstance(count, int):
        return count
    fallback = getattr(ip, "execution_count", None)
    return fallback if isinstance(fallback, int) else None


async def record(turn: Turn, notebook: str | None, execution_count: int | None) -> None:
    """Write `turn` to the default ledger in a thread, or keep it in the spool when the
    ledger does not answer (:func:`kandev_nb.ledger.record_or_spool`); never raises: a
    problem is a warning (passwords masked), never an error of the cell."""
    from kandev_nb.ledger import mask_secrets, record_or_spool

    try:
        await asyncio.to_thread(record_or_spool, turn, notebook=notebook, execution_count=execution_count)
    except Exception as exc:  # noqa: BLE001 - the ledger must never break a cell
        warnings.warn(f"kandev-nb could not record the turn in the ledger: {mask_secrets(str(exc))}", stacklevel=1)
        return
    if "ledger_spooled" in turn.meta:
        warnings.warn(
            "kandev-nb: the ledger did not answer; the turn is kept in the spool and written when it "
            "answers again (next turn or kandev_nb.ledger_flush())",
            stacklevel=1,
        )


def stats(line: str, notebook: str | None, session_id: str | None) -> Any:
    """``%claude_stats [--team] [--user NAME]``: the ledger's summary as a
    :class:`~kandev_nb.ledger.stats.Stats`.

    Raises:
        UsageError: an unknown option.
    """
    import argparse
    import shlex

    from IPython.core.error import UsageError

    from kandev_nb.ledger import default_ledger
    from kandev_nb.ledger.stats import Stats

    parser = argparse.ArgumentParser(prog="%claude_stats", add_help=False, exit_on_error=False)
    parser.add_argument("--team", action="store_true")
    parser.add_argument("--user")
    try:
        args, extra = parser.parse_known_args(shlex.split(line))
    except (argparse.ArgumentError, ValueError) as exc:
        raise UsageError(f"%claude_stats: {exc}") from None
    if extra:
        raise UsageError(f"%claude_stats: unknown option(s) {' '.join(extra)}; use --team and/or --user NAME")
    ledger = default_ledger()
    if args.team:
        return Stats(ledger.team(user=args.user))
    return Stats(ledger.summary(notebook=notebook, session_id=session_id, user=args.user))
