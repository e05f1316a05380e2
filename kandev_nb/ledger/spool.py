"""The spool: turns the ledger could not take wait in local files until it answers again.

A database that cannot be reached (server down, network gone, SQLite file locked past
the busy timeout) must never fail a cell or lose a turn. :meth:`RunLedger.record
<kandev_nb.ledger.RunLedger.record>` then writes the turn's rows to one JSON file in the
ledger's spool folder; the next ``record`` or :func:`kandev_nb.ledger_flush` that reaches
the database writes them, and the row's unique ``turn_uid`` keeps a turn from landing twice
(two kernels flushing the same folder, or a flush that died between insert and unlink).

Folder: ``KANDEV_NB_SPOOL`` if set, else ``platformdirs.user_data_dir("kandev-nb")/spool``,
then one subfolder per ledger, named by a hash of its URL without the password. Files are
0600 in 0700 folders (they hold prompts); no file holds a password: ``ledger.txt`` names
the ledger with its password (and password-like query parameters) masked.

A spool folder is trusted only if it is ours (issue 24.8: another local user could
pre-create the predictable folder, plant symlinks and forged turns): the ledger's folder
must be owned by this uid, not a symlink, and writable by nobody else (it is made 0700);
the root must be owned by this uid or root and not writable by others. Files are opened
with ``O_NOFOLLOW`` (and ``O_EXCL`` when created), and a flush reads only regular files
owned by this uid. A refused folder is a :class:`PermissionError` saying why when writing
(the turn is then lost, and the cell says so) and is skipped (logged) when flushing.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import logging
import os
import stat
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

import platformdirs
from sqlalchemy.engine import URL

from kandev_nb.ledger.rows import TurnRows
from kandev_nb.redact import mask_credentials

__all__ = ["ENV_SPOOL", "check_folder", "pending", "spool_dir", "write"]

log = logging.getLogger("kandev_nb")
_NOFOLLOW: Final = getattr(os, "O_NOFOLLOW", 0)

ENV_SPOOL: Final = "KANDEV_NB_SPOOL"
"""Environment variable naming the spool's root folder."""
_TIMES: Final = ("started_at", "ended_at")


def spool_dir(url: URL, root: str | os.PathLike[str] | None = None) -> Path:
    """The spool folder of the ledger at `url` (not created here).

    Args:
        url: the ledger's URL; its password is not part of the folder's name.
        root: the spool root (default ``KANDEV_NB_SPOOL``, else the user data dir's ``spool``).
    """
    if root is not None:
        return Path(root)
    base = Path(os.environ.get(ENV_SPOOL) or Path(platformdirs.user_data_dir("kandev-nb")) / "spool")
    key = url.set(password=None).render_as_string(hide_password=True) if url.password else str(url)
    key = mask_credentials(key, "***")  # ?password=... is not part of the name either
    return base / hashlib.sha256(key.encode()).hexdigest()[:16]


def check_folder(folder: Path, *, create: bool) -> None:
    """Make sure `folder` (a ledger's spool folder) is this user's alone.

    With `create`, missing folders are made (the ledger's 0700). The folder must then be a
    real directory (not a symlink) owned by this uid with no group or other write bit; a
    group- or other-readable one of ours is made 0700. Its parent (the spool root) must be
    owned by this uid or root and not writable by others unless sticky (``/tmp``-like).

    Raises:
        PermissionError: the folder or its root fails a check (nothing was written).
        OSError: the folder cannot be made.
    """
    uid = os.geteuid()
    if create:
        folder.parent.mkdir(parents=True, mode=0o700, exist_ok=True)
        try:
            folder.mkdir(mode=0o700)
        except FileExistsError:
            pass
    root = os.stat(folder.parent)
    if root.st_uid not in (uid, 0) or (root.st_mode & stat.S_IWOTH and not root.st_mode & stat.S_ISVTX):
        raise PermissionError(
            f"refusing the spool root {folder.parent}: owned by uid {root.st_uid} with mode "
            f"{stat.S_IMODE(root.st_mode):o} (it must be yours and not writable by others); set KANDEV_NB_SPOOL "
            "to a folder of your own"
        )
    info = os.lstat(folder)
    if not stat.S_ISDIR(info.st_mode):
        raise PermissionError(f"refusing the spool folder {folder}: not a directory (a symlink?)")
    if info.st_uid != uid:
        raise PermissionError(
            f"refusing the spool folder {folder}: owned by uid {info.st_uid}, not by you (uid {uid}); "
            "another user may have made it to read or forge spooled turns"
        )
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise PermissionError(
            f"refusing the spool folder {folder}: mode {stat.S_IMODE(info.st_mode):o} lets others write "
            "into it (it must be 0700)"
        )
    if stat.S_IMODE(info.st_mode) != 0o700:
        os.chmod(folder, 0o700)


