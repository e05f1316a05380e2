"""Fixtures for the widget tests: a recording comm (no kernel) and event builders."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from kandev_nb.notebook.widgets.recording import Recorder, record_comms


@pytest.fixture
def rec() -> Iterator[Recorder]:
    """Every widget created in the test records its comm messages here."""
    with record_comms() as recorder:
        yield recorder


class Clock:
    """A settable monotonic clock, in seconds."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()
