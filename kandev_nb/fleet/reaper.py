"""What a fleet row's CLI started dies with the process that started the CLI, by SIGKILL too.

A CLI we start has a parent-death signal (``PR_SET_PDEATHSIG``): when the kernel or the Dask
worker that started it dies, the CLI dies. What the CLI started does not: each Bash call runs
in a session of its own (the CLI starts it detached), and once the CLI is gone it belongs to
init (measured: a Bash call's shell and the ``python3`` it ran lived on after their worker
and its CLI were SIGKILLed; the shell's command line names ``~/.claude/shell-snapshots``).
Within a living process :func:`kandev_nb.wire.transport.kill_tree` kills a CLI with its
process tree; for a process that dies by SIGKILL nobody is left to do it, and the tree is
gone with the CLI.

So every row's CLI gets a mark in its environment (:data:`MARK`, a token of its own), which
every process it starts inherits (measured: the Bash call's shell and its ``python3`` carry
it), and a process that runs fleet rows (the kernel, a worker) starts one small watcher the
first time a row starts: ``python -I -S -c`` with a few lines, in a session of its own (the
notebook's interrupt does not reach it), reading the marks to watch on its stdin. When its
stdin ends, the process that started it is gone (the system closes the pipe of a process
that dies, however it dies), and it SIGKILLs every process of ours that carries one of the
marks still on its list, then exits. A row takes its mark off the list when it ends.

>>> mark = REAPER.watch()                               # doctest: +SKIP
>>> config = replace(config, env={**config.env, MARK: mark})  # doctest: +SKIP
>>> ...; REAPER.forget(mark)                            # doctest: +SKIP
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import subprocess
import sys
import threading
from collections.abc import Callable
from typing import IO, Any, Final

log = logging.getLogger("kandev_nb")

__all__ = ["CANCEL_AFTER_S", "MARK", "REAPER", "STOP_GRACE_S", "Reaper", "after_grace", "kill_cli", "kill_unfinished"]

STOP_GRACE_S: Final = 5.0
"""Seconds a stopped row's CLI gets to end its turn after the protocol's interrupt (it keeps
the turn and its cost; measured: 0.1-0.2 s streaming or in a tool call); one still there
after them is killed with the processes it started (Stop means stop within 10 s: a CLI
that no longer answers lived 25 s, the interrupt's grace then stdin EOF, TERM and KILL)."""

CANCEL_AFTER_S: Final = 8.0
"""Seconds after a stop when a cluster row's Dask future still running is cancelled (the
worker's watchdog then kills its CLI): a second line behind the task's own deadline."""


def after_grace(kill: Callable[[], Any]) -> None:
    """Call `kill` :data:`STOP_GRACE_S` from now on the running loop (none: nothing runs)."""
    with contextlib.suppress(RuntimeError):
        asyncio.get_running_loop().call_later(STOP_GRACE_S, kill)


def kill_cli(session: Any) -> bool:
    """SIGKILL the CLI of `session` (a :class:`~kandev_nb.agent.session.Session` or None) with
    what it started (:meth:`~kandev_nb.wire.transport.StdioTransport.kill`); whether it had one."""
    kill = getattr(session.transport, "kill", None) if session is not None else None
    if kill is not None:
        kill()
    return kill is not None


def kill_unfinished(row: Any) -> None:
    """Kill the CLI of `row` (a :class:`~kandev_nb.fleet.runner.RowState`) unless it finished."""
    if row.result is None and kill_cli(row.session):
        log.warning("kandev_nb fleet: row %r did not stop within %g s: its CLI is killed", row.key, STOP_GRACE_S)


MARK: Final = "KANDEV_NB_ROW_CLI"
"""The environment variable that marks a fleet row's CLI and everything it starts."""

SCRIPT: Final = r"""
import os, signal, sys
watched = set()
for line in sys.stdin:
    line = line.strip()
    if line[:1] == "+":
        watched.add(line[1:])
    elif line[:1] == "-":
        watched.discard(line[1:])
marks = {("%s=%s" % (sys.argv[1], token)).encode() for token in watched if token}
me = os.getpid()
for _ in range(3):
    try:
        names = os.listdir("/proc")
    except OSError:
        break
    for name in names:
        if not name.isdigit() or int(name) == me:
            continue
        try:
            with open("/proc/%s/environ" % name, "rb") as f:
                env = set(f.read().split(b"\0"))
        except OSError:
            continue
        if env & marks:
            try:
                os.kill(int(name), signal.SIGKILL)
            except OSError:
                pass
"""
"""The watcher's code: standard library only, no site packages (``-I -S``), about 10 MB."""


class Reaper:
    """This process's watcher of fleet rows' CLIs (see the module); started on first :meth:`watch`."""

    def __init__(self) -> None:
        self._proc: subprocess.Popen[bytes] | None = None
        self._lock = threading.Lock()
        self._watched: set[str] = set()

    @property
    def pid(self) -> int | None:
        """The watcher's pid once started."""
        return self._proc.pid if self._proc is not None else None

    def watch(self) -> str:
        """A new mark (a token for :data:`MARK`) whose processes are killed if this process
        dies before :meth:`forget`."""
        token = secrets.token_hex(8)
        with self._lock:
            self._watched.add(token)
            self._send(f"+{token}\n")
        return token

    def forget(self, token: str) -> None:
        """The row ended: its processes are no longer killed at this process's death."""
        with self._lock:
            if token in self._watched:
                self._watched.discard(token)
                self._send(f"-{token}\n")

    def _send(self, line: str) -> None:
        stdin = self._stdin()
        if stdin is None:
            return
        try:
            stdin.write(line.encode())
            stdin.flush()
        except OSError:  # the watcher died: start another with the whole list
            self._proc = None
            stdin = self._stdin()
            if stdin is not None:
                with contextlib.suppress(OSError):
                    stdin.write("".join(f"+{token}\n" for token in self._watched).encode())
                    stdin.flush()

    def _stdin(self) -> IO[bytes] | None:
        if self._proc is not None and self._proc.poll() is None:
            return self._proc.stdin
        if not sys.platform.startswith("linux"):  # it reads /proc
            return None
        try:
            self._proc = subprocess.Popen(
                [sys.executable, "-I", "-S", "-c", SCRIPT, MARK],
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,  # out of the kernel's process group: its interrupt is not for us
                close_fds=True,
            )
        except OSError:
            self._proc = None
            return None
        return self._proc.stdin


REAPER: Final = Reaper()
"""This process's watcher (one per kernel or worker process)."""