def _write_private(path: Path, body: bytes) -> None:
    """Write `body` to `path` through a new 0600 file (``O_EXCL | O_NOFOLLOW``) renamed over it."""
    partial = path.with_name(f".{path.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.part")
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o600)
    try:
        os.write(fd, body)
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(partial, path)  # replaces a file (or a planted symlink) itself, never its target


def _encode(value: Any) -> Any:
    return value.isoformat() if isinstance(value, dt.datetime) else value


def write(folder: Path, rows: TurnRows, ledger: str) -> Path:
    """Keep one turn's rows in `folder`: a new file, written whole or not at all.

    Args:
        folder: the ledger's spool folder (created 0700 if missing).
        rows: the turn's rows (:func:`kandev_nb.ledger.rows.turn_rows`).
        ledger: the ledger's name for ``ledger.txt``, password masked.

    Returns:
        The spool file (``<started_at>-<turn_uid>.json``, mode 0600).

    Raises:
        OSError: the spool itself cannot be written (then the turn is lost; the caller's
            error says so).
    """
    check_folder(folder, create=True)
    note = folder / "ledger.txt"
    text = mask_credentials(ledger, "***") + "\n"
    try:
        current = os.lstat(note)
        stale = not stat.S_ISREG(current.st_mode) or stat.S_IMODE(current.st_mode) != 0o600
        stale = stale or note.read_text() != text  # an older release's name (or mode) is replaced
    except FileNotFoundError:
        stale = True
    if stale:
        _write_private(note, text.encode())
    uid = rows.turn.get("turn_uid") or uuid.uuid4().hex
    stamp = rows.turn["started_at"].strftime("%Y%m%dT%H%M%S%f") if rows.turn.get("started_at") else "0"
    target = folder / f"{stamp}-{uid}.json"
    body = json.dumps(
        {"turn": {k: _encode(v) for k, v in rows.turn.items()}, "tools": rows.tools, "usage": rows.usage}
    ).encode()
    _write_private(target, body)
    return target


def _decode(data: dict[str, Any]) -> TurnRows:
    turn = dict(data["turn"])
    for key in _TIMES:
        if isinstance(turn.get(key), str):
            turn[key] = dt.datetime.fromisoformat(turn[key])
    return TurnRows(turn, list(data["tools"]), list(data["usage"]))


def pending(folder: Path) -> Iterator[tuple[Path, TurnRows]]:
    """The spooled turns in `folder`, oldest first, as (file, rows).

    A file another kernel removed meanwhile is skipped; one that is not a spooled turn
    (damaged, foreign) is renamed ``*.bad`` and skipped, so it never blocks the rest. A
    folder that is not this user's alone (:func:`check_folder`) gives nothing, and so do
    symlinks and files owned by another uid in it (logged).
    """
    if not folder.is_dir():
        return
    try:
        check_folder(folder, create=False)
    except PermissionError as exc:
        log.warning("kandev-nb does not flush the spool: %s", exc)
        return
    uid = os.geteuid()
    for path in sorted(folder.glob("*.json")):
        try:
            fd = os.open(path, os.O_RDONLY | _NOFOLLOW)
        except FileNotFoundError:
            continue
        except OSError:  # a symlink (ELOOP) or unreadable: not one of our spooled turns
            log.warning("kandev-nb skips the spool file %s: not a regular file of yours", path)
            continue
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode) or info.st_uid != uid:
                log.warning("kandev-nb skips the spool file %s: owned by uid %s, not by you", path, info.st_uid)
                continue
            with os.fdopen(os.dup(fd), "rb") as handle:
                raw = handle.read()
        finally:
            os.close(fd)
        try:
            data = json.loads(raw)
            rows = _decode(data)
        except (ValueError, KeyError, TypeError):
            path.replace(path.with_suffix(".bad"))
            continue
        yield path, rows
