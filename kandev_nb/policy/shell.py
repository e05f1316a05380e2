"""A Bash command as the simple commands it runs, read with a real bash grammar.

:func:`parse_command` parses the Bash tool's ``command`` with tree-sitter-bash (the grammar
Claude Code itself reads commands with) and returns every simple command found anywhere in
the tree: lists, pipelines, subshells ``( )``, groups ``{ }``, ``if``/``for``/``while``/
``case`` bodies and conditions, command and process substitutions (also inside strings,
redirect targets and here-documents), function bodies, and the text that ``bash -c``,
``su -c``, ``script -c``, ``watch``, ``eval``... run (parsed again, recursively). Each
:class:`SimpleCommand` has its words with quotes and escapes resolved as bash resolves them,
and its *spellings*: the words after each wrapper (``sudo``, ``env``, ``timeout 5``,
``flock FILE``, see :mod:`kandev_nb.policy.wrappers`) is peeled, with the program's directory
dropped (``/bin/rm`` is ``rm``).

What bash decides only when it runs cannot be read statically. A command word that is a
variable or any expansion (``$x``, ``$(...)``), a glob (``/bin/r?``, ``/bin/r[m]``), a brace
expansion (``{rm,-rf,data}``), ANSI-C quoting (``$'rm'``), ``eval``, a shell reading its
standard input (``... | sh``), or a command that does not parse makes the command *dynamic*
(:attr:`ParsedCommand.dynamic` says why): a policy never allows it by a rule. For deny rules
the parser still offers what it can guess (the value a variable was assigned in the same
command, the files a glob names now, the decoded ``$'...'``) as extra spellings.
"""

from __future__ import annotations

import codecs
import glob
import os
import re
import shlex
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field

import tree_sitter_bash
from tree_sitter import Language, Node, Parser

from kandev_nb.policy import arith, environment, expansions
from kandev_nb.policy.sedscript import sed_scripts
from kandev_nb.policy.wrappers import SHELLS, git_scripts, peel, shell_script

__all__ = ["ParsedCommand", "SimpleCommand", "parse_command"]

_LANGUAGE = Language(tree_sitter_bash.language())
_LOCAL = threading.local()
_MAX_DEPTH = 4
"""How deep ``bash -c "bash -c '...'"`` is followed before the command counts as dynamic."""
_MAX_GUESSES = 16
_MAX_GLOB_LEVELS = 2
_WS = re.compile(r"\s+")
_GLOB = re.compile(r"(?<!\\)[*?\[]")
_BRACE = re.compile(r"\{[^{}\s]*(,|\.\.)[^{}\s]*\}")
_BRACE_WORD = re.compile(r"(?<![^\s;&|(){}])\{([^{}\s]*,[^{}\s]*)\}")
_OPERATORS = re.compile(r"[;&|()\n`]+|\$\(|(?<![^\s;&|])[{}](?![^\s;&|])")
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_HARMLESS_TARGETS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty"})
_SCRIPT_RUNNERS = SHELLS | {".", "source"}
_BACKTICKS = re.compile(r"`((?:[^`\\]|\\.)*)`", re.DOTALL)
_SUBSTITUTIONS = frozenset({"command_substitution", "process_substitution"})
_STATEMENT_ASSIGNMENT_PARENTS = frozenset(
    {"program", "list", "pipeline", "subshell", "compound_statement", "do_group", "if_statement", "elif_clause"}
    | {"else_clause", "case_item", "negated_command", "redirected_statement", "while_statement"}
)


def _parser() -> Parser:
    parser: Parser | None = getattr(_LOCAL, "parser", None)
    if parser is None:
        parser = _LOCAL.parser = Parser(_LANGUAGE)
    return parser


@dataclass(frozen=True)
class SimpleCommand:
    """One simple command of a Bash command line.

    Attributes:
        words: the words bash passes (quotes and escapes resolved); a word bash expands at run
            time keeps its source text (``$f``; inside double quotes, without them).
        text: the command's source text, whitespace runs as one space, with its leading
            ``NAME=value`` words and without its redirections.
        redirects: the redirections to or from a file, as written (``> stamp.txt``); those to
            ``/dev/null`` and descriptor copies (``2>&1``) are left out.
        dynamic: why the program it runs cannot be known statically, or None.
        spellings: the words after each peeled wrapper, with and without the program's
            directory, plus guesses of dynamic command words (for deny rules).
        depth: 0 for the command line itself, 1 for a command inside ``bash -c TEXT``...
        written: each of `words` as written in the source (quotes and escapes kept, whitespace
            runs as one space), one for one; ``()`` for a command read without the grammar
            (text that does not parse) or a builtin such as ``declare``. ``text`` is the
            leading ``NAME=value`` words and these, joined by spaces.
    """

    words: tuple[str, ...]
    text: str
    redirects: tuple[str, ...] = ()
    dynamic: str | None = None
    spellings: tuple[tuple[str, ...], ...] = ()
    depth: int = 0
    written: tuple[str, ...] = ()


