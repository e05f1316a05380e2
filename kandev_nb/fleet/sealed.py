"""Messages between the kernel and a fleet's Dask workers, bound to the run (issue 32).

Every client of a Dask scheduler can read a fleet's topic (``subscribe_topic``), post to it
(``Client.log_event``) and put into its queues (``distributed.Queue``). So each message the
kernel and a row's task exchange is sealed with a key made for the run
(``secrets.token_bytes(32)``, given to the workers inside the task's argument) and opened
before anything acts on it: before a card is drawn, an answer applied or a rule changed.

A sealed message is ``{"body": <canonical JSON>, "mac": <hex HMAC-SHA256 of body>}``; the body
names the run, the direction, the row, the attempt, the kind and a sequence number (per
sender), so a message cannot be moved to another run, row, attempt or direction, nor
replayed. A message that fails raises :class:`Forged`; the receiver drops and reports it.

This keeps a client that does not hold the key from acting as the kernel or a worker; it
does not keep it out of the cluster (any client may run code on the workers, where the key
is): only a cluster that takes TLS clients with a certificate does
(:func:`kandev_nb.fleet.cluster_checks.open_to_others`).

>>> kernel = Channel(new_key(), "run1", KERNEL)
>>> worker = Channel(kernel.key, "run1", WORKER)
>>> wire = kernel.seal("answer", "T1", "a1", request_id="r1")
>>> worker.open(wire, row="T1", attempt="a1")["request_id"]
'r1'
>>> try:
...     worker.open(wire, row="T1", attempt="a1")
... except Forged as exc:
...     print(exc)
replayed (sequence 1 seen)
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import itertools
import json
import secrets
from typing import Any, Final

from kandev_nb.errors import KandevError

__all__ = ["KERNEL", "STATE", "WORKER", "Channel", "Forged", "claimed_kind", "new_key"]

KERNEL: Final = "kernel->worker"
"""The direction of what the kernel sends (answers, rules, interrupts)."""

WORKER: Final = "worker->kernel"
"""The direction of what a row's task sends (start, ask, batch, dropped)."""

STATE: Final = "state"
"""The "direction" of a stored value (a row's ``distributed.Variable``): written by the kernel
or a worker, read by a later attempt; never a message."""

MAX_SEEN: Final = 4096
"""Sequence numbers remembered per row attempt against replays (kernel -> worker)."""


class Forged(KandevError, ValueError):
    """A message this run did not send (no seal, a wrong seal, another run, row, attempt or
    direction, or a replay); ``str(exc)`` says which."""


def new_key() -> bytes:
    """A fresh 32-byte key for one run."""
    return secrets.token_bytes(32)


def canonical(body: dict[str, Any]) -> str:
    """`body` as canonical JSON (sorted keys, no spaces, ASCII).

    Raises:
        TypeError, ValueError: `body` is not plain JSON (a NaN, an object).
    """
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False)


def claimed_kind(wire: Any) -> str:
    """The kind a dropped message claims to be (``"answer"``...), for its report; "?" if none."""
    kind = wire.get("kind") if isinstance(wire, dict) else None
    if kind is None and isinstance(wire, dict) and isinstance(wire.get("body"), str):
        with contextlib.suppress(ValueError, AttributeError):
            kind = json.loads(wire["body"]).get("kind")
    return str(kind)[:32] if kind is not None else "?"


