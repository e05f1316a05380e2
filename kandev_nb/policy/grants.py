"""Scoped "Allow for this session" grants, in Claude Code's permission-rule syntax.

A session grant is an ``updatedPermissions`` entry ``{"type": "addRules", "rules":
[{"toolName", "ruleContent"}], "behavior": "allow", "destination": "session"}`` sent with an
allow: the CLI then runs matching calls of the same process without a can_use_tool, and
writes nothing to any settings file. A grant without ``ruleContent`` allows every call of the
tool (DESIGN.md, third release), so :func:`session_grant` scopes it like the CLI's own
suggestions:

* Bash: the command's prefix, ``Bash(touch:*)`` (``Bash(git push:*)`` for tools with
  subcommands); an interpreter or wrapper (``python3``, ``bash``, ``sudo``, ``env``...) gets
  only the exact command; a compound or dynamic command (operators, substitutions,
  redirections, variables, globs or quotes in the command word) gets no scoped grant;
* file tools: the file's folder, ``Edit(//abs/dir/**)`` (an Edit rule covers Write,
  MultiEdit and NotebookEdit) or ``Read(//abs/dir/**)``;
* WebFetch: the host, ``WebFetch(domain:example.com)``;
* MCP tools: the tool, ``mcp__kernel__run_cell``.

Measured on CLI 2.1.332 and 2.1.197: after ``Bash(touch:*)`` the CLI runs ``touch out2.txt``
unasked and asks for ``rm -f stats.py`` and ``touch c; rm -f stats.py``; after
``Edit(//<dir>/**)`` it writes ``<dir>/g.txt`` unasked and asks for a file in another folder.
:func:`tool_grant` is the whole-tool grant, a separate and plainly labelled choice.
"""

from __future__ import annotations

import importlib
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kandev_nb.policy.rules import whatwg_url
from kandev_nb.policy.wrappers import INTERPRETERS, SHELLS, WRAPPER_NAMES

__all__ = ["Grant", "grant_matches", "session_grant", "tool_grant"]


@dataclass(frozen=True)
class Grant:
    """One session grant.

    Attributes:
        rule: the rule in the CLI's syntax, ``Bash(touch:*)`` or ``mcp__kernel__run_cell``.
        label: the button's text, ``Allow `touch …` for this session``.
        update: the ``updatedPermissions`` entry that grants it.
    """

    rule: str
    label: str
    update: dict[str, Any] = field(hash=False, compare=False)


def _update(tool_name: str, content: str | None) -> dict[str, Any]:
    rule: dict[str, Any] = {"toolName": tool_name}
    if content is not None:
        rule["ruleContent"] = content
    return {"type": "addRules", "rules": [rule], "behavior": "allow", "destination": "session"}


def _grant(tool_name: str, content: str | None, label: str) -> Grant:
    rule = f"{tool_name}({content})" if content is not None else tool_name
    return Grant(rule, label, _update(tool_name, content))


_EDIT_TOOLS = frozenset({"Edit", "Write", "MultiEdit", "NotebookEdit"})
_READ_TOOLS = frozenset({"Read", "NotebookRead"})
_SUBCOMMANDS = frozenset(
    {"git", "npm", "pnpm", "yarn", "cargo", "docker", "kubectl", "pip", "pip3", "uv", "go", "conda", "gh", "poetry"}
)
"""Commands whose second word is the action: the grant is ``git push:*``, not ``git:*``."""
_EXACT_ONLY = frozenset(
    {
        "python",
        "python3",
        "node",
        "deno",
        "bun",
        "perl",
        "ruby",
        "php",
        "bash",
        "sh",
        "zsh",
        "dash",
        "fish",
        "ksh",
        "eval",
        "exec",
        "env",
        "sudo",
        "su",
        "doas",
        "xargs",
        "nohup",
        "timeout",
        "time",
        "nice",
        "command",
        "builtin",
        "busybox",
        "script",
        "watch",
        "flock",
        "taskset",
        "coproc",
        "find",
        "awk",
        "sed",
        "make",
        "ipython",
        "jupyter",
        "R",
        "Rscript",
        "osascript",
        "ssh",
        "ssh-agent",
    }
)
"""Programs that run other code or commands: a prefix grant would allow anything; only the
exact command is offered."""
_GIT_RUNS = frozenset({"submodule", "rebase", "bisect", "difftool", "mergetool", "config", "filter-branch", "daemon"})
"""git subcommands that can run a command given in their arguments or set one for later."""
_UNSAFE = re.compile(r"[;&|<>()`$\\\n\r{}*?\[\]!#~]")
_WORD = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.+@%:/=-]*$")


