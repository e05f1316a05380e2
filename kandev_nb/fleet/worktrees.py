"""Isolation for agents that edit: one ``git worktree`` per row (``worktree=True``).

Each row works in its own worktree on a new branch ``kandev/<fleet>/<key>``, made from the
repository's ``HEAD``, in a folder beside the repository (``<repo>.kandev-worktrees/<fleet>/<key>``),
so the user's own checkout is never written. After the row, its changes are counted
against ``HEAD`` (``git diff --numstat``, new files included): the result gains ``branch``,
``worktree``, ``files_changed``, ``insertions``, ``deletions``. Nothing is committed: the
row's edits wait in its worktree for review. :func:`cleanup` removes a fleet's worktrees
(branches stay unless asked).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kandev_nb.fleet.spec import FleetError, key_text

__all__ = ["RowWorktree", "Worktrees", "cleanup", "repo_root"]


def _git(cwd: str | os.PathLike[str], *args: str, check: bool = True) -> str:
    done = subprocess.run(["git", "-C", str(cwd), *args], capture_output=True, text=True, check=False)
    if check and done.returncode != 0:
        raise FleetError(f"git {' '.join(args)} failed in {cwd}: {done.stderr.strip() or done.stdout.strip()}")
    return done.stdout


def repo_root(cwd: str | os.PathLike[str]) -> Path:
    """The top of the git repository `cwd` is in.

    Raises:
        FleetError: `cwd` is not in a git repository (or git is missing).
    """
    try:
        return Path(_git(cwd, "rev-parse", "--show-toplevel").strip())
    except (FleetError, OSError) as exc:
        raise FleetError(f"worktree=True needs cwd inside a git repository: {exc}") from None


def _slug(text: str) -> str:
    return re.sub(r"\.{2,}", ".", re.sub(r"[^A-Za-z0-9._-]+", "-", text)).strip("-.") or "row"


def _name(key: Any) -> str:
    """A folder and branch component for `key` (a row key or a fleet name): the key's text
    when it is already a safe, valid ref component (``a``, ``17``, ``ticket-3``), else its
    slug plus 8 hex digits of its hash, so keys that slug alike (``a b``, ``a/b``, int 1 and
    ``"1"``) never share a worktree or branch, and no key gives a name git refuses
    (``a..b``, ``x.lock``) or one that reads as an option (``-f``)."""
    text = str(key)
    exact = key_text(key) == (json.dumps(text) if isinstance(key, str) else text)
    numeric = isinstance(key, str) and re.fullmatch(r"-?[0-9.eE+]+", text) is not None
    if exact and not numeric and _slug(text) == text and not text.endswith(".lock"):
        return text
    return f"{_slug(text)}-{hashlib.sha256(key_text(key).encode()).hexdigest()[:8]}"


@dataclass(frozen=True)
class RowWorktree:
    """One row's worktree: its folder, its branch, and the row's cwd inside it."""

    path: Path
    branch: str
    cwd: Path

    def stats(self) -> dict[str, Any]:
        """``branch``, ``worktree``, ``files_changed``, ``insertions``, ``deletions`` against HEAD
        (new files included via ``git add --intent-to-add``)."""
        _git(self.path, "add", "--all", "--intent-to-add")
        files = ins = dels = 0
        for line in _git(self.path, "diff", "--numstat", "HEAD").splitlines():
            parts = line.split("\t")
            if len(parts) >= 3:
                files += 1
                ins += int(parts[0]) if parts[0].isdigit() else 0
                dels += int(parts[1]) if parts[1].isdigit() else 0
        return {
            "branch": self.branch,
            "worktree": str(self.path),
            "files_changed": files,
            "insertions": ins,
            "deletions": dels,
        }


class Worktrees:
    """The worktrees of one fleet run from `cwd`'s repository.

    Raises:
        FleetError: `cwd` is not in a git repository, or the repository has no commit.
    """

    def __init__(self, cwd: str | os.PathLike[str], fleet: str) -> None:
        self.root = repo_root(cwd)
        self.fleet = _name(fleet)
        self.inner = Path(os.path.realpath(cwd)).relative_to(Path(os.path.realpath(self.root)))
        self.folder = self.root.parent / f"{self.root.name}.kandev-worktrees" / self.fleet
        _git(self.root, "rev-parse", "--verify", "HEAD")

    def path_of(self, key: Any) -> Path:
        """Where row `key`'s worktree lives."""
        return self.folder / _name(key)

    async def make(self, key: Any) -> RowWorktree:
        """Row `key`'s worktree (made from HEAD on branch ``kandev/<fleet>/<key>``; an
        existing one of an earlier run is reused)."""
        path, branch = self.path_of(key), f"kandev/{self.fleet}/{_name(key)}"
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            exists = bool(_git(self.root, "branch", "--list", branch).strip())
            args = ["worktree", "add", str(path), branch] if exists else ["worktree", "add", "-b", branch, str(path)]
            await asyncio.to_thread(_git, self.root, *args)
        return RowWorktree(path, branch, path / self.inner)


def cleanup(name: str, cwd: str | os.PathLike[str] | None = None, *, delete_branches: bool = False) -> list[str]:
    """Remove the worktrees of fleet `name` (``git worktree remove --force``); with
    `delete_branches`, its ``kandev/<name>/*`` branches too.

    Returns:
        The folders removed.

    Raises:
        FleetError: `cwd` (default: the current directory) is not in a git repository.
    """
    root = repo_root(cwd or os.getcwd())
    fleet = _name(name)
    folder = root.parent / f"{root.name}.kandev-worktrees" / fleet
    removed = []
    for path in sorted(folder.glob("*")) if folder.exists() else []:
        _git(root, "worktree", "remove", "--force", str(path), check=False)
        removed.append(str(path))
    _git(root, "worktree", "prune", check=False)
    if delete_branches:
        for branch in _git(root, "branch", "--list", f"kandev/{fleet}/*", "--format=%(refname:short)").split():
            _git(root, "branch", "-D", branch, check=False)
    return removed
