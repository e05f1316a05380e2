"""The ledger's reports: what ``%claude_stats`` shows, spend per user and per notebook.

:class:`LedgerReports` is mixed into :class:`~kandev_nb.ledger.RunLedger`; its queries run in
the database (SQLAlchemy Core) and come back as pandas DataFrames, like the ledger's other
reads.
"""

from __future__ import annotations

import os
from typing import Any, Unpack

import pandas as pd
import sqlalchemy as sa

from kandev_nb.ledger.frames import Filters, TimeLike, _Select, _where, period_start
from kandev_nb.ledger.rows import _TEXT, model_usage_table, tool_calls_table, turns_table

__all__ = ["LedgerReports"]


class LedgerReports:
    """Summaries over a ledger's tables (mixed into RunLedger, which gives the reads)."""

    def totals(self, **filters: Unpack[Filters]) -> dict[str, Any]:
        raise NotImplementedError

    def _read(self, stmt: _Select) -> pd.DataFrame:
        raise NotImplementedError

    def summary(
        self,
        *,
        notebook: str | os.PathLike[str] | None = None,
        session_id: str | None = None,
        since: TimeLike | None = None,
        top: int = 10,
        user: str | None = None,
    ) -> dict[str, Any]:
        """A small summary for ``%claude_stats``.

        Args:
            user: only this user's turns, in every total and breakdown (``%claude_stats --user``).
            notebook: also give totals for this notebook.
            session_id: also give totals for this CLI session.
            since: the start of the `by_model` and `top_tools` breakdowns (default: all time).
            top: how many tools `top_tools` lists.

        Returns:
            ``{"today": totals, "all": totals, "notebook": totals (if asked),
            "session": totals (if asked), "by_model": DataFrame, "top_tools": DataFrame}``
            where totals are :meth:`totals` dicts, "today" starts at local midnight,
            ``by_model`` is indexed by model with columns ``turns``, ``cost_usd`` (USD),
            ``input_tokens``, ``output_tokens`` (most expensive first), and ``top_tools``
            is indexed by tool name with ``calls``, ``errors`` (calls that ran and
            failed; a denied call is not one), ``denied`` and ``mean_duration_ms`` (most
            called first). :class:`kandev_nb.ledger.stats.Stats` renders it.

        Raises:
            LedgerError: the database cannot be read.
        """
        midnight = period_start("day")
        out: dict[str, Any] = {"today": self.totals(since=midnight, user=user), "all": self.totals(user=user)}
        if notebook is not None:
            out["notebook"] = self.totals(notebook=notebook, user=user)
        if session_id is not None:
            out["session"] = self.totals(session_id=session_id, user=user)
        t, m, c = turns_table.c, model_usage_table.c, tool_calls_table.c
        cost = sa.func.coalesce(sa.func.sum(m.cost_usd), 0.0).label("cost_usd")
        by_model = (
            sa.select(
                m.model,
                sa.func.count(sa.distinct(m.turn_id)).label("turns"),
                cost,
                sa.func.sum(m.input_tokens).label("input_tokens"),
                sa.func.sum(m.output_tokens).label("output_tokens"),
            )
            .join_from(model_usage_table, turns_table, m.turn_id == t.id)
            .group_by(m.model)
            .order_by(cost.desc())
        )
        calls = sa.func.count(c.id).label("calls")
        tools = (
            sa.select(
                c.tool_name,
                calls,
                sa.func.sum(
                    sa.case((sa.and_(c.status == "error", sa.func.coalesce(c.decision, "") != "deny"), 1), else_=0)
                ).label("errors"),
                sa.func.sum(sa.case((c.decision == "deny", 1), else_=0)).label("denied"),
                sa.func.avg(c.duration_ms).label("mean_duration_ms"),
            )
            .join_from(tool_calls_table, turns_table, c.turn_id == t.id)
            .group_by(c.tool_name)
        )
        tools = tools.order_by(calls.desc(), c.tool_name).limit(top)
        filters: Filters = {"since": since, "user": user}
        out["by_model"] = self._read(_where(by_model, filters)).astype({"model": _TEXT}).set_index("model")
        out["top_tools"] = self._read(_where(tools, filters)).astype({"tool_name": _TEXT}).set_index("tool_name")
        return out

    def spend_by(self, keys: tuple[str, ...], **filters: Unpack[Filters]) -> pd.DataFrame:
        """Spend and tokens grouped by ``turns`` columns (e.g. ``("user",)``, ``("user", "notebook")``).

        Returns:
            One row per group (most expensive first): the `keys` columns, then ``turns``,
            ``cost_usd`` (USD, sum of the turns' `result` costs), ``input_tokens``,
            ``output_tokens``. A turn without a user (written before user was recorded)
            groups under a missing value.

        Raises:
            LedgerError: the database cannot be read.
            ValueError: a key that is not a ``turns`` column.
        """
        unknown = [k for k in keys if k not in turns_table.c]
        if unknown:
            raise ValueError(f"not turns columns: {unknown}")
        t = turns_table.c
        cost = sa.func.coalesce(sa.func.sum(t.cost_usd), 0.0).label("cost_usd")
        stmt = (
            sa.select(
                *(t[k] for k in keys),
                sa.func.count(t.id).label("turns"),
                cost,
                sa.func.coalesce(sa.func.sum(t.input_tokens), 0).label("input_tokens"),
                sa.func.coalesce(sa.func.sum(t.output_tokens), 0).label("output_tokens"),
            )
            .group_by(*(t[k] for k in keys))
            .order_by(cost.desc(), *(t[k] for k in keys))
        )
        return self._read(_where(stmt, filters))

    def team(self, *, user: str | None = None) -> dict[str, Any]:
        """What ``%claude_stats --team`` shows: spend and tokens per user and per notebook,
        today (from local midnight) and this month (from the 1st, local time).

        Args:
            user: only this user's rows.

        Returns:
            ``{"today": totals, "month": totals, "by_user": DataFrame, "by_notebook": DataFrame}``;
            totals as :meth:`totals`; ``by_user`` indexed by user and ``by_notebook`` by
            notebook (with a ``user`` column), each with ``turns_today``, ``cost_today``
            (USD), ``tokens_in_today``, ``tokens_out_today`` and the same ``*_month``
            columns, most expensive this month first.

        Raises:
            LedgerError: the database cannot be read.
        """
        day, month = period_start("day"), period_start("month")
        out: dict[str, Any] = {"today": self.totals(since=day, user=user), "month": self.totals(since=month, user=user)}
        for name, keys in (("by_user", ("user",)), ("by_notebook", ("user", "notebook"))):
            parts = []
            for label, since in (("today", day), ("month", month)):
                frame = self.spend_by(keys, since=since, user=user).set_index(list(keys))
                parts.append(
                    frame.rename(
                        columns={
                            "turns": f"turns_{label}",
                            "cost_usd": f"cost_{label}",
                            "input_tokens": f"tokens_in_{label}",
                            "output_tokens": f"tokens_out_{label}",
                        }
                    )
                )
            joined = parts[0].join(parts[1], how="outer").sort_values("cost_month", ascending=False)
            if name == "by_notebook":
                joined = joined.reset_index("user")
            out[name] = joined
        return out
