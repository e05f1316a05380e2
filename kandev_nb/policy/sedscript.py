"""What GNU ``sed`` runs besides itself: its ``e`` command and the ``e`` flag of ``s///``.

``sed '1e touch x'`` runs ``touch x`` through ``/bin/sh``; ``sed 's/a/touch x/e'`` runs the
pattern space after the substitution (text known only at run time). :func:`sed_scripts` reads
the sed scripts of a ``sed`` command (``-e``, ``--expression``, the first operand) with a
small reader of sed's syntax and returns the commands ``e CMD`` names (for the rules), and
why the command is dynamic when sed runs text built at run time, or when the script is read
from a file (``-f``) or cannot be read with certainty (then it may hide an ``e``).
``--sandbox`` turns ``e``, ``r`` and ``w`` off: nothing to read then.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from kandev_nb.errors import KandevError

__all__ = ["sed_scripts"]

_NO_ARGUMENT = frozenset("{=dDgGhHlnNpPxzFqQlL")
_TO_END_OF_LINE = frozenset("aicrRwWe")
_LABELS = frozenset(":btTv")
_ADDRESS = re.compile(r"\s*(?:\d+(?:~\d+)?|\$)?")
_SED_NAMES = frozenset({"sed", "gsed"})
_VALUED = frozenset({"--line-length", "--expression", "--file"})
_LONG_OPTIONS = (
    *("--quiet", "--silent", "--debug", "--expression", "--file", "--follow-symlinks", "--in-place"),
    *("--line-length", "--null-data", "--zero-terminated", "--posix", "--regexp-extended", "--separate"),
    *("--sandbox", "--unbuffered", "--help", "--version"),
)
"""GNU sed's long options: ``getopt_long`` takes any unambiguous prefix of one."""


class _Uncertain(KandevError):
    """The script is not read with certainty: it may hide an ``e``."""


def _delimited(script: str, i: int, delimiter: str) -> int:
    """The index just after the next unescaped `delimiter` from `i` (a regex or replacement)."""
    while i < len(script):
        if script[i] == "\\":
            i += 2
            continue
        if script[i] == delimiter:
            return i + 1
        if script[i] == "\n" and delimiter != "\n":
            raise _Uncertain
        i += 1
    raise _Uncertain


def _line_end(script: str, i: int) -> int:
    """The end of a text argument (``a text``), following backslash-newline continuations."""
    while i < len(script) and script[i] != "\n":
        i += 2 if script[i] == "\\" else 1
    return i


def _address(script: str, i: int) -> int:
    if i < len(script) and script[i] in "/\\":
        if script[i] == "\\":
            i += 1
            if i >= len(script):
                raise _Uncertain
        i = _delimited(script, i + 1, script[i])
        while i < len(script) and script[i] in "IM":
            i += 1
        return i
    match = _ADDRESS.match(script, i)
    return match.end() if match else i


def _read(script: str) -> tuple[list[str], bool]:
    """(the commands of each ``e CMD``, whether sed runs text built at run time)."""
    commands: list[str] = []
    runs_pattern_space = False
    i = 0
    while i < len(script):
        char = script[i]
        if char in " \t\n;{}!":
            i += 1
            continue
        if char == "#":
            i = _line_end(script, i)
            continue
        start = i
        i = _address(script, i)
        if i < len(script) and script[i] == ",":
            i += 1
            if i < len(script) and script[i] in "+~":
                i += 1
            i = _address(script, i)
        while i < len(script) and script[i] in " \t!":
            i += 1
        if i >= len(script):
            if i > start:
                raise _Uncertain  # an address without a command
            break
        command = script[i]
        i += 1
        if command in "sy":
            if i >= len(script) or script[i] in "\n\\":
                raise _Uncertain
            delimiter = script[i]
            i = _delimited(script, _delimited(script, i + 1, delimiter), delimiter)
            if command == "s":
                flags = re.match(r"[gpiImMe0-9]*", script[i:])
                text = flags.group(0) if flags else ""
                runs_pattern_space = runs_pattern_space or "e" in text
                i += len(text)
                if i < len(script) and script[i] == "w":
                    i = _line_end(script, i)
        elif command in _TO_END_OF_LINE:
            end = _line_end(script, i)
            if command == "e":
                text = script[i:end].strip()
                if text:
                    commands.append(text)
                else:
                    runs_pattern_space = True
            i = end
        elif command in _LABELS:
            end = i
            while end < len(script) and script[end] not in ";\n":
                end += 1
            i = end
        elif command in _NO_ARGUMENT:
            number = re.match(r"\s*\d*", script[i:])
            i += len(number.group(0)) if number else 0
        else:
            raise _Uncertain
    return commands, runs_pattern_space


def _long_option(word: str) -> tuple[str | None, str | None]:
    """(sed's long option that `word` names, its ``=VALUE`` or None) as ``getopt_long`` reads
    it: an exact name, or an unambiguous prefix (``--expr`` is ``--expression``); (None,
    None) for an unknown or ambiguous one."""
    name, eq, value = word.partition("=")
    found = [option for option in _LONG_OPTIONS if option == name] or [o for o in _LONG_OPTIONS if o.startswith(name)]
    return (found[0], value if eq else None) if len(found) == 1 else (None, None)


def sed_scripts(words: Sequence[str], dynamic: Sequence[bool] = ()) -> tuple[list[str], str | None]:
    """(the commands ``e CMD`` runs, why the command is dynamic or None) for a ``sed``
    command; ([], None) for any other command or a script that runs nothing. `dynamic` says
    which of `words` bash expands at run time: a script built at run time is dynamic."""
    if not words or words[0].rsplit("/", 1)[-1] not in _SED_NAMES:
        return [], None
    from_file = "sed reads a script from a file, which may run commands (its e command)"
    scripts: list[tuple[str, int]] = []
    operands: list[tuple[str, int]] = []
    sandbox = False
    i = 1
    while i < len(words):
        word = words[i]
        if word == "--":
            operands.extend((w, j) for j, w in enumerate(words[i + 1 :], i + 1))
            break
        if word.startswith("--"):
            option, value = _long_option(word)
            if option is None:
                return [], f"sed option {word[:40]!r} is unknown or ambiguous: it may name a script"
            if option == "--file":
                return [], from_file
            if option in _VALUED and value is None:
                i += 1
                value = words[i] if i < len(words) else ""
            if option == "--expression":
                scripts.append((value or "", i))
            sandbox = sandbox or option == "--sandbox"
        elif word.startswith("-") and len(word) > 1:
            letters = word[1:]
            cut = next((j for j, c in enumerate(letters) if c in "efli"), None)
            if cut is not None and letters[cut] != "i":  # -i[SUFFIX]: the rest is a suffix
                value = letters[cut + 1 :]
                if letters[cut] == "f":
                    return [], from_file
                if not value and i + 1 < len(words):
                    i += 1
                    value = words[i]
                if letters[cut] == "e":
                    scripts.append((value, i))
        else:
            operands.append((word, i))
        i += 1
    if not scripts and operands:
        scripts.append(operands[0])
    if sandbox:
        return [], None
    if any(index < len(dynamic) and dynamic[index] for _, index in scripts):
        return [], "a sed script built at run time may run commands (its e command)"
    found: list[str] = []
    for script, _ in scripts:
        try:
            commands, runs_pattern_space = _read(script)
        except _Uncertain:
            return found, f"sed script {script[:40]!r} is not read with certainty: it may run commands (e)"
        found.extend(commands)
        if runs_pattern_space:
            return found, "sed runs text built at run time as a command (its e command or s///e)"
    return found, None
