"""A recording widget comm: count what the widgets would send to the browser, with no kernel.

Like ipywidgets' own test ``DummyComm``, but it keeps every comm_open, comm_msg and
comm_close payload with its size, and can play the frontend's part (a button click, a
custom message). Used by the tests and by ``python -m kandev_nb.bench ui``.

>>> with record_comms() as rec:                       # doctest: +SKIP
...     view = TurnView("hi"); view.handle(event)
...     rec.total_bytes()

Sizes are the compact JSON of the comm ``data`` (what the widget protocol puts in the
message's ``content.data``) plus binary buffers, in bytes. The Jupyter message envelope
around it (header, parent header, signature: about 600-800 bytes per message over ZMQ and
the notebook server's WebSocket) is not included; :meth:`Recorder.envelope_estimate` adds a
fixed per-message figure when you want it.
"""

from __future__ import annotations

import contextlib
import itertools
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import ipywidgets
import ipywidgets.comm as _ipw_comm

__all__ = ["ENVELOPE_BYTES", "CommMessage", "Recorder", "RecordingComm", "record_comms"]

ENVELOPE_BYTES = 700
"""A typical Jupyter message envelope around a comm payload, in bytes (measured order)."""


@dataclass(frozen=True)
class CommMessage:
    """One message: `kind` is "open", "msg" or "close"; `size` = JSON bytes + buffer bytes."""

    comm_id: str
    kind: str
    data: dict[str, Any]
    size: int

    @property
    def method(self) -> str:
        """The widget protocol `method` ("update", "custom", ...) or the kind for open/close."""
        return str(self.data.get("method", self.kind))


def _size(data: Any, buffers: Any) -> int:
    n = len(json.dumps(data, separators=(",", ":"), ensure_ascii=False, default=str).encode())
    for b in buffers or ():
        n += len(memoryview(b).cast("B"))
    return n


_ids = itertools.count(1)


class RecordingComm:
    """Stands in for ``comm.create_comm``'s comm; records into its :class:`Recorder`."""

    kernel = "recording"

    def __init__(
        self, recorder: Recorder, data: Any = None, buffers: Any = None, comm_id: str | None = None, **_: Any
    ) -> None:
        self.comm_id = comm_id or f"rec-{next(_ids)}"
        self.recorder = recorder
        self._handlers: list[Callable[[dict[str, Any]], None]] = []
        self._closed = False
        recorder._add(CommMessage(self.comm_id, "open", data or {}, _size(data or {}, buffers)))

    def send(self, data: Any = None, metadata: Any = None, buffers: Any = None) -> None:
        self.recorder._add(CommMessage(self.comm_id, "msg", data or {}, _size(data or {}, buffers)))

    def close(self, data: Any = None, metadata: Any = None, buffers: Any = None, deleting: bool = False) -> None:
        if not self._closed:
            self._closed = True
            self.recorder._add(CommMessage(self.comm_id, "close", data or {}, _size(data or {}, buffers)))

    def on_msg(self, callback: Callable[[dict[str, Any]], None]) -> None:
        self._handlers.append(callback)

    def on_close(self, callback: Any) -> None:
        pass

    def receive(self, data: dict[str, Any], buffers: list[bytes] | None = None) -> None:
        """Deliver a frontend -> kernel comm message (``content.data`` = `data`)."""
        msg = {"content": {"comm_id": self.comm_id, "data": data}, "buffers": buffers or []}
        for handler in list(self._handlers):
            handler(msg)


@dataclass
class Recorder:
    """Everything sent while :func:`record_comms` was active, in order.

    With ``keep=False`` only the totals are kept (:attr:`sent`, :attr:`sent_bytes`), not the
    messages: a long run (a benchmark's thousand-row fleet) measured without the recording
    itself growing the process; :meth:`total_bytes` and :meth:`count` then read the totals.
    """

    messages: list[CommMessage] = field(default_factory=list)
    comms: dict[str, RecordingComm] = field(default_factory=dict)
    keep: bool = True
    sent: int = 0
    sent_bytes: int = 0

    def _add(self, message: CommMessage) -> None:
        self.sent += 1
        self.sent_bytes += message.size
        if self.keep:
            self.messages.append(message)

    def total_bytes(self, since: int = 0) -> int:
        """Sum of message sizes from index `since` on, in bytes."""
        if not self.keep:
            return self.sent_bytes
        return sum(m.size for m in self.messages[since:])

    def count(self, since: int = 0, kind: str | None = None) -> int:
        """Number of messages from index `since` on (optionally only `kind`)."""
        if not self.keep and kind is None:
            return self.sent
        return sum(1 for m in self.messages[since:] if kind is None or m.kind == kind)

    def envelope_estimate(self, since: int = 0) -> int:
        """:meth:`total_bytes` plus :data:`ENVELOPE_BYTES` per message, in bytes."""
        return self.total_bytes(since) + ENVELOPE_BYTES * self.count(since)

    def comm_of(self, widget: ipywidgets.Widget) -> RecordingComm:
        """The recording comm of `widget` (to :meth:`RecordingComm.receive` frontend messages)."""
        return self.comms[widget.model_id]

    def click(self, button: ipywidgets.Button) -> None:
        """Play a frontend click on `button`, as the browser sends it."""
        self.comm_of(button).receive({"method": "custom", "content": {"event": "click"}})

    def custom(self, widget: ipywidgets.Widget, content: dict[str, Any]) -> None:
        """Play a frontend custom message (an anywidget's ``model.send(content)``) to `widget`."""
        self.comm_of(widget).receive({"method": "custom", "content": content})


@contextlib.contextmanager
def record_comms(*, keep: bool = True) -> Iterator[Recorder]:
    """Patch ipywidgets' comm factory so new widgets record instead of sending.

    Widgets created inside the block keep their recording comm afterwards (sends after the
    block are still recorded in the same :class:`Recorder`). `keep`: keep every message
    (False: only the count and the bytes).
    """
    recorder = Recorder(keep=keep)
    original = _ipw_comm.create_comm

    def create(*args: Any, **kwargs: Any) -> RecordingComm:
        c = RecordingComm(recorder, *args, **kwargs)
        recorder.comms[c.comm_id] = c
        return c

    _ipw_comm.create_comm = create
    try:
        yield recorder
    finally:
        _ipw_comm.create_comm = original