def _bash(command: str) -> Grant | None:
    command = command.strip()
    if not command or _UNSAFE.search(command):
        return None  # compound or dynamic: only "once" or the whole tool
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    if not words or not _WORD.match(words[0]) or "=" in words[0]:
        return None
    first = words[0]
    base = first.rsplit("/", 1)[-1]
    second = words[1] if len(words) > 1 else ""
    runs_other_code = (
        base in _EXACT_ONLY
        or base in WRAPPER_NAMES
        or base in SHELLS
        or INTERPRETERS.match(base) is not None
        or (base == "git" and (second.startswith("-") or second in _GIT_RUNS))
    )
    if runs_other_code:
        short = command if len(command) <= 60 else command[:57] + "…"
        return _grant("Bash", command, f"Allow `{short}` (this exact command) for this session")
    prefix = [first]
    if first in _SUBCOMMANDS and len(words) > 1 and _WORD.match(words[1]) and not words[1].startswith("-"):
        prefix.append(words[1])
    shown = " ".join(prefix)
    return _grant("Bash", f"{shown}:*", f"Allow `{shown} …` for this session")


def _folder(path: str, cwd: str) -> Path | None:
    raw = Path(path).expanduser()
    target = raw if raw.is_absolute() else Path(cwd) / raw
    try:
        folder = target.resolve().parent
    except (OSError, RuntimeError, ValueError):
        return None
    return folder if folder != Path(folder.anchor) else None  # never the whole disk


def _shown(folder: Path, cwd: str) -> str:
    try:
        rel = folder.relative_to(Path(cwd).resolve())
    except ValueError:
        return f"{folder}/"
    return "the working folder" if str(rel) == "." else f"{rel}/"


def session_grant(tool_name: str, tool_input: dict[str, Any], cwd: str) -> Grant | None:
    """The scoped session grant for this call, or None when there is none to offer.

    Args:
        tool_name: the can_use_tool's `tool_name`.
        tool_input: its `input` (``command``, ``file_path``/``notebook_path``, ``url``).
        cwd: the CLI's working directory (a relative path resolves against it).

    Returns:
        A :class:`Grant` (Bash prefix or exact command, a folder of a file tool, a WebFetch
        domain, an MCP tool), or None: a compound or dynamic command, a tool without a scope.
    """
    if tool_name == "Bash":
        command = tool_input.get("command")
        return _bash(command) if isinstance(command, str) else None
    if tool_name in _EDIT_TOOLS or tool_name in _READ_TOOLS:
        path = tool_input.get("file_path") or tool_input.get("notebook_path")
        folder = _folder(path, cwd) if isinstance(path, str) and path else None
        if folder is None:
            return None
        kind, verb = ("Edit", "edits") if tool_name in _EDIT_TOOLS else ("Read", "reads")
        return _grant(kind, f"/{folder.as_posix()}/**", f"Allow {verb} in {_shown(folder, cwd)} for this session")
    if tool_name == "WebFetch":
        url = tool_input.get("url")
        parsed = whatwg_url(url) if isinstance(url, str) else None
        host = parsed.hostname.rstrip(".") if parsed is not None else ""
        if not host:
            return None
        return _grant("WebFetch", f"domain:{host}", f"Allow fetching from {host} for this session")
    if tool_name.startswith("mcp__"):
        return tool_grant(tool_name)
    return None


def tool_grant(tool_name: str) -> Grant:
    """The whole-tool grant: every call of `tool_name` for the rest of the CLI process."""
    if tool_name == "Bash":
        label = "Allow all Bash commands for this session"
    elif tool_name.startswith("mcp__"):
        server, _, tool = tool_name[5:].partition("__")
        label = f"Allow {server} · {tool} for this session"
    else:
        label = f"Allow every {tool_name} call for this session"
    return _grant(tool_name, None, label)


def _fallback_matches(rule: str, tool_name: str, tool_input: dict[str, Any], cwd: str) -> bool:
    """A narrow stand-in for ``kandev_nb.policy.rule_matches``: the tool name, a Bash prefix
    of a simple command, a folder, a domain (the grants :func:`session_grant` makes)."""
    name, _, rest = rule.partition("(")
    content = rest[:-1] if rest.endswith(")") else None
    if content is None:
        return name == tool_name
    mine = session_grant(tool_name, tool_input, cwd)
    if mine is None:
        return False
    if mine.rule == rule:
        return True
    if name == "Bash" and content.endswith(":*") and mine.rule.endswith(":*)"):
        return f"{mine.rule[5:-3]} ".startswith(f"{content[:-2]} ")
    if name in ("Edit", "Read") and content.endswith("/**") and mine.rule.startswith(f"{name}("):
        return f"{mine.rule[len(name) + 1 : -4]}/".startswith(f"{content[:-3]}/")
    return False


def grant_matches(rule: str, tool_name: str, tool_input: dict[str, Any], cwd: str) -> bool:
    """Whether the session grant `rule` covers this call (``kandev_nb.policy.rule_matches``
    when it is there; else :func:`_fallback_matches`). Never raises."""
    try:
        matcher = getattr(importlib.import_module("kandev_nb.policy"), "rule_matches", None)
        if callable(matcher):
            return bool(matcher(rule, tool_name, tool_input, cwd=cwd))
        return _fallback_matches(rule, tool_name, tool_input, cwd)
    except Exception:  # noqa: BLE001 - a grant we cannot match is not named
        return False
