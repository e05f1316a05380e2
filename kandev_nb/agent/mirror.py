"""From ``transcript_mirror`` lines to a :class:`~kandev_nb.agent.session_store.SessionStore`.

The reader hands every :class:`~kandev_nb.wire.protocol.TranscriptMirror` to
:meth:`TranscriptMirrorBatcher.enqueue` (no I/O there: it runs on the kernel's event loop),
which starts a flush in the background unless one runs: :meth:`TranscriptMirrorBatcher.flush`
writes what is pending in a worker thread, one ``store.append`` per transcript file and flush.
So the store follows the CLI within a write or two, also mid-turn (a fleet row whose worker
dies mid-turn resumes elsewhere with what it had). The session also awaits a flush when a turn
ends (before :meth:`Session.run <kandev_nb.agent.session.Session.run>` returns, so the store
holds the turn once the cell has its answer) and when its process is closed. A batch
the store refuses is tried twice more (0.2 s and 0.8 s later), then dropped with a warning:
the local transcript has it, and the session goes on.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any, Final

from kandev_nb.agent.session_store import SessionKey, SessionStore, key_for_file

__all__ = ["MIRROR_BACKOFF_S", "TranscriptMirrorBatcher"]

log = logging.getLogger("kandev_nb")

MIRROR_BACKOFF_S: Final = (0.2, 0.8)
"""Seconds before the second and third attempt at a batch the store refused."""


class TranscriptMirrorBatcher:
    """Pending mirror entries of one session and the store they go to.

    Args:
        store: the :class:`SessionStore`.
        on_error: called with a one-line message when a batch is dropped (default: a log warning).

    Attributes:
        errors: the messages of every dropped batch, oldest first.
    """

    def __init__(self, store: SessionStore, on_error: Callable[[str], None] | None = None) -> None:
        self.store = store
        self.on_error = on_error
        self.errors: list[str] = []
        self._pending: list[tuple[SessionKey, list[dict[str, Any]]]] = []
        self._lock = asyncio.Lock()
        self._eager: asyncio.Task[None] | None = None

    def enqueue(self, file_path: str, entries: list[dict[str, Any]]) -> None:
        """Keep `entries` for the transcript at `file_path` (a frame's ``filePath``) and start a
        background flush unless one runs; a path that names no transcript
        (:func:`~kandev_nb.agent.session_store.key_for_file`) is dropped with a warning."""
        key = key_for_file(file_path)
        if key is None:
            self._fail(f"a transcript_mirror frame for {file_path!r}, which is no transcript, was dropped")
            return
        if entries:
            self._pending.append((key, entries))
        if self._pending and (self._eager is None or self._eager.done()):
            self._eager = asyncio.get_running_loop().create_task(self.flush())

    async def flush(self) -> None:
        """Write every pending entry (in order, one ``append`` per key and batch, in a worker
        thread); never raises: a batch refused three times is dropped (:attr:`errors`)."""
        async with self._lock:
            while self._pending:  # what came while a batch was written goes in the next one
                pending, self._pending = self._pending, []
                merged: dict[SessionKey, list[dict[str, Any]]] = {}
                for key, entries in pending:
                    merged.setdefault(key, []).extend(entries)
                for key, entries in merged.items():
                    await self._append(key, entries)

    async def _append(self, key: SessionKey, entries: list[dict[str, Any]]) -> None:
        for attempt in range(len(MIRROR_BACKOFF_S) + 1):
            try:
                await asyncio.to_thread(self.store.append, key, entries)
                return
            except Exception as exc:  # noqa: BLE001 - the store is the user's code
                if attempt == len(MIRROR_BACKOFF_S):
                    self._fail(f"{len(entries)} transcript entries of {key.session_id} not stored: {exc!r}")
                    return
                await asyncio.sleep(MIRROR_BACKOFF_S[attempt])

    def _fail(self, message: str) -> None:
        self.errors.append(message)
        if self.on_error is not None:
            try:
                self.on_error(message)
                return
            except Exception:
                log.exception("kandev_nb: the session store's error callback failed")
        log.warning("kandev_nb session store: %s", message)