class Channel:
    """One end of a run's channel: seals what it sends in direction `outgoing` and opens
    what comes the other way.

    Args:
        key: the run's key (:func:`new_key`).
        run: the run's id (``ClusterFleet.fleet_id``).
        outgoing: :data:`KERNEL` in the kernel, :data:`WORKER` on a worker.
        ordered: whether messages arrive in the order they were sealed (a worker's topic
            messages do, through Dask's batched streams): then each row attempt's sequence
            must rise; else (the kernel's puts may pass each other) it must be new.
    """

    def __init__(self, key: bytes, run: str, outgoing: str, *, ordered: bool | None = None) -> None:
        if len(key) < 16:
            raise ValueError("a channel needs the run's key (16 bytes or more)")
        self.key, self.run, self.outgoing = key, run, outgoing
        self.incoming = WORKER if outgoing == KERNEL else KERNEL
        self.ordered = outgoing == KERNEL if ordered is None else ordered
        self._seq = itertools.count(1)
        self._last: dict[tuple[str, str], int] = {}
        self._seen: dict[tuple[str, str], set[int]] = {}
        self._floor: dict[tuple[str, str], int] = {}

    def _mac(self, text: str) -> str:
        return hmac.new(self.key, text.encode(), hashlib.sha256).hexdigest()

    def seal(self, kind: str, row: str, attempt: str, **fields: Any) -> dict[str, str]:
        """``{"body": ..., "mac": ...}`` of one message with `fields` (plain JSON values).

        Raises:
            TypeError, ValueError: a field is not plain JSON.
        """
        body = {"run": self.run, "dir": self.outgoing, "row": row, "attempt": attempt, "kind": kind}
        text = canonical({**fields, **body, "seq": next(self._seq)})
        return {"body": text, "mac": self._mac(text)}

    def open(self, wire: Any, *, row: str | None = None, attempt: str | None = None) -> dict[str, Any]:
        """The body of a sealed message (``run``, ``dir``, ``row``, ``attempt``, ``kind``,
        ``seq`` and its fields), checked against `row` and `attempt` when given.

        Raises:
            Forged: not sealed with the run's key, or for another run, direction, row or
                attempt, or seen before.
        """
        if not isinstance(wire, dict) or not isinstance(wire.get("body"), str) or not isinstance(wire.get("mac"), str):
            raise Forged("not sealed")
        if not hmac.compare_digest(self._mac(wire["body"]), wire["mac"]):
            raise Forged("wrong seal")
        body = json.loads(wire["body"])
        if body.get("run") != self.run or body.get("dir") != self.incoming:
            raise Forged("sealed for another run or direction")
        if (row is not None and body.get("row") != row) or (attempt is not None and body.get("attempt") != attempt):
            raise Forged("sealed for another row or attempt")
        self._check_replay((str(body.get("row")), str(body.get("attempt"))), body.get("seq"))
        return dict(body)

    def seal_value(self, name: str, value: dict[str, Any]) -> dict[str, str]:
        """`value` (plain JSON) sealed for the stored slot `name` of this run (a row's
        ``distributed.Variable``): :meth:`open_value` opens it with the same name only.

        Raises:
            TypeError, ValueError: `value` is not plain JSON.
        """
        text = canonical({"run": self.run, "dir": STATE, "kind": "value", "name": name, "value": value})
        return {"body": text, "mac": self._mac(text)}

    def open_value(self, wire: Any, name: str) -> dict[str, Any]:
        """The value :meth:`seal_value` sealed for `name` in this run.

        Raises:
            Forged: not sealed with the run's key, or for another run or slot, or not a value.
        """
        if not isinstance(wire, dict) or not isinstance(wire.get("body"), str) or not isinstance(wire.get("mac"), str):
            raise Forged("not sealed")
        if not hmac.compare_digest(self._mac(wire["body"]), wire["mac"]):
            raise Forged("wrong seal")
        body = json.loads(wire["body"])
        if body.get("run") != self.run or body.get("dir") != STATE or body.get("name") != name:
            raise Forged("sealed for another run or slot")
        value = body.get("value")
        if not isinstance(value, dict):
            raise Forged("not a stored value")
        return value

    def _check_replay(self, where: tuple[str, str], seq: Any) -> None:
        if not isinstance(seq, int):
            raise Forged("no sequence number")
        if self.ordered:
            if seq <= self._last.get(where, 0):
                raise Forged(f"replayed (sequence {seq} after {self._last[where]})")
            self._last[where] = seq
            return
        seen = self._seen.setdefault(where, set())
        if seq in seen or seq <= self._floor.get(where, 0):
            raise Forged(f"replayed (sequence {seq} seen)")
        if len(seen) >= MAX_SEEN:  # forget the oldest, and refuse everything up to it
            self._floor[where] = min(seen)
            seen.discard(self._floor[where])
        seen.add(seq)
