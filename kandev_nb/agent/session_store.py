"""Transcripts mirrored to a store, so a session resumes where its local transcript is gone.

Claude Code keeps each conversation on the local disk, in ``<config>/projects/<project
key>/<session_id>.jsonl`` (``<config>`` is ``$CLAUDE_CONFIG_DIR`` or ``~/.claude``), and each
subagent's beside it, in ``<session_id>/subagents/agent-<agent_id>.jsonl`` with an
``agent-<agent_id>.meta.json`` sidecar. ``--resume <session_id>`` reads that file, so a
session cannot be resumed on another machine, or once the file is gone: a fleet's row retried
on a different Dask worker started over.

A :class:`SessionStore` keeps a copy. A session given one (``SessionConfig(session_store=...)``,
the Agent SDK's option of that name) starts its CLI with ``--session-mirror``; the CLI then
prints every batch of entries it appends to a transcript as a ``transcript_mirror`` line
(:class:`~kandev_nb.wire.protocol.TranscriptMirror`: ``filePath`` and ``entries``; a
subagent's sidecar comes as ``{"type": "agent_metadata", ...}`` entries of its transcript;
measured on CLI 2.1.332), and :class:`~kandev_nb.agent.mirror.TranscriptMirrorBatcher` appends
them to the store. Before a process resumes a session whose transcript is not on this
machine, :func:`materialize` writes it back from the store where the CLI looks for it.

Two stores ship: :class:`FolderSessionStore` (a folder, e.g. on a filesystem every Dask
worker mounts) here, and :class:`kandev_nb.ledger.session_store.LedgerSessionStore` (a table of
the team ledger's PostgreSQL or SQLite database). Anything with the three methods of
:class:`SessionStore` is one too.
"""

from __future__ import annotations

import json
import logging
import os
import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

__all__ = [
    "FolderSessionStore",
    "SessionKey",
    "SessionStore",
    "check_key",
    "config_dir",
    "is_safe_key",
    "key_for_file",
    "materialize",
    "project_key_for_directory",
]

log = logging.getLogger("kandev_nb")

_MAX_SANITIZED = 200
"""Longest project key the CLI keeps whole; a longer one is cut and given a hash suffix."""
_UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$", re.IGNORECASE)


@dataclass(frozen=True)
class SessionKey:
    """Which transcript: the main one of a session, or one of its subagents'.

    Attributes:
        project_key: the CLI's folder name for the working directory
            (:func:`project_key_for_directory`).
        session_id: the session's id (a UUID).
        subpath: None for the session's own transcript; ``"subagents/agent-<agent_id>"``
            (``/``-separated, without ``.jsonl``) for a subagent's.
    """

    project_key: str
    session_id: str
    subpath: str | None = None


@runtime_checkable
class SessionStore(Protocol):
    """Where transcripts are mirrored (the Agent SDK's ``SessionStore``, synchronous: kandev-nb
    calls it in a worker thread, never on the kernel's event loop).

    Entries are the transcript's JSON objects, one per line of the local file, appended in
    the order the CLI wrote them. Most carry a ``uuid``; a store may skip an entry whose
    ``uuid`` it already holds for that key (a retried batch may repeat some).
    """

    def append(self, key: SessionKey, entries: Sequence[Mapping[str, Any]]) -> None:
        """Add `entries` to the transcript `key` (created on first append). Raise on failure:
        the batch is reported (a warning) and dropped; the local transcript is intact."""
        ...

    def load(self, key: SessionKey) -> list[dict[str, Any]] | None:
        """Every entry of transcript `key`, in order; None if it was never written."""
        ...

    def list_subkeys(self, key: SessionKey) -> list[str]:
        """The subpaths stored under session `key` (``["subagents/agent-a1b2"]``), any order."""
        ...


def project_key_for_directory(directory: str | os.PathLike[str]) -> str:
    """The CLI's folder name under ``<config>/projects`` for a working directory: its real
    path (NFC) with every character that is not a letter or digit made ``-``
    (``/home/ana/proj`` -> ``-home-ana-proj``). Paths over 200 characters get a hash suffix
    the CLI computes with its own hash, which this does not reproduce: a key of such a path
    may differ from the CLI's (the CLI's ``--resume`` finds a session in any project folder,
    measured on 2.1.332, so a resume still works)."""
    path = unicodedata.normalize("NFC", os.path.realpath(os.fspath(directory)))
    key = re.sub(r"[^a-zA-Z0-9]", "-", path)
    return key if len(key) <= _MAX_SANITIZED else key[:_MAX_SANITIZED]


def config_dir(env: Mapping[str, str] | None = None) -> Path:
    """The CLI's config folder for a child started with `env` over ``os.environ``:
    ``$CLAUDE_CONFIG_DIR``, else ``$HOME/.claude``."""
    merged = {**os.environ, **(env or {})}
    if merged.get("CLAUDE_CONFIG_DIR"):
        return Path(merged["CLAUDE_CONFIG_DIR"]).expanduser()
    return Path(merged.get("HOME", "~")).expanduser() / ".claude"


