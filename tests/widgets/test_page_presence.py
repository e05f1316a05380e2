"""How the kernel tells a page that shows its widgets from a headless run (issue 37 point 8),
and that a tab is never left without its cards: the notebook bridge's "present" and hello
messages as its page code sends them (``src/widgets/bridge_stub.ts``, ``bridge.ts``), timed."""

from __future__ import annotations

import asyncio
import contextvars
import time
from typing import Any

import pytest

from kandev_nb.agent import events as ev
from kandev_nb.notebook import bridge as bridge_module
from kandev_nb.notebook.bridge import LOAD_S, QUEUED_GRACE_S, QUIET_AFTER_S, NotebookBridge
from kandev_nb.notebook.widgets.static_view import StaticView

PRESENT = {"kind": "present"}
NO_DOCUMENT = {"kind": "hello", "view": "v-1", "ok": False, "reason": "no notebook document"}


def say(b: NotebookBridge, message: dict[str, Any]) -> None:
    b._on_msg(None, message, [])


def aged(b: NotebookBridge, seconds: float) -> NotebookBridge:
    """Make `b` look `seconds` old (its creation moved back on the monotonic clock)."""
    b._created -= seconds
    return b


async def timed(coro: Any) -> tuple[Any, float]:
    started = time.monotonic()
    result = await coro
    return result, time.monotonic() - started


async def test_a_page_that_says_present_late_is_still_a_page() -> None:
    """A Run All right after ``%load_ext`` on a busy page: "present" comes 2 s after the bridge was
    made (the old wait ended at 1.5 s and the tab's turn lost its cards)."""
    b = NotebookBridge()
    asyncio.get_running_loop().call_later(2.0, say, b, PRESENT)
    shown, took = await timed(b.page_shown())
    assert shown is True
    assert 1.9 < took < QUIET_AFTER_S


async def test_a_nearly_quiet_bridge_still_waits_for_queued_messages() -> None:
    """A bridge 0.05 s short of QUIET_AFTER_S still gets QUEUED_GRACE_S for messages queued
    while cells ran (the old deadline was 0.05 s)."""
    b = aged(NotebookBridge(), QUIET_AFTER_S - 0.05)
    asyncio.get_running_loop().call_later(0.12, say, b, PRESENT)
    shown, _ = await timed(b.page_shown())
    assert shown is True


async def test_headless_is_told_after_the_grace_once_the_bridge_is_old() -> None:
    b = aged(NotebookBridge(), QUIET_AFTER_S + 1)
    shown, took = await timed(b.page_shown())
    assert shown is False
    assert QUEUED_GRACE_S - 0.02 <= took < QUEUED_GRACE_S + 1.0


async def test_a_jupyterlab_page_on_the_lab_channel_counts_as_a_page() -> None:
    b = aged(NotebookBridge(), QUIET_AFTER_S + 1)
    assert await b.page_shown(lambda: True) is True
    assert b.present is False  # the bridge's own page code has not run (yet)


async def test_a_page_without_a_notebook_is_not_waited_for_forever() -> None:
    """A page said "present" long ago and its whole bridge never said hello: find_view no longer
    waits LOAD_S on every call (it did: every turn of the kernel test harness paid 10 s)."""
    b = aged(NotebookBridge(), QUIET_AFTER_S + 1)
    say(b, PRESENT)
    assert b._present_at is not None
    b._present_at -= LOAD_S + 1
    view, took = await timed(b.find_view())
    assert view is None
    assert took < 0.5


async def test_a_page_loading_the_bridge_is_waited_for_until_load_s_after_present() -> None:
    b = aged(NotebookBridge(), QUIET_AFTER_S + 1)
    say(b, PRESENT)
    assert b._present_at is not None
    b._present_at -= LOAD_S - 2.2  # 2.2 s of LOAD_S left: more than PING_TIMEOUT_S
    loop = asyncio.get_running_loop()
    loop.call_later(2.0, say, b, {"kind": "hello", "view": "v-2", "ok": True, "path": "a.ipynb"})
    view, took = await timed(b.find_view())
    assert view == "v-2"
    assert 1.9 < took < 2.6


