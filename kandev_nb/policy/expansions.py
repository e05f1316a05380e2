"""Commands hidden in the parts of a command line that the grammar reads as opaque text.

tree-sitter-bash reads some text as one leaf that bash expands at run time:

* the pattern of ``${x#PATTERN}``, ``##``, ``%``, ``%%``, ``/``, ``,``, ``,,``, ``^``, ``^^``
  (a ``regex`` node): ``ls ${PWD#$(touch x)}`` runs ``touch x``;
* the backticks in an unquoted here-document body (``cat <<EOF`` then ```touch x```);
* a here-document delimiter partly quoted (``<<E"O"F``), which bash ends on another line than
  the grammar does (``EOF``), so the grammar reads commands as body text.

And bash evaluates some values as prompts: ``${x@P}`` (and ``${x@E}``) expands the value of
``x``, command substitutions included; ``PS0``-``PS4`` and ``PROMPT_COMMAND`` are evaluated as
prompts, ``PS4`` on each command traced by ``set -x``.

:func:`hidden_scripts` says which of these a parsed command line has (each one makes it
dynamic: asked, never allowed by a rule) and digs out the ``$(...)``, backtick, ``<(...)``
and ``>(...)`` texts inside, to be read as commands for deny rules. :func:`xtrace` says
whether a command's words turn on ``set -x``.
"""

from __future__ import annotations

import codecs
import re
import shlex
from collections.abc import Iterator, Sequence

from tree_sitter import Node

__all__ = ["hidden_scripts", "inner_scripts", "xtrace"]

_RUNS = re.compile(r"`|\$\(|[<>]\(|\$\{|\$\[")
"""Text that bash expands into something run or evaluated (a nested ``${`` may hide one too)."""
_PROMPT_OPERATOR = re.compile(r"@[PE]\}")
_PROMPT_NAMES = re.compile(r"(?<![\w])(PS[0-4]|PROMPT_COMMAND)(?!\w)")
_PLAIN_DELIMITER = re.compile(r"^[\w.+@%:/=,-]+$")
_QUOTED_DELIMITER = re.compile(r"""^(?:'[^']*'|"[^"\\$`]*"|\\[\w.+@%:/=,-]+)$""")
_BACKTICKS = re.compile(r"`((?:[^`\\]|\\.)*)`", re.DOTALL)
_SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "busybox"})
_BACKTICK_ESCAPES = re.compile(r"\\([`$\\])")
"""The escapes bash removes from a backtick body before parsing it again (``\\```, ``\\$``, ``\\\\``)."""
_WORD_TEXTS = frozenset({"raw_string", "ansi_c_string", "word", "string_content", "heredoc_content"})
"""Nodes whose text the grammar does not read further: inside ``${x:-...}`` bash may expand them."""
_PARSED = frozenset({"command_substitution", "process_substitution"})


def _text(node: Node) -> str:
    return (node.text or b"").decode("utf-8", "surrogatepass")


def inner_scripts(text: str) -> list[str]:
    """The texts of ``$(...)``, backticks, ``<(...)`` and ``>(...)`` inside `text` (nested ones
    too), for deny rules; ``$((...))`` is read as a command too (more is safer here)."""
    found = [m.group(1) for m in _BACKTICKS.finditer(text)]
    for start in range(len(text) - 1):
        if text[start + 1] != "(" or text[start] not in "$<>":
            continue
        depth, end = 0, start + 1
        while end < len(text):
            depth += {"(": 1, ")": -1}.get(text[end], 0)
            if depth == 0:
                break
            end += 1
        inner = text[start + 2 : end]
        found.append(inner[1:-1] if inner.startswith("(") and inner.endswith(")") else inner)
    return [s for s in found if s.strip()]


def backtick_body(body: str) -> tuple[str | None, str]:
    """(why the backtick body `body` is dynamic or None, the body as bash parses it): bash
    removes ``\\```, ``\\$`` and ``\\\\`` first, so ``echo \\`touch x\\``` runs ``touch x``."""
    if _BACKTICK_ESCAPES.search(body):
        why = f"the backtick text {body[:40]!r} has escapes bash removes before running it: it may hide a command"
        return why, _BACKTICK_ESCAPES.sub(r"\1", body)
    return None, body


