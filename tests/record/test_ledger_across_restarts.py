"""Issue 28.1: the ledger charges each turn its own requests, across restarts of the CLI.

A CLI started with ``--resume`` restores its cumulative `total_cost_usd` / `modelUsage` from
the transcript's last ``cost-state`` line; a delta taken from zero in the new process charged
the whole history to its first turn. A property test over random sequences of turns, API
errors, ``--retry``, restarts (a changed launch option) and interrupts, each run with the
real CLI against the scripted model, compares every ledger row with the requests the model
server answered during that turn, and the rows' sum with the CLI's own final total.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import signal
from pathlib import Path

import pytest

from kandev_nb.agent import events as ev
from kandev_nb.agent.session import Session, SessionConfig
from kandev_nb.agent.transcript import last_cost_state
from kandev_nb.agent.turn import Turn
from kandev_nb.ledger import RunLedger
from kandev_nb.testing import Reply, ScriptedModelServer, http_error, text, tool_use
from kandev_nb.testing.script import Usage

pytestmark = pytest.mark.timeout(600)

OVERLOADED = http_error(529, "Overloaded", headers={"x-should-retry": "false"})
STEPS = ("turn", "tool_turn", "error", "restart", "interrupt")


class Notebook:
    """What the magic does with sessions, on the real CLI: one live session; a restart or a
    retry stops the old process, then starts a new one resuming the conversation."""

    def __init__(self, config: SessionConfig, server: ScriptedModelServer, ledger: RunLedger) -> None:
        self.config, self.server, self.ledger = config, server, ledger
        self.session = Session(config)
        self.rows: list[tuple[Turn, int, int]] = []  # turn, first and end index of its server requests
        self.max_turns = 10

    async def run(self, prompt: str, *, interrupt: bool = False) -> Turn:
        session = self.session

        def stop_at_card(event: ev.AgentEvent) -> None:
            if interrupt and isinstance(event, ev.PermissionRequest):
                asyncio.get_running_loop().create_task(session.interrupt())

        first = len(self.server.requests)
        turn = await session.run(prompt, consumers=[stop_at_card])
        self.rows.append((turn, first, len(self.server.requests)))
        self.ledger.record(turn)
        return turn

    async def replace(self, *, at: str | None, **changes: object) -> None:
        old = self.session
        sid = old.session_id
        await old.close()
        self.session = Session(self.config, resume=sid, resume_session_at=at, **changes)

    async def retry(self) -> Turn:
        failed = self.session.turns[-1]
        await self.replace(at=failed.meta["retry_at"])
        return await self.run(failed.prompt)

    async def restart(self) -> None:
        self.max_turns += 1  # a changed launch option: a new process resuming the conversation
        await self.replace(at=self.session.resume_point, max_turns=self.max_turns)


def _usage_of(server: ScriptedModelServer, first: int, end: int) -> tuple[int, int]:
    answered = [u for u in server.answered_usage[first:end] if u is not None]
    return sum(u.input_tokens for u in answered), sum(u.output_tokens for u in answered)


async def _play(steps: list[tuple[str, int]], notebook: Notebook, server: ScriptedModelServer) -> None:
    for n, (step, size) in enumerate(steps):
        usage = Usage(input_tokens=size, output_tokens=size // 10 + 1)
        if step == "turn":
            server.push(Reply(text(f"Answer {n}."), usage=usage))
            await notebook.run(f"Question {n}")
        elif step == "tool_turn":
            server.push(Reply(tool_use("Glob", {"pattern": "*.txt"}), usage=usage), Reply(text(f"Found {n}.")))
            await notebook.run(f"Look {n}")
        elif step == "error":
            server.push(OVERLOADED)
            turn = await notebook.run(f"Failing {n}")
            assert turn.failed
            server.push(Reply(text(f"Retried {n}."), usage=usage))
            retried = await notebook.retry()
            assert retried.text == f"Retried {n}." and not retried.failed
        elif step == "restart":
            await notebook.restart()
        elif step == "interrupt":
            server.push(Reply(tool_use("Write", {"file_path": f"out{n}.txt", "content": "x"}), usage=usage))
            turn = await notebook.run(f"Run {n}", interrupt=True)
            assert turn.interrupted


def _sequences(seed: int, count: int) -> list[list[tuple[str, int]]]:
    rng = random.Random(seed)
    return [[(rng.choice(STEPS), rng.randrange(50, 900)) for _ in range(rng.randrange(3, 7))] for _ in range(count)]


@pytest.mark.parametrize("steps", _sequences(28, 6), ids=lambda s: "-".join(k for k, _ in s))
async def test_each_row_is_its_own_requests_and_the_rows_sum_to_the_cli_total(
    steps: list[tuple[str, int]],
    claude_cli: Path,
    claude_env: dict[str, str],
    claude_workdir: Path,
    scripted_model: ScriptedModelServer,
    tmp_path: Path,
) -> None:
    config = SessionConfig(
        cwd=claude_workdir, cli_path=claude_cli, env=dict(claude_env), approval_timeout=60, inactivity_timeout=120
    )
    ledger = RunLedger(tmp_path / "ledger.sqlite")
    notebook = Notebook(config, scripted_model, ledger)
    scripted_model.push(Reply(text("Hello."), usage=Usage(120, 7)))
    try:
        await notebook.run("Hello")  # a first turn, so every later step has a conversation
        await _play(steps, notebook, scripted_model)
        sid = notebook.session.session_id
        last_total = notebook.rows[-1][0].stats.total_cost_usd  # type: ignore[union-attr]
    finally:
        with contextlib.suppress(Exception):
            await notebook.session.close()
    runs = ledger.runs()
    assert len(runs) == len(notebook.rows)
    for (turn, first, end), (_, row) in zip(notebook.rows, runs.iterrows(), strict=True):
        assert (int(row["input_tokens"]), int(row["output_tokens"])) == _usage_of(scripted_model, first, end), (
            turn.prompt
        )
    # The CLI's own total: the last result's cumulative figure, and what it saved on exit.
    assert runs["cost_usd"].sum() == pytest.approx(last_total, abs=1e-9)
    assert sid is not None
    saved = last_cost_state(claude_env, sid)
    assert saved is not None
    assert runs["cost_usd"].sum() == pytest.approx(saved["totalCostUSD"], abs=1e-9)
    assert runs["input_tokens"].sum() == sum(u["inputTokens"] for u in saved["modelUsage"].values())
    ledger.close()


async def test_after_a_killed_process_the_next_one_is_charged_its_own_requests(
    claude_cli: Path, claude_env: dict[str, str], claude_workdir: Path, scripted_model: ScriptedModelServer
) -> None:
    # A process killed with SIGKILL saves no cost-state: the next one restores the older
    # figures (here none), not the killed process's last cumulative figure.
    session = Session(cwd=claude_workdir, cli_path=claude_cli, env=dict(claude_env), inactivity_timeout=120)
    try:
        scripted_model.push(Reply(text("One."), usage=Usage(300, 30)), Reply(text("Two."), usage=Usage(200, 20)))
        await session.run("one")
        await session.run("two")
        assert session.pid is not None
        os.kill(session.pid, signal.SIGKILL)
        while session.connection is not None:
            await asyncio.sleep(0.05)
        scripted_model.push(Reply(text("Three."), usage=Usage(100, 10)))
        first = len(scripted_model.requests)
        third = await session.run("three")
        assert third.stats is not None
        assert (third.stats.input_tokens, third.stats.output_tokens) == _usage_of(
            scripted_model, first, len(scripted_model.requests)
        )
    finally:
        await session.close()