@dataclass(frozen=True)
class ParsedCommand:
    """A Bash tool ``command`` read as its simple commands.

    Attributes:
        source: the command as given.
        commands: every simple command, in source order, those inside scripts (``bash -c``,
            ``su -c``, ``eval``...) after the command that runs them.
        dynamic: why parts of it cannot be known statically (empty when all is known); a
            policy must ask a person rather than allow a dynamic command.
    """

    source: str
    commands: tuple[SimpleCommand, ...]
    dynamic: tuple[str, ...] = ()


@dataclass
class _Word:
    text: str
    dynamic: str | None = None
    guesses: list[str] = field(default_factory=list)
    pattern: str | None = None
    """For a glob: the pattern, expanded only in command position (:func:`_glob`)."""


@dataclass
class _Walk:
    cwd: str | None
    depth: int
    assigned: dict[str, list[str]]
    commands: list[SimpleCommand] = field(default_factory=list)
    dynamic: list[str] = field(default_factory=list)
    tainted: set[str] = field(default_factory=set)
    hidden: bool = False
    """Names the command line gives a value that is not a plain literal (:func:`arith.tainted_names`)."""

    def nested(self, depth: int) -> _Walk:
        return _Walk(self.cwd, depth, self.assigned, tainted=self.tainted)


def parse_command(command: str, *, cwd: str | None = None) -> ParsedCommand:
    """Parse one Bash tool ``command`` (the tool_use input's `command` field).

    Args:
        command: the shell text.
        cwd: where globs in a command word are expanded to guess what they name (deny rules
            only); None: the process's working directory.

    Returns:
        The simple commands found anywhere in it, and why any part is dynamic. Never raises
        for bad shell text: a parse error is a dynamic reason.
    """
    walk = _Walk(cwd=cwd, depth=0, assigned={})
    try:
        _parse_into(command, walk)
    except RecursionError:  # thousands of nested ( ( ( ...: read what was reached, and ask
        walk.dynamic.append("it is nested too deeply to read")
        _fallback(command, walk)
    return ParsedCommand(command, _unique(walk.commands), tuple(dict.fromkeys(walk.dynamic)))


def _unique(commands: list[SimpleCommand]) -> tuple[SimpleCommand, ...]:
    return tuple({(c.words, c.text, c.redirects, c.dynamic, c.depth): c for c in commands}.values())


def _parse_into(text: str, walk: _Walk) -> None:
    data = text.encode("utf-8", "surrogatepass")
    tree = _parser().parse(data)
    root = tree.root_node
    if root.has_error:
        walk.dynamic.append(f"it does not parse as bash (near {_error_text(root)!r})")
    _collect_assignments(root, walk.assigned)
    walk.tainted |= arith.tainted_names(root, _resolve)
    _visit(root, walk, ())
    for why, scripts in expansions.hidden_scripts(root, text):
        if why is not None:
            walk.dynamic.append(why)
        for script in scripts:  # for deny rules; the allow rules must allow each of them too
            _nested_script(walk, script)
    walk.dynamic.extend(environment.assignments_hidden(root))
    for why, where in arith.hidden(root, _resolve, walk.tainted):
        _hide(walk, why, where)
    if walk.hidden:  # for deny rules: every $(...) and backtick text, quoted or not, as a command
        for script in arith.inner_scripts(text):
            _nested_script(walk, script)
    if root.has_error:
        _fallback(text, walk)
    if "\\\n" in text:
        # bash drops backslash-newline inside words (r\<newline>m is rm); the grammar splits
        # the word there. Read the joined text too: every command of either reading counts.
        _parse_into(text.replace("\\\n", ""), walk)


def _resolve(node: Node) -> str:
    return _word(node, {}).text


