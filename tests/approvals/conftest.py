"""Fixtures for approval tests: a Session on the real CLI against the scripted model."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from kandev_nb.agent.session import Session, SessionConfig
from kandev_nb.wire.transport import StdioTransport


class RecordingTransport(StdioTransport):
    """A StdioTransport that also keeps every message we send to the CLI."""

    def __init__(self, argv: list[str], env: dict[str, str] | None, cwd: str | os.PathLike[str] | None) -> None:
        super().__init__(argv, env, cwd)
        self.sent: list[dict[str, Any]] = []

    async def send(self, message: dict[str, Any]) -> None:
        self.sent.append(message)
        await super().send(message)

    def answers_to(self, request_id: str) -> list[dict[str, Any]]:
        """The control_responses we sent for the CLI's request `request_id`."""
        return [
            m
            for m in self.sent
            if m.get("type") == "control_response" and m["response"].get("request_id") == request_id
        ]


SessionMaker = Callable[..., Session]


@pytest.fixture
async def make_session(
    claude_cli: Path, claude_env: dict[str, str], claude_workdir: Path
) -> AsyncIterator[SessionMaker]:
    """``make_session(**config)``: a Session on `claude_cli` in `claude_workdir`, closed after the test.

    Its transports are :class:`RecordingTransport` (``session.transport.sent``).
    """
    made: list[Session] = []

    def make(**overrides: Any) -> Session:
        config = SessionConfig(
            cwd=claude_workdir, cli_path=claude_cli, env=dict(claude_env), approval_timeout=60, inactivity_timeout=120
        )
        overrides.setdefault("transport_factory", RecordingTransport)
        session = Session(config, **overrides)
        made.append(session)
        return session

    yield make
    for session in made:
        await session.close()


def sent(session: Session) -> RecordingTransport:
    """The session's live transport, as a RecordingTransport."""
    assert isinstance(session.transport, RecordingTransport)
    return session.transport
