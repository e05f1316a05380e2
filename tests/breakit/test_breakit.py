"""Regression tests for the bugs a break-it review found (each failed before its fix).

They drive `kandev_nb.notebook.magic.run_cell` (what a `%%claude` cell runs) and `Session` against a
tiny fake `claude` (see conftest.py), so they need no model server and run in seconds.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from IPython.core.error import UsageError

from kandev_nb import Session
from kandev_nb.notebook import magic
from kandev_nb.notebook.magic import interpolate, run_cell


async def _close_all() -> None:
    for session in list(magic.sessions.values()):
        await session.close()


def _launches(log: Path) -> list[list[str]]:
    return [json.loads(line[5:]) for line in log.read_text().splitlines() if line.startswith("ARGV ")]


async def test_cli_typo_breaks_every_later_plain_cell(magic_state: None) -> None:
    try:
        first = await run_cell("", "first")
        assert first is not None and first.error is None
        with pytest.raises(UsageError, match="not found"):
            await run_cell("--cli /no/such/claude", "typo")
        again = await run_cell("", "a plain cell after the typo")  # raises UsageError now
        assert again is not None and again.error is None
    finally:
        await _close_all()


async def test_bogus_resume_breaks_every_later_plain_cell(magic_state: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLAUDE_FAKE_REFUSE_RESUME", "1")
    try:
        assert (await run_cell("", "first")).error is None  # type: ignore[union-attr]
        with pytest.raises(UsageError, match="initialize"):
            await run_cell("--resume 00000000-0000-0000-0000-000000000000", "resume a bogus id")
        again = await run_cell("", "a plain cell after the failed resume")  # raises UsageError now
        assert again is not None and again.error is None
    finally:
        await _close_all()


def test_nested_json_in_prompt_loses_a_closing_brace() -> None:
    prompt = 'Validate {"user": {"id": 1}} against the schema'
    assert interpolate(prompt, {}) == prompt


async def test_model_option_on_a_later_cell_is_silently_ignored(magic_state: None, fake_cli: Path) -> None:
    try:
        await run_cell("", "first")
        await run_cell("--model opus", "second, with another model")
    finally:
        await _close_all()
    log = (fake_cli.parent / "fake.log").read_text()
    after_first_turn = log.split('"content": "second, with another model"')[0].split('"content": "first"', 1)[1]
    launched_with_opus = any("opus" in argv for argv in _launches(fake_cli.parent / "fake.log"))
    assert launched_with_opus or "set_model" in after_first_turn


async def test_budget_option_on_a_later_cell_drops_the_conversation(magic_state: None, fake_cli: Path) -> None:
    try:
        await run_cell("", "first")
        await run_cell("--budget 1", "second, with a budget")
    finally:
        await _close_all()
    log = (fake_cli.parent / "fake.log").read_text()
    launches = _launches(fake_cli.parent / "fake.log")
    assert len(launches) == 2, launches  # a budget is a launch option: the later cell needs a new process
    first, second = launches
    assert "--max-budget-usd" not in first
    assert second[second.index("--max-budget-usd") + 1] == "1"  # the later cell's --budget reached the CLI
    assert second[second.index("--resume") + 1] == "11111111-2222-3333-4444-555555555555"  # the conversation goes on
    assert "second, with a budget" in log.split("ARGV ")[2]  # and the second process got the cell's prompt


async def test_unusable_cli_binary_raises_raw_error_and_leaves_view_ticking(magic_state: None, tmp_path: Path) -> None:
    not_claude = tmp_path / "not-claude"
    not_claude.write_text("#!/bin/sh\necho hello\n")
    not_claude.chmod(0o755)
    try:
        with pytest.raises(UsageError):
            await run_cell(f"--cli {not_claude}", "hi")
    finally:
        await asyncio.sleep(0)
        tickers = [t for t in asyncio.all_tasks() if "TurnView._tick" in t.get_coro().__qualname__]
        for t in tickers:
            t.cancel()
        await _close_all()
    assert not tickers, "the failed cell's view still ticks"


async def test_string_approval_timeout_hangs_the_turn(
    fake_cli: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLAUDE_FAKE_SCENARIO", "approval")
    try:
        session = Session(cli_path=fake_cli, cwd=tmp_path, approval_timeout="1")  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return  # rejecting the value up front is a fix
    try:
        run = asyncio.create_task(session.run("write something"))
        for _ in range(100):
            await asyncio.sleep(0.1)
            if session.approvals:
                break
        for approval in list(session.approvals.values()):
            approval.allow()  # even the person's answer does not reach the CLI
        await asyncio.wait_for(asyncio.shield(run), 10)
    finally:
        run.cancel()
        await session.close()


async def test_result_the_adapter_chokes_on_hangs_the_turn(
    fake_cli: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLAUDE_FAKE_SCENARIO", "infinite_tokens")
    session = Session(cli_path=fake_cli, cwd=tmp_path)
    try:
        # (wait_for cannot raise here: Session.run absorbs the cancel as an interrupt and returns)
        turn = await asyncio.wait_for(session.run("hi"), 10)
        assert not turn.interrupted, "the turn only ended because wait_for interrupted it after 10 s"
        assert turn.stats is not None and turn.stats.result_subtype == "success"
    finally:
        await session.close()


async def test_missing_attribute_in_prompt_is_a_raw_traceback(
    magic_state: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    import types

    import IPython.core.getipython

    shell = types.SimpleNamespace(user_ns={"x": 1}, execution_count=1)
    monkeypatch.setattr(IPython.core.getipython, "get_ipython", lambda: shell)
    try:
        with pytest.raises(UsageError):
            await run_cell("", "look at {x.nope}")  # AttributeError now
    finally:
        await _close_all()