def _hide(walk: _Walk, why: str, text: str, runs: bool = False) -> None:
    """A word bash evaluates as arithmetic or as a variable name that may hide a command: the
    command line is asked, never allowed, and :func:`_parse_into` reads every ``$(...)`` text
    in it as a command, for deny rules (`runs`: `text` itself is run, ``mapfile -C TEXT``)."""
    walk.dynamic.append(f"{why}: {text[:60]!r} may hide a command")
    walk.hidden = True
    if runs:
        _nested_script(walk, text)


def _nested_script(walk: _Walk, script: str) -> None:
    if walk.depth >= _MAX_DEPTH:
        walk.dynamic.append("scripts nested too deep to follow")
        return
    nested = walk.nested(walk.depth + 1)
    _parse_into(script, nested)
    walk.commands.extend(nested.commands)
    walk.dynamic.extend(nested.dynamic)


def _fallback(text: str, walk: _Walk) -> None:
    """Commands read from text that does not parse, split on operators (for deny rules only):
    bash may still run it (``{rm,-rf,data}`` is ``rm -rf data`` to bash, an error to the grammar)."""
    expanded = _BRACE_WORD.sub(lambda m: " ".join(m.group(1).split(",")), text)
    for part in _OPERATORS.split(expanded):
        try:
            words = shlex.split(part, comments=True)
        except ValueError:
            words = [w.strip("'\"") for w in part.split()]
        if not words:
            continue
        spellings, _, _, _ = _spell([_Word(w) for w in words])
        reason = "it does not parse as bash"
        walk.commands.append(SimpleCommand(tuple(words), _norm(part), (), reason, tuple(spellings), walk.depth))


def _error_text(root: Node) -> str:
    stack = [root]
    while stack:
        node = stack.pop()
        if node.is_error or node.is_missing:
            return _text(node)[:40] or node.type
        stack.extend(reversed(node.children))
    return "?"


def _text(node: Node) -> str:
    return (node.text or b"").decode("utf-8", "surrogatepass")


def _norm(text: str) -> str:
    return _WS.sub(" ", text.replace("\\\n", " ")).strip()


def _collect_assignments(root: Node, assigned: dict[str, list[str]]) -> None:
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type == "variable_assignment":
            name, value = node.child_by_field_name("name"), node.child_by_field_name("value")
            if name is not None and value is not None:
                word = _word(value, {})
                if word.dynamic is None:
                    assigned.setdefault(_text(name), []).append(word.text)
        elif node.type == "for_statement":  # for f in data; do rm -rf $f: $f may be each listed word
            variable = node.child_by_field_name("variable")
            values = [c for c in node.children_by_field_name("value")]
            if variable is not None:
                for value in values:
                    word = _word(value, {})
                    assigned.setdefault(_text(variable), []).extend([word.text, *word.guesses])
        stack.extend(node.children)


def _visit(node: Node, walk: _Walk, redirects: tuple[str, ...]) -> None:
    kind = node.type
    if kind == "command":
        _command(node, walk, redirects)
        for child in node.children:
            _visit(child, walk, ())
        return
    if kind == "redirected_statement":
        own = tuple(r for c in _redirect_nodes(node) if (r := _redirect(c)))
        for child in node.children:
            _visit(child, walk, redirects + own if child == node.child_by_field_name("body") else ())
        return
    if kind in ("declaration_command", "unset_command"):
        words = tuple(_word(c, walk.assigned).text for c in node.children if c.is_named)
        head = _text(node.children[0]) if node.children else kind
        if hiding := arith.builtin_hidden((head, *words), walk.tainted):
            _hide(walk, *hiding)
        walk.commands.append(
            SimpleCommand((head, *words), _norm(_text(node)), redirects, None, ((head, *words),), walk.depth)
        )
    elif kind in ("variable_assignment", "variable_assignments") and (
        node.parent is not None and node.parent.type in _STATEMENT_ASSIGNMENT_PARENTS
    ):
        text = _norm(_text(node))
        walk.commands.append(SimpleCommand((text,), text, redirects, None, ((text,),), walk.depth))
    elif kind == "function_definition":
        redirects = ()
    elif kind == "expansion" and "`" in _text(node):
        # ${x:=`rm x`}: the grammar reads the backticks inside an expansion as a plain word
        for match in _BACKTICKS.finditer(_text(node)):
            nested = walk.nested(walk.depth)
            _parse_into(match.group(1), nested)
            walk.commands.extend(nested.commands)
            walk.dynamic.extend(nested.dynamic)
    inherited = () if kind in _SUBSTITUTIONS else redirects
    for child in node.children:
        _visit(child, walk, inherited)