def _expansion_hides(node: Node) -> bool:
    """Whether text inside the expansion `node` that the grammar reads as a plain leaf (a
    quoted ``'$(...)'`` in ``"${x:-'$(...)'}"``: bash keeps the quotes and runs it) has a
    ``$(``, a backtick, ``${`` or ``$[``."""
    stack = list(node.children)
    while stack:
        child = stack.pop()
        if child.type in _PARSED:
            continue
        if child.is_named and child.type in _WORD_TEXTS and _RUNS.search(_text(child)):
            return True
        stack.extend(child.children)
    return False


def _prompt_name_written(text: str) -> str | None:
    """A prompt variable named anywhere but a plain read (``$PS1``, ``${PS1}``)."""
    for match in _PROMPT_NAMES.finditer(text):
        before, after = text[: match.start()], text[match.end() :]
        if before.endswith("$") and not after.startswith("[") or before.endswith("${") and after.startswith("}"):
            continue
        return match.group(1)
    return None


def hidden_scripts(root: Node, text: str) -> Iterator[tuple[str | None, list[str]]]:
    """(why the line is dynamic, or None; texts to read as commands) for each place under
    `root` (parsed from `text`) where a command hides from the grammar."""
    if _PROMPT_OPERATOR.search(text):
        yield "${x@P} expands a value as a prompt, command substitutions included", []
    if (name := _prompt_name_written(text)) is not None:
        yield f"{name} is evaluated as a prompt, command substitutions included", []
    stack = [root]
    while stack:
        node = stack.pop()
        stack.extend(node.children)
        if node.type == "regex" and _RUNS.search(_text(node)):
            pattern = _text(node)
            yield f"the pattern {pattern[:60]!r} is expanded at run time and may hide a command", inner_scripts(pattern)
        elif node.type == "expansion" and _expansion_hides(node):
            inner = _BACKTICK_ESCAPES.sub(r"\1", _text(node))
            why = f"the expansion {_text(node)[:60]!r} holds quoted text that may hide a command"
            yield why, inner_scripts(inner)
        elif node.type == "command_substitution" and _text(node).startswith("`"):
            escaped, unescaped = backtick_body(_text(node)[1:-1])
            if escaped is not None:
                yield escaped, [unescaped]
        elif node.type == "heredoc_start":
            delimiter = _text(node)
            if not _PLAIN_DELIMITER.match(delimiter) and not _QUOTED_DELIMITER.match(delimiter):
                why = f"the here-document delimiter {delimiter[:40]!r} is partly quoted: bash may end it elsewhere"
                yield why, [_requoted(text, node)]  # read as bash reads it, for deny rules
            if _PLAIN_DELIMITER.match(delimiter):
                body = node.next_sibling
                while body is not None and body.type != "heredoc_body":
                    body = body.next_sibling
                if body is not None and "`" in _text(body):
                    for match in _BACKTICKS.finditer(_text(body)):
                        escaped, script = backtick_body(match.group(1))
                        yield escaped, [script]


def _requoted(text: str, start: Node) -> str:
    """`text` with the here-document delimiter at `start` written as bash reads it, wholly
    single-quoted (``<<E"O"F`` is ``<<'EOF'``), so the grammar ends the body where bash does."""
    delimiter = _text(start)
    if delimiter.startswith("$'") and delimiter.endswith("'") and len(delimiter) > 2:
        word = codecs.decode(delimiter[2:-1].encode("latin-1", "backslashreplace"), "unicode_escape")
    else:
        try:
            word = "".join(shlex.split(delimiter.replace("$'", "'").replace('$"', '"'))) or delimiter
        except ValueError:
            word = delimiter
    data = text.encode("utf-8", "surrogatepass")
    quoted = "'" + word.replace("'", "") + "'"
    return (data[: start.start_byte] + quoted.encode("utf-8", "surrogatepass") + data[start.end_byte :]).decode(
        "utf-8", "surrogatepass"
    )


def _short_flags(words: Sequence[str]) -> Iterator[str]:
    for word in words:
        if word == "--":
            return
        if len(word) > 1 and word[0] in "-+" and word[1:].isalpha():
            yield word


def xtrace(words: Sequence[str]) -> bool:
    """Whether a command turns on ``xtrace`` (``set -x``, ``set -o xtrace``, ``bash -x``,
    ``shopt -so xtrace``): bash then evaluates ``PS4`` as a prompt before each command."""
    if not words:
        return False
    base, args = words[0].rsplit("/", 1)[-1], list(words[1:])
    if base == "shopt" or ((base == "set" or base in _SHELLS) and "xtrace" in args):
        return "xtrace" in args
    if base == "set" or base in _SHELLS:
        return any(w[0] == "-" and "x" in w for w in _short_flags(args))
    return False
