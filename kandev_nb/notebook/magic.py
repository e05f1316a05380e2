"""The `%%claude` cell magic: a shell over :class:`~kandev_nb.agent.session.Session`.

A `%%claude` cell must block until the turn ends (so Run All, nbclient and papermill run in
order) while button clicks still reach Python. Measured (DESIGN.md): only a cell whose body
is a top-level ``await`` does both on ipykernel >= 7.4. So `%%claude` is an IPython *input
transformer* that rewrites the cell into::

    await __import__("kandev_nb.notebook.magic").notebook.magic.run_cell('<options>', '<prompt>');

The trailing semicolon keeps the Turn out of ``Out[]``; use ``kandev_nb.last_turn()``.
The kernel's interrupt arrives as CancelledError in that await; the session turns it into
the protocol's `interrupt` and the CLI process survives for the next cell.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import re
import warnings
from dataclasses import dataclass, field, fields, replace
from typing import Any

from IPython.core.magic_arguments import argument, magic_arguments, parse_argstring

from kandev_nb import kernel_tools
from kandev_nb.agent.permissions import MODES, ApprovalPolicy
from kandev_nb.agent.questions import AnswerPolicy
from kandev_nb.agent.session import Session, SessionConfig
from kandev_nb.agent.turn import Turn
from kandev_nb.notebook import live_options
from kandev_nb.notebook.attachments import AttachmentError, attach, prompt_with_attachments
from kandev_nb.notebook.cell_text import PromptError, clean_help, did_you_mean, interpolate
from kandev_nb.wire.cli import CLINotFoundError
from kandev_nb.wire.transport import CLIProcessError

__all__ = [
    "NotebookSettings",
    "PromptError",
    "claude_help",
    "configure",
    "last_turn",
    "run_cell",
    "sessions",
    "settings",
    "transform_cell",
]

log = logging.getLogger("kandev_nb")

_CELL = re.compile(r"^%%claude(?:[ \t]+(?P<line>[^\n]*))?[ \t]*(?:\n|$)")


@dataclass
class NotebookSettings:
    """Notebook-wide defaults for every `%%claude` cell (see :func:`configure`).

    Attributes:
        mode: the permission mode of every cell that does not say ``--mode`` ("supervised");
            a mode given on one cell never carries over to the next.
        approval_timeout: seconds an approval card waits before denying (default 300; None
            waits forever). ``KANDEV_NB_APPROVAL_TIMEOUT`` overrides the default.
        approve: a notebook-wide approval policy (callable or :class:`~kandev_nb.Rules`).
        env: extra environment for the CLI (e.g. ANTHROPIC_BASE_URL for the scripted model).
        cwd: the CLI's working directory (default: the kernel's).
        cli_path: an explicit `claude` binary.
        model: default model.
        budget_usd: notebook-wide spend limit in USD across cells (None: no limit).
        record: write each turn to the ledger.
        interpolate: expand ``{name}`` with notebook variables in prompts.
        kernel_tools: give Claude the ``kernel`` MCP tools on this kernel's variables
            (:mod:`kandev_nb.kernel_tools`); applies to sessions started afterwards.
    """

    mode: str = "supervised"
    approval_timeout: float | None = field(
        default_factory=lambda: float(os.environ.get("KANDEV_NB_APPROVAL_TIMEOUT", "300"))
    )
    approve: ApprovalPolicy | None = None
    answer: AnswerPolicy | None = None  # AskUserQuestion's answers when nobody clicks (issue 19)
    env: dict[str, str] = field(default_factory=dict)
    cwd: str | None = None
    cli_path: str | None = None
    model: str | None = None
    budget_usd: float | None = None
    inactivity_timeout: float | None = 300.0
    record: bool = True
    interpolate: bool = True
    allow_root_bypass: bool = False
    kernel_tools: bool = True


settings = NotebookSettings()
_websocket_factory: Any = None
sessions: dict[str, Session] = {}
_turns: list[Turn] = []


def configure(**changes: Any) -> None:
    """Change notebook-wide defaults, e.g. ``configure(mode="acceptEdits", approval_timeout=60)``.

    Changes apply to sessions started afterwards (use ``%%claude --new`` to restart the
    default one), except `approve` and `approval_timeout`, which apply at once, and
    `mode`, which the next cell without ``--mode`` runs in (the live CLI gets a
    ``set_permission_mode`` control request).

    Returns None (so a setup cell ending with it prints nothing); read ``kandev_nb.settings``.

    Raises:
        TypeError: an unknown setting name, or a value of the wrong type.
        ValueError: an unknown mode. Nothing changes when one value is rejected.
    """
    names = {f.name for f in fields(NotebookSettings)}
    for key, value in changes.items():
        if key not in names:
            raise TypeError(f"unknown setting {key!r}; known: {', '.join(sorted(names))}")
        _check_setting(key, value)
    for key, value in changes.items():
        setattr(settings, key, value)
    for session in sessions.values():
        if "approval_timeout" in changes:
            session.config.approval_timeout = settings.approval_timeout
        if "approve" in changes:
            session.config.approve = settings.approve
        session.config.answer = settings.answer


_SECONDS = ("approval_timeout", "inactivity_timeout", "budget_usd")


def _check_setting(key: str, value: Any) -> None:
    """Raise TypeError/ValueError for a value the setting cannot take."""
    if key in _SECONDS and value is not None:
        if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
            raise TypeError(f"{key} must be a non-negative number (seconds or USD) or None, not {value!r}")
    elif key == "mode" and value not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}, not {value!r}")
    elif key == "env" and not (isinstance(value, dict) and all(isinstance(v, str) for v in value.values())):
        raise TypeError("env must be a dict of strings")
    elif key in ("approve", "answer") and value is not None and not callable(value):
        raise TypeError("approve must be a callable policy (e.g. kandev_nb.Rules(...)) or None")


def last_turn() -> Turn | None:
    """The most recent `%%claude` turn of this kernel (it has a rich display), or None."""
    return _turns[-1] if _turns else None


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
    body = source[match.end():]
    return [f"await __import__('kandev_nb.notebook.magic').notebook.magic.run_cell({options!r}, {body!r});\n"]


# -- options -------------------------------------------------------------------------------


@magic_arguments()
@argument("--mode", choices=MODES,
          help="permission mode of this cell only (default: the notebook's, configure(mode=...), supervised)")
@argument("--model", help="the model for this session (e.g. sonnet, opus)")
@argument("--new", action="store_true", help="start a fresh session (the old CLI process is closed)")
@argument("--session", default="default", metavar="NAME", help="a named session; several can run side by side")
@argument("--resume", metavar="SESSION_ID",
          help="continue a conversation from another kernel or the terminal; 'last' = this notebook's latest")
@argument("--fork", action="store_true", help="with --resume: branch off without changing the original")
@argument("--retry", action="store_true", help="after a failed turn: resume at the last good message and send again")
@argument("--max-turns", type=int, help="maximum API round trips in this session's turns")
@argument("--cwd", help="working directory of the CLI")
@argument("--mcp-config", help="MCP servers (JSON text or a file path), as the CLI takes it")
@argument("--system-prompt", help="replace the system prompt")
@argument("--append-system-prompt", help="add to the system prompt")
@argument("--allowed-tools", help="comma-separated tools allowed without asking, e.g. 'Bash(git status*),Read'")
@argument("--approval-timeout", type=float, metavar="SECONDS", help="deny an unanswered approval after this long")
@argument("--approve", metavar="NAME", help="a notebook variable holding an approval policy (callable or Rules) for this cell")
@argument("--budget", type=float, metavar="USD", help="maximum spend of this session's CLI in USD")
@argument("--transport", choices=("stdio", "websocket"), default="stdio", help="how to talk to the CLI")
@argument("--cli", metavar="PATH", help="the claude binary to use")
@argument("--attach", action="append", default=[], metavar="PATH_OR_VAR",
          help="a file, or a variable holding a matplotlib figure, PIL image or PNG bytes (repeatable)")
@argument("--no-interpolate", action="store_true", help="send {braces} literally")
@argument("--quiet", action="store_true", help="no live widgets; only the static rendering at the end")
@argument("--no-kernel-tools", action="store_true",
          help="no kernel MCP tools (variables, run_code) for a session this cell starts")
@argument("--i-am-sandboxed", action="store_true", help="allow --mode autonomous as root (sets IS_SANDBOX=1)")
def claude_help(line: str, cell: str | None = None) -> None:
    """Send the cell's body to Claude Code and show the turn live.

    Consecutive cells continue one conversation in one CLI process. {name} in the prompt
    is replaced by the notebook variable `name` ({{name}} for literal braces); a value of
    several lines (a DataFrame, a file's text) is sent as a fenced block. The cell blocks
    until the turn ends; approvals appear as cards with Allow / Deny buttons. After the
    cell, kandev_nb.runs() has one row per turn and kandev_nb.last_turn() the turn itself.

    For this cell only: --mode, --approve, --approval-timeout, --attach, --no-interpolate,
    --quiet, --retry. A cell without --mode runs in the notebook's mode
    (kandev_nb.configure(mode=...), supervised unless changed).
    For the session (kept by later cells until changed): --model, --budget, --max-turns,
    --cwd, --mcp-config, --system-prompt, --append-system-prompt, --allowed-tools,
    --no-kernel-tools, --transport, --cli. Which session: --session, --new, --resume, --fork.

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


@dataclass(frozen=True)
class _Launch:
    """The options a CLI process is launched with; changing one needs a new process."""

    cwd: str | None
    model: str | None
    max_turns: int | None
    budget: float | None
    mcp_config: str | None
    system_prompt: str | None
    append_system_prompt: str | None
    allowed_tools: tuple[str, ...]
    kernel_tools: bool
    transport: str
    extras: tuple[tuple[str, Any], ...] = ()  # issue 19's launch flags (notebook/live_options.py)


_launches: dict[str, _Launch] = {}


def _launch_for(args: argparse.Namespace, base: _Launch | None) -> _Launch:
    """`base` (or the notebook settings) with the options this cell gives."""
    if base is None:
        base = _Launch(cwd=settings.cwd, model=settings.model, max_turns=None, budget=None, mcp_config=None,
                       system_prompt=None, append_system_prompt=None, allowed_tools=(),
                       kernel_tools=settings.kernel_tools, transport="stdio")
    given: dict[str, Any] = {
        "cwd": args.cwd, "model": args.model, "max_turns": args.max_turns, "budget": args.budget,
        "mcp_config": args.mcp_config, "system_prompt": args.system_prompt,
        "append_system_prompt": args.append_system_prompt,
        "allowed_tools": tuple(t.strip() for t in args.allowed_tools.split(",") if t.strip())
        if args.allowed_tools is not None else None,
        "kernel_tools": False if args.no_kernel_tools else None,
        "transport": args.transport, "extras": live_options.merged(base.extras, args),
    }
    return replace(base, **{k: v for k, v in given.items() if v is not None})


def _launch_of(session: Session, transport: str) -> _Launch:
    """The launch options of a session made outside the magic, read from its config."""
    c = session.config
    return _Launch(cwd=str(c.cwd) if c.cwd is not None else None, model=c.model, max_turns=c.max_turns,
                   budget=c.max_budget_usd, mcp_config=c.mcp_config, system_prompt=c.system_prompt,
                   append_system_prompt=c.append_system_prompt, allowed_tools=c.allowed_tools,
                   kernel_tools="kernel" in c.mcp_servers, transport=transport)


def _session_for(args: argparse.Namespace) -> tuple[Session, Session | None, _Launch]:
    """The session this cell runs in, the live one it replaces, and its launch options.

    Consecutive cells reuse one session. A cell whose launch options differ (``--model``,
    ``--budget``, ``--cwd``...) gets a new CLI process that resumes the same conversation;
    ``--new``, ``--resume``, ``--cli`` and ``--transport`` start a different one. The caller
    registers the new session only once it has started, so a failing option leaves the
    working session in place.
    """
    name = args.session
    existing = sessions.get(name)
    if existing is not None and name not in _launches:  # a Session put in kandev_nb.sessions from Python
        _launches[name] = _launch_of(existing, args.transport)
    before = _launches.get(name)
    fresh = existing is None or before is None or args.new or args.resume is not None or args.cli is not None or (
        args.transport != before.transport)
    launch = _launch_for(args, None if fresh else before)
    if not fresh and existing is not None and launch == before:
        return existing, None, launch
    resume = args.resume if fresh else existing.session_id if existing else None
    config = SessionConfig(
        cwd=launch.cwd,
        mode=cell_mode(args),
        model=launch.model,
        approve=settings.approve, answer=settings.answer,
        approval_timeout=settings.approval_timeout,
        inactivity_timeout=settings.inactivity_timeout,
        env=dict(settings.env),
        cli_path=args.cli or settings.cli_path,
        resume=resume,
        resume_session_at=getattr(args, "resume_session_at", None) if fresh else None,
        fork=args.fork and fresh,
        max_turns=launch.max_turns,
        max_budget_usd=launch.budget,
        mcp_config=launch.mcp_config,
        system_prompt=launch.system_prompt,
        append_system_prompt=launch.append_system_prompt,
        allowed_tools=launch.allowed_tools, **live_options.session_fields(launch.extras),
        allow_root_bypass=args.i_am_sandboxed or settings.allow_root_bypass,
    )
    if launch.kernel_tools:
        config = kernel_tools.with_kernel_tools(config)
    factory = None
    if args.transport == "websocket":
        global _websocket_factory
        if _websocket_factory is None:
            from kandev_nb.wire.websocket import websocket_transport_factory

            _websocket_factory = websocket_transport_factory()
        factory = _websocket_factory
    return Session(config, name=name, transport_factory=factory), existing, launch


def _adopt(session: Session, replaced: Session | None, launch: _Launch) -> None:
    """Register a session that started; close the one it replaces."""
    sessions[session.name] = session
    _launches[session.name] = launch
    if replaced is not None and replaced is not session:
        _close_later(replaced)


def _last_session_of(notebook: str | None) -> str:
    """The session_id of the latest ledger row of `notebook` (``--resume last``).

    Raises:
        RuntimeError: the notebook path is unknown, or the ledger has no turn for it.
    """
    from kandev_nb.ledger import default_ledger

    if not notebook:
        raise RuntimeError("--resume last: this notebook's path is unknown here; pass the session id "
                           "(kandev_nb.runs() lists them)")
    rows = default_ledger().runs(notebook=notebook).dropna(subset=["session_id"])
    if rows.empty:
        raise RuntimeError(f"--resume last: the ledger has no turn for {notebook}")
    return str(rows.iloc[-1]["session_id"])


def _prepare_retry(args: argparse.Namespace, prompt: str) -> str:
    """--retry: resume the session at its last good message UUID; resend the failed prompt.

    Raises:
        UsageError: the session has no turn to retry, or its last turn did not fail.
    """
    from IPython.core.error import UsageError

    session = sessions.get(args.session)
    failed = session.turns[-1] if session and session.turns else None
    if failed is None or failed.error is None:
        raise UsageError("--retry: the last turn of this session did not fail; nothing to retry")
    if not session or not session.session_id:
        raise UsageError("--retry: the failed turn has no session id to resume")
    args.resume = session.session_id
    args.resume_session_at = failed.last_message_uuid
    return prompt or failed.prompt


def _close_later(session: Session) -> None:
    task = asyncio.get_running_loop().create_task(session.close())
    task.add_done_callback(lambda t: t.exception() if not t.cancelled() else None)


def _notebook_path(namespace: dict[str, Any]) -> str | None:
    for key in ("__vsc_ipynb_file__", "__session__"):
        if isinstance(namespace.get(key), str):
            return str(namespace[key])
    return os.environ.get("JPY_SESSION_NAME")


async def run_cell(line: str, body: str) -> Turn | None:
    """Run one `%%claude` cell: parse options, show the live view, run the turn, record it.

    Returns:
        The finished :class:`Turn` (also ``kandev_nb.last_turn()``).

    Raises:
        UsageError: bad options, an unknown ``{name}``, a missing attachment, an exhausted
            budget, a CLI that refused or did not answer the cell's mode change
            (`set_permission_mode`), or a CLI that cannot start; IPython prints it in one
            line and nothing is sent to the CLI.
    """
    from IPython.core.error import UsageError
    from IPython.core.getipython import get_ipython

    ip = get_ipython()
    namespace: dict[str, Any] = ip.user_ns if ip is not None else {}
    try:
        args = parse_options(line)
        prompt, policy = _prompt_and_policy(args, body, namespace)
        await _switch_mode(args)
        await live_options.apply_live(args, sessions, _launches, namespace)  # issue 19: --model etc. live
        _check_budget()
        session, replaced, launch = _session_for(args)
    except (PromptError, AttachmentError, ValueError, RuntimeError, TimeoutError) as exc:
        # Shown like IPython's own option errors: one line, no traceback, the cell fails.
        raise UsageError(f"%%claude: {exc}") from None

    view = None if args.quiet else _live_view(prompt, session)
    kernel_tools.follow_cell(session)
    session_timeout = session.config.approval_timeout
    if args.approval_timeout is not None:  # this cell only
        session.config.approval_timeout = args.approval_timeout
    try:
        if sessions.get(session.name) is not session:
            await session.start()  # before it replaces anything: a bad option keeps the old session
            _adopt(session, replaced, launch)
        turn = await session.run(prompt, consumers=[view.handle] if view else [], approve=policy)
    except (CLINotFoundError, CLIProcessError) as exc:
        if view is not None:
            view.close()
        raise UsageError(f"%%claude: {exc}") from None
    finally:
        session.config.approval_timeout = session_timeout
    if view is not None:
        view.finish(turn)  # the cell output becomes the turn's static rendering
    else:
        from IPython.display import display

        display(turn)
    _turns.append(turn)
    if settings.record:
        await _record(turn, _notebook_path(namespace), getattr(ip, "execution_count", None))
    return turn


def _prompt_and_policy(
    args: argparse.Namespace, body: str, namespace: dict[str, Any]
) -> tuple[str, ApprovalPolicy | None]:
    """The prompt to send (interpolated, retried, with attachments) and the cell's policy.

    Raises:
        UsageError, PromptError, AttachmentError, RuntimeError: see :func:`run_cell`.
    """
    from IPython.core.error import UsageError

    prompt = body.strip("\n")
    if not args.no_interpolate and settings.interpolate:
        prompt = interpolate(prompt, namespace)
    if args.resume == "last":
        args.resume = _last_session_of(_notebook_path(namespace))
    if args.retry:
        prompt = _prepare_retry(args, prompt)
    if args.attach:
        cwd = args.cwd or settings.cwd or os.getcwd()
        prompt = prompt_with_attachments(prompt, [attach(item, namespace, cwd) for item in args.attach])
    if not prompt.strip():
        raise UsageError("the %%claude cell is empty: write the prompt below the %%claude line")
    policy: ApprovalPolicy | None = None
    if args.approve:
        if args.approve not in namespace or not callable(namespace[args.approve]):
            raise UsageError(f"--approve {args.approve}: no callable notebook variable of that name")
        policy = namespace[args.approve]
    return prompt, policy


def cell_mode(args: argparse.Namespace) -> str:
    """The permission mode one cell runs in: its own ``--mode``, else the notebook's
    (``configure(mode=...)``, "supervised" unless changed). A mode never carries over from
    an earlier cell."""
    return str(args.mode or settings.mode)


async def _switch_mode(args: argparse.Namespace) -> None:
    """Put the live session in this cell's mode (:func:`cell_mode`) before the turn.

    A mode change on a live process is the CLI's ``set_permission_mode`` control request
    (no restart; :meth:`Session.set_mode`). A cell without ``--mode`` after a
    ``--mode acceptEdits`` cell thus goes back to the notebook's mode.

    Raises:
        ControlError, ControlTimeoutError: the CLI refused or did not answer; the cell is
            not sent (it must not run in a more permissive mode than it says).
    """
    live = sessions.get(args.session)
    mode = cell_mode(args)
    if live is not None and not args.new and live.config.mode != mode:
        if args.i_am_sandboxed:
            live.config.allow_root_bypass = True
        await live.set_mode(mode)


def _live_view(prompt: str, session: Session) -> Any:
    """A displayed :class:`~kandev_nb.notebook.widgets.TurnView` whose Stop button interrupts `session`."""
    from kandev_nb.notebook.widgets import TurnView

    view = TurnView(prompt, session_name=session.name, budget_usd=settings.budget_usd,
                    spent_before_usd=_spent(), on_stop=lambda: _interrupt_soon(session),
                    mode=session.config.mode, model=session.model or session.config.model)
    view.display()
    return view


async def _record(turn: Turn, notebook: str | None, execution_count: int | None) -> None:
    """Write `turn` to the ledger in a thread (a locked ledger never blocks the loop); a
    failure is a warning, never an error of the cell."""
    try:
        from kandev_nb.ledger import default_ledger

        await default_ledger().arecord(turn, notebook=notebook, execution_count=execution_count)
    except Exception as exc:  # noqa: BLE001 - the ledger must never break a cell
        warnings.warn(f"kandev-nb could not record the turn in the ledger: {exc}", stacklevel=1)


def _interrupt_soon(session: Session) -> None:
    loop = asyncio.get_event_loop()
    loop.call_soon_threadsafe(lambda: loop.create_task(session.interrupt()))


def _spent() -> float:
    """USD spent by this kernel's `%%claude` turns (per-turn costs from the CLI's results)."""
    return sum(t.stats.cost_usd for t in _turns if t.stats)


def _check_budget() -> None:
    """Refuse a turn once the notebook-wide budget is spent (raises RuntimeError)."""
    if settings.budget_usd is None:
        return
    spent = _spent()
    if spent >= settings.budget_usd:
        raise RuntimeError(
            f"the notebook's budget of ${settings.budget_usd:.2f} is spent (${spent:.4f} so far); "
            "raise it with kandev_nb.configure(budget_usd=...)"
        )


def claude_cell(line: str, cell: str) -> None:
    """The registered `%%claude` cell magic. It only runs when the transformer did not
    (e.g. ``%%claude?`` shows this help); a normal `%%claude` cell never reaches it.
    """
    print("%%claude cells are run by kandev_nb's input transformer; reload with %reload_ext kandev_nb")


claude_cell.__doc__ = clean_help(live_options.extend_parser(claude_help))


def claude_stats(line: str) -> Any:
    """``%claude_stats``: spend and usage today, in this notebook, in this session and in
    all; by model; top tools.

    Returns:
        A :class:`kandev_nb.ledger.stats.Stats`: HTML tables in a notebook, aligned text
        elsewhere; ``stats["all"]["cost_usd"]`` reads the numbers.
    """
    from IPython.core.getipython import get_ipython

    from kandev_nb.ledger import default_ledger
    from kandev_nb.ledger.stats import Stats

    ip = get_ipython()
    namespace: dict[str, Any] = ip.user_ns if ip is not None else {}
    session = sessions.get("default")
    return Stats(default_ledger().summary(
        notebook=_notebook_path(namespace), session_id=session.session_id if session else None
    ))
