"""The `%%claude` cell magic: a shell over :class:`~kandev_nb.agent.session.Session`.

A `%%claude` cell must block until the turn ends (so Run All, nbclient and papermill run in
order) while button clicks still reach Python. Measured (DESIGN.md): only a cell whose body
is a top-level ``await`` does both on ipykernel >= 7.4. So `%%claude` is an IPython *input
transformer* that rewrites the cell into::

    await __import__("kandev_nb.notebook.magic").notebook.magic.run_cell('<options>', '<prompt>');

The trailing semicolon keeps the Turn out of ``Out[]``; use ``kandev_nb.last_turn()``.
``--background`` (issue 27) makes the turn a task of the cell instead, where a tab watches
and no cell waits behind it (:mod:`kandev_nb.notebook.background_turns`).
The kernel's interrupt arrives as CancelledError in that await; the session turns it into
the protocol's `interrupt` and the CLI process survives for the next cell.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import re
from dataclasses import replace
from functools import partial
from typing import Any

from IPython.core.magic_arguments import argument, magic_arguments, parse_argstring

from kandev_nb import kernel_tools
from kandev_nb.agent.config import SessionConfig
from kandev_nb.agent.origin import Origin
from kandev_nb.agent.permissions import MODES, mode_from_cli
from kandev_nb.agent.session import Session
from kandev_nb.agent.suggestions import ModeChoices
from kandev_nb.agent.turn import Turn
from kandev_nb.notebook import (
    answers,
    background_turns,
    ledger_hooks,
    live_options,
    notify,
    outputs,
    turn_actions,
    turn_numbers,
)
from kandev_nb.notebook.attachments import AttachmentError
from kandev_nb.notebook.bridge import open_notebook_guard, page_shown
from kandev_nb.notebook.cell_prompt import cell_origin, notebook_path, notebook_policy, prompt_and_policy
from kandev_nb.notebook.cell_text import PromptError, clean_help, did_you_mean, interpolate
from kandev_nb.notebook.cell_view import spent_usd, turn_view, watch_reloads
from kandev_nb.notebook.fleet_magic import fleet_arguments, run_over
from kandev_nb.notebook.state import NotebookSettings, configure, current, last_turn
from kandev_nb.wire.cli import CLINotFoundError
from kandev_nb.wire.transport import CLIProcessError

__all__ = [
    "NotebookSettings",
    "PromptError",
    "claude_help",
    "configure",
    "interpolate",
    "last_turn",
    "run_cell",
    "transform_cell",
]

log = logging.getLogger("kandev_nb")


def __getattr__(name: str) -> Any:
    """``settings``, ``sessions`` and ``_turns``: those of the current
    :class:`~kandev_nb.notebook.state.NotebookState` (the names these module globals had)."""
    state = current()
    if name == "settings":
        return state.settings
    if name == "sessions":
        return state.sessions
    if name == "_turns":
        return state.turns
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


_CELL = re.compile(r"^%%claude(?:[ \t]+(?P<line>[^\n]*))?[ \t]*(?:\n|$)")


# -- the transformer -----------------------------------------------------------------------


def transform_cell(lines: list[str]) -> list[str]:
    """IPython cleanup transformer: a `%%claude` cell becomes a top-level await.

    `%%claude?` (help) and cells that only start with `%%claude_...` are left alone.
    """
    if not lines or not lines[0].startswith("%%claude"):
        return lines
    source = "".join(lines)
    match = _CELL.match(source)
    if match is None or (match.group("line") or "").rstrip().endswith("?"):
        return lines
    options = (match.group("line") or "").strip()
    body = source[match.end() :]
    return [f"await __import__('kandev_nb.notebook.magic').notebook.magic.run_cell({options!r}, {body!r});\n"]


# -- options -------------------------------------------------------------------------------


@magic_arguments()
@background_turns.background_argument
@fleet_arguments
@outputs.output_arguments
@argument(
    "--mode",
    choices=MODES,
    help="permission mode of this cell only (default: the notebook's, configure(mode=...), supervised)",
)
@argument("--model", help="the model for this session (e.g. sonnet, opus)")
@argument("--new", action="store_true", help="start a fresh session (the old CLI process is closed)")
@argument("--session", default="default", metavar="NAME", help="a named session; several can run side by side")
@argument(
    "--resume",
    metavar="SESSION_ID",
    help="continue a conversation from another kernel or the terminal; 'last' = this notebook's latest",
)
@argument("--fork", action="store_true", help="with --resume: branch off without changing the original")
@argument("--retry", action="store_true", help="after a failed turn: resume at the last good message and send again")
@argument("--max-turns", type=int, help="maximum API round trips in this session's turns")
@argument("--cwd", help="working directory of the CLI")
@argument("--mcp-config", help="MCP servers (JSON text or a file path), as the CLI takes it")
@argument("--system-prompt", help="replace the system prompt")
@argument("--append-system-prompt", help="add to the system prompt")
@argument("--allowed-tools", help="comma-separated tools allowed without asking, e.g. 'Bash(git status*),Read'")
@argument(
    "--disallowed-tools",
    metavar="TOOLS",
    help="comma-separated tools Claude may not use at all, e.g. 'WebFetch,Bash(rm *)' (the CLI's --disallowedTools)",
)
@argument("--approval-timeout", type=float, metavar="SECONDS", help="deny an unanswered approval after this long")
@argument(
    "--approve", metavar="NAME", help="a notebook variable holding an approval policy (callable or Rules) for this cell"
)
@argument("--budget", type=float, metavar="USD", help="maximum spend of this session's CLI in USD")
@argument("--transport", choices=("stdio", "websocket"), default="stdio", help="how to talk to the CLI")
@argument("--cli", metavar="PATH", help="the claude binary to use")
@argument(
    "--attach",
    action="append",
    default=[],
    metavar="PATH_OR_VAR",
    help="a file, or a variable holding a matplotlib figure, PIL image or PNG bytes (repeatable)",
)
@argument("--no-interpolate", action="store_true", help="send {braces} literally")
@argument("--quiet", action="store_true", help="no live widgets; only the static rendering at the end")
@argument(
    "--no-kernel-tools",
    action="store_true",
    help="no kernel MCP tools (variables, run_code) for a session this cell starts",
)
@argument("--i-am-sandboxed", action="store_true", help="allow --mode autonomous as root (sets IS_SANDBOX=1)")
def claude_help(line: str, cell: str | None = None) -> None:
    """Send the cell's body to Claude Code and show the turn live.

    Consecutive cells continue one conversation in one CLI process. {name} in the prompt
    is replaced by the notebook variable `name` ({{name}} for literal braces); a value of
    several lines (a DataFrame, a file's text) is sent as a fenced block. The cell blocks
    until the turn ends; approvals appear as cards with Allow / Deny buttons. After the
    cell, kandev_nb.runs() has one row per turn and kandev_nb.last_turn() the turn itself.

    For this cell only: --mode, --approve, --approval-timeout, --attach, --no-interpolate,
    --quiet, --retry, --schema/-o/--frame. A cell without --mode runs in the notebook's mode
    (kandev_nb.configure(mode=...), supervised unless changed).
    For the session (kept by later cells until changed): --model, --budget, --max-turns,
    --cwd, --mcp-config, --system-prompt, --append-system-prompt, --allowed-tools,
    --disallowed-tools, --no-kernel-tools, --transport, --cli, --hooks.
    Which session: --session, --new, --resume, --fork.

    Examples:
      %%claude
      Summarise {df} in three bullet points

      %%claude --mode plan
      Plan a refactor of utils.py; do not edit yet

      %%claude --mode acceptEdits --attach fig
      Fix the axis labels of this plot in plot.py

      %%claude --session review --model opus
      Review the diff of the last commit
    """


def parse_options(line: str) -> argparse.Namespace:
    """Parse a `%%claude` option line like IPython's own magics do.

    Raises:
        UsageError: unknown option or bad value (IPython shows the message, nothing is
            sent); a misspelt option also says "did you mean --mode?" (difflib).
    """
    from IPython.core.error import UsageError

    try:
        args: argparse.Namespace = parse_argstring(claude_help, line)
    except UsageError as exc:
        hint = did_you_mean(line, _option_names())
        if hint:
            raise UsageError(f"{exc}; {hint}") from None
        raise
    return args


def _option_names() -> list[str]:
    """Every long option of `%%claude` (``--mode``, ``--model``...)."""
    parser = claude_help.parser
    return [o for action in parser._actions for o in action.option_strings if o.startswith("--")]


# -- running a cell ------------------------------------------------------------------------


_CELL_OPTIONS: dict[str, str] = {
    "cwd": "cwd",
    "model": "model",
    "max_turns": "max_turns",
    "budget": "max_budget_usd",
    "mcp_config": "mcp_config",
    "system_prompt": "system_prompt",
    "append_system_prompt": "append_system_prompt",
}
"""`%%claude` options a cell may change a session's launch with -> the SessionConfig field
(the two tool lists come from :func:`_tool_list`); kept by later cells until changed."""

_PROBE = object()
"""Stands in for the kernel tools' server when only the launch options are compared."""


def _tool_list(text: str | None) -> tuple[str, ...] | None:
    """``"Read, Bash(git *)"`` -> ``("Read", "Bash(git *)")``. IPython's option parser keeps
    the quotes around a value with spaces (``--allowed-tools 'Bash(git *)'``): they go."""
    if text is None:
        return None
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        text = text[1:-1]
    return tuple(t.strip() for t in text.split(",") if t.strip())


def _notebook_config(args: argparse.Namespace) -> SessionConfig:
    """A session's configuration from the notebook settings alone (a fresh session)."""
    s = current().settings
    return SessionConfig(
        cwd=s.cwd,
        model=s.model,
        approval_timeout=s.approval_timeout,
        inactivity_timeout=s.inactivity_timeout,
        env=dict(s.env),
        cli_path=args.cli or s.cli_path,
        forward_subagent_text=s.forward_subagent_text,
        session_store=s.session_store,
    )


def _session_for(args: argparse.Namespace) -> tuple[Session, Session | None, SessionConfig]:
    """The session this cell runs in, the live one it replaces, and the config it asked for.

    Consecutive cells reuse one session. A cell whose wanted
    :class:`~kandev_nb.wire.cli.LaunchOptions` differ from the running process's
    (``--model``, ``--budget``, ``--cwd``, ``--no-kernel-tools``...; the conversation to
    resume and the mode excepted, see :meth:`LaunchOptions.same_process`) gets a new CLI
    process that resumes the same conversation; ``--new``, ``--resume``, ``--cli`` and
    ``--transport`` start a different one. The caller registers the new session only once
    it has started, so a failing option leaves the working session in place.

    Raises:
        ValueError, TypeError: an option value SessionConfig / LaunchOptions refuse.
    """
    state, name = current(), args.session
    existing = state.sessions.get(name)
    fresh = (
        existing is None
        or args.new
        or args.resume is not None
        or args.cli is not None
        or (args.transport != state.transports.get(name, "stdio"))
    )
    base = _notebook_config(args) if fresh or existing is None else state.requested.get(name, existing.config)
    given: dict[str, Any] = {field: getattr(args, option) for option, field in _CELL_OPTIONS.items()}
    given.update(allowed_tools=_tool_list(args.allowed_tools), disallowed_tools=_tool_list(args.disallowed_tools))
    extras = live_options.merged(() if fresh else state.extras.get(name, ()), args)
    requested = replace(
        base,
        **{k: v for k, v in given.items() if v is not None},
        mode=cell_mode(args),
        approve=None if fresh else base.approve,
        allow_root_bypass=args.i_am_sandboxed
        or state.settings.allow_root_bypass
        or (not fresh and base.allow_root_bypass),
        resume=args.resume if fresh else existing.session_id if existing else None,
        resume_session_at=getattr(args, "resume_session_at", None)
        if fresh
        else existing.resume_point
        if existing
        else None,
        resume_drops_turn=getattr(args, "resume_drops_turn", None) if fresh else None,
        fork=args.fork and fresh,
        **_launch_extras(extras, base, own=fresh or name in state.requested),
        answer=state.settings.answer,
    )
    on = (
        state.settings.kernel_tools
        if fresh or existing is None
        else kernel_tools.SERVER_NAME in existing.config.mcp_servers
    )
    on = on and not args.no_kernel_tools
    if not fresh and existing is not None:
        probe = kernel_tools.with_kernel_tools(requested, server=_PROBE) if on else requested  # type: ignore[arg-type]
        if probe.launch_options().same_process(existing.launch_options):
            state.extras[name] = extras
            return existing, None, requested
    state.extras[name] = extras  # kept for the next cell of this name (a failing start changes nothing else)
    # With the kernel tools, the notebook open in a tab is edited through them: the CLI's own
    # file tools are refused on it (a PreToolUse hook), so nothing rewrites it behind the tab.
    config = replace(kernel_tools.with_kernel_tools(requested), file_guard=open_notebook_guard) if on else requested
    factory = state.websocket() if args.transport == "websocket" else None
    return Session(config, name=name, transport_factory=factory), existing, requested


def _launch_extras(extras: tuple[tuple[str, Any], ...], base: SessionConfig, *, own: bool) -> dict[str, Any]:
    """`extra_args`, `agents` and `file_checkpoints` for the cell's session: the magic's own (launch
    flags, checkpoints on), or, for a session put in ``kandev_nb.sessions`` from Python and
    given no launch flag, what that session already has (so a plain cell continues it)."""
    if own or extras:
        return live_options.session_fields(extras)
    return {"extra_args": base.extra_args, "agents": base.agents, "file_checkpoints": base.file_checkpoints}


def _adopt(session: Session, replaced: Session | None, requested: SessionConfig, transport: str) -> None:
    """Register a session that started; close the one it replaces."""
    state = current()
    state.sessions[session.name] = session
    state.requested[session.name] = requested
    state.transports[session.name] = transport
    if replaced is not None and replaced is not session:
        _close_later(replaced)


def _close_later(session: Session) -> None:
    task = asyncio.get_running_loop().create_task(session.close())
    task.add_done_callback(lambda t: t.exception() if not t.cancelled() else None)


async def run_cell(line: str, body: str) -> Turn | None:
    """Run one `%%claude` cell: parse options, show the live view, run the turn, record it.

    Returns:
        The finished :class:`Turn` (also ``kandev_nb.last_turn()``); None for ``--background``
        (the turn goes on as a task of the cell: ``await kandev_nb.wait()``, see
        :mod:`kandev_nb.notebook.background_turns`) and for ``--over``.

    Raises:
        UsageError: bad options, an unknown ``{name}``, a missing attachment, an exhausted
            budget, a CLI that refused or did not answer the cell's mode change
            (`set_permission_mode`), or a CLI that cannot start; IPython prints it in one
            line and nothing is sent to the CLI.
        KeyboardInterrupt: the kernel's interrupt stopped the turn (after it is shown and
            recorded), so that Jupyter drops the cells queued after this one.
    """
    from IPython.core.error import UsageError
    from IPython.core.getipython import get_ipython

    ip = get_ipython()
    namespace: dict[str, Any] = ip.user_ns if ip is not None else {}
    cell_number = ledger_hooks.cell_number(ip)  # now: IPython may advance its counter during the turn
    try:
        args = parse_options(line)
        if args.over:  # one agent per row of a DataFrame (kandev_nb/notebook/fleet_magic.py)
            await run_over(args, body, namespace)  # --background: a task of the cell, as a turn's
            return None
        if args.dry_run:
            raise ValueError("--dry-run goes with --over FRAME (a fleet's estimate); a single turn has none")
        prompt, policy = prompt_and_policy(args, body, namespace)  # {name} is read now, also in the background
        answers.take_next(args)  # a header chip's model (issue 27 point 9)
    except _CELL_ERRORS as exc:
        raise UsageError(f"%%claude: {exc}") from None
    origin = cell_origin(ip, namespace, cell_number)  # now: the cell id is read in the cell's own context
    turn = partial(_run_turn, args, line, body, prompt, policy, namespace, origin)
    if (args.background or current().settings.background) and await background_turns.blocking_reason() is None:
        background_turns.start(args.session, cell_number, turn)  # returns at once (background_turns.py)
        return None
    await background_turns.settle(args.session)  # after this session's background turns
    return await turn()


_CELL_ERRORS = (PromptError, AttachmentError, ValueError, TypeError, RuntimeError, TimeoutError)


async def _run_turn(
    args: argparse.Namespace, line: str, body: str, prompt: str, policy: Any, ns: dict[str, Any], origin: Origin
) -> Turn:
    """The cell's turn once its options and prompt are read: in the cell, or as its background task."""
    from IPython.core.error import UsageError

    cell_number, namespace = origin.execution_count, ns
    try:
        await _switch_mode(args)
        await live_options.apply_live(args, current(), namespace)  # --model etc. on the live process
        _check_budget()
        session, replaced, requested = _session_for(args)
        turn_numbers.continue_numbering(session, replaced, retry=args.retry)  # no second "turn 1"
        spec = outputs.prepare(args, session, namespace, current().settings.hooks, replaced)
    except _CELL_ERRORS as exc:
        # Shown like IPython's own option errors: one line, no traceback, the cell fails.
        raise UsageError(f"%%claude: {exc}") from None

    shown = await page_shown()  # a page shows widgets: the live view; headless: the static rendering only
    state = current()
    attached = await notify.interactive() if shown else False  # a tab: cards wait and remind
    timeout = await notify.turn_timeout(args.approval_timeout, state.settings.approval_timeout, attached)
    view = None if args.quiet else turn_view(prompt, session, shown, _source(line, body), args.approval_timeout)
    reattach = watch_reloads(view, _source(line, body))
    kernel_tools.follow_cell(session)
    try:
        if state.sessions.get(session.name) is not session:
            if replaced is not None and replaced.session_id == session.config.resume:
                await replaced.stop_process()  # it saves the running totals the new process restores
            await session.start()  # before it is replaced: a bad option keeps the old session (which resumes)
            _adopt(session, replaced, requested, args.transport)
            if session.launch_note:  # e.g. --retry could not resume at the last good message
                print(
                    f"%%claude{' --retry' if args.retry else ''}: {session.launch_note}"
                    + (" The prompt was sent again." if args.retry else "")
                )
        session.broker.answer = state.settings.answer  # configure(answer=...) applies at once
        session.broker.policy = notebook_policy(state.settings.approve)  # its deny rules hold in every cell
        session.broker.cell = cell_number  # a session grant given now is "given in cell [n]"
        choices = ModeChoices()  # a card's "switch to ... mode for this session"
        turn, failure = await outputs.run_turn(
            session,
            prompt,
            spec,
            [view.handle, choices] if view else [choices],
            policy,
            approval_timeout=timeout,
            origin=origin,
        )
    except (CLINotFoundError, CLIProcessError) as exc:
        if view is not None:
            view.close()
        raise UsageError(f"%%claude: {exc}") from None
    except BaseException:
        if view is not None and not view.live:
            view.close()  # a headless view stops waiting for a page (a live one keeps what it showed)
        raise
    turn_numbers.mark(session, turn, cell_number)  # "turn 3" in the header; %claude_undo --cell
    if view is not None:
        bundle = view.finish(turn)  # the cell output becomes the turn's static rendering
        if (reattach := reattach or getattr(view, "reattach", None)) is not None:  # and in a tab reloaded meanwhile
            await reattach.finish(bundle, cell_number)
    else:
        from IPython.display import display

        display(turn)
    state.turns.append(turn)
    turn_actions.show(session, turn, view, _source(line, body))  # Retry / Send again / Undo (issue 27.5)
    if choices.mode is not None and (chosen := mode_from_cli(choices.mode)) is not None:
        state.card_modes[session.name] = chosen
    if state.settings.record:
        await ledger_hooks.record(turn, notebook_path(namespace), cell_number)
    if turn.meta.get("cancelled"):
        # The kernel's interrupt (the notebook's stop button) stops everything: the partial turn
        # is shown and recorded, and the cell fails so that Jupyter drops the cells queued after
        # it (Run All). The card's own Stop button ends only the turn.
        raise KeyboardInterrupt
    return outputs.deliver(args, turn, failure, namespace)  # -o VAR, or the structured answer's error


def cell_mode(args: argparse.Namespace) -> str:
    """The permission mode one cell runs in: its own ``--mode``, else the mode a card switched
    its session to ("... mode for this session", :class:`~kandev_nb.agent.suggestions.ModeChoices`;
    forgotten on ``--new``), else the notebook's (``configure(mode=...)``, "supervised" unless
    changed). A ``--mode`` never carries over from an earlier cell."""
    state = current()
    if args.new:
        state.card_modes.pop(args.session, None)
    return str(args.mode or state.card_modes.get(args.session) or state.settings.mode)


async def _switch_mode(args: argparse.Namespace) -> None:
    """Put the live session in this cell's mode (:func:`cell_mode`) before the turn.

    A mode change on a live process is the CLI's ``set_permission_mode`` control request
    (no restart; :meth:`Session.set_mode`). A cell without ``--mode`` after a
    ``--mode acceptEdits`` cell thus goes back to the notebook's mode.

    Raises:
        ControlError, ControlTimeoutError: the CLI refused or did not answer; the cell is
            not sent (it must not run in a more permissive mode than it says).
    """
    live = current().sessions.get(args.session)
    mode = cell_mode(args)
    if live is not None and not args.new and live.config.mode != mode:
        await live.set_mode(mode, allow_root_bypass=True if args.i_am_sandboxed else None)


def _source(line: str, body: str) -> str:
    return "%%claude" + (f" {line}" if line else "") + "\n" + body


def _check_budget() -> None:
    """Refuse a turn once the budget of its scope is spent (raises RuntimeError naming scope, period, spend)."""
    settings = current().settings
    if settings.budget_usd is not None:
        ledger_hooks.check_budget(settings, spent_usd())


def claude_cell(line: str, cell: str) -> None:
    """The registered `%%claude` cell magic. It only runs when the transformer did not
    (e.g. ``%%claude?`` shows this help); a normal `%%claude` cell never reaches it.
    """
    print("%%claude cells are run by kandev_nb's input transformer; reload with %reload_ext kandev_nb")


claude_cell.__doc__ = clean_help(live_options.extend_parser(claude_help))


def claude_stats(line: str) -> Any:
    """``%claude_stats``: spend and usage today, in this notebook, in this session and in
    all; by model; top tools. ``--user NAME``: only that user's turns; ``--team``: spend
    and tokens per user and per notebook, today and this month.

    Returns:
        A :class:`kandev_nb.ledger.stats.Stats`: HTML tables in a notebook, aligned text
        elsewhere; ``stats["all"]["cost_usd"]`` reads the numbers.
    """
    from IPython.core.getipython import get_ipython

    ip = get_ipython()
    session = current().sessions.get("default")
    return ledger_hooks.stats(
        line, notebook_path(ip.user_ns if ip is not None else {}), session.session_id if session else None
    )
