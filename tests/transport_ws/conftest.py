"""Helpers for the WebSocket transport tests: CLI paths, recording factories, event normalising."""

from __future__ import annotations

import re
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from kandev_nb.agent import events as ev
from kandev_nb.testing.clis import pinned_cli
from kandev_nb.wire.transport import LineTooLong, Transport
from kandev_nb.wire.websocket import WebSocketTransport, websocket_transport_factory

HERE = Path(__file__).parent
RELAY = str(HERE / "rechunk_relay.py")
FAKE_CLI = str(HERE / "fake_cli.py")
PATIENT_CLI = str(HERE / "patient_cli.py")
INTRUDER = str(HERE / "intruder.py")
SDK_URL_CLI = "2.1.118"
"""The last pinned CLI that accepts --sdk-url to our host."""


@pytest.fixture
def cli_118() -> Path:
    try:
        return pinned_cli(SDK_URL_CLI)
    except FileNotFoundError as exc:
        pytest.fail(str(exc), pytrace=False)


class Tap(Transport):
    """Passes everything to `inner`, keeping a copy of each line in `seen`."""

    def __init__(self, inner: WebSocketTransport, seen: list[bytes]) -> None:
        self.inner = inner
        self.seen = seen

    async def start(self) -> None:
        await self.inner.start()

    async def send(self, message: dict[str, Any]) -> None:
        await self.inner.send(message)

    async def lines(self) -> AsyncIterator[bytes | LineTooLong]:
        async for line in self.inner.lines():
            if isinstance(line, bytes):
                self.seen.append(line)
            yield line

    async def close(self) -> None:
        await self.inner.close()

    @property
    def exit_code(self) -> int | None:
        return self.inner.exit_code

    @property
    def stderr_tail(self) -> str:
        return self.inner.stderr_tail


class RecordingFactory:
    """A websocket transport factory that keeps the transports it made and the lines read.

    Args:
        wrap: argv prefix put before the CLI's argv (e.g. the re-cutting relay).
        **options: passed to :func:`websocket_transport_factory`.
    """

    def __init__(self, wrap: tuple[str, ...] = (), **options: Any) -> None:
        self.wrap = wrap
        self.transports: list[WebSocketTransport] = []
        self.seen: list[bytes] = []
        self._factory = websocket_transport_factory(**options)

    def __call__(self, argv: list[str], env: dict[str, str], cwd: str) -> Transport:
        transport = self._factory([*self.wrap, *argv], env, cwd)
        assert isinstance(transport, WebSocketTransport)
        self.transports.append(transport)
        return Tap(transport, self.seen)


def relayed(keepalive: float | None = None) -> RecordingFactory:
    """A factory whose CLI runs behind ``rechunk_relay.py`` (the version check is skipped:
    argv[0] is Python)."""
    extra = ("--keepalive", str(keepalive)) if keepalive else ()
    return RecordingFactory(wrap=(sys.executable, RELAY, *extra), check_version=False)


_VOLATILE = {"session_id", "request_id", "uuid", "last_message_uuid", "timestamp", "waited_ms"}
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def normalise(value: Any, paths: dict[str, str]) -> Any:
    """`value` with ids, uuids, timestamps and durations blanked and `paths` replaced.

    Args:
        value: JSON-like data (an event's ``model_dump(mode="json")``).
        paths: literal strings to replace (a temporary directory -> "<cwd>").
    """
    if isinstance(value, dict):
        return {
            k: "<id>" if k in _VOLATILE and v is not None else 0 if k.endswith("_ms") else normalise(v, paths)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [normalise(v, paths) for v in value]
    if isinstance(value, str):
        for old, new in paths.items():
            value = value.replace(old, new)
        return _UUID.sub("<uuid>", value)
    return value


def event_dumps(events: list[ev.AgentEvent], paths: dict[str, str]) -> list[Any]:
    """Each event as normalised JSON (see :func:`normalise`)."""
    return [normalise(e.model_dump(mode="json"), paths) for e in events]


def approve_all(event: ev.AgentEvent) -> None:
    """A consumer that clicks Allow on every permission request."""
    if isinstance(event, ev.PermissionRequest):
        event.approval.allow()


Consumer = Callable[[ev.AgentEvent], None]
