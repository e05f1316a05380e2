"""Background work on the real CLI 2.1.332: the turn stays open until its background Bash is
done, and the CLI's second result for the same prompt is attributed to it."""

from __future__ import annotations

import pytest

from kandev_nb.agent import events as ev
from kandev_nb.testing import Reply, ScriptedModelServer, text, tool_use
from tests.approvals.conftest import SessionMaker

pytestmark = pytest.mark.timeout(180)


async def test_a_background_bash_keeps_its_turn_open_and_the_late_result_is_its_own(
    make_session: SessionMaker, scripted_model: ScriptedModelServer
) -> None:
    scripted_model.push(
        Reply(tool_use("Bash", {"command": "sleep 2; echo bg-done", "description": "bg", "run_in_background": True})),
        Reply(text("Started it.")),
        Reply(text("The background job finished.")),
        Reply(text("next turn")),
    )
    session = make_session(mode="autonomous", allow_root_bypass=True)
    turn = await session.run("start a job")
    tasks = [e for e in turn.events if isinstance(e, ev.SubagentTask)]
    assert [t.phase for t in tasks if t.phase != "progress"] == ["started", "ended"]
    assert "The background job finished." in turn.text and "Started it." in turn.text
    assert turn.stats is not None and turn.stats.num_turns >= 2  # both results' figures
    assert sum(isinstance(e, ev.Complete) for e in turn.events) == 2
    following = await session.run("and now?")
    assert following.text == "next turn"  # nothing of the background follow-up leaks here


async def test_stop_during_background_work_sends_stop_task(
    make_session: SessionMaker, scripted_model: ScriptedModelServer
) -> None:
    import asyncio

    scripted_model.push(
        Reply(tool_use("Bash", {"command": "sleep 60", "description": "long", "run_in_background": True})),
        Reply(text("Started it.")),
        Reply(text("It was stopped.")),
    )
    session = make_session(mode="autonomous", allow_root_bypass=True)

    async def held() -> None:  # the first result came, the background job still runs
        while not (session.turns and session.turns[-1].done and session.background.open_tasks):
            await asyncio.sleep(0.05)

    run = asyncio.ensure_future(session.run("start"))
    await asyncio.wait_for(held(), 60)
    assert not run.done()  # the turn waits for its background job
    await session.interrupt()  # the Stop button
    turn = await asyncio.wait_for(run, 90)
    sent = [m["request"] for m in session.transport.sent if m.get("type") == "control_request"]  # type: ignore[union-attr]
    assert any(r.get("subtype") == "stop_task" for r in sent), sent
    ended = [e for e in turn.events if isinstance(e, ev.SubagentTask) and e.phase == "ended"]
    assert ended and ended[0].status != "completed", ended
