"""Commands hidden where bash evaluates a word as arithmetic or as a variable name.

Bash evaluates text as arithmetic in ``(( ))``, ``$(( ))``, ``$[ ]``, ``for (( ))``, ``let``,
the operands of ``[[ X -eq Y ]]`` (and ``-ne -lt -le -gt -ge``), array subscripts (``${a[i]}``,
``${#a[i]}``, ``a[i]=v``, ``a=([i]=v)``), ``${x:offset:length}``, and the values of integer
variables (``declare -i``). It reads a word as a variable name, subscript included, in
``[[ -v ]]``, ``test -v``, ``printf -v``, ``read``, ``mapfile``/``readarray``, ``wait -p``,
``getopts``, ``unset``, ``declare``/``typeset``/``local``/``export``/``readonly``, ``${!name}``
and namerefs. A subscript there is expanded when it is evaluated, even when the word was
single-quoted: ``[[ 'a[$(touch x)]' -eq 0 ]]`` runs ``touch x``. And a variable named in
arithmetic is itself evaluated as arithmetic: ``x='a[$(touch x)]'; (( x ))`` runs it too.

So such text must be *plain*: numbers, operators, names and subscripts of plain text, ``$name``,
``${name}``, ``${#name}`` and ``$?``/``$#``/``$$``/``$!``; and no name it uses may be given a
value this command line does not spell as a plain literal (assigned from an expansion, read
with ``read``, ``mapfile``, ``printf -v``..., or looped over non-plain words). Anything else is
a possible hidden command: :func:`hidden` and :func:`builtin_hidden` say why, and
:func:`inner_scripts` digs out the ``$(...)`` and backtick texts inside, for the deny rules.
A variable set outside the command line (the environment) is taken as it is.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

from tree_sitter import Node

__all__ = ["builtin_hidden", "hidden", "inner_scripts", "tainted_names"]

Resolve = Callable[[Node], str]
"""A word node's text as bash passes it (its source text when bash expands it at run time)."""

_ARITH_TESTS = frozenset({"-eq", "-ne", "-lt", "-le", "-gt", "-ge"})
_NAME_TESTS = frozenset({"-v", "-R"})
_DECLARE = frozenset({"declare", "typeset", "local", "export", "readonly"})
_READS_INTO = frozenset({"read", "mapfile", "readarray", "printf", "getopts", "wait"})
_SAFE_SUBSTITUTIONS = re.compile(
    r"\$\{#[A-Za-z_]\w*(?:\[[@*]\])?\}|\$[?#$!]|\$\{[?#$!]\}|\$\{([A-Za-z_]\w*)\}|\$([A-Za-z_]\w*)"
)
_PLAIN = re.compile(r"^[\sA-Za-z0-9_+\-*/%<>=!&|^~?:;,()\[\]#@]*$")
_NAME_USE = re.compile(r"(?<![\w#])[A-Za-z_]\w*")
_NAME = re.compile(r"^([A-Za-z_]\w*)(?:\[(.*)\])?$", re.DOTALL)
_ASSIGNED = re.compile(r"^([A-Za-z_]\w*)(\[.*?\])?\+?=(.*)$", re.DOTALL)
_INDIRECT = re.compile(r"^\$\{?([A-Za-z_]\w*)\}?$")
_BACKTICKS = re.compile(r"`((?:[^`\\]|\\.)*)`", re.DOTALL)
BASH_SET = frozenset(
    {"_", "BASH_REMATCH", "REPLY", "MAPFILE", "OPTARG", "BASH_COMMAND", "BASH_ARGV", "BASH_ARGC", "PWD", "OLDPWD"}
    | {"BASH_EXECUTION_STRING", "BASH_SOURCE", "FUNCNAME", "DIRSTACK", "BASH_ALIASES", "BASH_CMDS", "COPROC"}
    | {"READLINE_LINE", "COMP_WORDS", "COMP_LINE", "HISTFILE", "BASH_LINENO"}
)
"""Variables bash gives values itself, from text the command line may control (the last
argument, a regex match, a line read, a folder name...): never plain in arithmetic."""