async def test_a_hello_without_a_notebook_ends_the_loading_wait() -> None:
    b = aged(NotebookBridge(), QUIET_AFTER_S + 1)
    say(b, PRESENT)
    say(b, NO_DOCUMENT)  # VS Code, Colab: widgets, no notebook document
    view, took = await timed(b.find_view())
    assert view is None
    assert took < 0.5


class _Recorder:
    """A stand-in live view that records what it was shown (the real TurnView needs a kernel)."""

    def __init__(self, cell: str) -> None:
        self.cell = cell
        self._handle = f"display of {cell}"  # a TurnView's DisplayHandle: Undo redraws through it
        self.events: list[ev.AgentEvent] = []
        self.finished_with: Any = None

    def handle(self, event: ev.AgentEvent) -> None:
        self.events.append(event)

    def finish(self, turn: Any) -> dict[str, Any]:
        self.finished_with = turn
        return {"text/plain": "live"}

    def close(self) -> None:
        pass


async def test_a_static_view_becomes_live_as_soon_as_a_page_says_present(monkeypatch: pytest.MonkeyPatch) -> None:
    """No later event is needed (an approval waiting sends none), and the live view is made in
    the context of the cell that made the view (its output goes to that cell), not in the
    context the page's message arrived in."""
    b = NotebookBridge()
    monkeypatch.setattr(bridge_module, "_bridge", b)
    made: list[_Recorder] = []
    cell: contextvars.ContextVar[str] = contextvars.ContextVar("cell", default="none")

    def live_later() -> Any:
        made.append(_Recorder(cell.get()))
        return made[-1]

    cell.set("In [2]")
    view = StaticView(None, None, 0.0)
    view.watch(live_later)
    first, second = ev.MessageChunk(text="a"), ev.MessageChunk(text="b")
    view.handle(first)
    assert made == [] and not view.live  # headless so far: nothing shown
    contextvars.Context().run(say, b, PRESENT)  # the comm message, in a context of its own
    await asyncio.sleep(0.01)
    assert len(made) == 1 and view.live
    assert made[0].cell == "In [2]"
    assert view._handle == "display of In [2]"  # Undo (turn_actions.show) reaches the live view's output
    assert made[0].events == [first]  # what came before, replayed
    view.handle(second)
    assert made[0].events == [first, second]
    assert view.finish("the turn") == {"text/plain": "live"}  # type: ignore[arg-type]
    assert made[0].finished_with == "the turn"
    assert b.on_present == []  # it stopped watching


async def test_a_page_already_present_makes_the_view_live_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    b = NotebookBridge()
    monkeypatch.setattr(bridge_module, "_bridge", b)
    say(b, PRESENT)
    made: list[_Recorder] = []
    view = StaticView(None, None, 0.0)
    view.watch(lambda: made.append(_Recorder("")) or made[-1])  # type: ignore[func-returns-value]
    await asyncio.sleep(0.01)
    assert len(made) == 1


async def test_a_static_view_without_a_page_stays_static(monkeypatch: pytest.MonkeyPatch) -> None:
    b = NotebookBridge()
    monkeypatch.setattr(bridge_module, "_bridge", b)
    made: list[Any] = []
    view = StaticView(None, None, 0.0)
    view.watch(lambda: made.append(1))  # type: ignore[arg-type, func-returns-value]
    for text in ("a", "b"):
        view.handle(ev.MessageChunk(text=text))
    await asyncio.sleep(0.01)
    assert made == [] and view.upgraded is None
    view.close()
    say(b, PRESENT)  # after the turn: nothing is made
    await asyncio.sleep(0.01)
    assert made == [] and b.on_present == []
