"""The fleet in the notebook: ``kandev_nb.fleet(...)`` with the notebook's defaults and the
board, and ``%%claude --over FRAME`` (one agent per row of a DataFrame variable).

>>> %%claude --over tickets -o triage --schema Triage --concurrency 8 --budget 5 --fleet triage-dec
... Read ticket {id} ("{subject}") in tickets/{id}.md and classify it.

With ``--over``, the cell's body is the prompt template (``{column}`` is the row's value, a
row value wins over a notebook variable of the same name, ``{{`` stays literal), ``--budget``
is the whole fleet's (USD), ``-o VAR`` receives the result frame, and the cell's other
options (``--mode``, ``--approve``, ``--model``, ``--max-turns``, ``--cwd``,
``--allowed-tools``, ``--approval-timeout``, ``--cli``) apply to every row. ``--cluster CLIENT``
(a ``distributed.Client`` variable) runs each row on a Dask worker (:mod:`kandev_nb.fleet.cluster`). Kernel tools are
off for fleet rows unless ``--kernel-tools`` (run_code and the notebook tools still ask). A row
with a missing value (NaN, None) in a ``{column}`` the body reads is refused, named, before
anything starts, unless ``--fill-missing TEXT`` (sent in its place; quote text with spaces).

``--background`` returns at once: the rows run as a task of the cell
(:class:`~kandev_nb.notebook.background_turns.BackgroundFleet`), the board keeps updating in
it while other cells run, ``-o VAR`` is assigned when the fleet ends (the cell says so) and
``await kandev_nb.wait()`` gives the result frame; under nbclient, papermill or Run All it
blocks as a background turn does (:func:`~kandev_nb.notebook.background_turns.blocking_reason`).
``--dry-run`` sends nothing: it shows the row count, the first three prompts as they would be
sent and a cost estimate from the ledger (:class:`~kandev_nb.fleet.estimate.FleetEstimate`;
``-o VAR`` gets it).
"""

from __future__ import annotations

import argparse
import logging
import os
from collections.abc import Callable
from functools import partial
from typing import Any

import pandas as pd
from IPython.core.magic_arguments import argument

from kandev_nb.agent.config import SessionConfig
from kandev_nb.fleet import FleetError, build_fleet
from kandev_nb.notebook.bridge import page_shown
from kandev_nb.notebook.state import current
from kandev_nb.policy.enforce import LabelledPolicy

__all__ = ["fleet_arguments", "run_fleet", "run_over"]

log = logging.getLogger("kandev_nb")


def fleet_arguments(fn: Callable[..., Any]) -> Callable[..., Any]:
    """The decorator adding ``--over``, ``--concurrency``, ``--fleet``, ``--cluster``, ``--redo``,
    ``--retries``, ``--worktree``, ``--fill-missing``, ``--kernel-tools`` and ``--dry-run``."""
    options: list[tuple[tuple[str, ...], dict[str, Any]]] = [
        (
            ("--dry-run",),
            {
                "action": "store_true",
                "help": "with --over: send nothing; show the rows, the first prompts and a cost estimate",
            },
        ),
        (("--redo",), {"action": "store_true", "help": "with --over --fleet: run every row again"}),
        (
            ("--kernel-tools",),
            {"action": "store_true", "help": "with --over: give every row the kernel MCP tools (off by default)"},
        ),
        (
            ("--worktree",),
            {"action": "store_true", "help": "with --over: each row in its own git worktree (cwd in a git repo)"},
        ),
        (
            ("--retries",),
            {"type": int, "default": 0, "metavar": "N", "help": "with --over: retry a transient failure N times"},
        ),
        (
            ("--cluster",),
            {"metavar": "CLIENT", "help": "with --over: a distributed.Client variable: each row on a Dask worker"},
        ),
        (("--fleet",), {"metavar": "NAME", "help": "with --over: the fleet's name in the ledger (resumable)"}),
        (
            ("--fill-missing",),
            {"metavar": "TEXT", "help": "with --over: send TEXT for a missing value (NaN, None) of a {column}"},
        ),
        (
            ("--concurrency",),
            {"type": int, "default": 4, "metavar": "N", "help": "with --over: at most N agents at once"},
        ),
        (
            ("--over",),
            {"metavar": "FRAME", "help": "a DataFrame variable: one agent per row, {column} is the row's value"},
        ),
    ]
    for names, kwargs in options:
        fn = argument(*names, **kwargs)(fn)  # type: ignore[no-untyped-call]  # IPython's has no annotations
    return fn


def _notebook_path() -> str | None:
    from IPython.core.getipython import get_ipython

    ip = get_ipython()  # type: ignore[no-untyped-call, unused-ignore]
    namespace = ip.user_ns if ip is not None else {}
    for key in ("__vsc_ipynb_file__", "__session__"):
        if isinstance(namespace.get(key), str):
            return str(namespace[key])
    return os.environ.get("JPY_SESSION_NAME")


