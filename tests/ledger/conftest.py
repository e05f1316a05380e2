"""Helpers for the ledger tests: synthetic turns, a scripted environment for the real CLI."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kandev_nb.agent import events as ev
from kandev_nb.agent.tools import normalize_tool_call
from kandev_nb.agent.turn import Turn
from kandev_nb.ledger import ENV_LEDGER, RunLedger
from kandev_nb.testing.model_server import ScriptedModelServer


def cli_env(server: ScriptedModelServer, home: Path) -> dict[str, str]:
    """The child environment that points the real CLI at `server` (DESIGN.md, testing)."""
    try:
        from kandev_nb.testing import scripted_env
    except ImportError:
        return {
            "ANTHROPIC_API_KEY": "sk-ant-scripted",
            "ANTHROPIC_BASE_URL": server.url,
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_TELEMETRY": "1",
            "HOME": str(home),
        }
    return dict(scripted_env(server, home))


def make_turn(
    prompt: str = "hello",
    *,
    session_id: str = "sess-1",
    started_at: dt.datetime | None = None,
    cost_usd: float | None = 0.01,
    total_cost_usd: float | None = None,
    model: str = "claude-test",
    tools: tuple[tuple[str, str | None], ...] = (),
) -> Turn:
    """A Turn folded from synthetic events, as Session.run builds it.

    Args:
        tools: ``(tool name, decision)`` pairs; decision "allow", "deny" or None.
        cost_usd: None leaves the turn unfinished (no Complete event, no stats).
    """
    turn = Turn(prompt=prompt, started_at=started_at or dt.datetime.now(dt.UTC))
    turn.cwd, turn.cli_version = "/tmp/work", "9.9.9"
    turn.add(ev.SessionStatus(session_id=session_id))
    for i, (name, decision) in enumerate(tools):
        tool_id = f"toolu_{i:04d}"
        payload = normalize_tool_call(name, {"command": "true"})
        turn.add(ev.ToolCall(tool_call_id=tool_id, tool_name=name, title=name, normalized=payload), 1.0)
        if decision is not None:
            turn.add(
                ev.PermissionRequest.model_construct(
                    request_id=f"req{i}", tool_name=name, tool_use_id=tool_id, normalized=payload, approval=None
                )
            )
            turn.add(
                ev.PermissionDecided(
                    request_id=f"req{i}",
                    tool_name=name,
                    behavior=decision,  # type: ignore[arg-type]
                    decided_by="policy",
                    waited_ms=5,
                )
            )
        turn.add(
            ev.ToolUpdate(
                tool_call_id=tool_id,
                tool_name=name,
                status="error" if decision == "deny" else "complete",
                normalized=payload,
            ),
            1.25,
        )
    if cost_usd is None:
        return turn
    usage = ev.ModelUsage(input_tokens=100, output_tokens=20, cost_usd=cost_usd, context_window=200_000)
    stats = ev.TurnStats(
        session_id=session_id,
        result_subtype="success",
        cost_usd=cost_usd,
        total_cost_usd=total_cost_usd if total_cost_usd is not None else cost_usd,
        duration_ms=1200,
        duration_api_ms=900,
        num_turns=1 + len(tools),
        input_tokens=100,
        output_tokens=20,
        model_usage={model: usage},
        permission_denials=tuple({"tool_name": n} for n, d in tools if d == "deny"),
    )
    turn.add(ev.Complete(stats=stats, last_message_uuid="uuid-last", session_id=session_id))
    return turn


BACKENDS = ("sqlite", "postgresql")
"""Every ledger test that takes `ledger_url` or `ledger` runs on both."""


@pytest.fixture(autouse=True)
def private_spool(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """KANDEV_NB_SPOOL in the test's temp dir: no test touches the user's real spool."""
    spool = tmp_path / "spool"
    monkeypatch.setenv("KANDEV_NB_SPOOL", str(spool))
    return spool


@pytest.fixture
def ledger_path(tmp_path: Path) -> Path:
    """A fresh SQLite ledger file location (not yet created)."""
    return tmp_path / "data" / "ledger.sqlite"


@pytest.fixture(params=BACKENDS)
def ledger_url(request: pytest.FixtureRequest, ledger_path: Path) -> str:
    """Where a fresh, empty ledger lives: an SQLite file path, or a new PostgreSQL database's
    URL (``postgres_url``, a real server started for the test session)."""
    if request.param == "postgresql":
        return str(request.getfixturevalue("postgres_url"))
    return str(ledger_path)


@pytest.fixture
def ledger(ledger_url: str) -> Iterator[RunLedger]:
    """A RunLedger on a fresh SQLite file, then on a fresh PostgreSQL database."""
    with RunLedger(ledger_url) as led:
        yield led


@pytest.fixture
def no_env_ledger(monkeypatch: pytest.MonkeyPatch) -> None:
    """KANDEV_NB_LEDGER unset for this test."""
    monkeypatch.delenv(ENV_LEDGER, raising=False)


def row_dict(frame: Any, index: int) -> dict[str, Any]:
    """One DataFrame row as a dict of plain values."""
    return {k: (None if _isna(v) else v) for k, v in frame.iloc[index].to_dict().items()}


def _isna(value: Any) -> bool:
    import pandas as pd

    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):
        return False
