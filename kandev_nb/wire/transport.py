"""Transports carry stream-json lines between us and the CLI.

:class:`Transport` is the seam (like httpx's transports): ``start``, ``send``, ``lines``,
``close``. :class:`StdioTransport` runs the CLI as a child process; tests and replays can
pass any other implementation to :class:`kandev_nb.agent.session.Session`.

:class:`LineFramer` is pure: bytes in, complete lines out. It splits on ``b"\\n"`` only
(never on U+2028, which may appear inside JSON strings), works across any chunk boundary
(a UTF-8 character split between reads included, since it never decodes), and has no line
length limit below `max_line_bytes` (256 MiB by default).
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import ctypes
import functools
import json
import os
import signal
import sys
import weakref
from abc import ABC, abstractmethod
from collections import deque
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

from kandev_nb.errors import CLIProcessError, TransportClosedError

__all__ = [
    "CLIProcessError",
    "LineFramer",
    "LineTooLong",
    "StdioTransport",
    "Transport",
    "TransportClosedError",
    "descendants",
    "kill_tree",
]

DEFAULT_MAX_LINE_BYTES = 256 * 1024 * 1024


@dataclass(frozen=True)
class LineTooLong:
    """Stands in for a line longer than the framer's limit; `size` is its length in bytes."""

    size: int


class LineFramer:
    """Split a byte stream into lines on ``b"\\n"``; pure, no I/O.

    >>> f = LineFramer()
    >>> f.push(b'{"a":1}\\n{"b"')
    [b'{"a":1}']
    >>> f.push(b':2}\\n')
    [b'{"b":2}']
    """

    def __init__(self, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES) -> None:
        self.max_line_bytes = max_line_bytes
        self._buf = bytearray()
        self._skipping = 0  # bytes of an oversized line dropped so far

    def push(self, chunk: bytes) -> list[bytes | LineTooLong]:
        """Feed `chunk`; return the lines it completed (blank lines skipped).

        Only the unterminated rest is held against `max_line_bytes`: a line that arrives
        whole inside one chunk is returned whatever its length (the chunk is in memory already).
        """
        parts = chunk.split(b"\n")
        rest = parts.pop()  # after the last newline: b"" when the chunk ends with one
        out: list[bytes | LineTooLong] = []
        if not parts:
            pass
        elif self._skipping:  # the first part ends an oversized line
            out.append(LineTooLong(self._skipping + len(parts[0])))
            self._skipping = 0
            parts[0] = b""
        elif self._buf:
            self._buf += parts[0]
            parts[0] = bytes(self._buf)
            self._buf.clear()
        out += [line for line in parts if line and not line.isspace()]  # isspace: the bytes strip() removes
        if rest:
            if self._skipping:
                self._skipping += len(rest)
            elif len(self._buf) + len(rest) > self.max_line_bytes:
                self._skipping = len(self._buf) + len(rest)
                self._buf.clear()
            else:
                self._buf += rest
        return out

    def flush(self) -> list[bytes | LineTooLong]:
        """At end of stream: the unterminated last line, if any."""
        if self._skipping:
            size, self._skipping = self._skipping, 0
            return [LineTooLong(size)]
        line = bytes(self._buf)
        self._buf.clear()
        return [line] if line.strip() else []


class Transport(ABC):
    """How stream-json lines travel to and from one CLI.

    Lifecycle: ``await start()`` once; then ``send`` and iterate ``lines()`` (which ends when
    the CLI is gone); ``await close()`` always, also after errors (idempotent).
    """

    @abstractmethod
    async def start(self) -> None:
        """Connect or launch. Raises CLIProcessError if the CLI cannot be started."""

    @abstractmethod
    async def send(self, message: dict[str, Any]) -> None:
        """Write one message as a JSON line. Raises TransportClosedError when gone."""

    @abstractmethod
    def lines(self) -> AsyncIterator[bytes | LineTooLong]:
        """Complete lines from the CLI, in order, until it exits or disconnects."""

    async def batches(self) -> AsyncIterator[list[bytes | LineTooLong]]:
        """The same lines, in the groups they arrived in (one read of the pipe), so that a
        reader handles a burst of deltas in one go. This default gives one line per group."""
        async for line in self.lines():
            yield [line]

    @abstractmethod
    async def close(self) -> None:
        """End the CLI and release everything; bounded in time; idempotent."""

    @property
    def exit_code(self) -> int | None:
        """The CLI's exit code once it has exited, else None."""
        return None

    @property
    def stderr_tail(self) -> str:
        """The last of what the CLI wrote to stderr (may be empty)."""
        return ""