async def run_fleet(
    frame: Any,
    prompt_template: Any,
    *,
    show: bool | None = None,
    background: bool = False,
    dry_run: bool = False,
    on_result: Callable[[pd.DataFrame], None] | None = None,
    **options: Any,
) -> Any:
    """:func:`kandev_nb.fleet.fleet` with the notebook's defaults (``configure``: cli, env, cwd,
    model, approval timeout and policy, inactivity timeout, hooks, ledger) and the board
    (:class:`~kandev_nb.notebook.fleet_board.FleetBoard`, shown when a kernel runs this,
    or `show`). `cli_path` (``--cli``) replaces the notebook's CLI, nothing else.

    The rows' cards follow the rule of a cell's (:func:`kandev_nb.notebook.notify.turn_timeout`):
    an `approval_timeout` given to the fleet (``--approval-timeout`` on the ``--over`` cell)
    denies after that long; without one, a card waits while a tab is attached (the page
    reminds at half the notebook's `approval_timeout`), and headless runs deny after the
    notebook's `approval_timeout` (or the Lab setting "deny after").

    The notebook's budget (``configure(budget_usd=...)``, its scope and period) still
    applies: a fleet does not start once it is spent, and its own budget is at most what is
    left of it.

    Args:
        background: return a :class:`~kandev_nb.notebook.background_turns.BackgroundFleet`
            at once, the rows running as a task of the cell; blocking (the job returned
            ended) where :func:`~kandev_nb.notebook.background_turns.blocking_reason` says so.
        dry_run: send nothing; return the :class:`~kandev_nb.fleet.estimate.FleetEstimate`
            (a spent notebook budget is a note there, not an error).
        on_result: called with the result frame when the fleet ends (``-o VAR``).

    Returns:
        The result frame; a BackgroundFleet with `background`; a FleetEstimate with `dry_run`.

    Raises:
        FleetError: bad input, before anything starts (see :func:`kandev_nb.fleet.fleet`).
        RuntimeError: the notebook's budget is spent.
    """
    from IPython.core.getipython import get_ipython

    s = current().settings
    cli_path = options.pop("cli_path", None) or s.cli_path
    options.setdefault(
        "config",
        SessionConfig(
            cwd=s.cwd,
            model=s.model,
            approval_timeout=s.approval_timeout,
            inactivity_timeout=s.inactivity_timeout,
            env=dict(s.env),
            cli_path=cli_path,
            allow_root_bypass=s.allow_root_bypass,
            answer=s.answer,
            hooks=s.hooks,
            mode=s.mode,
            session_store=s.session_store,  # a row retried elsewhere resumes from it (issue 34.10)
        ),
    )
    if "approval_timeout" not in options:  # the rule of a cell's cards (README "An unanswered card")
        from kandev_nb.notebook.notify import turn_timeout

        options["approval_timeout"] = await turn_timeout(None, s.approval_timeout)
    if options.get("approve") is None and s.approve is not None:
        options["approve"] = LabelledPolicy(s.approve, "the notebook's policy (configure(approve=...))")
    if not s.record:
        options.setdefault("ledger", None)
    options.setdefault("notebook", _notebook_path())
    notes: list[str] = []
    if s.budget_usd is not None:  # the notebook's budget (configure(budget_usd=...)) still applies
        from kandev_nb.notebook import ledger_hooks

        spent = ledger_hooks.spent(s, current().turns, options["notebook"])
        try:
            ledger_hooks.check_budget(s, spent)
        except RuntimeError as exc:
            if not dry_run:
                raise
            notes.append(f"a run would not start: {exc}")
        left = max(0.0, s.budget_usd - spent)
        given = options.get("budget_usd")
        options["budget_usd"] = left if given is None else min(given, left)
    fleet = build_fleet(frame, prompt_template, **options)
    if dry_run:
        from kandev_nb.fleet.estimate import estimate

        return await estimate(fleet, tuple(notes))
    from kandev_nb.notebook import background_turns, ledger_hooks

    ip = get_ipython()  # type: ignore[no-untyped-call, unused-ignore]
    cell = fleet.cell = ledger_hooks.cell_number(ip)  # now: IPython may advance its counter meanwhile
    blocking = await background_turns.blocking_reason() if background else None
    board = None
    kernel = getattr(ip, "kernel", None) is not None
    live = show if show is not None else kernel and await page_shown()  # headless: the static board only
    if live:
        from kandev_nb.notebook.fleet_board import FleetBoard

        board = FleetBoard(fleet)
        board.display()
    run = partial(_run_shown, fleet, board, on_result, static=show is None and kernel and not live)
    if not background:
        return await run()
    if blocking is None:  # a task of this cell: the board and -o VAR's line go to its output
        return background_turns.start(background_turns.fleet_session(fleet), cell, run, fleet=fleet)
    return background_turns.ended_fleet(fleet, cell, await run())