def plain(text: str, tainted: set[str] | frozenset[str] = frozenset()) -> bool:
    """Whether bash can evaluate `text` as arithmetic without running anything it hides."""
    names: list[str] = []

    def _substitute(match: re.Match[str]) -> str:
        names.extend(n for n in match.groups() if n)
        return " 0 "

    text = _SAFE_SUBSTITUTIONS.sub(_substitute, text)
    if not _PLAIN.match(text):
        return False
    return not any(n in tainted for n in [*names, *_NAME_USE.findall(text)])


def _name_ok(word: str, tainted: set[str] | frozenset[str]) -> bool:
    """Whether `word`, read as a variable name, is a plain name or a plain subscript."""
    match = _NAME.match(word)
    return match is not None and (match.group(2) is None or plain(match.group(2), tainted))


def inner_scripts(text: str) -> list[str]:
    """The texts of ``$(...)`` and backticks inside `text` (nested ones too), for deny rules."""
    found = [m.group(1) for m in _BACKTICKS.finditer(text)]
    for start in (i for i in range(len(text) - 1) if text[i : i + 2] == "$(" and text[i + 2 : i + 3] != "("):
        depth, end = 0, start + 1
        while end < len(text):
            depth += {"(": 1, ")": -1}.get(text[end], 0)
            if depth == 0:
                break
            end += 1
        found.append(text[start + 2 : end])
    return found


def _children_text(node: Node, after: int, before: int) -> str:
    return (node.text or b"")[after - node.start_byte : before - node.start_byte].decode("utf-8", "surrogatepass")


def _between(node: Node, open_kinds: tuple[str, ...], close_kinds: tuple[str, ...]) -> str | None:
    opener = next((c for c in node.children if c.type in open_kinds), None)
    closer = next((c for c in reversed(node.children) if c.type in close_kinds), None)
    if opener is None or closer is None or closer.start_byte < opener.end_byte:
        return None
    return _children_text(node, opener.end_byte, closer.start_byte)


def _arithmetic_texts(node: Node, resolve: Resolve) -> Iterator[tuple[str, str]]:
    """(where, text) for every place under `node` that bash evaluates as arithmetic, and
    ("name", word) for every word it reads as a variable name."""
    stack = [node]
    while stack:
        node = stack.pop()
        stack.extend(node.children)
        kind = node.type
        if kind == "arithmetic_expansion":
            text = _between(node, ("$((", "$["), ("))", "]"))
            yield "an arithmetic expansion", text if text is not None else _text(node)
        elif kind == "command_substitution" and _text(node).startswith("$(("):
            # in a here-document the grammar reads $(( 'a[$(rm x)]' )) as $( ( command ) ); bash as arithmetic
            yield "an arithmetic expansion", _text(node)[3:-2]
        elif kind in ("compound_statement", "c_style_for_statement") and any(c.type == "((" for c in node.children):
            text = _between(node, ("((",), ("))",))
            yield "an arithmetic command (( ))", text if text is not None else _text(node)
        elif kind == "subscript":
            text = _between(node, ("[",), ("]",))
            yield "an array subscript", text if text is not None else _text(node)
        elif kind == "binary_expression" and _in_test(node, "[["):
            operator = next((c for c in node.children if c.type == "test_operator"), None)
            if operator is not None and _text(operator) in _ARITH_TESTS:
                for operand in (c for c in node.named_children if c != operator):
                    yield f"an operand of {_text(operator)} in [[ ]]", resolve(operand)
        elif kind == "unary_expression" and _in_test(node, "[[", "["):
            operator = next((c for c in node.children if c.type == "test_operator"), None)
            if operator is not None and _text(operator) in _NAME_TESTS:
                for operand in (c for c in node.named_children if c != operator):
                    yield "name", resolve(operand)
        elif kind == "expansion":
            yield from _expansion_texts(node)
        elif kind == "variable_assignment":
            value = node.child_by_field_name("value")
            if value is not None and value.type == "array":
                for element in value.named_children:
                    index = re.match(r"^\[(.*?)\]\+?=", _text(element), re.DOTALL)
                    if index is not None:
                        yield "an array subscript", index.group(1)


