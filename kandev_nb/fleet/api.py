"""``kandev_nb.fleet(frame, prompt_template, ...)`` and ``kandev_nb.fleet_results(name)``.

>>> triage = await kandev_nb.fleet(tickets, "Read ticket {id} and classify it.",
...                                schema=Triage, concurrency=8, budget_usd=5, name="triage-dec")  # doctest: +SKIP
>>> tickets.join(triage)                                                                          # doctest: +SKIP

The notebook layer registers a :data:`FRONTEND` that fills the notebook's defaults
(:func:`kandev_nb.configure`: cli, env, cwd, approval timeout, policy) and shows the board;
without one (a script), the defaults are :class:`~kandev_nb.agent.config.SessionConfig`'s.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import pandas as pd

from kandev_nb.agent.config import SessionConfig
from kandev_nb.agent.permissions import ApprovalPolicy
from kandev_nb.fleet import FRONTEND as _FRONTEND
from kandev_nb.fleet.results import RowResult, result_frame
from kandev_nb.fleet.runner import Fleet
from kandev_nb.fleet.spec import FleetError, FleetSpec, check_options

__all__ = ["FRONTEND", "build_fleet", "fleet", "fleet_results"]

FRONTEND = _FRONTEND
"""The notebook's runner (:data:`kandev_nb.fleet.FRONTEND`); :func:`fleet` calls it when present."""

DEFAULT = object()
"""`ledger` default: the process's ledger (:func:`kandev_nb.ledger.default_ledger`)."""


def build_fleet(
    frame: Any,
    prompt_template: Any,
    *,
    schema: Any = None,
    concurrency: int = 4,
    budget_usd: float | None = None,
    name: str | None = None,
    retries: int = 0,
    redo: bool = False,
    mode: str | None = None,
    approve: ApprovalPolicy | None = None,
    model: str | None = None,
    max_turns: int | None = None,
    cwd: Any = None,
    allowed_tools: Sequence[str] | None = None,
    kernel_tools: bool = False,
    approval_timeout: float | None = 300.0,
    worktree: bool = False,
    config: SessionConfig | None = None,
    ledger: Any = DEFAULT,
    notebook: str | None = None,
    variables: Mapping[str, Any] | None = None,
    cluster: Any = None,
    fill_missing: str | None = None,
) -> Fleet:
    """Check everything and make the :class:`~kandev_nb.fleet.runner.Fleet` (nothing starts).

    Takes the arguments of :func:`fleet`, plus `config` (the base SessionConfig), `ledger`
    (a RunLedger, None for none) and `notebook` (the path recorded with each row). With
    `cluster` (a ``distributed.Client``), a :class:`~kandev_nb.fleet.cluster.ClusterFleet`.

    Raises:
        FleetError: bad input (see :meth:`FleetSpec.of`), an option out of range; `cluster`
            without dask installed (naming ``pip install "kandev-nb[dask]"``), not a Client,
            or with `kernel_tools`.
        TypeError, ValueError: an option SessionConfig refuses (an unknown mode...).
    """
    check_options(concurrency=concurrency, budget_usd=budget_usd, retries=retries, name=name)
    if cluster is not None:
        from kandev_nb.fleet.cluster import check_client

        check_client(cluster)  # before anything else: dask missing names the one command to run
        if kernel_tools:
            raise FleetError("kernel_tools cannot reach Dask workers (the kernel's MCP server is in the kernel)")
    columns = set(map(str, frame.columns)) if isinstance(frame, pd.DataFrame) else set()
    cwd_column = cwd if isinstance(cwd, str) and cwd in columns else None
    from kandev_nb.kernel_tools import options as kernel_tools_options
    from kandev_nb.redact import configured_secrets

    spec = FleetSpec.of(
        frame,
        prompt_template,
        schema=schema,
        variables=variables,
        cwd_column=cwd_column,
        secrets=configured_secrets(dict(config.env)) if config is not None else (),
        reveal_secrets=kernel_tools_options.reveal_secrets,
        fill_missing=fill_missing,
    )
    cwd = None if cwd_column is not None else cwd
    base = config or SessionConfig()
    changes = {"mode": mode, "model": model, "max_turns": max_turns, "cwd": cwd}
    base = replace(base, **{k: v for k, v in changes.items() if v is not None})
    if allowed_tools is not None:
        if isinstance(allowed_tools, str):
            raise FleetError(f"allowed_tools must be a list of rules, e.g. [{allowed_tools!r}], not a string")
        base = replace(base, allowed_tools=tuple(allowed_tools))
    if kernel_tools:
        from kandev_nb.kernel_tools import with_kernel_tools

        base = with_kernel_tools(base)
    trees = None
    if worktree:
        import os

        from kandev_nb.fleet.worktrees import Worktrees

        if spec.cwds is not None:
            raise FleetError("worktree=True takes one repository (cwd), not a cwd column")
        import uuid

        # an unnamed fleet gets folders and branches of its own, never an earlier unnamed fleet's edits
        trees = Worktrees(base.cwd or os.getcwd(), name or f"fleet-{uuid.uuid4().hex[:8]}")
    if ledger is DEFAULT:
        from kandev_nb.ledger import default_ledger

        ledger = default_ledger()
    made: type[Fleet] = Fleet
    extra: dict[str, Any] = {}
    if cluster is not None:
        from kandev_nb.fleet.cluster import ClusterFleet

        made, extra = ClusterFleet, {"client": cluster}
    return made(
        spec,
        base,
        **extra,
        name=name,
        concurrency=concurrency,
        budget_usd=budget_usd,
        redo=redo,
        approve=approve,
        approval_timeout=approval_timeout,
        kernel_tools=kernel_tools,
        ledger=ledger,
        notebook=notebook,
        retries=retries,
        worktrees=trees,
    )