async def _run_shown(
    fleet: Any, board: Any, on_result: Callable[[pd.DataFrame], None] | None, static: bool = False
) -> pd.DataFrame:
    """Run `fleet`; its board (if any) becomes the static board at the end, which is shown
    then with `static` (no page showed widgets); `on_result` gets the frame."""
    result = None
    try:
        result = await fleet.run()
    finally:
        _show_final_board(fleet, board, result, static)
    if on_result is not None:
        on_result(result)
    return result


def _show_final_board(fleet: Any, board: Any, result: pd.DataFrame | None, static: bool) -> None:
    """The live `board` becomes the fleet's final board; without one, with `static` (no page
    showed widgets), the final board is displayed as a plain output. It runs while the fleet's
    own error may be on its way: a failure here is logged, never raised over it."""
    from IPython.display import display

    from kandev_nb.notebook.fleet_board import board_html, progress_text

    try:
        if board is not None:
            board.finish(result)
        elif static:
            bundle = {"text/html": board_html(fleet, result), "text/plain": progress_text(fleet)}
            display(bundle, raw=True)  # type: ignore[no-untyped-call, unused-ignore]  # typed from IPython 9
    except Exception:
        log.exception("kandev-nb could not show the fleet's final board")


def _tool_list(text: str | None) -> list[str] | None:
    if text is None:
        return None
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        text = text[1:-1]
    return [t.strip() for t in text.split(",") if t.strip()]


def _unquoted(text: str | None) -> str | None:
    """`text` without the quotes around it (``--fill-missing "n/a"``: IPython keeps them)."""
    if text is not None and len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    return text


async def run_over(args: argparse.Namespace, body: str, namespace: dict[str, Any]) -> None:
    """Run a ``%%claude --over FRAME`` cell; ``-o VAR`` gets the result frame (the board shows it).

    Raises:
        UsageError: no such DataFrame variable, a bad option, bad input (one line; nothing starts).
    """
    from IPython.core.error import UsageError

    frame = namespace.get(args.over)
    if not isinstance(frame, pd.DataFrame):
        raise UsageError(f"%%claude --over {args.over}: no DataFrame variable of that name")
    schema = None
    if args.schema is not None:
        if args.schema not in namespace:
            raise UsageError(f"%%claude --schema {args.schema}: no notebook variable of that name")
        schema = namespace[args.schema]
    if args.frame:
        raise UsageError("%%claude --over: --frame does not apply (every row gives one record; the result is a frame)")
    approve = None
    if args.approve:
        if not callable(namespace.get(args.approve)):
            raise UsageError(f"--approve {args.approve}: no callable notebook variable of that name")
        approve = LabelledPolicy(namespace[args.approve], f"this cell's policy (--approve {args.approve})")
    options: dict[str, Any] = {
        "schema": schema,
        "concurrency": args.concurrency,
        "budget_usd": args.budget,
        "name": args.fleet,
        "redo": args.redo,
        "retries": args.retries,
        "worktree": args.worktree,
        "kernel_tools": args.kernel_tools,
        "mode": args.mode,
        "approve": approve,
        "model": args.model,
        "max_turns": args.max_turns,
        "cwd": args.cwd,
        "allowed_tools": _tool_list(args.allowed_tools),
        "variables": namespace,
        "fill_missing": _unquoted(args.fill_missing),
    }
    if args.cluster:
        if args.cluster not in namespace:
            raise UsageError(f"--cluster {args.cluster}: no notebook variable of that name (client = Client(cluster))")
        options["cluster"] = namespace[args.cluster]
    if args.approval_timeout is not None:
        options["approval_timeout"] = args.approval_timeout
    if args.cli:
        options["cli_path"] = args.cli  # the notebook's other settings (mode, hooks...) still apply
    background = bool(args.background or current().settings.background)
    if args.output and not args.dry_run:
        options["on_result"] = partial(_deliver, namespace, args.output, background)
    try:
        result = await run_fleet(frame, body.strip("\n"), background=background, dry_run=args.dry_run, **options)
    except (FleetError, ValueError, TypeError, RuntimeError) as exc:
        raise UsageError(f"%%claude --over {args.over}: {exc}") from None
    if args.dry_run:
        from IPython.display import display

        display(result)  # type: ignore[no-untyped-call, unused-ignore]  # typed from IPython 9
        if args.output:
            namespace[args.output] = result


def _deliver(namespace: dict[str, Any], name: str, background: bool, result: pd.DataFrame) -> None:
    """``-o NAME`` gets the result frame; a background fleet's cell says so when it ends."""
    namespace[name] = result
    if background:
        from IPython.display import display

        from kandev_nb.notebook.background_turns import _note_bundle
        from kandev_nb.notebook.value_summary import summary_line

        display(_note_bundle(summary_line(name, result)), raw=True)  # type: ignore[no-untyped-call, unused-ignore]