def _expansion_texts(node: Node) -> Iterator[tuple[str, str]]:
    """``${x:offset:length}`` (arithmetic) and ``${!name}`` (the value of name is a name)."""
    children = node.children
    kinds = [c.type for c in children]
    if (
        kinds[:2] == ["${", "!"]
        and len(kinds) >= 3
        and kinds[2] in ("variable_name", "special_variable_name")
        and kinds[3:] == ["}"]
    ):
        yield "name", "$" + _text(children[2])  # ${!y}: y's value, read as a name
    colon = next((i for i, c in enumerate(children) if c.type == ":" and not c.is_named), None)
    if colon is not None and children[-1].type == "}":
        yield "an offset or length of ${x:...}", _children_text(node, children[colon].end_byte, children[-1].start_byte)


def _in_test(node: Node, *openers: str) -> bool:
    parent = node.parent
    while parent is not None and parent.type in ("binary_expression", "unary_expression", "parenthesized_expression"):
        parent = parent.parent
    return (
        parent is not None
        and parent.type == "test_command"
        and bool(parent.children)
        and (parent.children[0].type in openers)
    )


def _text(node: Node) -> str:
    return (node.text or b"").decode("utf-8", "surrogatepass")


def hidden(root: Node, resolve: Resolve, tainted: set[str]) -> list[tuple[str, str]]:
    """(why, text) for each arithmetic or name context under `root` that may hide a command."""
    out: list[tuple[str, str]] = []
    for where, text in _arithmetic_texts(root, resolve):
        if where == "name":
            indirect = _INDIRECT.match(text)  # ${!y}, [[ -v $y ]]: y's value is the name, as y's in (( y ))
            if not _name_ok(text, tainted) and (indirect is None or indirect.group(1) in tainted):
                out.append(("a word read as a variable name is not a plain name", text))
        elif not plain(text, tainted):
            out.append((f"{where} is evaluated as arithmetic and is not plain", text))
    for name in sorted(_evaluating_names(root, resolve) & tainted):
        out.append((f"{name!r} is an integer variable or nameref given a value that is not plain", name))
    return out


def _option_values(words: tuple[str, ...], valued: str) -> Iterator[tuple[str, str]]:
    """(option letter, value) of the short options in `valued`, and ("", word) for each operand."""
    i = 0
    while i < len(words):
        word = words[i]
        if word == "--":
            yield from (("", w) for w in words[i + 1 :])
            return
        if word.startswith("-") and len(word) > 1:
            for j, letter in enumerate(word[1:], 1):
                if letter in valued:
                    value = word[j + 1 :]
                    if not value and i + 1 < len(words):
                        i += 1
                        value = words[i]
                    yield letter, value
                    break
        else:
            yield "", word
        i += 1


def builtin_hidden(words: tuple[str, ...], tainted: set[str]) -> tuple[str, str, bool] | None:
    """(why, text, whether text is itself run) when a builtin reads one of its `words` as
    arithmetic or as a variable name and that word is not plain (``let 'a[$(rm x)]'``,
    ``printf -v "$n"``, ``read 'a[...]'``, ``declare -i n=...``, ``mapfile -C CALLBACK``), else None."""
    if not words:
        return None
    base, args = words[0].rsplit("/", 1)[-1], words[1:]
    names: list[str] = []
    if base == "let":
        bad = next((w for w in args if not plain(w, tainted)), None)
        return (f"let evaluates {bad!r} as arithmetic", bad, False) if bad is not None else None
    if base in ("test", "["):
        names = [args[i + 1] for i, w in enumerate(args[:-1]) if w in _NAME_TESTS]
    elif base == "printf":
        names = [v for o, v in _option_values(args[:2], "v") if o == "v"]
    elif base in ("read", "mapfile", "readarray"):
        pairs = list(_option_values(args, "adinNptu" if base == "read" else "dnOsuCc"))
        callback = next((v for o, v in pairs if o == "C"), None)
        if callback is not None:
            return f"{base} -C runs a callback with words read at run time", callback, True
        names = [v for o, v in pairs if o in ("", "a")]
    elif base == "wait":
        names = [v for o, v in _option_values(args, "p") if o == "p"]
    elif base == "getopts":
        names = list(args[1:2])
    elif base == "unset":
        names = [w for w in args if not w.startswith("-")]
    elif base in _DECLARE:
        return _declare_hidden(base, args, tainted)
    bad = next((n for n in names if not _name_ok(n, tainted)), None)
    return (f"{base} reads {bad!r} as a variable name", bad, False) if bad is not None else None


