"""Files an edit policy must treat with care.

- :func:`is_sensitive_path`: files ``allow_edits_under`` never covers, because editing them
  can make a later command run code (``.git/config``, ``.git/hooks/*``, ``.claude/``, shell
  start-up files, ``.env*``...): they are asked about.
- :func:`executed_by`: files a test runner or build tool executes (``conftest.py``,
  ``setup.py``, ``noxfile.py``, ``tox.ini``, ``Makefile``, ``package.json`` scripts,
  ``build.rs``, ``pyproject.toml`` build hooks...). ``allow_edits_under`` still covers them,
  but the decision's note says so: with an allowed ``pytest`` or ``make`` that is code
  execution with no person involved.
"""

from __future__ import annotations

import fnmatch
from pathlib import PurePosixPath

__all__ = ["EXECUTED_FILES", "SENSITIVE_DIRS", "SENSITIVE_FILES", "executed_by", "is_sensitive_path"]

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

EXECUTED_FILES: dict[str, str] = {
    "conftest.py": "pytest",
    "pytest.ini": "pytest (its addopts and plugins)",
    "test_*.py": "pytest",
    "*_test.py": "pytest",
    "setup.py": "pip install and other Python builds",
    "setup.cfg": "pip install and other Python builds",
    "pyproject.toml": "pip install, hatch, tox and pytest (build hooks, configuration)",
    "noxfile.py": "nox",
    "tox.ini": "tox",
    "sitecustomize.py": "every Python start-up on its path",
    "usercustomize.py": "every Python start-up on its path",
    "*.pth": "every Python start-up in its site-packages",
    "Makefile": "make",
    "makefile": "make",
    "GNUmakefile": "make",
    "*.mk": "make",
    "CMakeLists.txt": "cmake",
    "*.cmake": "cmake",
    "meson.build": "meson",
    "package.json": "npm, yarn and pnpm scripts",
    ".yarnrc.yml": "yarn",
    "build.rs": "cargo build and cargo test",
    "Cargo.toml": "cargo (build scripts)",
    "*_test.go": "go test",
    "justfile": "just",
    "Justfile": "just",
    "Rakefile": "rake",
    "build.gradle": "gradle",
    "build.gradle.kts": "gradle",
    "settings.gradle": "gradle",
    "settings.gradle.kts": "gradle",
    "pom.xml": "mvn",
    "BUILD": "bazel",
    "BUILD.bazel": "bazel",
    "WORKSPACE": "bazel",
    "tasks.py": "invoke",
    "dodo.py": "doit",
    "SConstruct": "scons",
}
"""File-name patterns that a test runner or build tool executes (or reads commands from),
with the tools that do."""


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


def executed_by(path: str) -> str | None:
    """Which test runner or build tool executes the file at `path` (``"pytest"`` for a
    ``conftest.py``), or None for a file none of them runs by itself."""
    name = PurePosixPath(str(path)).name
    for pattern, tools in EXECUTED_FILES.items():
        if fnmatch.fnmatchcase(name, pattern):
            return tools
    return None