def _redirect_nodes(node: Node) -> list[Node]:
    """The redirections of a statement, with those written after a here-document's start
    (``cat <<EOF > f``: the grammar nests ``> f`` in the here-document)."""
    out = []
    for child in node.children_by_field_name("redirect"):
        out.append(child)
        if child.type == "heredoc_redirect":
            out.extend(child.children_by_field_name("redirect"))
    return out


def _redirect(node: Node) -> str | None:
    """A file redirection as written, or None for one that touches no file (``2>&1``, ``>/dev/null``)."""
    if node.type != "file_redirect":
        return None  # here-documents and here-strings feed the command text, not a file
    operator = next((_text(c) for c in node.children if not c.is_named), "")
    destination = node.child_by_field_name("destination")
    target = _word(destination, {}).text if destination is not None else ""
    if operator in (">&", "<&") and (target.isdigit() or target == "-"):
        return None
    if target in _HARMLESS_TARGETS:
        return None
    if destination is None:
        return _norm(_text(node))
    return _norm((node.text or b"")[: destination.end_byte - node.start_byte].decode("utf-8", "surrogatepass"))


def _stray_arguments(redirects: list[Node]) -> list[Node]:
    """Words the grammar reads as more redirect targets (``echo a >f b``), which bash passes
    to the command as arguments (it runs ``echo a b >f``)."""
    out: dict[tuple[int, int], Node] = {}
    for node in redirects:
        for inner in (node, *node.children_by_field_name("redirect")):
            if inner.type == "file_redirect":
                out.update({(d.start_byte, d.end_byte): d for d in inner.children_by_field_name("destination")[1:]})
    return list(out.values())


def _command(node: Node, walk: _Walk, inherited: tuple[str, ...]) -> None:
    name = node.child_by_field_name("name")
    words: list[_Word] = []
    prefix: list[str] = []
    own: list[str] = []
    for child in node.children:
        if child.type == "variable_assignment":
            prefix.append(_text(child))
        elif child.type.endswith("redirect"):
            inside = child.children_by_field_name("redirect") if child.type == "heredoc_redirect" else []
            own.extend(r for c in (child, *inside) if (r := _redirect(c)))
        elif child == name:
            inner = child.named_children[0] if child.named_children else child
            words.append(_word(inner, walk.assigned))
        elif child.is_named and child.type != "comment":
            words.append(_word(child, walk.assigned))
    redirect_nodes = [c for c in node.children if c.type.endswith("redirect")]
    parent = node.parent
    if parent is not None and parent.type == "redirected_statement" and parent.child_by_field_name("body") == node:
        redirect_nodes += _redirect_nodes(parent)
    stray = _stray_arguments(redirect_nodes)
    words += [_word(c, walk.assigned) for c in stray]
    arguments = [_text(c) for c in node.children if c == name or _is_arg(c)] + [_text(c) for c in stray]
    text = _norm(" ".join([*prefix, *arguments]))
    dynamic = words[0].dynamic if words and words[0].dynamic else None
    if words and dynamic:
        dynamic = f"the command word {_text(name) if name else words[0].text!r} is {dynamic}"
    values = tuple(w.text for w in words)
    if words and words[0].pattern is not None:
        words[0].guesses = _glob(words[0].pattern, walk.cwd)
    spellings, scripts, stdin, late = _spell(words)
    for spelling in spellings:
        if hiding := arith.builtin_hidden(spelling, walk.tainted):
            _hide(walk, *hiding)
    if late and not dynamic:
        dynamic = late
    if stdin and not dynamic:
        dynamic = f"{values[0]!r} runs a shell that reads commands from its standard input"
    written = tuple(_norm(a) for a in arguments) if len(arguments) == len(values) else ()
    command = SimpleCommand(values, text, (*own, *inherited), dynamic, tuple(spellings), walk.depth, written)
    walk.commands.append(command)
    if dynamic:
        walk.dynamic.append(dynamic)
    for script, why in scripts:
        if why:
            walk.dynamic.append(why)
        if walk.depth >= _MAX_DEPTH:
            walk.dynamic.append("scripts nested too deep to follow")
            continue
        nested = walk.nested(walk.depth + 1)
        _parse_into(script, nested)
        walk.commands.extend(nested.commands)
        walk.dynamic.extend(nested.dynamic)
    for found in _find_exec(values):
        # read what find runs as a command line of its own (wrappers peeled, sh -c TEXT parsed)
        nested = walk.nested(walk.depth + 1)
        _parse_into(shlex.join(found), nested)
        walk.commands.extend(nested.commands)
        walk.dynamic.extend(nested.dynamic)


