"""The turn timer, Stop, and a CLI that dies mid-turn, on the real CLI."""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path

import pytest

from kandev_nb.agent import events as ev
from kandev_nb.testing import Reply, ScriptedModelServer, text, tool_use
from tests.approvals.conftest import SessionMaker

pytestmark = pytest.mark.timeout(180)


def errors(turn_events: list[ev.AgentEvent]) -> list[ev.Error]:
    return [e for e in turn_events if isinstance(e, ev.Error)]


@pytest.mark.slow
async def test_turn_timer_interrupts_a_silent_turn_and_the_session_goes_on(
    make_session: SessionMaker, scripted_model: ScriptedModelServer
) -> None:
    scripted_model.push(Reply(text("too late"), delay_first_byte=30), Reply(text("next turn")))
    session = make_session(inactivity_timeout=3)
    pid = session.pid
    turn = await session.run("go")
    timer = [e for e in errors(turn.events) if e.subtype == "inactivity_timeout"]
    assert len(timer) == 1 and "limit 3 s" in timer[0].message
    assert turn.interrupted and turn.stats is not None and turn.stats.result_subtype == "error_during_execution"
    pid = session.pid
    assert (await session.run("again")).text == "next turn" and session.pid == pid


@pytest.mark.slow
async def test_any_message_resets_the_turn_timer(
    make_session: SessionMaker, scripted_model: ScriptedModelServer
) -> None:
    # 8 deltas 1 s apart: 8 s in all, never 3 s of silence.
    scripted_model.push(Reply(text("abcdefgh", chunk_size=1, delay=1.0)))
    turn = await make_session(inactivity_timeout=3).run("go")
    assert errors(turn.events) == [] and turn.text == "abcdefgh"


@pytest.mark.slow
async def test_the_turn_timer_is_paused_while_an_approval_waits(
    make_session: SessionMaker, scripted_model: ScriptedModelServer, claude_workdir: Path
) -> None:
    scripted_model.push(
        Reply(tool_use("Write", {"file_path": str(claude_workdir / "w.txt"), "content": "w"})), Reply(text("ok"))
    )

    def slow_person(event: ev.AgentEvent) -> None:
        if isinstance(event, ev.PermissionRequest):
            asyncio.get_running_loop().call_later(6, event.approval.allow)

    turn = await make_session(inactivity_timeout=2).run("go", consumers=[slow_person])
    assert errors(turn.events) == [] and not turn.interrupted
    assert (claude_workdir / "w.txt").read_text() == "w"
    assert turn.approval_wait_ms >= 5000


async def test_stop_ends_the_turn_with_the_interrupted_result_and_keeps_the_process(
    make_session: SessionMaker, scripted_model: ScriptedModelServer
) -> None:
    scripted_model.push(Reply(text("a" * 200, chunk_size=1, delay=0.2)), Reply(text("still here")))
    session = make_session()
    started: asyncio.Event = asyncio.Event()
    run = asyncio.create_task(
        session.run("go", consumers=[lambda e: started.set() if isinstance(e, ev.MessageChunk) else None])
    )
    await asyncio.wait_for(started.wait(), 60)
    pid = session.pid
    await session.interrupt()
    turn = await asyncio.wait_for(run, 30)
    assert turn.interrupted and turn.stats is not None and turn.stats.result_subtype == "error_during_execution"
    assert len(turn.text) < 200
    following = await session.run("are you there?")
    assert following.text == "still here" and session.pid == pid


async def test_a_cancelled_await_is_an_interrupt_not_a_lost_session(
    make_session: SessionMaker, scripted_model: ScriptedModelServer
) -> None:
    """The kernel's interrupt reaches a %%claude cell as CancelledError in its await."""
    scripted_model.push(Reply(text("b" * 200, chunk_size=1, delay=0.2)), Reply(text("next")))
    session = make_session()
    started: asyncio.Event = asyncio.Event()
    run = asyncio.create_task(
        session.run("go", consumers=[lambda e: started.set() if isinstance(e, ev.MessageChunk) else None])
    )
    await asyncio.wait_for(started.wait(), 60)
    pid = session.pid
    run.cancel()
    run.cancel()  # pressing stop twice changes nothing
    turn = await asyncio.wait_for(run, 30)
    assert turn.interrupted and turn.done
    assert (await session.run("next")).text == "next" and session.pid == pid


async def test_a_cli_that_dies_mid_turn_ends_the_turn_and_the_next_one_resumes(
    make_session: SessionMaker, scripted_model: ScriptedModelServer
) -> None:
    scripted_model.push(
        Reply(text("remember: kiwi")), Reply(text("never sent"), delay_first_byte=30), Reply(text("you said kiwi"))
    )
    session = make_session()
    await session.run("first")
    first_pid, session_id = session.pid, session.session_id
    assert first_pid is not None
    run = asyncio.create_task(session.run("second"))
    while len(scripted_model.main_requests) < 2:
        await asyncio.sleep(0.05)
    os.kill(first_pid, signal.SIGKILL)
    turn = await asyncio.wait_for(run, 30)
    died = [e for e in errors(turn.events) if e.subtype == "cli_exited"]
    assert len(died) == 1 and died[0].exit_code == -signal.SIGKILL and "exit code -9" in died[0].message
    third = await session.run("third")
    assert session.pid != first_pid and session.session_id == session_id
    assert third.text == "you said kiwi"
    assert "remember: kiwi" in repr(scripted_model.main_requests[-1].messages)
