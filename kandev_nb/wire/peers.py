"""Who holds a local TCP connection: the Linux ``/proc`` lookups behind the WebSocket
transport's peer check (:mod:`kandev_nb.wire.websocket`).

A connection to the kernel's server is admitted only if its socket (found in
``/proc/net/tcp{,6}`` by port) belongs to the kernel's uid and is open in the CLI process the
transport launched or one of its descendants. On systems without ``/proc`` every lookup
finds nothing (None / empty), and the caller decides what that means.
"""

from __future__ import annotations

import contextlib
import os

__all__ = ["descendants", "descendants_by_stat", "dial_host", "socket_owner", "sockets_of"]


def socket_owner(peer_port: int, server_port: int | None) -> tuple[int, int] | None:
    """``(uid, inode)`` of the local TCP socket on `peer_port` connected to `server_port`,
    from ``/proc/net/tcp`` and ``/proc/net/tcp6``; None if not found."""
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table, encoding="ascii") as handle:
                rows = handle.read().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            fields = row.split()
            if len(fields) < 10:
                continue
            local, remote = fields[1], fields[2]
            if int(local.rsplit(":", 1)[1], 16) == peer_port and (
                server_port is None or int(remote.rsplit(":", 1)[1], 16) == server_port
            ):
                return int(fields[7]), int(fields[9])
    return None


def descendants(pid: int) -> list[int]:
    """`pid` and its descendants, by ``/proc/<pid>/task/<tid>/children`` (or, on kernels
    without that file, by the parent pid in every ``/proc/<pid>/stat``)."""
    if not os.path.exists(f"/proc/{pid}/task/{pid}/children"):
        return descendants_by_stat(pid)
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        with contextlib.suppress(OSError):
            for task in os.listdir(f"/proc/{current}/task"):
                with contextlib.suppress(OSError), open(f"/proc/{current}/task/{task}/children") as handle:
                    todo.extend(int(c) for c in handle.read().split())
    return found


def descendants_by_stat(pid: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            with contextlib.suppress(OSError, ValueError, IndexError), open(f"/proc/{entry}/stat") as handle:
                ppid = int(handle.read().rsplit(")", 1)[1].split()[1])  # the name may hold spaces
                children.setdefault(ppid, []).append(int(entry))
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        todo.extend(children.get(current, []))
    return found


def sockets_of(pid: int) -> set[int]:
    """The socket inodes open in `pid` and its descendants (``/proc/<pid>/fd``)."""
    inodes: set[int] = set()
    for process in descendants(pid):
        with contextlib.suppress(OSError):
            for fd in os.listdir(f"/proc/{process}/fd"):
                with contextlib.suppress(OSError):
                    target = os.readlink(f"/proc/{process}/fd/{fd}")
                    if target.startswith("socket:["):
                        inodes.add(int(target[8:-1]))
    return inodes


def dial_host(host: str) -> str:
    """The host part of the URL the CLI dials: a wildcard bind is dialled on loopback."""
    host = {"0.0.0.0": "127.0.0.1", "::": "::1", "": "127.0.0.1"}.get(host, host)
    return f"[{host}]" if ":" in host else host
