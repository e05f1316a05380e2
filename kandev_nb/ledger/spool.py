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
the ledger with its password masked.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

import platformdirs
from sqlalchemy.engine import URL

from kandev_nb.ledger.rows import TurnRows

__all__ = ["ENV_SPOOL", "pending", "spool_dir", "write"]

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
    return base / hashlib.sha256(key.encode()).hexdigest()[:16]


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
    folder.mkdir(parents=True, mode=0o700, exist_ok=True)
    note = folder / "ledger.txt"
    if not note.exists():
        note.write_text(ledger + "\n")
    uid = rows.turn.get("turn_uid") or uuid.uuid4().hex
    stamp = rows.turn["started_at"].strftime("%Y%m%dT%H%M%S%f") if rows.turn.get("started_at") else "0"
    target = folder / f"{stamp}-{uid}.json"
    partial = folder / f".{target.name}.{os.getpid()}.part"
    body = json.dumps(
        {"turn": {k: _encode(v) for k, v in rows.turn.items()}, "tools": rows.tools, "usage": rows.usage}
    ).encode()
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.write(fd, body)
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(partial, target)
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
    (damaged, foreign) is renamed ``*.bad`` and skipped, so it never blocks the rest.
    """
    if not folder.is_dir():
        return
    for path in sorted(folder.glob("*.json")):
        try:
            data = json.loads(path.read_bytes())
            rows = _decode(data)
        except FileNotFoundError:
            continue
        except (ValueError, KeyError, TypeError):
            path.replace(path.with_suffix(".bad"))
            continue
        yield path, rows
