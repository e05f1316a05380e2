"""Record a session's raw stream-json traffic, and replay it without a CLI.

The file format is the one of ``shared/wire-samples``: one JSON object per line,

    {"dir": "in" | "out" | "stderr" | "exit" | "meta", "t": seconds, "msg": ...}

where "in" is a message we wrote to the CLI's stdin, "out" a line the CLI printed (the
decoded JSON object, or the line's text when it was not JSON), "stderr" a line of its
stderr, "exit" its exit code (an int, or null if unknown), and "meta" (the first entry,
our addition) ``{"argv": [...], "cwd": ...}``. `t` is seconds since the transport started.

:class:`RecordingTransport` wraps any :class:`~kandev_nb.wire.transport.Transport`; the easy
way in is ``Session(transport_factory=recording_factory("run.jsonl"))``.
:class:`ReplayTransport` plays the "out" lines of a recording back to a
:class:`~kandev_nb.agent.session.Session` (or anything else), releasing each part of the
recording only once the client has sent what came before it (see its docstring).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import IO, Any

from kandev_nb.redact import LineMasker, known_secrets
from kandev_nb.wire.protocol import decode_json
from kandev_nb.wire.transport import LineTooLong, StdioTransport, Transport, TransportClosedError

__all__ = [
    "RecordingTransport",
    "ReplayTransport",
    "load_transcript",
    "out_lines",
    "recording_factory",
]

Entry = dict[str, Any]
"""One line of a transcript: ``{"dir": ..., "t": ..., "msg": ...}``."""


def load_transcript(path: str | Path) -> list[Entry]:
    """Read a transcript file (JSONL) into its entries; blank and non-JSON lines are skipped.

    Raises:
        OSError: the file cannot be read.
    """
    entries: list[Entry] = []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if not line.strip():
                continue
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            if isinstance(entry, dict) and "dir" in entry:
                entries.append(entry)
    return entries


def _line_of(msg: Any) -> bytes:
    """The bytes of one "out" line: the object re-encoded, or the recorded text."""
    if isinstance(msg, str):
        return msg.encode("utf-8", "surrogatepass")
    return json.dumps(msg, ensure_ascii=False, separators=(",", ":")).encode("utf-8", "surrogatepass")


def out_lines(entries: Iterable[Entry]) -> Iterator[bytes]:
    """The CLI's stdout lines of a transcript, in order, as bytes without newline."""
    for entry in entries:
        if entry.get("dir") == "out":
            yield _line_of(entry.get("msg"))


class _Writer:
    """Appends entries to a JSONL file, with `t` relative to the first write."""

    def __init__(self, path: Path, rewrite: Mapping[str, str] | None, append: bool) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._fh: IO[str] | None = open(path, "a" if append else "w", encoding="utf-8")  # noqa: SIM115
        self._t0 = time.monotonic()
        self._rewrite = dict(rewrite or {})

    def write(self, direction: str, msg: Any) -> None:
        if self._fh is None:
            return
        line = json.dumps({"dir": direction, "t": round(time.monotonic() - self._t0, 3), "msg": msg})
        for old, new in self._rewrite.items():
            line = line.replace(old, new)
        self._fh.write(line + "\n")
        self._fh.flush()

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None


