"""`%%claude` options of issue 19: launch flags the SDK has, and live model/thinking changes.

Launch flags (kept by later cells of the session until changed; a change needs a new CLI
process, which resumes the conversation): ``--add-dir`` (repeatable), ``--disallowed-tools``,
``--agents`` (JSON text, a JSON file, or a notebook variable holding a dict of agent
definitions; sent in `initialize`, never on the CLI's command line), ``--setting-sources``
(user, project, local), ``--plugin-dir`` (repeatable),
``--fallback-model``, ``--effort`` (low, medium, high, max: a launch flag only, CLI 2.1.332
has no control request for it).

Live (no restart, same `pid`): ``--model`` on a later cell sends ``set_model``;
``--max-thinking-tokens`` sends ``set_max_thinking_tokens`` (:mod:`kandev_nb.agent.controls`).
A refusal is a one-line UsageError and the cell is not sent.

The options are added to the magic's parser by :func:`extend_parser`, so ``%%claude?``
documents them.
"""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

__all__ = ["EFFORTS", "SETTING_SOURCES", "apply_live", "argv", "extend_parser", "merged", "resolve", "session_fields"]

EFFORTS = ("low", "medium", "high", "max")
SETTING_SOURCES = ("user", "project", "local")

_OPTIONS: list[tuple[tuple[str, ...], dict[str, Any]]] = [
    (
        ("--add-dir",),
        {
            "action": "append",
            "default": [],
            "metavar": "PATH",
            "help": "another directory Claude Code may use (repeatable; launch flag)",
        },
    ),
    (
        ("--agents",),
        {"metavar": "JSON_OR_VAR", "help": "subagent definitions: JSON text, a file, or a variable holding a dict"},
    ),
    (("--setting-sources",), {"metavar": "SOURCES", "help": "which settings to load: user,project,local"}),
    (
        ("--plugin-dir",),
        {
            "action": "append",
            "default": [],
            "metavar": "PATH",
            "help": "load a plugin from this directory (repeatable)",
        },
    ),
    (("--fallback-model",), {"metavar": "MODEL", "help": "model to use when the main one is overloaded"}),
    (("--effort",), {"choices": EFFORTS, "help": "reasoning effort (a new process resumes the conversation)"}),
    (
        ("--max-thinking-tokens",),
        {"type": int, "metavar": "N", "help": "thinking budget in tokens; on a live session set_max_thinking_tokens"},
    ),
]
_FLAGS = {
    "add_dir": "--add-dir",
    "disallowed_tools": "--disallowedTools",
    "setting_sources": "--setting-sources",
    "plugin_dir": "--plugin-dir",
    "fallback_model": "--fallback-model",
    "effort": "--effort",
    "max_thinking_tokens": "--max-thinking-tokens",
}


def extend_parser(help_func: Any) -> str:
    """Add the options above to the magic_arguments parser of `help_func` and return its new
    help text (also its ``__doc__``), for ``%%claude?``."""
    parser: argparse.ArgumentParser = help_func.parser
    known = {o for a in parser._actions for o in a.option_strings}
    for names, kwargs in _OPTIONS:
        if names[0] not in known:
            parser.add_argument(*names, **kwargs)
    help_func.__doc__ = parser.format_help()
    return str(help_func.__doc__)


def _agents(value: str, namespace: Mapping[str, Any]) -> str:
    """The agent definitions `value` names, as JSON text (hashable, for the session's extras)."""
    path = Path(value).expanduser()
    if value in namespace:
        agents = namespace[value]
    elif path.is_file():
        try:
            agents = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ValueError(f"--agents {value[:40]!r}: not a JSON file ({exc})") from None
    else:
        try:
            agents = json.loads(value)
        except ValueError as exc:
            raise ValueError(f"--agents {value[:40]!r}: not a notebook variable, a file, or JSON ({exc})") from None
    if not isinstance(agents, dict) or not all(isinstance(v, dict) for v in agents.values()):
        raise ValueError(
            '--agents: expected a dict of agent definitions, e.g. {"reviewer": {"description": "...", "prompt": "..."}}'
        )
    return json.dumps(agents, ensure_ascii=False, default=str)


