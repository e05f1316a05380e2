"""How :class:`kandev_nb.agent.permissions.Rules` reads a command, a URL or a path before matching.

A deny rule must not give way to another spelling of the same thing (issue 17): these
helpers give the spellings a rule is compared with.

- Shell: whitespace runs become one space (``rm<TAB>x`` is ``rm x``); the command word loses
  quotes, a leading backslash and its directory (``\\rm``, ``'rm'``, ``/bin/rm`` are ``rm``);
  wrappers that run the next word as the command (``command``, ``builtin``, ``exec``,
  ``env`` with its options and ``NAME=value`` words, ``sudo``/``doas`` with their options,
  ``nohup``, ``time``, ``nice``, ``timeout N``, ``stdbuf``, ``xargs``) and leading
  ``NAME=value`` assignments are peeled off one by one, each stage being a spelling.
- URLs: scheme and host lower-cased, a trailing dot of the host and any ``user@`` removed,
  default ports dropped.
- Paths: compared as given, resolved (symlinks, ``..``), and case-folded for deny rules.

The text of ``sh -c TEXT`` / ``bash -c TEXT`` and ``eval WORDS`` is judged as commands
too. What no rule can catch is code an interpreter runs from elsewhere: ``python3 -c
'...'``, ``node -e``, ``sh script.sh``, ``perl -e``, a Makefile... run anything, whatever
the deny rules say.
:func:`interpreter_in` names the interpreter so a card can say so.
"""

from __future__ import annotations

import re
import shlex
from pathlib import PurePosixPath
from urllib.parse import urlsplit

__all__ = [
    "SENSITIVE_DIRS",
    "SENSITIVE_FILES",
    "command_spellings",
    "interpreter_in",
    "is_sensitive_path",
    "url_spellings",
]

_WS = re.compile(r"\s+")
_SPLIT = re.compile(r"\s*(?:&&|\|\||;|\||&|\n)\s*")
_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "busybox"})
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_WRAPPERS: dict[str, frozenset[str]] = {
    # wrapper -> its options that take the next word as their value
    "command": frozenset(),
    "builtin": frozenset(),
    "nohup": frozenset(),
    "setsid": frozenset(),
    "unbuffer": frozenset(),
    "exec": frozenset({"-a"}),
    "time": frozenset({"-f", "-o", "--format", "--output"}),
    "env": frozenset({"-u", "-C", "-S", "--unset", "--chdir", "--split-string"}),
    "sudo": frozenset(
        {
            "-u",
            "-g",
            "-C",
            "-h",
            "-p",
            "-U",
            "-r",
            "-t",
            "-T",
            "-D",
            "--user",
            "--group",
            "--host",
            "--prompt",
            "--role",
            "--type",
            "--chdir",
            "--close-from",
            "--other-user",
        }
    ),
    "doas": frozenset({"-u", "-C"}),
    "timeout": frozenset({"-s", "-k", "--signal", "--kill-after"}),
    "nice": frozenset({"-n", "--adjustment"}),
    "ionice": frozenset({"-c", "-n", "-p", "-P", "-u"}),
    "stdbuf": frozenset({"-i", "-o", "-e"}),
    "xargs": frozenset(
        {
            "-I",
            "-n",
            "-P",
            "-d",
            "-L",
            "-s",
            "-a",
            "-E",
            "--max-args",
            "--max-procs",
            "--delimiter",
            "--arg-file",
            "--max-chars",
            "--max-lines",
            "--replace",
        }
    ),
}
"""Commands that run their arguments as a command, after their options."""

INTERPRETERS = re.compile(
    r"^(python[0-9.]*|pypy[0-9.]*|ipython[0-9.]*|node|nodejs|deno|bun|ruby|irb|perl[0-9.]*|php[0-9.]*|lua[0-9.]*|"
    r"luajit|R|Rscript|julia|tclsh|wish|bash|sh|zsh|dash|ksh|mksh|fish|csh|tcsh|ash|busybox|pwsh|powershell|"
    r"osascript|eval|source|\.|awk|gawk|mawk|nawk|expect|make|npx|uv|uvx|pipx|poetry|conda|jupyter|gdb|vim|vi)$"
)
"""Command words that run code of their own (a script, ``-c``/``-e`` text, a Makefile...)."""

SENSITIVE_FILES = frozenset(
    {
        # the CLI's own list (2.1.118: files it asks about even in acceptEdits mode)
        ".gitconfig",
        ".gitmodules",
        ".bashrc",
        ".bash_profile",
        ".zshrc",
        ".zprofile",
        ".profile",
        ".ripgreprc",
        ".mcp.json",
        ".claude.json",
        # more shell start-up files, credentials and hook configuration
        ".bash_login",
        ".bash_logout",
        ".zshenv",
        ".zlogin",
        ".zlogout",
        ".kshrc",
        ".cshrc",
        ".tcshrc",
        ".login",
        ".logout",
        ".inputrc",
        ".envrc",
        ".netrc",
        ".npmrc",
        ".pypirc",
        ".pgpass",
        ".git-credentials",
        ".gitattributes",
        ".pre-commit-config.yaml",
        "config.fish",
        "authorized_keys",
    }
)
"""File names that `allow_edits_under` never covers: editing them can make a later command run code."""