class RecordingTransport(Transport):
    """A transport that writes everything passing through `inner` to a transcript file.

    Args:
        inner: the real transport (usually a :class:`~kandev_nb.wire.transport.StdioTransport`).
        path: the JSONL file to write.
        rewrite: literal substrings replaced in every written line (e.g. a temporary
            directory -> ``/home/user/project``), so that committed transcripts are stable.
        append: add to an existing file (a second CLI process of the same session).
        meta: extra fields for the leading "meta" entry.

    Recording never changes the meaning of the traffic: lines are passed on as received but
    for the secrets the CLI's environment holds (:func:`kandev_nb.redact.known_secrets` of
    the inner transport's ``env``, masked by :class:`~kandev_nb.redact.LineMasker` as the
    session masks them), and "out" entries hold the decoded JSON object (or the text of a
    line that is not JSON).
    """

    def __init__(
        self,
        inner: Transport,
        path: str | Path,
        *,
        rewrite: Mapping[str, str] | None = None,
        append: bool = False,
        meta: Mapping[str, Any] | None = None,
    ) -> None:
        self.inner = inner
        self.path = Path(path)
        self._rewrite = rewrite
        self._append = append
        self._meta = dict(meta or {})
        self._writer: _Writer | None = None
        self._exit_written = False
        env = getattr(inner, "env", None)
        self._masker = LineMasker(known_secrets(env) if isinstance(env, Mapping) else ())
        if isinstance(inner, StdioTransport):
            self._meta.setdefault("argv", list(inner.argv))
            previous = inner.on_stderr

            def on_stderr(text: str) -> None:
                if self._writer is not None:
                    self._writer.write("stderr", text)
                if previous is not None:
                    previous(text)

            inner.on_stderr = on_stderr

    @property
    def pid(self) -> int | None:
        """The inner transport's process id, if it has one."""
        return getattr(self.inner, "pid", None)

    @property
    def exit_code(self) -> int | None:
        return self.inner.exit_code

    @property
    def stderr_tail(self) -> str:
        return self.inner.stderr_tail

    def kill(self) -> None:
        """SIGKILL the inner CLI, if it is a local process."""
        kill = getattr(self.inner, "kill", None)
        if callable(kill):
            kill()

    async def start(self) -> None:
        self._writer = _Writer(self.path, self._rewrite, self._append)
        self._writer.write("meta", self._meta)
        await self.inner.start()

    async def send(self, message: dict[str, Any]) -> None:
        if self._writer is not None:
            self._writer.write("in", message)
        await self.inner.send(message)

    async def lines(self) -> AsyncIterator[bytes | LineTooLong]:
        async for line in self.inner.lines():
            if not isinstance(line, LineTooLong):
                line = self._masker.line(line)
            if self._writer is not None:
                if isinstance(line, LineTooLong):
                    self._writer.write("out", f"[line of {line.size} bytes over the limit]")
                else:
                    try:
                        msg: Any = decode_json(line)
                    except (ValueError, RecursionError):
                        msg = line.decode("utf-8", "replace")
                    self._writer.write("out", msg)
            yield line
        self._write_exit()

    def _write_exit(self) -> None:
        if self._writer is not None and not self._exit_written:
            self._exit_written = True
            self._writer.write("exit", self.inner.exit_code)

    async def close(self) -> None:
        try:
            await self.inner.close()
        finally:
            if self._writer is not None:
                self._write_exit()
                self._writer.close()


def recording_factory(
    path: str | Path,
    inner: Callable[[list[str], dict[str, str], str], Transport] | None = None,
    *,
    rewrite: Mapping[str, str] | None = None,
    append: bool = False,
) -> Callable[[list[str], dict[str, str], str], RecordingTransport]:
    """A ``Session(transport_factory=...)`` that records every CLI process to `path`.

    Args:
        path: the transcript file; the first process truncates it (unless `append`), later
            ones (a session restarted after the CLI died) append to it.
        inner: makes the real transport from ``(argv, env, cwd)``; default a
            :class:`~kandev_nb.wire.transport.StdioTransport`.
        rewrite: see :class:`RecordingTransport`.
        append: the first process appends too (a second session continuing a recording).
    """
    started = 0

    def factory(argv: list[str], env: dict[str, str], cwd: str) -> RecordingTransport:
        nonlocal started
        transport = inner(argv, env, cwd) if inner else StdioTransport(argv, env, cwd)
        started += 1
        return RecordingTransport(transport, path, rewrite=rewrite, append=append or started > 1, meta={"cwd": cwd})

    return factory


def _kind(msg: Any) -> str:
    return str(msg.get("type")) if isinstance(msg, dict) else "?"