async def fleet(frame: Any, prompt_template: Any, **options: Any) -> Any:
    """One Claude Code agent per row of `frame`; the results as a DataFrame.

    Args:
        frame: a DataFrame with a unique index; one fresh CLI session per row.
        prompt_template: ``{column}`` is the row's value (``{{`` a literal brace). A missing
            value (NaN, None, ``pd.NA``, ``NaT``) in a column it reads is refused before
            anything is sent, naming each such row and column, unless `fill_missing`.
        fill_missing: the text sent in place of a missing value of a ``{column}`` (e.g.
            ``"(none)"``, or ``""``); default None: such rows are refused (FleetError).
        schema: a pydantic model, dataclass, TypedDict or JSON-schema dict: every row answers
            with one (``--json-schema``); a row whose answer does not validate is "error".
        concurrency: at most this many CLI processes at once (default 4).
        budget_usd: the whole fleet's limit in USD: no row starts once the spend reaches it,
            running rows are interrupted when it is exceeded, rows never started are
            "skipped" with the reason.
        name: the fleet's name in the ledger; running it again starts only the rows with no
            finished ("done") row of the same template, options and row prompt (`redo=True`: all).
        retries: run a row that failed for a transient reason (an API error such as 429,
            500 or 529, a CLI that died) again, up to this many times, resuming its session.
        mode, approve, model, max_turns, cwd, allowed_tools: as for one `%%claude` cell, for
            every row (`approve` answers before the fleet's approval queue); a `cwd` that
            names a column is each row's own working directory.
        kernel_tools: give every row the kernel MCP tools (off by default).
        approval_timeout: seconds a queued approval waits before it is denied (None: it waits
            for a person). In a notebook, not given: the rule of a cell's cards (a card waits
            while a tab shows it; headless, the notebook's ``approval_timeout`` denies it);
            without a notebook, 300 s.
        worktree: with `cwd` in a git repository, each row works in its own ``git worktree``
            on a new branch ``kandev/<name>/<key>`` (an unnamed fleet: ``fleet-<8 hex digits>``,
            its own each run); the result gains ``branch``,
            ``worktree``, ``files_changed``, ``insertions``, ``deletions``; the user's
            checkout is never written (:func:`kandev_nb.fleet.worktrees.cleanup` removes them).
            On a cluster, `cwd` must exist on the workers (a shared filesystem).
        cluster: a ``distributed.Client``: each row runs as a Dask task on a worker, with the
            CLI and environment (API key) found there; approvals, the board and the ledger
            stay in the notebook (:mod:`kandev_nb.fleet.cluster`). Needs
            ``pip install "kandev-nb[dask]"``.
        dry_run: send nothing; return a :class:`~kandev_nb.fleet.estimate.FleetEstimate`: the
            row count, the rows a run would start, the first three prompts exactly as they
            would be sent, and a cost estimate in USD from the ledger's done rows of earlier
            fleets with the same template and options (or a note that there are none).
        background: in a notebook, return at once (the kernel takes other cells while the rows
            run, the board updates in its cell); the value is a
            :class:`~kandev_nb.notebook.background_turns.BackgroundFleet` and
            ``await kandev_nb.wait()`` (or ``await`` that value) gives the result frame. Where
            nobody watches the cell (nbclient, papermill, Run All) it runs blocking as a
            ``%%claude --background`` turn does, and the value is the same, already ended.
            Needs the notebook (``import kandev_nb``).

    Returns:
        The input's index; the schema's fields as typed columns (else ``answer``); then
        ``status`` (done/error/stopped/skipped), ``error``, ``cost_usd`` (USD, every attempt
        of the row: retries, stopped and failed ones, and a named fleet's earlier runs in
        the ledger, so ``result.cost_usd.sum()`` is the ledger's sum for the fleet),
        ``attempts`` (how many times the row's agent started, earlier runs included),
        ``input_tokens``, ``output_tokens``, ``duration_ms``, ``num_turns`` (the last
        attempt's), ``tool_call_count``, ``session_id``. Join it back with ``frame.join(result)``.
        The ledger's rows keep each key with its type (``kandev_nb.runs(fleet=name)``'s
        ``fleet_key``: an int, a Timestamp, a tuple for a MultiIndex).
        With `dry_run`, a :class:`~kandev_nb.fleet.estimate.FleetEstimate` instead; with
        `background`, a :class:`~kandev_nb.notebook.background_turns.BackgroundFleet`.

    Raises:
        FleetError: bad input (an empty frame, a missing ``{column}``, a missing value in a
            ``{column}`` without `fill_missing`, a duplicate index, a bad option), before
            anything starts.
    """
    if FRONTEND:
        return await FRONTEND[-1](frame, prompt_template, **options)
    if options.pop("background", False):
        raise FleetError(
            "background=True needs the notebook (import kandev_nb in a kernel); "
            "in a script, asyncio.create_task(kandev_nb.fleet(...)) runs it beside other work"
        )
    if options.pop("dry_run", False):
        return await build_fleet(frame, prompt_template, **options).dry_run()
    return await build_fleet(frame, prompt_template, **options).run()


