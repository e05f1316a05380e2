"""The :class:`Rules` approval policy: deny beats ask beats allow, in Claude Code's rule syntax.

A policy is ``policy(tool_name, tool_input) -> "allow" | "deny" | None`` (None: ask a
person), called with a can_use_tool request's `tool_name` and `input`. :class:`Rules` is
the rule-based one; :meth:`Rules.verdict` also says which rule decided and what a person
should know (:class:`Verdict`).
"""

from __future__ import annotations

import dataclasses
import functools
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from kandev_nb.policy.files import executed_by, is_sensitive_path
from kandev_nb.policy.rules import EDIT_TOOLS, Rule, parse_rule, parse_rules
from kandev_nb.policy.shell import ParsedCommand, SimpleCommand, parse_command
from kandev_nb.policy.wrappers import runs_code

__all__ = ["ApprovalPolicy", "PolicyAnswer", "Rules", "Verdict", "rule_matches", "rule_reaches"]

PolicyAnswer = Literal["allow", "deny"] | None
ApprovalPolicy = Callable[[str, dict[str, Any]], PolicyAnswer]
"""A policy is ``policy(tool_name, tool_input) -> "allow" | "deny" | None`` (None: ask)."""

Answer = Literal["allow", "deny", "ask"] | None


@dataclass(frozen=True)
class Verdict:
    """What a :class:`Rules` policy says about one tool call, and why.

    Attributes:
        answer: "deny" (a deny rule matched), "ask" (an ask rule matched: a person decides
            even if an allow rule matches too), "allow", or None (no rule decides: a person
            is asked).
        rule: the rule text that decided (several allow rules that together allowed a
            compound command are joined with ", "; ``allow_edits_under=<folder>`` for an
            edit allowed that way), or None.
        note: what a person should know: for an allow, the interpreter, test runner or build
            tool it runs, or the fact that the edited file is executed by one; for None, why
            the command could not be read statically. "" when nothing.
    """

    answer: Answer
    rule: str | None = None
    note: str = ""


def _root(root: str | os.PathLike[str] | None) -> str:
    return os.path.abspath(os.fspath(root)) if root is not None else os.getcwd()


def _subjects(command: SimpleCommand) -> list[str]:
    """The texts a deny or ask rule is compared with: the source and every spelling."""
    return list(dict.fromkeys([command.text, *(" ".join(s) for s in command.spellings)]))


def _allowed_by(rule: Rule, command: SimpleCommand) -> bool:
    """An allow rule sees the command as written (wrappers and ``NAME=value`` included); a
    command with file redirections is allowed only by a rule that writes them too (not by
    ``Bash`` or ``Bash(*)``: ``echo > data.csv`` empties a file)."""
    if rule.kind == "tool":
        return not command.redirects
    subject = command.text
    if command.redirects:
        needed = {c for r in command.redirects for c in "<>" if c in r}
        if not needed <= set(rule.content or ""):
            return False
        subject = f"{command.text} {' '.join(command.redirects)}"
    return rule.matches_command(subject)


def _bash_match(rule: Rule, parsed: ParsedCommand) -> bool:
    """For a deny or ask rule: whether any simple command, in any spelling, matches."""
    if not rule.covers_tool("Bash"):
        return False
    if rule.kind == "tool":
        return True
    whole = " ".join(parsed.source.split())
    return rule.matches_command(whole) or any(rule.matches_command(s) for c in parsed.commands for s in _subjects(c))


