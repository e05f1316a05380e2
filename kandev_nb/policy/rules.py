"""One permission rule in Claude Code's rule syntax, parsed and checked at construction.

A rule is ``Tool`` or ``Tool(content)`` (Claude Code's ``permissions.allow/ask/deny``
entries, and the ``toolName``/``ruleContent`` pairs of its ``addRules`` updates):

- ``Bash``, ``Read``, ``mcp__kernel``: every use of that tool (``mcp__server``: every tool
  of that MCP server; ``mcp__server__*`` is the same); ``mcp__kernel__run_cell``: that tool.
- ``Bash(npm run test:*)``: a command that is ``npm run test`` or starts with
  ``npm run test`` and a space (a prefix on a word boundary).
- ``Bash(npm run build)``: exactly that command (whitespace runs count as one space).
- ``Bash(npm test *)``, ``Bash(git * main)``: ``*`` matches any characters; a lone trailing
  `` *`` also matches nothing (``ls *`` matches ``ls``, not ``lsof``); ``\\*`` is a literal
  star. ``Bash(*)`` is every command.
- ``WebFetch(domain:example.com)``: a URL whose host is example.com; a deny (or ask) rule
  also covers its subdomains (the CLI 2.1.332 reads ``domain:`` as that one host).
  ``domain:*.example.com``: its subdomains; ``domain:*``: any host. ``WebFetch(https://x.com/*)``,
  a URL glob, is kandev-nb's own older form (the CLI refuses it).
- ``Read(./.env)``, ``Edit(docs/**)``: file rules, gitignore patterns (``*``, ``**``; a
  pattern without ``/`` matches the name at any depth): ``//abs/path`` from the filesystem
  root, ``~/path`` from the home folder, ``/path`` from the settings root (for kandev-nb:
  ``Rules(root=...)``, else the working directory), ``./path`` and ``path`` from the working
  directory. ``Edit`` rules cover every tool that edits files (Write, MultiEdit,
  NotebookEdit); ``Read`` rules cover Glob, Grep, LS and NotebookRead too.
- ``WebSearch(query)``, ``Task(name)``, ``Agent(name)``, ``Skill(name)``: that query,
  subagent type or skill (``*`` wildcards allowed).

Anything else raises :class:`~kandev_nb.errors.RuleError` naming the rule: unbalanced
parentheses, an empty content, ``:*`` anywhere but the end, an unknown ``xxx:`` specifier, a
content on a tool that takes none (every MCP tool, TodoWrite...), a glob in a tool name.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import ada_url
import pathspec

from kandev_nb.errors import RuleError

__all__ = ["EDIT_TOOLS", "READ_TOOLS", "Rule", "parse_rule", "url_spellings", "whatwg_url"]

EDIT_TOOLS = frozenset({"Edit", "Write", "MultiEdit", "NotebookEdit"})
"""Tools an ``Edit(...)`` rule covers (Claude Code: "Edit rules apply to all built-in tools that edit files")."""
READ_TOOLS = frozenset({"Read", "Glob", "Grep", "LS", "NotebookRead"})
"""Tools a ``Read(...)`` rule covers."""
_FILE_TOOLS = EDIT_TOOLS | READ_TOOLS
_NAMED_CONTENT = {"WebSearch": "query", "Task": "subagent_type", "Agent": "subagent_type", "Skill": "skill"}
_TOOL_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_.-]*$")
_MCP_STAR = re.compile(r"^mcp__[A-Za-z0-9_.-]+?__\*$")
_SPECIFIER = re.compile(r"^([A-Za-z][A-Za-z0-9_-]*):")
_HOST = re.compile(r"^(\*|(\*\.)?[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?)*)(:[0-9]{1,5})?$")
_CASE_INSENSITIVE_FS = sys.platform in ("darwin", "win32")
_DEFAULT_PORTS = {"http": 80, "https": 443}

RuleKind = Literal["tool", "bash_exact", "bash_prefix", "bash_wildcard", "domain", "url", "path", "named"]


def _balanced(text: str) -> bool:
    depth, escaped = 0, False
    for char in text:
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth < 0:
                return False
    return depth == 0


def wildcard_regex(pattern: str, *, trailing_space_optional: bool = True, flags: int = 0) -> re.Pattern[str]:
    """A pattern where ``*`` matches any characters and ``\\*`` / ``\\\\`` are literal.

    With `trailing_space_optional`, a pattern whose only wildcard is a trailing `` *``
    also matches without it (Claude Code: ``Bash(ls *)`` matches ``ls``)."""
    pieces: list[str] = []
    literal: list[str] = []
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if char == "\\" and i + 1 < len(pattern) and pattern[i + 1] in "*\\":
            literal.append(pattern[i + 1])
            i += 2
            continue
        if char == "*":
            pieces.append("".join(literal))
            literal = []
        else:
            literal.append(char)
        i += 1
    pieces.append("".join(literal))
    if trailing_space_optional and len(pieces) == 2 and pieces[1] == "" and pieces[0].endswith(" "):
        return re.compile(re.escape(pieces[0][:-1]) + r"(?: .*)?", re.DOTALL | flags)
    return re.compile(".*".join(re.escape(p) for p in pieces), re.DOTALL | flags)


def _has_star(text: str) -> bool:
    return re.search(r"(?<!\\)(?:\\\\)*\*", text) is not None


@dataclass(frozen=True)
class _PathPattern:
    anchor: Literal["abs", "home", "root", "cwd"]
    line: str
    """The gitignore line, relative to the anchor (a leading ``/`` anchors it there)."""
    spec: pathspec.GitIgnoreSpec = field(compare=False)
    folded: pathspec.GitIgnoreSpec = field(compare=False)

    def base(self, root: str) -> str:
        if self.anchor == "abs":
            return os.sep
        if self.anchor == "home":
            return os.path.expanduser("~")
        return root

    def matches(self, path: str, root: str, *, folded: bool, is_dir: bool, anywhere: bool) -> bool:
        base = os.path.normpath(self.base(root))
        spec = self.folded if folded else self.spec
        if path == base or path.startswith(base.rstrip(os.sep) + os.sep):
            rel = os.path.relpath(path, base).replace(os.sep, "/")
            candidates = [rel] if rel != "." else []
        elif anywhere and "/" not in self.line.rstrip("/"):
            candidates = [os.path.basename(path)]  # a name pattern (``*.env``) anywhere, for deny rules
        else:
            return False
        if is_dir:
            candidates += [f"{c}/_" for c in candidates] or ["_"]
        if folded:
            candidates = [c.casefold() for c in candidates]
        return any(spec.match_file(c) for c in candidates)


@dataclass(frozen=True)
class Rule:
    """One parsed permission rule (see the module docstring for the syntax).

    Attributes:
        text: the rule as written (stripped), e.g. ``"Bash(git push:*)"``.
        tool: the tool part: ``"Bash"``, ``"Read"``, ``"mcp__kernel"``, ``"mcp__kernel__run_cell"``.
        content: the part in parentheses, or None for a whole-tool rule.
        kind: how the content matches: ``tool`` (no content or ``*``), ``bash_exact``,
            ``bash_prefix``, ``bash_wildcard``, ``domain``, ``url``, ``path``, ``named``.
    """

    text: str
    tool: str
    content: str | None
    kind: RuleKind
    _regex: re.Pattern[str] | None = field(default=None, compare=False, repr=False)
    _path: _PathPattern | None = field(default=None, compare=False, repr=False)

    def __str__(self) -> str:
        return self.text

    def covers_tool(self, tool_name: str) -> bool:
        """Whether this rule speaks about `tool_name` at all (before its content is compared)."""
        if self.tool == tool_name:
            return True
        if self.tool.startswith("mcp__"):
            server = self.tool.removesuffix("__*")
            return "__" not in server[5:] and tool_name.startswith(server + "__")
        if self.tool == "Edit":
            return tool_name in EDIT_TOOLS
        if self.tool == "Read":
            return tool_name in READ_TOOLS
        return False

    def matches_command(self, subject: str) -> bool:
        """For a Bash rule: whether one command text (whitespace normalised) matches the content."""
        if self.kind == "tool":
            return True
        content = " ".join((self.content or "").split())
        if self.kind == "bash_prefix":
            prefix = " ".join(content[:-2].split())
            return subject == prefix or subject.startswith(prefix + " ")
        if self.kind == "bash_exact":
            return subject == re.sub(r"\\([*\\])", r"\1", content)
        return self._regex is not None and self._regex.fullmatch(subject) is not None

    def matches_input(self, tool_name: str, tool_input: Mapping[str, Any], *, root: str, deny: bool) -> bool:
        """For a rule on any tool but Bash: whether it matches this tool_use input.

        Args:
            tool_name, tool_input: the can_use_tool request's `tool_name` and `input`.
            root: the folder ``/path`` and relative rules and relative paths resolve against.
            deny: read the rule as a deny (or ask) rule: every spelling that may name the
                same thing counts (case-folded paths, resolved symlinks, subdomains); an
                allow rule must match every spelling.
        """
        if not self.covers_tool(tool_name):
            return False
        if self.kind == "tool":
            return True
        if self.kind in ("domain", "url"):
            url = tool_input.get("url")
            return isinstance(url, str) and self._url_matches(url, deny=deny)
        if self.kind == "named":
            value = tool_input.get(_NAMED_CONTENT.get(self.tool, ""))
            return isinstance(value, str) and self._regex is not None and self._regex.fullmatch(value) is not None
        if self.kind == "path" and self._path is not None:
            return self._path_matches(tool_name, tool_input, root, deny=deny)
        return False

    def _url_matches(self, url: str, *, deny: bool) -> bool:
        if self.kind == "url":
            spellings = url_spellings(url)
            subjects = spellings if deny else spellings[1:2] or spellings
            return self._regex is not None and any(self._regex.fullmatch(s) for s in subjects)
        parsed = whatwg_url(url)
        if parsed is None:
            return False
        scheme, host = parsed.protocol.removesuffix(":"), parsed.hostname.rstrip(".")
        port = int(parsed.port) if parsed.port else _DEFAULT_PORTS.get(scheme)
        if not host:
            return False
        wanted = (self.content or "").removeprefix("domain:").lower().rstrip(".")
        wanted, _, wanted_port = wanted.partition(":")
        if wanted_port and str(port) != wanted_port:
            return False
        if wanted == "*":
            return True
        if wanted.startswith("*."):
            return host.endswith(wanted[1:])
        return host == wanted or (deny and host.endswith("." + wanted))

    def _path_matches(self, tool_name: str, tool_input: Mapping[str, Any], root: str, *, deny: bool) -> bool:
        assert self._path is not None
        given = next(
            (tool_input[k] for k in ("file_path", "notebook_path", "path") if isinstance(tool_input.get(k), str)), None
        )
        if given is None:
            if tool_name not in ("Glob", "Grep", "LS"):
                return False
            given = root  # Glob and Grep search the working directory when no path is given
        absolute = os.path.normpath(os.path.join(root, os.path.expanduser(given)))
        spellings = [absolute]
        try:
            spellings.append(os.path.realpath(absolute))
        except (OSError, ValueError):
            pass
        is_dir = tool_name in ("Glob", "LS") or (tool_name == "Grep" and not os.path.isfile(absolute))
        folded = deny or _CASE_INSENSITIVE_FS
        results = (
            self._path.matches(p, root, folded=f, is_dir=is_dir, anywhere=deny)
            for p in dict.fromkeys(spellings)
            for f in ((False, True) if folded else (False,))
        )
        return (
            any(results)
            if deny
            else all(
                self._path.matches(p, root, folded=_CASE_INSENSITIVE_FS, is_dir=is_dir, anywhere=False)
                for p in dict.fromkeys(spellings)
            )
        )


def parse_rule(text: str) -> Rule:
    """Parse one rule written in Claude Code's permission-rule syntax.

    Raises:
        RuleError: the rule is not a string, or anything in it the matcher does not
            understand (the message names the rule and says why).
    """
    if not isinstance(text, str):
        raise RuleError(repr(text), "a rule is a string such as 'Bash(git status:*)'")
    rule = text.strip()
    if not rule:
        raise RuleError(text, "the rule is empty")
    name, paren, rest = rule.partition("(")
    name = name.strip()
    if not paren:
        if ")" in rule:
            raise RuleError(text, "unbalanced parentheses")
        return Rule(rule, _tool_name(text, name), None, "tool")
    if not rest.endswith(")") or not _balanced(rest[:-1]):
        raise RuleError(text, "unbalanced parentheses: the content must be closed by the last ')'")
    tool = _tool_name(text, name)
    content = rest[:-1]
    if not content.strip():
        raise RuleError(text, f"empty content; write {tool!r} for every use of the tool")
    if content.strip() == "*" and tool not in _FILE_TOOLS:  # Read(*): a gitignore '*', below the working directory
        return Rule(rule, tool, content, "tool")
    if tool == "Bash":
        return _bash_rule(text, rule, tool, content)
    if tool == "WebFetch":
        return _webfetch_rule(text, rule, tool, content)
    if tool in _FILE_TOOLS:
        return Rule(rule, tool, content, "path", _path=_path_pattern(text, content))
    if tool in _NAMED_CONTENT:
        return Rule(rule, tool, content, "named", _regex=wildcard_regex(content, trailing_space_optional=False))
    raise RuleError(text, f"{tool} takes no content in parentheses; write {tool!r} for every use of the tool")


def parse_rules(texts: Iterable[str], field_name: str) -> tuple[Rule, ...]:
    """Parse a list of rules (``Rules(allow=...)``).

    Raises:
        RuleError: `texts` is one string rather than a list, or one rule is bad.
    """
    if isinstance(texts, str):
        raise RuleError(texts, f"{field_name} must be a list of rules, e.g. {field_name}=[{texts!r}]")
    return tuple(parse_rule(t) for t in texts)


def _tool_name(text: str, name: str) -> str:
    if _TOOL_NAME.match(name) or _MCP_STAR.match(name):
        if name.startswith("mcp__") and name.endswith("__"):
            raise RuleError(text, "an MCP rule names a server (mcp__server) or a tool (mcp__server__tool)")
        return name
    if "*" in name:
        raise RuleError(text, "a tool name takes no wildcard except a whole MCP server (mcp__server__*)")
    raise RuleError(text, f"{name!r} is not a tool name")


def _bash_rule(text: str, rule: str, tool: str, content: str) -> Rule:
    stripped = content.strip()
    if ":*" in stripped[:-2]:
        raise RuleError(text, "':*' (a command prefix) may only end the rule, as in Bash(npm run test:*)")
    if stripped.endswith(":*"):
        if not stripped[:-2].strip():
            raise RuleError(text, "':*' needs a command prefix before it")
        return Rule(rule, tool, content, "bash_prefix")
    if _has_star(stripped):
        return Rule(rule, tool, content, "bash_wildcard", _regex=wildcard_regex(" ".join(stripped.split())))
    return Rule(rule, tool, content, "bash_exact")


def _webfetch_rule(text: str, rule: str, tool: str, content: str) -> Rule:
    stripped = content.strip()
    if "://" in stripped and _SPECIFIER.match(stripped) and not re.match(r"^[A-Za-z][A-Za-z0-9+.-]*://", stripped):
        raise RuleError(text, "a domain: rule names a host, not a URL: WebFetch(domain:example.com)")
    if "://" in stripped:
        return Rule(rule, tool, content, "url", _regex=wildcard_regex(normal_url_pattern(stripped)))
    specifier = _SPECIFIER.match(stripped)
    if specifier is None:
        raise RuleError(text, "WebFetch rules read WebFetch(domain:example.com)")
    if specifier.group(1) != "domain":
        raise RuleError(text, f"unknown specifier {specifier.group(1)!r}; WebFetch rules read WebFetch(domain:host)")
    host = stripped[len("domain:") :].lower().rstrip(".")
    if not _HOST.match(host):
        raise RuleError(text, f"{host!r} is not a host name (domain:example.com, domain:*.example.com)")
    return Rule(rule, tool, content, "domain")


def _path_pattern(text: str, content: str) -> _PathPattern:
    pattern = content.strip()
    specifier = _SPECIFIER.match(pattern)
    if specifier is not None and not re.match(r"^[A-Za-z]:[\\/]", pattern):
        raise RuleError(text, f"unknown specifier {specifier.group(1)!r}; for a file named so write ./{pattern}")
    if pattern.startswith(("!", "#")):
        raise RuleError(text, "negated ('!') and comment ('#') gitignore lines are not rules")
    anchor: Literal["abs", "home", "root", "cwd"]
    if pattern.startswith("//"):
        anchor, line = "abs", "/" + pattern[2:].lstrip("/")
    elif pattern.startswith("~/") or pattern == "~":
        anchor, line = "home", "/" + pattern[2:]
    elif pattern.startswith("~"):
        raise RuleError(text, "only ~/ (your home folder) is understood, not ~user")
    elif pattern.startswith("/"):
        anchor, line = "root", pattern
    elif pattern.startswith("./"):
        anchor, line = "cwd", "/" + pattern[2:]
    else:
        anchor, line = "cwd", pattern
    if f"/{line}/".replace("/./", "/").count("/../") or line.strip("/") in (".", ".."):
        raise RuleError(text, "'..' is not understood in a file rule; write the folder from // or ~/")
    if not line.strip("/"):
        line = "/**"  # the anchor folder itself: everything below it
    try:
        spec = pathspec.GitIgnoreSpec.from_lines([line])
        folded = pathspec.GitIgnoreSpec.from_lines([line.casefold()])
    except (ValueError, TypeError) as exc:  # pathspec raises GitWildMatchPatternError (a ValueError)
        raise RuleError(text, f"not a gitignore pattern: {exc}") from exc
    return _PathPattern(anchor, line, spec, folded)


def whatwg_url(url: str) -> ada_url.URL | None:
    """`url` parsed as the CLI's WebFetch (Node's WHATWG ``URL``) parses it, or None when it
    does not parse. ``https://evil.com\\@good.com/`` is evil.com there (a backslash is a
    slash), ``https:evil.com`` is https://evil.com/, ``%65vil.com`` and ``evil\u3002com`` are
    evil.com; :func:`urllib.parse.urlsplit` reads several of these differently."""
    try:
        return ada_url.URL(url.strip())
    except ValueError:
        return None


def url_spellings(url: str) -> list[str]:
    """`url` as given and normalised as the WHATWG URL standard does (lower-case scheme and
    host, percent-decoded and IDNA-mapped host, no ``user@``, no default port), without the
    host's trailing dot (``HTTPS://u@EVIL.COM.:443/x`` -> ``https://evil.com/x``)."""
    parts = whatwg_url(url)
    if parts is None or not parts.hostname:
        return [url]
    scheme = parts.protocol.removesuffix(":")
    netloc = parts.hostname.rstrip(".")
    if parts.port:
        netloc += f":{parts.port}"
    normal = f"{scheme}://{netloc}{parts.pathname or '/'}{parts.search}{parts.hash}"
    bare = normal.rstrip("/") if parts.pathname in ("", "/") and not parts.search and not parts.hash else normal
    return list(dict.fromkeys([url, normal, bare]))


def normal_url_pattern(pattern: str) -> str:
    """A URL rule's pattern with its scheme and host lower-cased and the host's trailing dot dropped."""
    match = re.match(r"^([A-Za-z][A-Za-z0-9+.-]*://)([^/]*)(.*)$", pattern)
    if not match:
        return pattern
    scheme, host, rest = match.groups()
    return f"{scheme.lower()}{host.lower().rstrip('.')}{rest}"
