"""Environment variables and options that make an allowed program run a command.

``GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.fsmonitor GIT_CONFIG_VALUE_0='rm -rf data' git
status`` runs ``rm -rf data``; so do ``GIT_SSH_COMMAND``, ``GIT_PAGER``, ``BASH_ENV`` (read by
every ``bash -c``), ``LD_PRELOAD``, ``PYTHONSTARTUP``... A command line that gives one of
these names a value (``NAME=value cmd``, ``NAME=value`` alone, ``export``/``declare -x``,
``env NAME=value``) is dynamic: asked, never allowed by a rule. ``set -k`` (``set -o
keyword``) makes every ``NAME=value`` argument an environment assignment: dynamic too. A
``git -c`` (``--config-env``) value built at run time may name a command-valued setting:
dynamic as well. :func:`assignments_hidden` reads a parsed tree; :func:`words_hidden` reads
the words of one simple command (wrappers peeled).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from tree_sitter import Node

__all__ = ["assignments_hidden", "runs_commands", "words_hidden"]

_NAMES = frozenset(
    {"GIT_CONFIG_COUNT", "GIT_CONFIG_PARAMETERS", "GIT_CONFIG", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM"}
    | {"GIT_SSH", "GIT_SSH_COMMAND", "GIT_EXTERNAL_DIFF", "GIT_PAGER", "GIT_EDITOR", "GIT_SEQUENCE_EDITOR"}
    | {"GIT_ASKPASS", "SSH_ASKPASS", "GIT_PROXY_COMMAND", "GIT_EXEC_PATH", "GIT_TEMPLATE_DIR", "GIT_DIR"}
    | {"GIT_WORK_TREE", "PAGER", "MANPAGER", "EDITOR", "VISUAL", "BASH_ENV", "ENV", "SHELLOPTS", "BASHOPTS"}
    | {"LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT", "PYTHONSTARTUP", "PYTHONPATH", "PERL5OPT", "PERL5LIB"}
    | {"NODE_OPTIONS", "RUBYOPT", "PATH", "IFS", "PROMPT_COMMAND", "PS0", "PS1", "PS2", "PS3", "PS4"}
)
_PATTERNS = re.compile(r"^GIT_CONFIG_(KEY|VALUE)_\w+$")
_ASSIGNMENT_WORD = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)(?:\[[^\]]*\])?\+?=")
_PATH_EXTENSION = re.compile(r"""^"?(\$PATH|\$\{PATH\})(:[\w./~+-]+)+"?$|^"?([\w./~+-]+:)+(\$PATH|\$\{PATH\})"?$""")
"""``PATH="$PATH:/x"`` (or ``"/x:$PATH"``): a plain extension, left allowed."""
_SHELLS = frozenset({"set", "sh", "bash", "dash", "zsh", "ksh", "mksh", "ash"})


def runs_commands(name: str) -> bool:
    """Whether a program may run a command named by the environment variable `name`."""
    return name in _NAMES or bool(_PATTERNS.match(name))


def _why(name: str) -> str:
    return f"{name} is set: a program reads a command from it, which may hide a command"


def assignments_hidden(root: Node) -> Iterator[str]:
    """Why the command line parsed as `root` is dynamic, for each assignment to a
    command-running variable in it (also ``export NAME``, ``declare -x NAME``)."""
    stack = [root]
    while stack:
        node = stack.pop()
        stack.extend(node.children)
        if node.type == "variable_assignment":
            name, value = node.child_by_field_name("name"), node.child_by_field_name("value")
            text = (name.text or b"").decode("utf-8", "replace") if name is not None else ""
            text = text.split("[", 1)[0]
            value_text = (value.text or b"").decode("utf-8", "replace") if value is not None else ""
            if runs_commands(text) and not (text == "PATH" and _PATH_EXTENSION.match(value_text)):
                yield _why(text)
        elif node.type in ("declaration_command", "word"):
            for child in node.children if node.type != "word" else (node,):
                word = (child.text or b"").decode("utf-8", "replace")
                match = _ASSIGNMENT_WORD.match(word)
                named = match.group(1) if match else word
                if child.type in ("word", "variable_name") and runs_commands(named):
                    if node.type == "word" and match is None:
                        continue  # a plain word (grep PATH f) names nothing
                    if not (named == "PATH" and _PATH_EXTENSION.match(word.partition("=")[2])):
                        yield _why(named)


def _keyword(words: Sequence[str]) -> bool:
    """``set -k``, ``set -o keyword``, ``bash -k``: every ``NAME=value`` argument is exported."""
    if not words or words[0].rsplit("/", 1)[-1] not in _SHELLS:
        return False
    args = list(words[1:])
    if "keyword" in args:
        return True
    return any(len(w) > 1 and w[0] in "-" and w[1:].isalpha() and "k" in w[1:] for w in args if w != "--")


def words_hidden(words: Sequence[str], dynamic: Sequence[bool]) -> str | None:
    """Why one simple command's `words` (wrappers peeled; `dynamic` says which bash expands
    at run time) may run a hidden command: ``set -k``, ``env NAME=value`` for a
    command-running NAME, a ``git -c`` value built at run time."""
    if not words:
        return None
    base = words[0].rsplit("/", 1)[-1]
    if _keyword(words):
        return "set -k makes NAME=value arguments environment variables, which may hide a command"
    if base == "env":
        for word in words[1:]:
            match = _ASSIGNMENT_WORD.match(word)
            if match and runs_commands(match.group(1)):
                return _why(match.group(1))
    if base == "git":
        for i, word in enumerate(words[1:], 1):
            if not word.startswith("-") and not (i < len(dynamic) and dynamic[i]):
                break
            own = word.startswith(("-c", "--config-env=")) and word not in ("-c", "--config-env")
            after = i > 1 and words[i - 1] in ("-c", "--config-env")
            if (own or after) and i < len(dynamic) and dynamic[i]:
                return "a git -c setting built at run time may name a command"
    return None