class ReplayTransport(Transport):
    """Plays a recorded transcript back as if the CLI were running.

    The "out" lines are yielded by :meth:`lines` in order. With ``gate=True`` (default)
    the replay follows the client: an "in" entry of the recording is a point the replay
    waits at until the client has sent as many messages of that `type` (user,
    control_request, control_response) as the recording had by then. So the second
    prompt's answer only comes after the second prompt, and an approval's outcome only
    after the client answered. The CLI's control_responses are rewritten to carry the
    client's own `request_id` (matched by order), and one that answers a request the
    client already sent is released early, so a client that waits for its `initialize`
    answer before it sends the prompt never deadlocks on a recording that wrote both first.

    Args:
        source: a transcript path, or its entries (see :func:`load_transcript`).
        gate: follow the client as described; False yields every line at once.
        speed: None (default) replays as fast as possible; 1.0 keeps the recorded pace,
            2.0 twice as fast, and so on.

    Attributes:
        sent: every message the client sent, in order.
    """

    def __init__(self, source: str | Path | Iterable[Entry], *, gate: bool = True, speed: float | None = None) -> None:
        self.entries = load_transcript(source) if isinstance(source, str | Path) else list(source)
        self.gate = gate
        self.speed = speed
        self.sent: list[dict[str, Any]] = []
        self._sent_counts: dict[str, int] = {}
        self._live_request_ids: list[str] = []
        self._recorded_request_ids = [
            str(e["msg"].get("request_id"))
            for e in self.entries
            if e.get("dir") == "in" and _kind(e.get("msg")) == "control_request"
        ]
        self._changed = asyncio.Event()
        self._closed = False
        self._exit_code: int | None = None
        self._stderr: list[str] = []

    @property
    def exit_code(self) -> int | None:
        return self._exit_code

    @property
    def stderr_tail(self) -> str:
        return "\n".join(self._stderr)[-65536:]

    async def start(self) -> None:
        """Nothing to launch."""

    async def send(self, message: dict[str, Any]) -> None:
        if self._closed or self._exit_code is not None:
            raise TransportClosedError("the replayed CLI has exited")
        self.sent.append(message)
        kind = _kind(message)
        self._sent_counts[kind] = self._sent_counts.get(kind, 0) + 1
        if kind == "control_request":
            self._live_request_ids.append(str(message.get("request_id")))
        self._changed.set()

    async def close(self) -> None:
        self._closed = True
        self._changed.set()

    def _live_id(self, msg: Any) -> tuple[Any, bool]:
        """`msg` with a recorded control_response id mapped to the client's; and whether it can go."""
        if _kind(msg) != "control_response" or not isinstance(msg.get("response"), dict):
            return msg, True
        recorded = str(msg["response"].get("request_id"))
        if recorded not in self._recorded_request_ids:
            return msg, True
        index = self._recorded_request_ids.index(recorded)
        if index >= len(self._live_request_ids):
            return msg, False
        live = self._live_request_ids[index]
        return {**msg, "response": {**msg["response"], "request_id": live}}, True

    async def lines(self) -> AsyncIterator[bytes | LineTooLong]:
        need: dict[str, int] = {}
        released: set[int] = set()
        last_t = 0.0
        for index, entry in enumerate(self.entries):
            if self._closed:
                return
            direction, msg = entry.get("dir"), entry.get("msg")
            if self.speed and isinstance(entry.get("t"), int | float):
                delay = (float(entry["t"]) - last_t) / self.speed
                last_t = float(entry["t"])
                if delay > 0:
                    await asyncio.sleep(delay)
            if direction == "in" and self.gate:
                kind = _kind(msg)
                need[kind] = need.get(kind, 0) + 1
                while self._sent_counts.get(kind, 0) < need[kind] and not self._closed:
                    early = self._release_early(index, released)
                    for line in early:
                        yield line
                    if not early:
                        self._changed.clear()
                        await self._changed.wait()
            elif direction == "out" and index not in released:
                live, ready = self._live_id(msg) if self.gate else (msg, True)
                while not ready and not self._closed:
                    self._changed.clear()
                    await self._changed.wait()
                    live, ready = self._live_id(msg)
                yield _line_of(live)
            elif direction == "stderr":
                self._stderr.append(str(msg))
            elif direction == "exit":
                self._exit_code = msg if isinstance(msg, int) else None
                return
        if self._exit_code is None:
            self._exit_code = 0

    def _release_early(self, index: int, released: set[int]) -> list[bytes]:
        """Lines after `index` that answer control_requests the client already sent."""
        out: list[bytes] = []
        for later in range(index + 1, len(self.entries)):
            entry = self.entries[later]
            if later in released or entry.get("dir") != "out" or _kind(entry.get("msg")) != "control_response":
                continue
            live, ready = self._live_id(entry["msg"])
            if ready and live is not entry["msg"]:
                released.add(later)
                out.append(_line_of(live))
        return out
