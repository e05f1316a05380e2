"""Streaming text: an append-only anywidget and the throttle that coalesces deltas.

Why an anywidget with an "append" message (measured by ``python -m kandev_nb.bench ui``):

* Bytes: each update carries only the new characters, so bytes over the comm grow linearly
  with the answer (about 1.1-1.5 bytes per byte of text plus a fixed cost per update). The
  alternative with stock widgets (finished paragraphs frozen into fixed ``HTML`` widgets,
  only the last one re-sent) re-sends the whole current block on every update: a long code
  block, a table or a long paragraph still grows with the square of its length, and every
  frozen paragraph costs a comm_open with its layout and style models.
* The renderer: the client keeps finished Markdown blocks and re-renders only the open
  block after the last block boundary (found by a resumable scan that reads each line
  once); an open fenced code block is appended as plain lines and highlighted once, in an
  idle callback, when it closes; a table is rendered row by row. So an update costs the
  new text, not the answer so far (``benchmarks/bench_browser.py`` measures it in
  JupyterLab). `marked` and highlight.js are bundled into one ESM file
  (``kandev_nb/static/kandev_lib.js``, built from ``src/widgets/kandev_lib.ts``). That file is
  shipped ONCE per kernel by the :class:`KandevLib` widget; each text segment carries only a
  0.7 KB loader.
* The final rendering is exact anyway: when the turn ends, the view is replaced by the
  static rendering of the whole text (markdown-it-py + Pygments), see
  :mod:`kandev_nb.render.static`.

Protocol of :class:`StreamText` (custom messages):

* kernel -> view ``{"type": "append", "at": N, "text": s}``: `s` starts at offset N.
* view -> kernel ``{"type": "sync", "have": N}`` when a view mounts or sees a gap; the
  kernel answers ``{"type": "reset", "text": <all sent so far>}`` when N differs. This
  serves late views (a cell output scrolled into view, a page reload mid-turn).
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from typing import Any

import anywidget
import traitlets

from kandev_nb.notebook.page_code import STATIC, page_file, page_text
from kandev_nb.notebook.widget_messages import StreamAppend, StreamReset, StreamSync, read
from kandev_nb.render import theme as _theme
from kandev_nb.render.reveal import displayable

__all__ = ["ASSETS", "KandevLib", "StreamText", "Throttle", "kandev_lib", "shed_lib"]

ASSETS = STATIC
"""The built page code (:data:`kandev_nb.notebook.page_code.STATIC`)."""


class KandevLib(anywidget.AnyWidget):
    """The client library (Markdown renderer, highlighter, CSS), one instance per kernel.

    Never displayed: creating its model in the frontend runs its module, which publishes
    ``globalThis.__kandevNb`` for the :class:`StreamText` views, and loads the CSS:
    ``style/widgets/kandev.css`` and the code/table classes of the HTML builders
    (:func:`kandev_nb.render.theme.stylesheet`).
    """

    _esm = page_file("kandev_lib.js")  # src/widgets/kandev_lib.ts
    _css = page_text("kandev.css") + "\n" + _theme.stylesheet() + "\n"


_lib: KandevLib | None = None
_lib_lock = threading.Lock()


def shed_lib() -> None:
    """Empty the kernel's :class:`KandevLib` code (``_esm``, ``_css``: about 160 KB) for a
    headless run, which saves every widget state it saw in the notebook and has no page to
    run it in; the library stays open (a turn after this one sends nothing again)."""
    with _lib_lock:
        if _lib is not None and _lib.comm is not None:
            for name in ("_esm", "_css"):
                if getattr(_lib, name):
                    setattr(_lib, name, "")


def kandev_lib() -> KandevLib:
    """The kernel's :class:`KandevLib` instance (created on first use, re-created if closed)."""
    global _lib
    with _lib_lock:
        if _lib is None or _lib.comm is None:
            _lib = KandevLib()
        return _lib