def resolve(args: argparse.Namespace, namespace: Mapping[str, Any]) -> dict[str, Any]:
    """The launch flags this cell gives, checked, as ``{name: value}`` (also ``args.launch_extras``).

    Raises:
        ValueError: an --add-dir/--plugin-dir that is no directory, unknown setting
            sources, unreadable --agents; the message names the option.
    """
    given: dict[str, Any] = {}
    for key in ("add_dir", "plugin_dir"):
        dirs = tuple(os.path.abspath(os.path.expanduser(d)) for d in getattr(args, key, None) or ())
        missing = [d for d in dirs if not os.path.isdir(d)]
        if missing:
            raise ValueError(f"--{key.replace('_', '-')} {missing[0]}: no such directory")
        if dirs:
            given[key] = dirs
    if getattr(args, "setting_sources", None) is not None:
        sources = [s.strip() for s in args.setting_sources.split(",") if s.strip()]
        wrong = [s for s in sources if s not in SETTING_SOURCES]
        if wrong:
            raise ValueError(f"--setting-sources {wrong[0]!r}: expected some of {', '.join(SETTING_SOURCES)}")
        given["setting_sources"] = ",".join(sources)
    if getattr(args, "agents", None):
        given["agents"] = _agents(args.agents, namespace)
    for key in ("fallback_model", "effort"):
        if getattr(args, key, None):
            given[key] = getattr(args, key)
    tokens = getattr(args, "max_thinking_tokens", None)
    if tokens is not None:
        if tokens < 0:
            raise ValueError(f"--max-thinking-tokens must be >= 0, not {tokens}")
        given["max_thinking_tokens"] = tokens
    args.launch_extras = given
    return given


def merged(
    base: tuple[tuple[str, Any], ...], args: argparse.Namespace | Mapping[str, Any]
) -> tuple[tuple[str, Any], ...]:
    """`base` launch flags updated with this cell's (``args.launch_extras``), hashable and sorted."""
    given = args if isinstance(args, Mapping) else getattr(args, "launch_extras", {})
    return tuple(sorted({**dict(base), **given}.items()))


def session_fields(extras: tuple[tuple[str, Any], ...]) -> dict[str, Any]:
    """SessionConfig fields of a magic session: ``extra_args`` (:func:`argv`), ``agents`` (the
    ``--agents`` definitions as a dict, for `initialize`; None without) and
    ``file_checkpoints`` (on, for ``%claude_undo``, unless ``KANDEV_NB_FILE_CHECKPOINTS=0``)."""
    agents = dict(extras).get("agents")
    return {
        "extra_args": argv(extras),
        "agents": json.loads(agents) if agents else None,
        "file_checkpoints": os.environ.get("KANDEV_NB_FILE_CHECKPOINTS", "1") != "0",
    }


def argv(extras: tuple[tuple[str, Any], ...]) -> tuple[str, ...]:
    """The CLI flags for `extras` (``--add-dir a --add-dir b --effort high ...``); ``agents``
    is none of them (it goes in `initialize`: :func:`session_fields`)."""
    out: list[str] = []
    for key, value in extras:
        if key not in _FLAGS:
            continue
        flag = _FLAGS[key]
        for one in value if isinstance(value, tuple) else (value,):
            out += [flag, str(one)]
    return tuple(out)


async def apply_live(
    args: argparse.Namespace, state: Any, namespace: Mapping[str, Any], notify: Callable[[str], None] | None = None
) -> None:
    """Check the cell's launch flags (:func:`resolve`), then apply ``--model`` and
    ``--max-thinking-tokens`` to the cell's live session without a restart.

    Only for a live process the cell keeps (no --new/--resume/--cli). The session's launch
    options are updated (:meth:`Session.adopt_live`), so the cell reuses the process.

    Args:
        state: the notebook's :class:`~kandev_nb.notebook.state.NotebookState`.

    Raises:
        ValueError: see :func:`resolve`.
        ControlError, ControlTimeoutError: the CLI refused or did not answer (the message
            names the request); the session stays on its model and stays usable.
    """
    resolve(args, namespace)
    name = args.session
    live = state.sessions.get(name)
    if live is None or live.control is None or args.new or args.resume or args.cli:
        return
    if args.model and args.model != live.launch_options.model:
        used = await live.set_model(args.model)
        live.adopt_live(model=args.model)
        if name in state.requested:
            state.requested[name] = replace(state.requested[name], model=args.model)
        if notify:
            notify(f"model switched to {used} (same process)")
    tokens = getattr(args, "launch_extras", {}).get("max_thinking_tokens")
    extras = state.extras.get(name, ())
    if tokens is not None and dict(extras).get("max_thinking_tokens") != tokens:
        await live.set_max_thinking_tokens(tokens)
        extras = merged(extras, {"max_thinking_tokens": tokens})
        state.extras[name] = extras
        live.adopt_live(extra_args=argv(extras))
        if name in state.requested:
            state.requested[name] = replace(state.requested[name], extra_args=argv(extras))
