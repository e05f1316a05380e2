"""issue 23, point 5: rules in Claude Code's documented syntax mean what they say.

Each documented form matches what it names and nothing next to it. Written against
``kandev_nb.Rules`` so the same file runs against the old main (where ``Bash(rm:*)``,
``domain:``, ``./``, ``~/`` and ``//`` rules were accepted and never matched).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from kandev_nb import Rules

HOME = os.path.expanduser("~")


def answer(rule: str, tool: str, tool_input: dict[str, Any], *, root: Path, deny: bool) -> str | None:
    rules = Rules(allow=["Bash(*)", "Read", "Edit", "Write", "WebFetch", "Glob", "Grep"], deny=[rule])
    if not deny:
        rules = Rules(allow=[rule])
    cwd = os.getcwd()
    os.chdir(root)  # relative rules and paths resolve against the working directory
    try:
        return rules(tool, tool_input)
    finally:
        os.chdir(cwd)


BASH_CASES = [
    # (rule, command, matches)
    ("Bash(git push:*)", "git push origin", True),
    ("Bash(git push:*)", "git push", True),
    ("Bash(git push:*)", "git   push  --force", True),
    ("Bash(git push:*)", "git pushx", False),
    ("Bash(git push:*)", "git pull", False),
    ("Bash(rm:*)", "rm -rf data", True),
    ("Bash(rm:*)", "rmdir data", False),
    ("Bash(npm run test:*)", "npm run test", True),
    ("Bash(npm run test:*)", "npm run test -- --watch", True),
    ("Bash(npm run test:*)", "npm run build", False),
    ("Bash(npm run build)", "npm run build", True),
    ("Bash(npm run build)", "npm run build --prod", False),
    ("Bash(npm test *)", "npm test", True),
    ("Bash(npm test *)", "npm test -- -u", True),
    ("Bash(npm test *)", "npm testing", False),
    ("Bash(ls*)", "lsof", True),
    ("Bash(ls *)", "lsof", False),
    ("Bash(git * main)", "git checkout main", True),
    ("Bash(git * main)", "git checkout dev", False),
    ("Bash(echo \\*)", "echo *", True),
    ("Bash(echo \\*)", "echo x", False),
    ("Bash(git status*)", "git status --short", True),  # the old fnmatch-style form
]


@pytest.mark.parametrize(("rule", "command", "matches"), BASH_CASES)
def test_bash_rules_as_deny(tmp_path: Path, rule: str, command: str, matches: bool) -> None:
    got = answer(rule, "Bash", {"command": command}, root=tmp_path, deny=True)
    assert got == ("deny" if matches else "allow")


@pytest.mark.parametrize(("rule", "command", "matches"), BASH_CASES)
def test_bash_rules_as_allow(tmp_path: Path, rule: str, command: str, matches: bool) -> None:
    got = answer(rule, "Bash", {"command": command}, root=tmp_path, deny=False)
    assert got == ("allow" if matches else None)


@pytest.mark.parametrize(
    ("url", "deny", "allow"),
    [
        ("https://evil.com/x", True, True),
        ("https://EVIL.com./x", True, True),
        ("http://evil.com:8080/", True, True),
        ("https://sub.evil.com", True, False),  # a deny covers subdomains; an allow names one host
        ("https://a.b.evil.com/p", True, False),
        ("https://notevil.com/", False, False),
        ("https://evil.com.example.org/", False, False),
        ("https://example.org/evil.com", False, False),
    ],
)
def test_webfetch_domain_rules(tmp_path: Path, url: str, deny: bool, allow: bool) -> None:
    tool_input = {"url": url, "prompt": "p"}
    assert answer("WebFetch(domain:evil.com)", "WebFetch", tool_input, root=tmp_path, deny=True) == (
        "deny" if deny else "allow"
    )
    assert answer("WebFetch(domain:evil.com)", "WebFetch", tool_input, root=tmp_path, deny=False) == (
        "allow" if allow else None
    )


def test_webfetch_wildcard_domains(tmp_path: Path) -> None:
    sub = {"url": "https://docs.example.com/a", "prompt": "p"}
    apex = {"url": "https://example.com/a", "prompt": "p"}
    assert answer("WebFetch(domain:*.example.com)", "WebFetch", sub, root=tmp_path, deny=False) == "allow"
    assert answer("WebFetch(domain:*.example.com)", "WebFetch", apex, root=tmp_path, deny=False) is None
    assert answer("WebFetch(domain:*)", "WebFetch", apex, root=tmp_path, deny=False) == "allow"


FILE_CASES = [
    # (rule, path relative to the working directory or absolute, matches)
    ("Read(./.env)", ".env", True),
    ("Read(./.env)", "sub/.env", False),
    ("Read(.env)", "sub/.env", True),  # no slash: the name at any depth
    ("Read(*.env)", "config/prod.env", True),
    ("Read(*.env)", "config/prod.txt", False),
    ("Read(/secrets/**)", "secrets/a/b.txt", True),  # /path: from the settings root
    ("Read(/secrets/**)", "x/secrets/b.txt", False),
    ("Read(docs/**)", "docs/a/b.md", True),
    ("Read(docs/**)", "src/a.py", False),
    ("Read(~/.ssh/**)", f"{HOME}/.ssh/id_rsa", True),
    ("Read(~/.ssh/**)", f"{HOME}/ssh/id_rsa", False),
    ("Read(//etc/hosts)", "/etc/hosts", True),
    ("Read(//etc/hosts)", "/etc/passwd", False),
    ("Edit(/src/**/*.ts)", "src/a/b.ts", True),
    ("Edit(/src/**/*.ts)", "src/a/b.js", False),
]


@pytest.mark.parametrize(("rule", "path", "matches"), FILE_CASES)
def test_file_rules(tmp_path: Path, rule: str, path: str, matches: bool) -> None:
    tool = rule.split("(")[0]
    tool_input = {"file_path": path if path.startswith("/") else str(tmp_path / path), "old_string": "a"}
    assert answer(rule, tool, tool_input, root=tmp_path, deny=True) == ("deny" if matches else "allow")
    assert answer(rule, tool, tool_input, root=tmp_path, deny=False) == ("allow" if matches else None)


def test_a_relative_tool_path_resolves_against_the_working_directory(tmp_path: Path) -> None:
    (tmp_path / "x").mkdir()
    assert answer("Read(./.env)", "Read", {"file_path": ".env"}, root=tmp_path, deny=True) == "deny"
    assert answer("Read(./.env)", "Read", {"file_path": "../.env"}, root=tmp_path / "x", deny=True) == "allow"
    assert answer("Read(./.env)", "Read", {"file_path": "../x/.env"}, root=tmp_path / "x", deny=True) == "deny"


def test_edit_rules_cover_every_tool_that_edits_and_read_rules_every_tool_that_reads(tmp_path: Path) -> None:
    rules = Rules(allow=["Write", "NotebookEdit", "MultiEdit", "Grep", "Glob"], deny=["Edit(*.lock)", "Read(./.env)"])
    assert rules("Write", {"file_path": str(tmp_path / "uv.lock"), "content": ""}) == "deny"
    assert rules("MultiEdit", {"file_path": str(tmp_path / "uv.lock"), "edits": []}) == "deny"
    assert rules("NotebookEdit", {"notebook_path": str(tmp_path / "a.ipynb"), "new_source": ""}) == "allow"
    assert rules("Grep", {"pattern": "KEY", "path": str(Path.cwd() / ".env")}) == "deny"


def test_mcp_rules(tmp_path: Path) -> None:
    tool = "mcp__kernel__run_cell"
    for rule in ("mcp__kernel", "mcp__kernel__*", "mcp__kernel__run_cell"):
        assert Rules(allow=[rule])(tool, {"cell_id": "1"}) == "allow"
    assert Rules(allow=["mcp__kernel"])("mcp__kernel2__run_cell", {}) is None
    assert Rules(allow=["mcp__kernel__edit_cell"])(tool, {}) is None