def _is_arg(child: Node) -> bool:
    return (
        child.is_named and child.type not in ("variable_assignment", "comment") and not child.type.endswith("redirect")
    )


def _heads(words: tuple[str, ...]) -> Iterator[tuple[str, ...]]:
    yield words
    if words and "/" in words[0].rstrip("/"):
        yield (words[0].rsplit("/", 1)[-1], *words[1:])
    if words and words[0].startswith("\\"):
        yield (words[0].lstrip("\\"), *words[1:])


def _spell(words: list[_Word]) -> tuple[list[tuple[str, ...]], list[tuple[str, str | None]], bool, str | None]:
    """(spellings, scripts the command runs with a dynamic reason if any, reads stdin, late dynamic reason)."""
    if not words:
        return [], [], False, None
    rest = tuple(w.text for w in words[1:])
    stages = [(words[0].text, *rest)]
    stages += [(*guess.split(), *rest) for guess in dict.fromkeys(words[0].guesses) if guess.split()]
    spellings: list[tuple[str, ...]] = []
    scripts: list[tuple[str, str | None]] = []
    stdin, late = False, None
    seen: set[tuple[str, ...]] = set()
    while stages:
        stage = stages.pop(0)
        if stage in seen or len(seen) > 64:
            continue
        seen.add(stage)
        spellings.extend(_heads(stage))
        base = stage[0].rsplit("/", 1)[-1] if stage else ""
        inline = shell_script((base, *stage[1:])) if stage else None
        offset = len(words) - len(stage)
        if inline is None and base in _SCRIPT_RUNNERS and any(w.dynamic for w in words[max(offset, 0) + 1 :]):
            late = late or f"{base!r} runs a script file named at run time"
        if expansions.xtrace(stage):
            late = late or "set -x makes bash evaluate PS4 as a prompt before each command"
        if base == "hash" and "-p" in stage[1:]:
            late = late or "hash -p makes a command name run another program"
        if base == "alias" and any("=" in w for w in stage[1:]):
            late = late or "alias changes what a later command word runs"
        more_scripts, more_commands, why = git_scripts((base, *stage[1:])) if stage else ([], [], None)
        dyn = [False] * max(-offset, 0) + [bool(w.dynamic) for w in words[max(offset, 0) :]]
        sed_runs, sed_why = sed_scripts((base, *stage[1:]), dyn) if stage else ([], None)
        late = late or environment.words_hidden((base, *stage[1:]), dyn)
        scripts.extend((text, None) for text in [*more_scripts, *sed_runs])
        late = late or sed_why
        stages.extend(more_commands)
        late = late or why
        if inline is not None:
            if inline.script is not None:
                scripts.append((inline.script, "it runs eval" if base == "eval" else None))
                late = late or ("eval runs text bash builds at run time" if base == "eval" else None)
            stdin = stdin or inline.stdin
        peeled = peel((base, *stage[1:])) if stage else None
        if peeled is None:
            continue
        if peeled.script is not None:
            scripts.append((peeled.script, None))
        stdin = stdin or peeled.stdin
        late = late or peeled.dynamic
        if peeled.command:
            stages.append(peeled.command)
            if (index := len(stage) - len(peeled.command)) < len(words) and words[index].dynamic:
                late = late or f"the command word {words[index].text!r} after {base!r} is {words[index].dynamic}"
    if any(w.dynamic for w in words[1:]) and any(s[1] is None for s in scripts):
        late = late or "a script it runs is built at run time"
    return list(dict.fromkeys(spellings)), scripts, stdin, late


def _find_exec(words: tuple[str, ...]) -> Iterator[tuple[str, ...]]:
    """The commands ``find ... -exec CMD ... ;`` runs (also -execdir, -ok, -okdir)."""
    if not words or words[0].rsplit("/", 1)[-1] != "find":
        return
    i = 1
    while i < len(words):
        if words[i] in ("-exec", "-execdir", "-ok", "-okdir"):
            end = i + 1
            while end < len(words) and words[end] not in (";", "+"):
                end += 1
            if end > i + 1:
                yield tuple(words[i + 1 : end])
            i = end
        i += 1