def _declare_hidden(base: str, args: tuple[str, ...], tainted: set[str]) -> tuple[str, str, bool] | None:
    flags = "".join(w[1:] for w in args if w[:1] in "-+" and len(w) > 1)
    for word in (w for w in args if w[:1] not in "-+"):
        assigned = _ASSIGNED.match(word)
        name = word if assigned is None else assigned.group(1) + (assigned.group(2) or "")
        if not _name_ok(name, tainted):
            return f"{base} reads {name!r} as a variable name", word, False
        value = assigned.group(3) if assigned is not None else None
        if value is None:
            continue
        if set(flags) & set("in") and not plain(value, tainted):
            return f"{base} -{flags} evaluates the value of {name!r} as arithmetic or as a name", word, False
        compound = bool(set(flags) & set("aA")) or value.startswith("(")
        subscripts = re.findall(r"\[(.*?)\]\+?=", value, re.DOTALL)
        if compound and (re.search(r"[$`]", value) or not all(plain(s, tainted) for s in subscripts)):
            return f"{base} may read the value of {name!r} as an array with subscripts", word, False
    return None


def tainted_names(root: Node, resolve: Resolve) -> set[str]:
    """Names this command line gives a value that is not a plain literal: assigned from an
    expansion or non-plain text (or by ``${x:=...}``/``${x=...}``), read into (``read``,
    ``mapfile``, ``printf -v``, ``getopts``, ``wait -p``), or looped over words that are not
    plain; and the variables bash sets itself (:data:`BASH_SET`: ``_``, ``BASH_REMATCH``,
    ``REPLY``...)."""
    out: set[str] = set(BASH_SET)
    stack = [root]
    while stack:
        node = stack.pop()
        stack.extend(node.children)
        if node.type == "expansion" and any(c.type in (":=", "=") for c in node.children):
            out.update(_text(c) for c in node.children if c.type == "variable_name")  # ${x:=...}
        elif node.type == "variable_assignment":
            name, value = node.child_by_field_name("name"), node.child_by_field_name("value")
            if name is not None and value is not None and not _PLAIN.match(resolve(value)):
                out.add(_base_name(_text(name)))
        elif node.type == "for_statement":
            variable = node.child_by_field_name("variable")
            values = [resolve(v) for v in node.children_by_field_name("value")]
            if variable is not None and (not values or not all(_PLAIN.match(v) for v in values)):
                out.add(_text(variable))
        elif node.type == "command":
            words = [resolve(c) for c in node.children if c.is_named and c.type not in ("comment",)]
            if any(w.rsplit("/", 1)[-1] in _READS_INTO for w in words):
                out.update(_base_name(w) for w in words if _NAME.match(w.split("=", 1)[0]))
    return out


def _evaluating_names(root: Node, resolve: Resolve) -> set[str]:
    """Names declared integer (``-i``) or nameref (``-n``): an assignment to one evaluates its value."""
    out: set[str] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        stack.extend(node.children)
        if node.type in ("declaration_command", "command"):
            words = [resolve(c) if c.is_named else _text(c) for c in node.children]
            if any(w in _DECLARE for w in words):
                flags = "".join(w[1:] for w in words if w[:1] in "-+")
                if set(flags) & set("in"):
                    out.update(_base_name(w) for w in words if w[:1] not in "-+" and _NAME.match(w.split("=")[0]))
    return out


def _base_name(text: str) -> str:
    return re.split(r"[\[+=]", text, maxsplit=1)[0]
