"""What "Allow for all rows" proposes: a rule that covers what differs between a fleet's rows,
and nothing more (issue 33, point 1).

A fleet's rows ask for the same call with their own values: row 0 runs
``python3 tools/profile.py data/f00.csv``, row 1 ``python3 tools/profile.py data/f01.csv``. The
exact command (what a one-row answer allows) answers one row; :func:`propose` gives the rule that
answers them all:

* **Bash**: the command's prefix up to the first word that holds a row's value, in the CLI's
  prefix syntax: ``Bash(python3 tools/profile.py:*)``. A word holds a row's value when one of
  the row's prompt values (the ``{column}`` values that differ between rows) stands in it
  between non-alphanumeric characters (``f00`` in ``data/f00.csv``, ``3`` in ``--seed=3``, not
  ``2`` in ``profile2.py``; nor a word another waiting row has the same), or when another
  waiting row's command of the same program differs there. The words are read with the
  policy's bash grammar (:func:`kandev_nb.policy.parse_command`) and the prefix keeps them as
  written (quotes and all), so the rule's matcher reads it as the command it came from. A
  command the prefix matcher never covers gets no prefix rule: a compound command (``a && b``,
  a pipe, ``$(...)`` in an argument) gets its simple commands, each exactly as written; a
  redirection (``> out.txt``) the exact command with it; a command that cannot be read
  statically (a variable as the command word, ``eval``) no allow rule at all (a policy never
  allows such a command), and the proposal says why (:attr:`Proposal.why`).
* **File tools** (Edit, Write, MultiEdit, NotebookEdit; Read, Glob, Grep, LS, NotebookRead):
  the folder the rows share, up to its first part that holds a row's value, as a gitignore
  pattern from the row's working directory (``Edit(out/**)``; an ``Edit`` rule covers every
  editing tool, a ``Read`` rule every reading one), or from the filesystem's root outside it
  (``Read(//data/shared/**)``). Relative to each row's own folder, so rows in their own git
  worktrees share one rule.
* **WebFetch**: the host (``WebFetch(domain:example.com)``); an **MCP tool**: the tool; any
  other tool: the tool.

A rule too broad to give every row at once (:func:`too_broad`: ``Bash``, ``Bash(python3:*)``,
``Bash(sh:*)``, an interpreter or wrapper with no script, a lone ``rm``/``git``/``curl``...,
``Edit(**)``, the whole working folder, ``Write(/**)``) is flagged and needs a second click
(``confirm=True``). :func:`check_rules` reads a rule a person edited the same way. Whether a
rule answers a call is always decided by the policy's own matcher
(:class:`kandev_nb.policy.Rules`), never by comparing strings here: every rule proposed is
checked to allow the call it was made from.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any, Final, Literal

from kandev_nb.errors import KandevError, RuleError
from kandev_nb.policy import Rules, parse_command, parse_rule
from kandev_nb.policy.grants import session_grant
from kandev_nb.policy.rules import EDIT_TOOLS, READ_TOOLS
from kandev_nb.policy.shell import SimpleCommand
from kandev_nb.policy.wrappers import INTERPRETERS, SHELLS, peel

__all__ = [
    "Call",
    "Proposal",
    "RuleCheck",
    "TooBroadError",
    "check_rules",
    "exact_rule",
    "join_rules",
    "propose",
    "rule_label",
    "split_rules",
    "too_broad",
]

Kind = Literal["prefix", "exact", "parts", "folder", "domain", "tool", "none"]

_ASSIGNMENT: Final = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_GLOB: Final = re.compile(r"[*?\[]")
_CODE_OPTIONS: Final = frozenset({"-c", "-e", "-r", "-p", "--eval", "--command", "--exec", "--print"})
"""Interpreter options whose value is code to run (``python3 -c TEXT``, ``node -e TEXT``)."""
_RUN_VERBS: Final = frozenset({"run", "exec", "x", "dlx", "tool"})
"""First words after a launcher (``uv run``, ``npx``, ``pnpm dlx``) that run whatever follows."""
_ALONE_TOO_BROAD: Final = frozenset(
    {"rm", "rmdir", "dd", "mv", "cp", "ln", "chmod", "chown", "chgrp", "shred", "truncate", "mkfs", "mount"}
    | {"umount", "curl", "wget", "scp", "rsync", "ssh", "sftp", "nc", "git", "docker", "podman", "kubectl"}
    | {"npm", "pnpm", "yarn", "pip", "pip3", "cargo", "go", "gh", "aws", "gcloud", "az", "terraform", "kill"}
    | {"pkill", "killall", "systemctl", "crontab", "apt", "apt-get", "brew", "tee", "find", "tar", "unzip"}
    | {"sed", "make", "psql", "mysql", "sqlite3", "install", "sudo", "su", "xargs"}
)
"""Programs whose every use is a fleet-wide rule too broad to give with one click
(``Bash(rm:*)`` lets every row remove anything)."""
RULE_SEPARATOR: Final = "\n"
"""Several rules in one text (the card's rule field): one a line."""


class TooBroadError(KandevError, ValueError):
    """A rule too broad to give every row with one click was given without ``confirm=True``."""


@dataclass(frozen=True)
class Call:
    """One row's tool call.

    Attributes:
        tool_name: the can_use_tool's ``tool_name`` (``"Bash"``, ``"Write"``).
        tool_input: its ``input`` (``{"command": "python3 tools/profile.py data/f00.csv"}``).
        cwd: the row's working directory (relative rules and paths resolve against it).
    """

    tool_name: str
    tool_input: Mapping[str, Any]
    cwd: str


@dataclass(frozen=True)
class Proposal:
    """The fleet-wide rule proposed for one row's call.

    Attributes:
        rules: the allow rules, in the CLI's syntax (``("Bash(python3 tools/profile.py:*)",)``;
            one per simple command of a compound command); ``()`` when no rule can allow the
            call (a command that cannot be read statically).
        kind: ``prefix``, ``exact``, ``parts`` (a compound command's commands, exactly),
            ``folder``, ``domain``, ``tool``, or ``none``.
        why: one sentence a person reads: what the rule covers, or why it is not a prefix.
        too_broad: why the rule is too broad to give with one click ("" when it is not).
        deny: the rules "Deny for all rows" gives (`rules`, else the exact command).
    """

    rules: tuple[str, ...]
    kind: Kind
    why: str
    too_broad: str = ""
    deny: tuple[str, ...] = ()

    @property
    def text(self) -> str:
        """The rules as one text, one a line (:data:`RULE_SEPARATOR`)."""
        return join_rules(self.rules)

    @property
    def deny_rules(self) -> tuple[str, ...]:
        """The rules "Deny for all rows" gives."""
        return self.deny or self.rules


@dataclass(frozen=True)
class RuleCheck:
    """Rules a person gave (or accepted) for all rows, read before they apply.

    Attributes:
        rules: the rules, each parsed once (``()`` with an error).
        error: why they cannot apply ("" when they can): a rule that does not parse, or rules
            that do not answer the row's own call (the card's request).
        too_broad: why they are too broad to give with one click ("" when they are not; allow only).
    """

    rules: tuple[str, ...]
    error: str = ""
    too_broad: str = ""


def split_rules(text: str | Sequence[str]) -> tuple[str, ...]:
    """Rules from a text with one a line (or a list of them), blank lines dropped."""
    lines = text.split(RULE_SEPARATOR) if isinstance(text, str) else list(text)
    return tuple(line.strip() for line in lines if line.strip())


def join_rules(rules: Iterable[str]) -> str:
    """The rules as one text, one a line."""
    return RULE_SEPARATOR.join(rules)


def rule_label(rules: Sequence[str], limit: int = 60) -> str:
    """What a button names: `` `python3 tools/profile.py …` `` for ``Bash(python3 tools/profile.py:*)``,
    the command for an exact Bash rule, the rule itself otherwise, ``these 2 rules`` for several."""
    if len(rules) != 1:
        return f"these {len(rules)} rules" if rules else "no rule"
    rule = rules[0]
    shown = rule
    if rule.startswith("Bash(") and rule.endswith(")"):
        content = rule[5:-1]
        shown = content[:-2] + " …" if content.endswith(":*") else content
    if len(shown) > limit:
        shown = shown[: limit - 1] + "…"
    return f"`{shown}`"


def exact_rule(command: str) -> str:
    """``Bash(<command>)`` matching exactly `command` (a ``*`` or ``\\`` in it escaped)."""
    escaped = " ".join(command.split()).replace("\\", "\\\\").replace("*", "\\*")
    return f"Bash({escaped})"


# -- the proposal ----------------------------------------------------------------------------


def propose(
    tool_name: str,
    tool_input: Mapping[str, Any],
    *,
    cwd: str,
    values: Iterable[str] = (),
    others: Iterable[Call] = (),
) -> Proposal:
    """The fleet-wide rule for one row's call (see the module docstring).

    Args:
        tool_name, tool_input: the row's can_use_tool request.
        cwd: the row's working directory.
        values: the row's own values that differ between rows (its prompt's ``{column}``
            values, as text): a word or folder that holds one is where the rule stops.
        others: the other rows' waiting calls: where they differ from this one, the rule stops too.

    Returns:
        A :class:`Proposal` whose every rule the policy's matcher finds to allow this call
        (else no rule, and why).
    """
    call = Call(tool_name, tool_input, cwd)
    shown = [v.strip() for v in values if isinstance(v, str) and v.strip()]
    if tool_name == "Bash":
        proposal = _bash(call, shown, [o for o in others if o.tool_name == "Bash"])
    elif tool_name in EDIT_TOOLS or tool_name in READ_TOOLS:
        proposal = _files(call, shown, [o for o in others if o.tool_name in EDIT_TOOLS | READ_TOOLS])
    else:
        grant = session_grant(tool_name, dict(tool_input), cwd) if tool_name == "WebFetch" else None
        if grant is not None:
            proposal = Proposal((grant.rule,), "domain", f"every fetch from {grant.rule[16:-1]}")
        else:
            proposal = Proposal((tool_name,), "tool", f"every {tool_name} call")
    if proposal.rules and not _answers(proposal.rules, "allow", call):
        exact = (exact_rule(str(tool_input.get("command", ""))),) if tool_name == "Bash" else ()
        if not exact or not _answers(exact, "allow", call):
            return Proposal((), "none", "no rule kandev-nb can write allows this call; answer it row by row")
        proposal = Proposal(exact, "exact", "the exact command (no shorter rule of it can be written)")
    broad = too_broad(proposal.rules, cwd)
    return Proposal(proposal.rules, proposal.kind, proposal.why, broad, proposal.deny)


def _held_at(word: str, value: str) -> int | None:
    """Where `value` stands in `word` between non-alphanumeric characters (or its ends), or None."""
    start = word.find(value) if value else -1
    while start != -1:
        end = start + len(value)
        if (start == 0 or not word[start - 1].isalnum()) and (end == len(word) or not word[end].isalnum()):
            return start
        start = word.find(value, start + 1)
    return None


def _holds(word: str, value: str) -> bool:
    """Whether `value` stands in `word` between non-alphanumeric characters (``f00`` in ``data/f00.csv``)."""
    return _held_at(word, value) is not None


def _first_holding(parts: Sequence[str], values: Sequence[str], others: Sequence[Sequence[str]] = ()) -> int | None:
    """The first part that holds one of `values`, unless another row's call has the very same
    part there (``1`` in ``head -n 1 data/f01.csv`` for the row whose id is 1: every row says
    ``-n 1``, so it is not that row's value)."""
    for i, part in enumerate(parts):
        if any(_holds(part, v) for v in values) and not any(len(o) > i and o[i] == part for o in others):
            return i
    return None


def _first_difference(parts: Sequence[str], others: Iterable[Sequence[str]]) -> int | None:
    """The first index where any of `others` differs from `parts` (None: none differs)."""
    found: int | None = None
    for other in others:
        if tuple(other) == tuple(parts):
            continue
        index = next((i for i, (a, b) in enumerate(zip(parts, other, strict=False)) if a != b), None)
        if index is None:
            index = min(len(parts), len(other))
        found = index if found is None else min(found, index)
    return found


def _simple(command: str, cwd: str) -> SimpleCommand | None:
    """The one static simple command of `command`, without redirections, or None."""
    parsed = parse_command(command, cwd=cwd)
    if parsed.dynamic or len(parsed.commands) != 1:
        return None
    simple = parsed.commands[0]
    return simple if not simple.redirects and simple.written else None


def _bash(call: Call, values: Sequence[str], others: Sequence[Call]) -> Proposal:
    command = str(call.tool_input.get("command", ""))
    parsed = parse_command(command, cwd=call.cwd)
    if parsed.dynamic:
        return Proposal(
            (),
            "none",
            f"no rule allows this command for any row ({parsed.dynamic[0]}): kandev-nb asks for it every time; "
            "answer it row by row",
            deny=(exact_rule(command),),
        )
    if not parsed.commands:
        return Proposal((), "none", "the command runs nothing kandev-nb can read", deny=(exact_rule(command),))
    if len(parsed.commands) > 1:
        parts = tuple(dict.fromkeys(_exact_of(c) for c in parsed.commands))
        return Proposal(
            parts,
            "parts",
            f"{_compound(command)} ({len(parsed.commands)} commands): a prefix rule never covers it, so each of its "
            "commands is allowed exactly as written",
            deny=(exact_rule(command),),
        )
    simple = parsed.commands[0]
    exact = _exact_of(simple)
    if simple.redirects:
        return Proposal(
            (exact,),
            "exact",
            f"it redirects to or from a file ({simple.redirects[0]}): a prefix rule never covers "
            "a redirection, so the exact command is allowed",
        )
    written = simple.written
    joined = " ".join(written)
    if not written or not simple.text.endswith(joined):
        return Proposal((exact,), "exact", "the exact command (its words could not be read one by one)")
    lead = simple.text[: len(simple.text) - len(joined)].strip()  # NAME=value words before the command
    mine = [*simple.words]
    other_words = [s.words for o in others if (s := _simple(str(o.tool_input.get("command", "")), o.cwd))]
    same_program = [w for w in other_words if w and mine and w[0] == mine[0]]
    holding, differing = _first_holding(mine, values, same_program), _first_difference(mine, same_program)
    cuts = [i for i in (holding, differing) if i is not None]
    if not cuts or min(cuts) >= len(mine):
        return Proposal((exact,), "exact", "nothing in this command differs between the rows seen: the exact command")
    cut = min(cuts)
    if cut == 0:
        return Proposal(
            (exact,), "exact", "the row's own value is in the command's first word: only the exact command is allowed"
        )
    prefix = " ".join([lead, *written[:cut]]).strip()
    where = "holds the row's value" if cut == holding else "differs between the waiting rows"
    return Proposal(
        (f"Bash({prefix}:*)",),
        "prefix",
        f"every command that starts with `{prefix}` (the next word, `{written[cut]}`, {where}); a command with "
        "more in it (`;`, `&&`, a pipe, `$(...)`) is still asked",
    )


def _compound(command: str) -> str:
    """What makes `command` more than one command, in words (for :attr:`Proposal.why` only)."""
    if "$(" in command or "`" in command or "<(" in command or ">(" in command:
        return "a command substitution"
    if re.search(r"(?<![|])[|](?![|])", command):
        return "a pipe"
    return "a list of commands (`;`, `&&`, `||`)" if re.search(r"[;&|\n]", command) else "a compound command"


def _exact_of(simple: SimpleCommand) -> str:
    """The exact rule of one simple command, its redirections included."""
    return exact_rule(" ".join([simple.text, *simple.redirects]))


def _path_of(call: Call) -> str | None:
    for key in ("file_path", "notebook_path", "path"):
        value = call.tool_input.get(key)
        if isinstance(value, str) and value.strip():
            return value
    return call.cwd if call.tool_name in ("Glob", "Grep", "LS") else None


def _folder_parts(call: Call) -> tuple[bool, list[str]] | None:
    """(inside the row's cwd, the folder's parts from the cwd or from the root)."""
    given = _path_of(call)
    if given is None:
        return None
    absolute = os.path.normpath(os.path.join(call.cwd, os.path.expanduser(given)))
    is_dir = call.tool_name in ("Glob", "LS") or (call.tool_name == "Grep" and not os.path.isfile(absolute))
    folder = absolute if is_dir else os.path.dirname(absolute)
    cwd = os.path.normpath(os.path.abspath(call.cwd))
    if folder == cwd or folder.startswith(cwd.rstrip(os.sep) + os.sep):
        rel = os.path.relpath(folder, cwd)
        return True, [] if rel == "." else rel.split(os.sep)
    return False, [p for p in folder.split(os.sep) if p]


def _files(call: Call, values: Sequence[str], others: Sequence[Call]) -> Proposal:
    family = "Edit" if call.tool_name in EDIT_TOOLS else "Read"
    verb = "edits" if family == "Edit" else "reads"
    mine = _folder_parts(call)
    if mine is None:
        return Proposal((family,), "tool", f"every file the agent {verb}")
    inside, parts = mine
    theirs = [found[1] for o in others if (found := _folder_parts(o)) is not None and found[0] == inside]
    cuts = [i for i in (_first_holding(parts, values, theirs), _first_difference(parts, theirs)) if i is not None]
    cut = min([len(parts), *cuts])
    kept = "/".join(parts[:cut])
    if inside and not parts:
        named = _name_pattern(call, values)
        if named is not None:  # report-f00.md in the working folder: ./report-*.md, not the whole folder
            return Proposal((f"{family}(./{named})",), "folder", f"{verb} of files named {named} in the working folder")
    if inside:
        pattern = f"{kept}/**" if kept else "./**"
        where = f"{kept}/ in the row's working folder" if kept else "the row's whole working folder"
    else:
        pattern = f"//{kept}/**" if kept else "//**"
        where = f"/{kept}/" if kept else "the whole filesystem"
    return Proposal((f"{family}({pattern})",), "folder", f"{verb} of any file below {where}")


def _name_pattern(call: Call, values: Sequence[str]) -> str | None:
    """The file's name with the row's value as ``*`` (``report-*.md``), or None when it holds none."""
    given = _path_of(call)
    name = os.path.basename(given) if given else ""
    for value in values:
        start = _held_at(name, value)
        if start is not None and not _GLOB.search(name + value) and "/" not in value:
            return name[:start] + "*" + name[start + len(value) :]
    return None


def _answers(rules: Sequence[str], behavior: Literal["allow", "deny"], call: Call) -> bool:
    """Whether `rules`, as the fleet's allow (or deny) rules, answer `call` (the policy's matcher)."""
    try:
        policy = Rules(**{behavior: list(rules)}, root=call.cwd)
    except RuleError:
        return False
    return policy.verdict(call.tool_name, call.tool_input).answer == behavior


# -- too broad -------------------------------------------------------------------------------


def too_broad(rules: Iterable[str], cwd: str) -> str:
    """Why these allow rules are too broad to give every row with one click, or "".

    Too broad: a whole tool that acts (``Bash``, ``Edit``, ``Write``, ``Read``, ``WebFetch``);
    a Bash rule whose fixed words are a shell or an interpreter without a script
    (``Bash(python3:*)``, ``Bash(python3 -c:*)``, ``Bash(sh:*)``, ``Bash(uv run:*)``), a wrapper
    with no command (``Bash(sudo:*)``, ``Bash(timeout 5:*)``), or one of the programs that can
    undo anything alone (``Bash(rm:*)``, ``Bash(git:*)``, ``Bash(curl:*)``); a file rule with no
    folder of its own (``Edit(**)``, ``Edit(*.py)``, ``Write(/**)``, the whole working folder,
    the home folder, a folder above the working one, ``//`` or one folder below it); any host
    (``WebFetch(domain:*)``). A rule that does not parse is not judged here (:func:`check_rules`).
    """
    for text in rules:
        try:
            rule = parse_rule(text)
        except RuleError:
            continue
        why = _rule_too_broad(rule, cwd)
        if why:
            return f"{text}: {why}"
    return ""


def _rule_too_broad(rule: Any, cwd: str) -> str:
    if rule.kind == "tool":
        if rule.tool in ("Bash", "WebFetch") or rule.tool in EDIT_TOOLS or rule.tool in READ_TOOLS:
            return f"every {rule.tool} call of every row"
        return ""
    if rule.tool == "Bash":
        content = " ".join((rule.content or "").split())
        if rule.kind == "bash_prefix":
            return _words_too_broad(content[:-2].strip())
        if rule.kind == "bash_wildcard":
            fixed = re.split(r"(?<!\\)\*", content, maxsplit=1)[0]
            return _words_too_broad(fixed.strip()) or ("a pattern that starts with *" if not fixed.strip() else "")
        return ""
    if rule.kind == "domain":
        return "any host" if (rule.content or "").strip() == "domain:*" else ""
    if rule.kind == "path" and rule._path is not None:
        return _path_too_broad(rule._path, cwd)
    return ""


def _words_too_broad(prefix: str) -> str:
    """Why a Bash prefix (the fixed words of a rule) allows too much, or ""."""
    if not prefix:
        return "no fixed command"
    top = [c for c in parse_command(prefix).commands if c.depth == 0]
    if len(top) != 1:
        return ""  # more than one command: an allow needs each of them allowed
    if top[0].dynamic and "standard input" not in top[0].dynamic:
        return f"its command word is known only at run time ({top[0].dynamic})"
    words = list(top[0].words)
    while words and _ASSIGNMENT.match(words[0]):
        words.pop(0)
    for _ in range(8):
        if not words:
            return "a wrapper with no command after it runs any command"
        peeled = peel(words)
        if peeled is None:
            break
        if peeled.script is not None or peeled.stdin:
            return f"`{words[0]}` runs a shell script"
        words = list(peeled.command)
    head = PurePosixPath(words[0]).name
    if head in SHELLS or INTERPRETERS.match(head):
        return _script_named(head, words[1:])
    if len(words) == 1 and head in _ALONE_TOO_BROAD:
        return f"every `{head}` command, whatever it acts on"
    return ""


def _script_named(head: str, args: Sequence[str]) -> str:
    """ "" when the interpreter's words name a script (or a module) to run, else why not."""
    rest = list(args)
    if rest and rest[0] in _RUN_VERBS:
        rest = rest[1:]  # uv run X, npx X: X is what runs
    for i, word in enumerate(rest):
        cluster = word.startswith("-") and not word.startswith("--") and word[1:].isalpha()
        if word in _CODE_OPTIONS or (cluster and word[-1] in "ce"):
            return f"`{head} {word}` runs any code given after it"
        if word == "-m":
            return "" if i + 1 < len(rest) else f"`{head} -m` runs any module"
        if not word.startswith("-"):
            return ""
    return f"`{head}` with no script runs any code"


def _path_too_broad(path: Any, cwd: str) -> str:
    line = path.line.strip("/")
    parts = [p for p in line.split("/") if p]
    fixed: list[str] = []
    for part in parts:
        if _GLOB.search(part):
            break
        fixed.append(part)
    named = not fixed and len(parts) == 1 and "**" not in parts[0] and not _GLOB.match(parts[0])
    if path.anchor in ("cwd", "root") and not fixed and not named:
        return "every file of the working folder"
    if "/" not in path.line.rstrip("/") and path.anchor == "cwd":
        return "a name at any depth of the working folder"  # Edit(conftest.py) is every conftest.py
    if path.anchor in ("cwd", "root"):
        return ""  # a folder of its own (out/**), or a name in the folder (./report-*.md)
    if path.anchor == "home":
        return "" if fixed else "every file of the home folder"
    if len(fixed) < 2:
        return "a folder at the top of the filesystem"
    base = "/" + "/".join(fixed)
    for near in (os.path.abspath(cwd), os.path.expanduser("~")):
        if near == base or near.startswith(base.rstrip("/") + "/"):
            return f"{base} holds the working folder or the home folder"
    return ""


# -- rules a person gave ---------------------------------------------------------------------


def check_rules(text: str | Sequence[str], behavior: Literal["allow", "deny"], call: Call) -> RuleCheck:
    """Read rules given for all rows (the card's field, ``allow_all_rows(rule=...)``).

    They must parse (:func:`kandev_nb.policy.parse_rule`) and answer the row's own call
    (`call`) with `behavior` as the fleet's matcher reads them; an allow is also checked by
    :func:`too_broad`.
    """
    rules = split_rules(text)
    if not rules:
        return RuleCheck((), "no rule given")
    try:
        parsed = tuple(parse_rule(r).text for r in rules)
    except RuleError as exc:
        return RuleCheck((), str(exc))
    if not _answers(parsed, behavior, call):
        verb = "allow" if behavior == "allow" else "deny"
        return RuleCheck(parsed, f"{join_rules(parsed)} does not {verb} this row's request")
    return RuleCheck(parsed, "", too_broad(parsed, call.cwd) if behavior == "allow" else "")
