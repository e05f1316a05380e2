"""The kernel harness rebuilds streamed text as the browser's view does (kandev_lib.ts `mount`)."""

from __future__ import annotations

from tests.kernel.kernel_harness import WidgetModel


def test_appends_at_the_end_are_joined() -> None:
    view = WidgetModel("c")
    assert view.on_custom({"type": "append", "at": 0, "text": "Hello"}) is None
    assert view.on_custom({"type": "append", "at": 5, "text": ", world"}) is None
    assert view.live_text == "Hello, world" and view.gaps == []


def test_an_overlapping_append_adds_only_its_new_part() -> None:
    view = WidgetModel("c")
    view.on_custom({"type": "append", "at": 0, "text": "abc"})
    view.on_custom({"type": "append", "at": 1, "text": "bcdef"})
    assert view.live_text == "abcdef"


def test_a_gap_asks_for_a_sync_and_a_reset_replaces_the_text() -> None:
    view = WidgetModel("c")
    view.on_custom({"type": "append", "at": 0, "text": "ab"})
    assert view.on_custom({"type": "append", "at": 5, "text": "zz"}) == 2  # the browser sends sync have=2
    assert view.live_text == "ab" and view.gaps == [5]
    view.on_custom({"type": "reset", "text": "abcdezz"})
    assert view.live_text == "abcdezz"


def test_other_custom_messages_leave_the_text_alone() -> None:
    view = WidgetModel("c")
    assert view.on_custom({"event": "click"}) is None and view.on_custom("nonsense") is None
    assert view.live_text is None
