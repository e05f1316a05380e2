"""Fixtures shared by every test folder."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from kandev_nb.notebook import state as notebook_state_module
from kandev_nb.notebook.state import NotebookState


@pytest.fixture
def notebook_state() -> Iterator[NotebookState]:
    """A fresh :class:`NotebookState` (settings, sessions, turns, spend) for one test; the
    one before it is put back afterwards, so nothing leaks between tests."""
    before = notebook_state_module._current
    state = notebook_state_module.install(NotebookState())
    try:
        yield state
    finally:
        notebook_state_module._current = before
