"""The files a turn wrote, as they were when it ended: so an undo never overwrites later edits unseen.

``rewind_files`` (the CLI's file checkpoints) puts a file back as it was before a turn's
prompt, whatever happened to it since. A person who edited the file for two hours after the
turn would lose that work. So when a turn ends, :func:`snapshot` records a SHA-256 of each file
its Edit/Write/MultiEdit/NotebookEdit tool_use inputs named (``file_path`` / ``notebook_path``);
before a rewind, :func:`plan` compares each file with that record, and :func:`keep_copy` saves a
file that changed since beside it (``name.kandev-undo-<UTC time>.bak``).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["FileCheck", "UndoReport", "keep_copy", "plan", "snapshot"]

_CHUNK = 1 << 20


def _digest(path: Path) -> str | None:
    """SHA-256 (hex) of the file at `path`; None when it does not exist or is not a file."""
    try:
        with path.open("rb") as handle:
            digest = hashlib.sha256()
            while chunk := handle.read(_CHUNK):
                digest.update(chunk)
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError, PermissionError):
        return None
    return digest.hexdigest()


def _absolute(path: str, cwd: str) -> Path:
    return Path(cwd, os.path.expanduser(path))


def snapshot(paths: Iterable[str], cwd: str) -> dict[str, str | None]:
    """Each of `paths` (relative ones under `cwd`) -> its SHA-256 now, None if it does not exist."""
    return {path: _digest(_absolute(path, cwd)) for path in paths}


@dataclass(frozen=True)
class FileCheck:
    """One file an undo would restore.

    Attributes:
        path: as the tool_use input gave it (``file_path``).
        changed_since: the file is not as the last turn that wrote it left it (someone edited,
            replaced or deleted it after); True too when no state was recorded for it.
        exists: the file exists now.
    """

    path: str
    changed_since: bool
    exists: bool


@dataclass
class UndoReport:
    """What ``%claude_undo`` did (or, with ``dry_run``, would do).

    Attributes:
        files: the paths restored (or to restore).
        checks: one :class:`FileCheck` per path the turns' file tools wrote.
        copies: path -> the copy kept of a file changed since its turn (``.kandev-undo-*.bak``).
        dry_run: nothing was changed.
    """

    files: list[str]
    checks: list[FileCheck]
    copies: dict[str, str] = field(default_factory=dict)
    dry_run: bool = False

    @property
    def changed_since(self) -> list[str]:
        """The paths changed after the turn that wrote them."""
        return [c.path for c in self.checks if c.changed_since]


def plan(paths: Iterable[str], recorded: Mapping[str, str | None], cwd: str) -> list[FileCheck]:
    """A :class:`FileCheck` for each of `paths`, comparing it now with `recorded` (path -> the
    SHA-256 the last turn that wrote it left, None for no file); an unrecorded path counts as
    changed (nothing says it is safe to overwrite)."""
    checks = []
    for path in paths:
        now = _digest(_absolute(path, cwd))
        changed = path not in recorded or recorded[path] != now
        checks.append(FileCheck(path=path, changed_since=changed, exists=now is not None))
    return checks


def keep_copy(path: str, cwd: str, now: float | None = None) -> str:
    """Copy the file at `path` to ``<name>.kandev-undo-<YYYYmmddTHHMMSSZ>.bak`` beside it (a
    suffix ``-1``, ``-2``... if taken; never overwrites) and return the copy's path.

    Raises:
        OSError: the copy could not be written (the undo must not go on).
    """
    source = _absolute(path, cwd)
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(now))
    for n in range(100):
        target = source.with_name(f"{source.name}.kandev-undo-{stamp}{f'-{n}' if n else ''}.bak")
        try:
            with source.open("rb") as src, target.open("xb") as dst:
                shutil.copyfileobj(src, dst)
        except FileExistsError:
            continue
        shutil.copystat(source, target)
        return str(target)
    raise FileExistsError(f"no free name for a copy of {source}")