def _load_prctl() -> Callable[..., int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        prctl: Callable[..., int] = ctypes.CDLL(None, use_errno=True).prctl
        return prctl
    except (OSError, AttributeError):
        return None


_PRCTL = _load_prctl()  # resolved here: the child between fork and exec must not load libraries
_PR_SET_PDEATHSIG = 1


def _die_with_parent(parent_pid: int) -> None:  # runs in the child between fork and exec
    """Ask Linux to SIGKILL the CLI when the thread that started it dies (the kernel's loop
    thread, so: the kernel process), even by SIGKILL. Only a pre-resolved C call here; if the
    parent already died before the call, exit at once."""
    if _PRCTL is not None:
        _PRCTL(_PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() != parent_pid:
            os._exit(1)


def descendants(pid: int) -> list[int]:
    """The processes `pid` started, and those they started, ... (Linux ``/proc``; [] elsewhere),
    parents before children. A CLI's Bash calls run in sessions of their own (the CLI starts
    them detached), so neither its process group nor its session holds them: only the tree
    does, until the CLI dies and they are handed to init."""
    if not sys.platform.startswith("linux"):
        return []
    children: dict[int, list[int]] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    for name in entries:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if len(fields) > 1 and fields[0] not in (b"Z", b"X"):  # after the command: state, ppid (proc(5))
            children.setdefault(int(fields[1]), []).append(int(name))
    found: list[int] = []
    todo = list(children.get(pid, ()))
    while todo:
        child = todo.pop(0)
        found.append(child)
        todo += children.get(child, ())
    return found


def kill_tree(pid: int) -> None:
    """SIGKILL the CLI `pid` (a process group leader we started) and every process it started
    (:func:`descendants`, taken before the kill: a Bash call's shell and what it runs would
    live on, orphaned). Call it only while `pid` is our unreaped child (its pid is ours)."""
    found = descendants(pid)
    with contextlib.suppress(OSError):
        os.killpg(pid, signal.SIGKILL)  # the CLI's own process group (its pid)
    for each in found:
        with contextlib.suppress(OSError):
            os.kill(each, signal.SIGKILL)


_live: weakref.WeakSet[StdioTransport] = weakref.WeakSet()


def kill_all_children() -> None:
    """SIGKILL every CLI we started that is still running (atexit, kernel shutdown)."""
    for transport in list(_live):
        transport.kill()


class StdioTransport(Transport):
    """The CLI as a child process, stream-json over its stdin/stdout.

    The child runs in its own session (``start_new_session``) so that the kernel's
    interrupt (SIGINT to the kernel's process group) does not kill it; we turn interrupts
    into the protocol's `interrupt` instead. To make sure it never outlives the kernel it
    gets ``PR_SET_PDEATHSIG=SIGKILL`` on Linux, and :func:`kill_all_children` runs at exit.

    Args:
        argv: the full command line (see :func:`kandev_nb.wire.cli.build_argv`).
        env: the child's environment (see :func:`kandev_nb.wire.cli.child_env`).
        cwd: the working directory.
        on_stderr: called with each stderr line (text, no newline).
        max_line_bytes: lines longer than this become :class:`LineTooLong`.
    """

    def __init__(
        self,
        argv: list[str],
        env: dict[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        *,
        on_stderr: Callable[[str], None] | None = None,
        max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    ) -> None:
        self.argv = argv
        self.env = env
        self.cwd = cwd
        self.on_stderr = on_stderr
        self.max_line_bytes = max_line_bytes
        self._proc: asyncio.subprocess.Process | None = None
        self._stderr: deque[str] = deque(maxlen=400)
        self._stderr_task: asyncio.Task[None] | None = None
        self._write_lock = asyncio.Lock()

    @property
    def pid(self) -> int | None:
        """The CLI's process id once started."""
        return self._proc.pid if self._proc else None

    @property
    def exit_code(self) -> int | None:
        return self._proc.returncode if self._proc else None

    @property
    def stderr_tail(self) -> str:
        return "\n".join(self._stderr)[-65536:]

    async def start(self) -> None:
        try:
            self._proc = await asyncio.create_subprocess_exec(
                *self.argv,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                env=self.env,
                cwd=self.cwd,
                start_new_session=True,
                preexec_fn=functools.partial(_die_with_parent, os.getpid()),
                limit=1 << 20,
            )
        except OSError as exc:
            raise CLIProcessError(f"could not start {self.argv[0]}: {exc}", None, "") from exc
        _live.add(self)
        self._stderr_task = asyncio.get_running_loop().create_task(self._read_stderr())

    async def _read_stderr(self) -> None:
        assert self._proc and self._proc.stderr
        framer = LineFramer(1 << 20)
        while chunk := await self._proc.stderr.read(65536):
            for line in framer.push(chunk):
                self._note_stderr(line)
        for line in framer.flush():
            self._note_stderr(line)

    def _note_stderr(self, line: bytes | LineTooLong) -> None:
        text = (
            f"[stderr line of {line.size} bytes]" if isinstance(line, LineTooLong) else line.decode("utf-8", "replace")
        )
        self._stderr.append(text)
        if self.on_stderr:
            with contextlib.suppress(Exception):
                self.on_stderr(text)

    async def send(self, message: dict[str, Any]) -> None:
        proc = self._proc
        if proc is None or proc.stdin is None or proc.returncode is not None or proc.stdin.is_closing():
            raise TransportClosedError("the Claude Code process is not running")
        data = json.dumps(message, ensure_ascii=False).encode() + b"\n"
        async with self._write_lock:
            try:
                proc.stdin.write(data)
                await proc.stdin.drain()
            except (BrokenPipeError, ConnectionResetError) as exc:
                raise TransportClosedError("the Claude Code process closed its stdin") from exc

    async def lines(self) -> AsyncIterator[bytes | LineTooLong]:
        async for batch in self.batches():
            for line in batch:
                yield line

    async def batches(self) -> AsyncIterator[list[bytes | LineTooLong]]:
        """The complete lines of each read of the CLI's stdout (up to 1 MiB a read)."""
        assert self._proc and self._proc.stdout, "start() first"
        framer = LineFramer(self.max_line_bytes)
        stdout = self._proc.stdout
        while chunk := await stdout.read(1 << 20):
            if lines := framer.push(chunk):
                yield lines
        if lines := framer.flush():
            yield lines
        await self._proc.wait()
        if self._stderr_task:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(asyncio.shield(self._stderr_task), 2)

    def kill(self) -> None:
        """SIGKILL the CLI now, with every process it started (:func:`kill_tree`); no waiting."""
        if self._proc and self._proc.returncode is None:
            kill_tree(self._proc.pid)

    async def close(self) -> None:
        """stdin EOF, wait 5 s; SIGTERM, wait 5 s; SIGKILL with what it started; always reap."""
        proc = self._proc
        if proc is None:
            return
        try:
            if proc.returncode is None and proc.stdin and not proc.stdin.is_closing():
                with contextlib.suppress(Exception):
                    proc.stdin.close()
            for step in (None, proc.terminate, self.kill):
                if proc.returncode is not None:
                    break
                if step is not None:
                    with contextlib.suppress(ProcessLookupError):
                        step()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(proc.wait(), 5)
        finally:
            if proc.returncode is None:
                self.kill()
            _live.discard(self)
            if self._stderr_task and not self._stderr_task.done():
                # The process is gone: its stderr ends soon; keep what it said (bounded wait).
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(asyncio.shield(self._stderr_task), 2)
                self._stderr_task.cancel()


atexit.register(kill_all_children)