@dataclass(frozen=True)
class Rules:
    """A rule-based :data:`ApprovalPolicy`, in Claude Code's permission-rule syntax.

    Rules are ``Tool`` or ``Tool(content)`` (:mod:`kandev_nb.policy.rules`):
    ``"Bash(git push:*)"``, ``"Bash(npm test *)"``, ``"WebFetch(domain:example.com)"``,
    ``"Read(./.env)"``, ``"Edit(docs/**)"``, ``"mcp__kernel__run_cell"``. Every rule is parsed
    when the policy is built; one the matcher does not understand raises
    :class:`~kandev_nb.errors.RuleError` naming it. Deny beats ask beats allow;
    `allow_edits_under` allows Edit/Write/MultiEdit/NotebookEdit of files below those folders.
    No match returns None, and a person is asked.

    Shell commands are read with a bash grammar (:mod:`kandev_nb.policy.shell`): every simple
    command anywhere in the line counts (lists, pipelines, subshells, groups, ``if``/``for``/
    ``while``/``case``, substitutions, function bodies, the text of ``bash -c``, ``su -c``,
    ``script -c``, ``watch``, ``eval``...). A deny or ask rule matches if ANY simple command,
    in any spelling, matches: as written, with quotes and escapes resolved (``'rm'``,
    ``\\rm``), without the program's folder (``/bin/rm``), and after each wrapper (``sudo``,
    ``env``, ``timeout 5``, ``nice``, ``xargs``, ``busybox``, ``flock FILE``, ``taskset MASK``,
    ``coproc``...). An allow needs EVERY simple command allowed, each read as written (so
    ``sudo git status`` is not allowed by ``Bash(git status:*)``, nor ``git status; rm -rf ~``,
    nor ``git status > notes`` unless the rule writes the redirection). A command that
    cannot be read statically (a command word from a variable, a glob, a brace expansion,
    ``$'...'``, ``eval``, a shell reading its standard input, a syntax error) is never allowed
    by a rule: a person is asked, unless a deny rule matches what could be read.

    What a deny rule cannot catch: code that an allowed program runs. An interpreter
    (``python3 -c``, ``node -e``, ``sh script``...), a test runner or a build tool (``pytest``,
    ``tox``, ``nox``, ``npm test``, ``cargo``, ``go test``, ``pip install .``, ``make``) runs
    whatever its files say. Deny rules narrow what a person is asked about; they are not a
    sandbox. :meth:`note` says so on an allow that runs one, and when `allow_edits_under`
    allows an edit of a file such a tool executes (``conftest.py``, ``setup.py``,
    ``Makefile``, ``package.json``...): the decision carries it (``Decision.note``).

    `allow_edits_under` never covers what could make a later command run code: anything in
    ``.git/`` (config, hooks), ``.claude/``, ``.vscode/``, ``.idea/``, ``.husky/``, ``.ssh/``,
    ``.ipython/``..., ``.env*`` files, shell start-up files (``.bashrc``, ``.zshrc``...),
    ``.gitconfig``, ``.mcp.json`` (:data:`kandev_nb.policy.files.SENSITIVE_FILES`,
    :data:`~kandev_nb.policy.files.SENSITIVE_DIRS`): those are asked.

    Attributes:
        allow, deny, ask: rule texts (parsed when built; kept as tuples).
        allow_edits_under: folders (relative ones against `root`).
        root: the settings root that ``/path`` and relative file rules and relative tool
            paths resolve against (the session's cwd); None: the process's working
            directory at evaluation time.

    Raises:
        RuleError: a rule is not understood, or a rule list is a single string.
    """

    allow: Sequence[str] = ()
    deny: Sequence[str] = ()
    allow_edits_under: Sequence[str | os.PathLike[str]] = field(default_factory=tuple)
    ask: Sequence[str] = ()
    root: str | os.PathLike[str] | None = None
    _allow: tuple[Rule, ...] = field(default=(), init=False, repr=False, compare=False)
    _deny: tuple[Rule, ...] = field(default=(), init=False, repr=False, compare=False)
    _ask: tuple[Rule, ...] = field(default=(), init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        for name in ("allow", "deny", "ask"):
            parsed = parse_rules(getattr(self, name), name)
            object.__setattr__(self, name, tuple(r.text for r in parsed))
            object.__setattr__(self, f"_{name}", parsed)
        if isinstance(self.allow_edits_under, (str, os.PathLike)):
            object.__setattr__(self, "allow_edits_under", (self.allow_edits_under,))
        object.__setattr__(self, "allow_edits_under", tuple(self.allow_edits_under))

    def __call__(self, tool_name: str, tool_input: dict[str, Any]) -> PolicyAnswer:
        """The policy's answer for one request: "allow", "deny" or None (ask a person; also
        for a matching ask rule)."""
        answer = self.verdict(tool_name, tool_input).answer
        return answer if answer in ("allow", "deny") else None

    def verdict(self, tool_name: str, tool_input: Mapping[str, Any]) -> Verdict:
        """The policy's :class:`Verdict` for one request (`tool_name` and `input` of can_use_tool)."""
        root = _root(self.root)
        parsed = parse_command(str(tool_input.get("command", "")), cwd=root) if tool_name == "Bash" else None
        for rule in self._deny:
            if self._matches_broadly(rule, tool_name, tool_input, parsed, root):
                return Verdict("deny", rule.text)
        for rule in self._ask:
            if self._matches_broadly(rule, tool_name, tool_input, parsed, root):
                return Verdict("ask", rule.text, "An ask rule matched: a person decides.")
        if parsed is not None:
            return self._bash_allow(parsed)
        for rule in self._allow:
            if rule.matches_input(tool_name, tool_input, root=root, deny=False):
                return Verdict("allow", rule.text, _edit_note(tool_name, tool_input, root))
        if tool_name in EDIT_TOOLS and self.allow_edits_under:
            return self._edit_verdict(tool_name, tool_input, root)
        return Verdict(None)

    def with_root(self, root: str | os.PathLike[str]) -> Rules:
        """This policy with `root` as its settings root when it has none of its own (the
        session's cwd: ``Read(./.env)`` means the CLI's folder, not the kernel's); else itself."""
        return self if self.root is not None else _rooted(self, os.fspath(root))

    def denied_by(
        self, tool_name: str, tool_input: Mapping[str, Any], cwd: str | os.PathLike[str] | None = None
    ) -> str | None:
        """The first deny rule that matches this request (as written), or None; `cwd` is the
        root when the policy has none (:meth:`with_root`)."""
        root = _root(self.root if self.root is not None else cwd)
        parsed = parse_command(str(tool_input.get("command", "")), cwd=root) if tool_name == "Bash" else None
        return next((r.text for r in self._deny if self._matches_broadly(r, tool_name, tool_input, parsed, root)), None)

    def note(self, tool_name: str, tool_input: dict[str, Any]) -> str:
        """What a person should know about this policy's "allow" ("" when it does not allow, or
        when nothing): the interpreter, test runner or build tool an allowed shell command runs
        (``python3``, ``pytest``, ``npm test``, ``make``...), which can do anything the deny
        rules forbid; or that an allowed edit touches a file such a tool executes."""
        verdict = self.verdict(tool_name, tool_input)
        return verdict.note if verdict.answer == "allow" else ""

    def cli_disallowed_tools(self) -> list[str]:
        """The deny rules to pass to the CLI as ``--disallowedTools`` (a second line of defence).

        Only rules the CLI reads as we do, or more narrowly (the CLI never refuses what this
        policy allows): whole tools, MCP servers and tools, Bash rules, file rules, and
        ``WebFetch(domain:...)`` (``domain:x.com`` is sent as itself and ``domain:*.x.com``:
        the CLI reads it as that host only). Left out: kandev-nb's URL-glob WebFetch rules
        (the CLI refuses them), and rules with a comma (the flag splits on commas).
        """
        out: list[str] = []
        for rule in self._deny:
            if rule.kind == "url" or "," in rule.text:
                continue
            out.append(rule.text)
            if rule.kind == "domain":
                host = (rule.content or "").strip()[len("domain:") :]
                if not host.startswith("*"):
                    out.append(f"WebFetch(domain:*.{host})")
        return list(dict.fromkeys(out))

    def _matches_broadly(
        self, rule: Rule, tool_name: str, tool_input: Mapping[str, Any], parsed: ParsedCommand | None, root: str
    ) -> bool:
        if parsed is not None:
            return _bash_match(rule, parsed)
        return rule.matches_input(tool_name, tool_input, root=root, deny=True)

    def _bash_allow(self, parsed: ParsedCommand) -> Verdict:
        if parsed.dynamic:
            return Verdict(None, None, f"Asked, never allowed by a rule: {parsed.dynamic[0]}.")
        if not parsed.commands:
            return Verdict(None, None, "Asked: the command runs nothing kandev-nb can read.")
        used: list[str] = []
        for command in parsed.commands:
            rule = next((r for r in self._allow if r.covers_tool("Bash") and _allowed_by(r, command)), None)
            if rule is None:
                return Verdict(None)
            used.append(rule.text)
        return Verdict("allow", ", ".join(dict.fromkeys(used)), _command_note(parsed))

    def _edit_verdict(self, tool_name: str, tool_input: Mapping[str, Any], root: str) -> Verdict:
        subject = next(
            (tool_input[k] for k in ("file_path", "notebook_path") if isinstance(tool_input.get(k), str)), None
        )
        if subject is None:
            return Verdict(None)
        target = Path(root, os.path.expanduser(subject)).resolve()
        if is_sensitive_path(str(target)):
            return Verdict(
                None, None, "Asked: allow_edits_under never covers this file (it can make a command run code)."
            )
        for folder in self.allow_edits_under:
            base = Path(root, os.path.expanduser(os.fspath(folder))).resolve()
            if target.is_relative_to(base):
                return Verdict("allow", f"allow_edits_under={base}", _edit_note(tool_name, tool_input, root))
        return Verdict(None)


@functools.lru_cache(maxsize=64)
def _rooted(rules: Rules, root: str) -> Rules:
    return dataclasses.replace(rules, root=root)


def _command_note(parsed: ParsedCommand) -> str:
    interpreters: list[str] = []
    runners: list[str] = []
    for command in parsed.commands:
        for spelling in command.spellings:
            found = runs_code(spelling)
            if found is not None:
                (interpreters if found[0] == "interpreter" else runners).append(found[1])
    notes = []
    if interpreters:
        names = ", ".join(dict.fromkeys(interpreters))
        notes.append(
            f"Allowed by a rule, but it runs an interpreter ({names}): the code it runs is not checked by the deny "
            "rules."
        )
    if runners:
        names = ", ".join(dict.fromkeys(runners))
        notes.append(
            f"Allowed by a rule, but it runs a test runner or build tool ({names}): it executes code from the "
            "project's files (conftest.py, setup.py, Makefile, package.json scripts...), which the deny rules do "
            "not check."
        )
    return " ".join(notes)


def _edit_note(tool_name: str, tool_input: Mapping[str, Any], root: str) -> str:
    if tool_name not in EDIT_TOOLS:
        return ""
    subject = next((tool_input[k] for k in ("file_path", "notebook_path") if isinstance(tool_input.get(k), str)), "")
    tools = executed_by(subject) if subject else None
    if tools is None:
        return ""
    name = os.path.basename(subject)
    return (
        f"Allowed by the policy, but {name} is executed by {tools}: with such a command allowed, this edit runs "
        "code no person has seen."
    )


def rule_reaches(rule: str, tool_name: str, tool_input: Mapping[str, Any], *, cwd: str | None = None) -> bool:
    """Whether one rule, read as a deny rule is read, may cover this call: for Bash, ANY simple
    command in any spelling (wrappers such as ``nice`` and ``timeout 5`` peeled, every part of a
    list, pipeline or substitution), or a command that cannot be read statically; for other
    tools, any spelling of the path. What the CLI's own copy of a session grant may let run
    (``nice touch e.txt`` under ``Bash(touch:*)``) is reached; :func:`rule_matches` is narrower.

    Raises:
        RuleError: `rule` is not understood.
    """
    parsed_rule = parse_rule(rule)
    root = _root(cwd)
    if tool_name == "Bash":
        if not parsed_rule.covers_tool("Bash"):
            return False
        parsed = parse_command(str(tool_input.get("command", "")), cwd=root)
        return bool(parsed.dynamic) or _bash_match(parsed_rule, parsed)
    return parsed_rule.matches_input(tool_name, tool_input, root=root, deny=True)


def rule_matches(rule: str, tool_name: str, tool_input: dict[str, Any], *, cwd: str | None = None) -> bool:
    """Whether one rule, read as an allow rule, covers this call (used to say which session
    grant allowed a call): for Bash, every simple command must match it and the command must be
    static; for other tools, every spelling of the path (as given and resolved) must match.

    Args:
        rule: a rule in Claude Code's syntax (``"Bash(touch:*)"``).
        tool_name, tool_input: the call (can_use_tool `tool_name` and `input`).
        cwd: what relative rules and paths resolve against; None: the process's working directory.

    Raises:
        RuleError: `rule` is not understood.
    """
    parsed_rule = parse_rule(rule)
    root = _root(cwd)
    if tool_name == "Bash":
        if not parsed_rule.covers_tool("Bash"):
            return False
        parsed = parse_command(str(tool_input.get("command", "")), cwd=root)
        return (
            not parsed.dynamic and bool(parsed.commands) and all(_allowed_by(parsed_rule, c) for c in parsed.commands)
        )
    return parsed_rule.matches_input(tool_name, tool_input, root=root, deny=False)