class StreamText(anywidget.AnyWidget):
    """Append-only text rendered as Markdown (``mode="markdown"``) or plain text in the browser.

    Python keeps the full text in :attr:`text`; :meth:`append` buffers, :meth:`flush` sends
    what is buffered as one "append" message. Thread-safe: the frontend's "sync" request may
    arrive on another thread than the event loop's.
    """

    _esm = page_file("stream_text.js")  # src/widgets/stream_text.ts
    mode = traitlets.Unicode("markdown").tag(sync=True)
    lib = traitlets.Unicode("").tag(sync=True)

    def __init__(self, mode: str = "markdown", **kwargs: Any) -> None:
        super().__init__(mode=mode, lib=kandev_lib().model_id, **kwargs)
        self._sent_parts: list[str] = []
        self._pending: list[str] = []
        self._sent = 0
        self._pending_len = 0
        self._lock = threading.Lock()
        self.updates = 0
        self.on_msg(self._on_frontend)

    @property
    def text(self) -> str:
        """Everything appended so far, sent or not."""
        with self._lock:
            return "".join(self._sent_parts) + "".join(self._pending)

    @property
    def pending(self) -> int:
        """Characters appended but not yet sent."""
        return self._pending_len

    def append(self, s: str) -> None:
        """Buffer `s` for the next :meth:`flush` (O(1): chunks are joined when sent); a lone
        surrogate in it is sent as U+FFFD (:func:`~kandev_nb.render.reveal.displayable`)."""
        if s:
            s = displayable(s)
            with self._lock:
                self._pending.append(s)
                self._pending_len += len(s)

    def flush(self) -> bool:
        """Send the buffered text as one "append" message. Returns True if something was sent."""
        with self._lock:
            if not self._pending_len:
                return False
            chunk = "".join(self._pending)
            self._pending.clear()
            at = self._sent
            self._sent += self._pending_len
            self._pending_len = 0
            self._sent_parts.append(chunk)
            self.updates += 1
        self.send(StreamAppend(at=at, text=chunk).model_dump())
        return True

    def _on_frontend(self, _widget: Any, content: Any, _buffers: Any) -> None:
        sync = read(StreamSync, content) if isinstance(content, dict) else None
        if sync is None:
            return
        with self._lock:
            if sync.have == self._sent:
                return
            sent = "".join(self._sent_parts)
        self.send(StreamReset(text=sent).model_dump())


class Throttle:
    """Coalesces text updates: the first at once, then at most one per `interval_s`.

    Args:
        flush: sends everything buffered (called on the event loop); returns True if it
            sent anything (only then does the interval restart).
        interval_s: minimum seconds between two flushes (0.05 s: at most 20 updates/s).
        min_chars: below this many buffered characters, wait up to `max_wait_s` instead
            of `interval_s`: a slow stream then sends fewer, fuller messages, so the fixed
            cost of a message (its JSON and the Jupyter envelope) stays small per byte.
        max_wait_s: the longest a buffered character waits (0.25 s).
        clock: monotonic seconds (injectable for simulated time in tests and benchmarks).

    With a running asyncio loop a timer flushes what is buffered when its wait is over;
    without one (tests, replays) the next :meth:`poke` after the wait does, or
    :meth:`flush_now`.
    """

    def __init__(
        self,
        flush: Callable[[], bool],
        interval_s: float = 0.05,
        *,
        min_chars: int = 256,
        max_wait_s: float = 0.25,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._flush = flush
        self.interval_s = interval_s
        self.min_chars = min_chars
        self.max_wait_s = max(max_wait_s, interval_s)
        self.clock = clock
        self._last = float("-inf")
        self._timer: asyncio.TimerHandle | None = None
        self._timer_at = float("inf")

    def poke(self, pending: int) -> None:
        """`pending` characters are buffered: flush now if their wait is over, else make sure
        a timer will."""
        now = self.clock()
        big = pending >= self.min_chars
        due = self._last + (self.interval_s if big else self.max_wait_s)
        if now >= due:
            self.flush_now()
            return
        if self._timer is not None and self._timer_at <= due:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        if self._timer is not None:
            self._timer.cancel()
        self._timer_at = due
        self._timer = loop.call_later(due - now, self._on_timer)

    def _on_timer(self) -> None:
        self._timer = None
        self._timer_at = float("inf")
        self.flush_now()

    def flush_now(self) -> None:
        """Flush at once (before any non-text event, and at the end of the turn)."""
        self.cancel()
        if self._flush():
            self._last = self.clock()

    def cancel(self) -> None:
        """Drop a scheduled flush (the view is closing)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
            self._timer_at = float("inf")