def key_for_file(file_path: str | os.PathLike[str]) -> SessionKey | None:
    """The :class:`SessionKey` of a transcript file the CLI names (a mirror frame's
    ``filePath``): ``.../projects/<project_key>/<session_id>.jsonl``, or
    ``.../projects/<project_key>/<session_id>/subagents/.../agent-<id>.jsonl``; None for any
    other path (not under a ``projects`` folder, not ``.jsonl``)."""
    parts = Path(file_path).parts
    if "projects" not in parts or not parts[-1].endswith(".jsonl"):
        return None
    rel = list(parts[len(parts) - 1 - parts[::-1].index("projects") + 1 :])
    rel[-1] = rel[-1][: -len(".jsonl")]
    if len(rel) == 2:
        key = SessionKey(rel[0], rel[1])
    elif len(rel) >= 4 and rel[2] == "subagents":
        key = SessionKey(rel[0], rel[1], "/".join(rel[2:]))
    else:
        return None
    return key if is_safe_key(key) else None


class FolderSessionStore:
    """A :class:`SessionStore` in a folder, laid out as the CLI's own ``projects`` folder:
    ``<root>/<project_key>/<session_id>.jsonl`` and
    ``<root>/<project_key>/<session_id>/<subpath>.jsonl``. Picklable (a fleet's rows take it
    to their Dask workers); put it on a filesystem every machine that resumes mounts.

    Args:
        root: the folder (created on first append, mode 0700: transcripts hold prompts and
            tool output).

    Raises:
        ValueError: a key whose parts would leave `root` (``..``, a ``/`` in an id).
    """

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root).expanduser()
        self._held: dict[Path, tuple[tuple[int, int, int], set[str]]] = {}  # file -> (its identity, its uuids)

    def __repr__(self) -> str:
        return f"FolderSessionStore({str(self.root)!r})"

    def __getstate__(self) -> dict[str, Any]:
        return {"root": self.root}  # a worker reads the files itself

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.root, self._held = state["root"], {}

    def __eq__(self, other: object) -> bool:
        return isinstance(other, FolderSessionStore) and other.root == self.root

    def __hash__(self) -> int:
        return hash(self.root)

    def _path(self, key: SessionKey) -> Path:
        check_key(key)
        if key.subpath:
            path = self.root.joinpath(key.project_key, key.session_id, *key.subpath.split("/")).with_suffix(".jsonl")
        else:
            path = self.root / key.project_key / f"{key.session_id}.jsonl"
        # a link planted in a shared folder never takes a transcript elsewhere
        if not path.resolve().is_relative_to(self.root.resolve()):
            raise ValueError(f"{path} leaves the store's folder {self.root} (a symbolic link)")
        return path

    def append(self, key: SessionKey, entries: Sequence[Mapping[str, Any]]) -> None:
        """Append `entries` as JSON lines, in one write (a file per transcript, mode 0600). An
        entry whose ``uuid`` the file already holds is skipped (a retried batch), as
        :class:`~kandev_nb.ledger.session_store.LedgerSessionStore` does; entries without one
        are always added."""
        if not entries:
            return
        path = self._path(key)
        self.root.mkdir(mode=0o700, parents=True, exist_ok=True)
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        held = self._uuids(path)
        fresh, added = [], set()
        for entry in entries:
            uuid = entry.get("uuid")
            if isinstance(uuid, str):
                if uuid in held or uuid in added:
                    continue
                added.add(uuid)
            fresh.append(entry)
        if not fresh:
            return
        data = "".join(json.dumps(e, ensure_ascii=False, separators=(",", ":")) + "\n" for e in fresh)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "a", encoding="utf-8") as handle:
            handle.write(data)
            handle.flush()
            self._held[path] = (_identity(os.fstat(fd)), held | added)  # only once written

    def _uuids(self, path: Path) -> set[str]:
        """The uuids `path` holds: remembered from this store's last append to it, read again
        when the file is not the one this store last wrote (another writer appended, or
        replaced it). The caller must not change the set."""
        try:
            identity = _identity(path.stat())
        except FileNotFoundError:
            return set()
        cached = self._held.get(path)
        if cached is not None and cached[0] == identity:
            return cached[1]
        return {e["uuid"] for e in _entries(path.read_text(encoding="utf-8")) if isinstance(e.get("uuid"), str)}

    def load(self, key: SessionKey) -> list[dict[str, Any]] | None:
        """The file's entries (unreadable lines skipped); None when there is no file."""
        try:
            text = self._path(key).read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        return _entries(text)

    def list_subkeys(self, key: SessionKey) -> list[str]:
        """The ``.jsonl`` files under ``<root>/<project_key>/<session_id>/``, as subpaths."""
        folder = self._path(SessionKey(key.project_key, key.session_id)).with_suffix("")
        if not folder.is_dir():
            return []
        return sorted(p.relative_to(folder).with_suffix("").as_posix() for p in folder.rglob("*.jsonl"))

    def find(self, session_id: str) -> list[str]:
        """The project keys this store holds session `session_id` under (optional method of a
        store: :func:`materialize` uses it for a session begun in another folder)."""
        if not _UUID.match(session_id) or not self.root.is_dir():
            return []
        return sorted(p.parent.name for p in self.root.glob(f"*/{session_id}.jsonl"))