def _word(node: Node, assigned: dict[str, list[str]]) -> _Word:
    """The value of one word node as bash passes it, or its source text and why it is dynamic."""
    kind = node.type
    raw = _text(node)
    if kind == "word":
        if _BRACE.search(raw):
            return _Word(raw, "a brace expansion", _brace_guesses(raw))
        value = _unescape(raw)
        if _GLOB.search(raw):
            return _Word(raw, "a glob", pattern=value)
        if value.startswith("~"):
            value = os.path.expanduser(value)
        return _Word(value)
    if kind == "number":
        return _Word(raw)
    if kind == "raw_string":
        return _Word(raw[1:-1])
    if kind == "string":
        inner = node.children[1:-1] if len(node.children) >= 2 else []
        parts = [_dq(_text(c)) if c.type == "string_content" else None if c.is_named else _text(c) for c in inner]
        if all(p is not None for p in parts):
            return _Word("".join(p for p in parts if p is not None))
        return _Word(raw[1:-1], "an expansion inside a string")  # bash -c "rm -rf $D": the text to read
    if kind == "ansi_c_string":
        return _Word(raw, "ANSI-C quoting ($'...')", [_ansi_c(raw)])
    if kind == "translated_string":
        return _Word(raw, 'a translated string ($"...")', [raw[2:-1]])
    if kind in ("simple_expansion", "expansion"):
        name = raw.lstrip("$").strip("{}")
        guesses = list(assigned.get(name, [])) + (
            [os.environ[name]] if _NAME.match(name) and name in os.environ else []
        )
        return _Word(raw, "a variable expansion", guesses[:_MAX_GUESSES])
    if kind == "brace_expression":
        return _Word(raw, "a brace expansion", _brace_guesses(raw))
    if kind == "concatenation":
        pieces = [_word(c, assigned) for c in node.named_children]
        if _BRACE.search(raw):
            return _Word(raw, "a brace expansion", _brace_guesses(raw))
        if all(p.dynamic in (None, "a glob") for p in pieces) and any(p.dynamic for p in pieces):
            return _Word(raw, "a glob", pattern="".join(_unescape(_text(c)) for c in node.named_children))
        dynamic = next((p.dynamic for p in pieces if p.dynamic), None)
        if dynamic is None:
            return _Word("".join(p.text for p in pieces))
        guesses = []
        if all(p.dynamic is None or p.guesses for p in pieces):
            guesses = ["".join(p.text if p.dynamic is None else p.guesses[0] for p in pieces)]
        return _Word(raw, dynamic, guesses)
    return _Word(raw, f"a {kind.replace('_', ' ')}")


def _brace_guesses(raw: str) -> list[str]:
    """The words of the first comma list (``{rm,-rf,data}`` -> ``rm -rf data``), for deny rules only."""
    match = _BRACE.search(raw)
    if match is None or match.group(1) != ",":
        return []
    inner = match.group(0)[1:-1].split(",")
    return [" ".join(raw[: match.start()] + item + raw[match.end() :] for item in inner)]


def _unescape(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text.replace("\\\n", ""), flags=re.DOTALL)


def _dq(text: str) -> str:
    """Backslash escapes inside double quotes: only ``\\$``, ``\\```, ``\\"``, ``\\\\`` and newline."""
    return re.sub(r'\\([$`"\\\n])', lambda m: "" if m.group(1) == "\n" else m.group(1), text)


def _ansi_c(raw: str) -> str:
    try:
        return codecs.decode(raw[2:-1].encode("latin-1", "backslashreplace"), "unicode_escape")
    except (UnicodeDecodeError, ValueError):
        return raw[2:-1]


def _glob(pattern: str, cwd: str | None) -> list[str]:
    """What a glob names now (what bash would run), for deny rules only. A pattern with more
    than :data:`_MAX_GLOB_LEVELS` wildcard folders is not expanded (``/*/*/*/*/*/*/r?`` walks
    the whole disk for minutes): the command stays asked, never allowed."""
    if sum(1 for part in pattern.split("/") if glob.has_magic(part)) > _MAX_GLOB_LEVELS:
        return []
    try:
        found = glob.glob(pattern, root_dir=cwd) if not os.path.isabs(pattern) else glob.glob(pattern)
    except (OSError, ValueError, re.error):
        return []
    return sorted(found)[:_MAX_GUESSES]
