"""A tool's own run time and its approval's wait are recorded apart (issue 34, point 8): the
real CLI runs ``sleep 0.3`` after a person took 4 s to click Allow; the ledger's
``tool_calls().duration_ms`` is the command's time, ``approval_wait_ms`` the person's."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from kandev_nb.agent import events as ev
from kandev_nb.agent.session import Session, SessionConfig
from kandev_nb.ledger import RunLedger
from kandev_nb.render.html import fmt_ms
from kandev_nb.render.static import render_html
from kandev_nb.testing import Reply, ScriptedModelServer, text, tool_use
from tests.widgets.test_static import plain

pytestmark = pytest.mark.timeout(120)

THINK_S = 4.0
"""The person's thinking time, s: well above the command's own time even on a busy machine."""


async def test_tool_calls_duration_is_the_tools_own_time_and_the_wait_is_its_own_column(
    ledger: RunLedger,
    scripted_model: ScriptedModelServer,
    claude_cli: Path,
    claude_env: dict[str, str],
    claude_workdir: Path,
) -> None:
    scripted_model.push(
        Reply(tool_use("Bash", {"command": "sleep 0.3 && touch done.txt", "description": "wait a bit"})),
        Reply(text("Done.")),
    )

    def think_then_allow(event: ev.AgentEvent) -> None:
        if isinstance(event, ev.PermissionRequest):
            asyncio.get_running_loop().call_later(THINK_S, event.approval.allow)

    config = SessionConfig(cwd=claude_workdir, cli_path=claude_cli, env=dict(claude_env), approval_timeout=60)
    async with Session(config) as session:
        turn = await session.run("make done.txt", consumers=[think_then_allow])
    assert (claude_workdir / "done.txt").exists()
    (record,) = turn.tools.values()
    assert record.decision is not None and record.decision.decided_by == "person"
    assert record.wall_ms is not None and record.wall_ms >= THINK_S * 1000 + 300  # tool_use -> tool_result
    assert record.approval_wait_ms >= THINK_S * 1000 - 50

    ledger.record(turn)
    (row,) = ledger.tool_calls().to_dict("records")
    assert row["approval_wait_ms"] == record.approval_wait_ms
    assert row["duration_ms"] == record.duration_ms
    assert 300 <= row["duration_ms"] < THINK_S * 1000  # the command's time, not the person's
    assert row["duration_ms"] + row["approval_wait_ms"] == record.wall_ms
    # The card says the same: the tool's time as its badge, the wait on the verdict line.
    shown = plain(render_html(turn))
    assert f"allowed by you after {fmt_ms(record.decision.waited_ms)}" in shown, shown
    assert THINK_S * 1000 - 50 <= (record.decision.waited_ms or 0) < THINK_S * 1000 + 2000