SENSITIVE_DIRS = frozenset(
    {
        ".git",
        ".vscode",
        ".idea",
        ".claude",
        ".husky",
        ".githooks",
        ".ssh",
        ".gnupg",
        ".aws",
        ".kube",
        ".docker",
        ".ipython",
        ".jupyter",
    }
)
"""Folders anywhere on the path that `allow_edits_under` never covers (``.git/config``,
``.git/hooks/*``, ``.husky/*`` hooks, ``.claude/settings.json``, IPython start-up files)."""


def _collapse(text: str) -> str:
    return _WS.sub(" ", text).strip()


def _words(part: str) -> list[str]:
    try:
        return shlex.split(part, posix=True)
    except ValueError:  # unbalanced quotes: whitespace words, quotes stripped
        return [w.strip("'\"") for w in part.split()]


def _command_word(word: str) -> str:
    word = word.lstrip("\\")
    return word.rsplit("/", 1)[-1] if "/" in word else word


def _peel(words: list[str]) -> list[str] | None:
    """`words` without their first wrapper or assignment; None when there is none."""
    if not words:
        return None
    head = _command_word(words[0])
    if _ASSIGNMENT.match(words[0]):
        return words[1:]
    valued = _WRAPPERS.get(head)
    if valued is None:
        return None
    rest = words[1:]
    while rest:
        if rest[0] == "--":
            return rest[1:]
        if rest[0] in valued:
            rest = rest[2:]
        elif (
            rest[0].startswith("-")
            or (head == "env" and _ASSIGNMENT.match(rest[0]))
            or (head == "timeout" and rest[0][:1].isdigit())
        ):
            rest = rest[1:]
        else:
            break
    return rest


def command_spellings(part: str) -> list[str]:
    """The spellings of one shell command that a deny rule is compared with.

    >>> command_spellings("sudo -n /bin/rm\\t-rf x")
    ['sudo -n /bin/rm -rf x', '/bin/rm -rf x', 'rm -rf x']
    """
    return list(dict.fromkeys(s for s in _spell(part, 0) if s))


def _spell(part: str, depth: int) -> list[str]:
    out = [_collapse(part)]
    words = _words(part)
    while words:
        plain = " ".join([_command_word(words[0]), *words[1:]])
        out.extend([" ".join(words), plain])
        inner = _inline_script(words)
        if inner is not None and depth < 3:  # bash -c 'rm x', eval "rm x": judge the inner commands too
            for sub in _SPLIT.split(inner):
                if sub.strip():
                    out.extend(_spell(sub, depth + 1))
        peeled = _peel(words)
        if peeled is None:
            break
        words = peeled
    return out


def _inline_script(words: list[str]) -> str | None:
    """The command text a shell runs from its arguments: ``sh -c TEXT``, ``eval WORDS``."""
    head = _command_word(words[0])
    if head == "eval":
        return " ".join(words[1:])
    if head in _SHELLS:
        for i, word in enumerate(words[1:-1], start=1):
            if word.startswith("-") and not word.startswith("--") and "c" in word:
                return words[i + 1]
    return None


def interpreter_in(part: str) -> str | None:
    """The interpreter `part` runs (``python3``, ``bash``...) after its wrappers, else None."""
    words = _words(part)
    while words:
        word = _command_word(words[0])
        if INTERPRETERS.match(word):
            return word
        peeled = _peel(words)
        if peeled is None:
            return None
        words = peeled
    return None


def url_spellings(url: str) -> list[str]:
    """`url` as given and normalised: lower-case scheme and host, no trailing dot, no
    ``user@``, no default port (``HTTPS://u@EVIL.COM.:443/x`` -> ``https://evil.com/x``)."""
    try:
        parts = urlsplit(url.strip())
        host = (parts.hostname or "").rstrip(".")
        port = parts.port
    except ValueError:
        return [url]
    if not parts.scheme or not host:
        return [url]
    scheme = parts.scheme.lower()
    default = {"http": 80, "https": 443}.get(scheme)
    netloc = f"[{host}]" if ":" in host else host
    if port is not None and port != default:
        netloc += f":{port}"
    normal = f"{scheme}://{netloc}{parts.path or '/'}"
    if parts.query:
        normal += f"?{parts.query}"
    if parts.fragment:
        normal += f"#{parts.fragment}"
    return list(dict.fromkeys([url, normal, normal.rstrip("/") if parts.path in ("", "/") else normal]))


def normal_url_pattern(pattern: str) -> str:
    """A rule's URL glob with its scheme and host lower-cased and the host's trailing dot dropped."""
    match = re.match(r"^([A-Za-z][A-Za-z0-9+.-]*://)([^/]*)(.*)$", pattern)
    if not match:
        return pattern
    scheme, host, rest = match.groups()
    return f"{scheme.lower()}{host.lower().rstrip('.')}{rest}"


def is_sensitive_path(path: str) -> bool:
    """Whether `path` (resolved) is or lies in something `allow_edits_under` must not cover:
    any component in :data:`SENSITIVE_DIRS`, a name in :data:`SENSITIVE_FILES`, or ``.env*``.
    Compared case-insensitively (``.GIT/config`` counts on a case-insensitive disk)."""
    parts = [p.lower() for p in PurePosixPath(str(path)).parts]
    if not parts:
        return False
    name = parts[-1]
    dirs = {d.lower() for d in SENSITIVE_DIRS}
    return (
        name in {f.lower() for f in SENSITIVE_FILES}
        or name.startswith(".env")
        or any(p in dirs for p in parts[:-1])
        or name in dirs
    )