def _identity(st: os.stat_result) -> tuple[int, int, int]:
    """A file as this store last saw it: inode, size, modification time (ns)."""
    return (st.st_ino, st.st_size, st.st_mtime_ns)


def is_safe_key(key: SessionKey) -> bool:
    """Is every part of `key` one folder or file name (no ``..``, no separator, no NUL)? Only
    such a key is stored or written: it never names a path outside its folder."""
    names = [key.project_key, key.session_id, *(key.subpath.split("/") if key.subpath else ())]
    return not any(not n or n in (".", "..") or "/" in n or "\\" in n or "\0" in n for n in names)


def check_key(key: SessionKey) -> None:
    """Raise ValueError("not a transcript key: ...") unless :func:`is_safe_key`."""
    if not is_safe_key(key):
        raise ValueError(f"not a transcript key: {key!r}")


def _entries(text: str) -> list[dict[str, Any]]:
    out = []
    for line in text.splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if isinstance(entry, dict):
            out.append(entry)
    return out


def _write_jsonl(path: Path, entries: Sequence[Mapping[str, Any]]) -> None:
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    _write_private(path, "".join(json.dumps(e, ensure_ascii=False, separators=(",", ":")) + "\n" for e in entries))


def _write_private(path: Path, text: str) -> None:
    """Write `text` to `path`, mode 0600, never through a symbolic link."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)


def materialize(
    store: SessionStore, session_id: str, cwd: str | os.PathLike[str], env: Mapping[str, str] | None = None
) -> Path | None:
    """Write session `session_id` from `store` where a CLI started in `cwd` with `env`
    resumes it, unless the CLI already has a transcript of it there.

    The store's copy is looked up under the project key of `cwd` first, then (a session
    begun in another folder or on another machine) under any project key a
    :class:`FolderSessionStore` or :class:`~kandev_nb.ledger.session_store.LedgerSessionStore`
    holds it under (their ``find(session_id)``). The main transcript goes to
    ``<config>/projects/<project key of cwd>/<session_id>.jsonl``, each subagent's to its
    ``subagents/agent-<id>.jsonl`` with its ``.meta.json`` sidecar (the last
    ``agent_metadata`` entry), files mode 0600.

    Returns:
        The main transcript's path when it was written; None when the CLI has one already,
        `session_id` is not a UUID, or the store has none.

    A subagent transcript the store lists under a key that would leave the session's folder
    (``..``, a separator) is left out with a warning. A session found under another folder's
    key is also copied to the store under this folder's key (the CLI goes on writing there, and
    the next resume from this folder must find the whole conversation).

    Raises:
        OSError: the config folder cannot be written. Whatever the store raises.
    """
    from kandev_nb.agent.transcript import find_transcript

    if not _UUID.match(session_id) or find_transcript(dict(env or {}), session_id) is not None:
        return None
    here = project_key_for_directory(cwd)
    keys = [here]
    finder = getattr(store, "find", None)
    if callable(finder):
        keys += [k for k in finder(session_id) if k != here]
    for project_key in keys:
        entries = store.load(SessionKey(project_key, session_id))
        if not entries:
            continue
        target = config_dir(env) / "projects" / here
        main = target / f"{session_id}.jsonl"
        subpaths = []
        for subpath in store.list_subkeys(SessionKey(project_key, session_id)):
            if is_safe_key(SessionKey(here, session_id, subpath)):  # a store's subpath stays under `target`
                subpaths.append(subpath)
            else:
                log.warning("kandev-nb: the session store lists %r, which is not a transcript key: left out", subpath)
        for subpath in subpaths:
            sub = store.load(SessionKey(project_key, session_id, subpath)) or []
            meta = [e for e in sub if e.get("type") == "agent_metadata"]
            path = target.joinpath(session_id, *subpath.split("/")).with_suffix(".jsonl")
            _write_jsonl(path, [e for e in sub if e.get("type") != "agent_metadata"])
            if meta:
                sidecar = {k: v for k, v in meta[-1].items() if k != "type"}
                _write_private(path.with_name(path.name[: -len(".jsonl")] + ".meta.json"), json.dumps(sidecar))
            if project_key != here:  # the store's copy under this folder's key: the next resume finds all of it
                store.append(SessionKey(here, session_id, subpath), sub)
        _write_jsonl(main, entries)
        if project_key != here:
            store.append(SessionKey(here, session_id), entries)
        return main
    return None