def fleet_results(name: str, *, schema: Any = None, ledger: Any = DEFAULT) -> pd.DataFrame:
    """The result frame of fleet `name` rebuilt from the ledger: the latest row of each key
    (any fingerprint), indexed by the keys with their type (an int stays an int, a
    Timestamp a Timestamp, the tuples of a MultiIndex a MultiIndex), in the input frame's
    row order (the ``position`` each row recorded; rows that finished out of order come back
    in order). ``cost_usd`` and ``attempts`` count every turn the ledger has of the row.

    Args:
        name: the fleet's name.
        schema: the row type, for typed columns; without it, the answers' JSON values give
            nullable dtypes as ``--frame`` does (ints ``Int64``, numbers ``Float64``, booleans
            ``boolean``, text ``string``).
        ledger: a RunLedger (default: the process's).

    Raises:
        FleetError: the ledger has no row of that fleet.
        LedgerError: the ledger cannot be read.
    """
    from kandev_nb.agent.structured import OutputSpec

    if ledger is DEFAULT:
        from kandev_nb.ledger import default_ledger

        ledger = default_ledger()
    runs = ledger.runs(fleet=name)
    if runs.empty:
        raise FleetError(f"the ledger has no row of fleet {name!r} (kandev_nb.runs() lists what it has)")
    output = OutputSpec.of(schema) if schema is not None else None
    latest: dict[Any, dict[str, Any]] = {}
    spent: dict[Any, list[Any]] = {}
    for row in runs.to_dict("records"):
        key = row["fleet_key"]
        latest[key] = row
        tally = spent.setdefault(key, [None, 0])
        tally[1] += 1
        cost = row.get("cost_usd")
        if cost is not None and not pd.isna(cost):
            tally[0] = (tally[0] or 0.0) + float(cost)
    first_seen = {k: n for n, k in enumerate(latest)}
    latest = dict(sorted(latest.items(), key=lambda item: (_position(item[1]), first_seen[item[0]])))
    keys = list(latest)
    results = {k: RowResult.of_ledger(k, row, output) for k, row in latest.items()}
    for key, result in results.items():
        result.cost_usd, result.attempts = spent[key][0], spent[key][1]
    typed = schema
    if schema is None:
        raws = [r.output_raw for r in results.values() if r.output_raw is not None]
        typed = {} if raws else None
    if typed == {}:
        for r in results.values():
            r.output = r.output_raw
    return result_frame(keys, pd.Index(keys), results, typed)


def _position(row: dict[str, Any]) -> float:
    """Where row `row` stood in its fleet's input frame (``fleet_result.position``; unknown: last)."""
    saved = row.get("fleet_result")
    position = saved.get("position") if isinstance(saved, dict) else None
    return float(position) if isinstance(position, int) and not isinstance(position, bool) else float("inf")
