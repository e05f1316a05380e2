"""Fixtures for fleet tests: the real CLI against the scripted model, answering per row."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from kandev_nb.agent.session import SessionConfig
from kandev_nb.ledger import RunLedger
from kandev_nb.testing import RecordedRequest, Reply, ScriptedModelServer, text, tool_use

ROW = re.compile(r"ticket (\d+)")


def row_of(request: RecordedRequest) -> int | None:
    """The ticket number in the request's first user message (the row's prompt)."""
    for message in request.messages:
        if message.get("role") == "user":
            content = message.get("content")
            found = ROW.search(content if isinstance(content, str) else repr(content))
            if found:
                return int(found.group(1))
    return None


def answer_per_row(answer: Callable[[int, RecordedRequest], Reply]) -> Callable[[RecordedRequest], Reply]:
    """A callable script entry: `answer(ticket number, request)`."""

    def entry(request: RecordedRequest) -> Reply:
        number = row_of(request)
        assert number is not None, request.last_user_text()
        return answer(number, request)

    return entry


def triage_answer(number: int, request: RecordedRequest) -> Reply:
    """A StructuredOutput call per row (slow enough that rows overlap)."""
    return Reply(
        tool_use("StructuredOutput", {"ticket": number, "priority": "high" if number % 2 else "low"}),
        delay_first_byte=0.4,
    )


@pytest.fixture
def base_config(claude_cli: Path, claude_env: dict[str, str], claude_workdir: Path) -> SessionConfig:
    """Every row's SessionConfig: the pinned CLI against the scripted model."""
    return SessionConfig(
        cwd=claude_workdir, cli_path=claude_cli, env=dict(claude_env), approval_timeout=60, inactivity_timeout=120
    )


@pytest.fixture
def ledger(tmp_path: Path) -> Iterator[RunLedger]:
    """A throwaway SQLite ledger."""
    with RunLedger(tmp_path / "ledger.sqlite") as made:
        yield made


@pytest.fixture
def feed(scripted_model: ScriptedModelServer) -> Callable[..., None]:
    """``feed(entry, n)``: push `n` copies of a callable entry."""

    def push(entry: Any, n: int) -> None:
        scripted_model.push(*[entry for _ in range(n)])

    return push


__all__ = ["answer_per_row", "row_of", "text", "triage_answer"]
