"""One set of launch options (issue 12 points 3, 4, 10), through `run_cell` and `Session`
against the fake `claude` of conftest.py, which logs every argv it is started with."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from IPython.core.error import UsageError

import kandev_nb
from kandev_nb import Session, SessionConfig
from kandev_nb.agent.events import TurnStats
from kandev_nb.agent.turn import Turn
from kandev_nb.notebook import magic
from kandev_nb.notebook.magic import run_cell
from kandev_nb.notebook.state import NotebookState, current


def _launches(fake_cli: Path) -> list[list[str]]:
    log = fake_cli.parent / "fake.log"
    return [json.loads(line[5:]) for line in log.read_text().splitlines() if line.startswith("ARGV ")]


async def _close_all() -> None:
    for session in list(current().sessions.values()):
        await session.close()


def _flag(argv: list[str], flag: str) -> str | None:
    return argv[argv.index(flag) + 1] if flag in argv else None


async def test_disallowed_tools_reach_the_cli_argv_from_the_magic(magic_state: None, fake_cli: Path) -> None:
    try:
        await run_cell("--disallowed-tools 'WebFetch, Bash(rm *)'", "first")
        await run_cell("", "second: the session keeps its launch options")
    finally:
        await _close_all()
    (argv,) = _launches(fake_cli)
    assert _flag(argv, "--disallowedTools") == "WebFetch,Bash(rm *)"


async def test_disallowed_tools_reach_the_cli_argv_from_a_session(fake_cli: Path, tmp_path: Path) -> None:
    session = Session(cli_path=fake_cli, cwd=tmp_path, disallowed_tools=("WebSearch",))
    try:
        await session.run("hi")
    finally:
        await session.close()
    (argv,) = _launches(fake_cli)
    assert _flag(argv, "--disallowedTools") == "WebSearch"


def test_disallowed_tools_is_documented_in_the_cell_help() -> None:
    assert "--disallowed-tools" in (magic.claude_cell.__doc__ or "")
    assert "--disallowed-tools" in magic.claude_help.parser.format_help()


async def test_a_new_process_exactly_when_the_launch_options_change(magic_state: None, fake_cli: Path) -> None:
    try:
        await run_cell("", "one")
        first = current().sessions["default"]
        await run_cell("--mode plan", "two: a mode is no new process")
        await run_cell("--approval-timeout 5", "three: nor a per-cell value")
        assert current().sessions["default"] is first and len(_launches(fake_cli)) == 1
        await run_cell("--budget 1", "four: a budget is a new process resuming the conversation")
        await run_cell("", "five: and is kept")
        second = current().sessions["default"]
    finally:
        await _close_all()
    launches = _launches(fake_cli)
    assert len(launches) == 2 and second is not first
    assert _flag(launches[1], "--max-budget-usd") == "1"
    assert _flag(launches[1], "--resume") == first.session_id
    assert second.launch_options.max_budget_usd == 1
    assert first.launch_options.same_process(second.launch_options) is False


async def test_per_cell_values_never_change_the_session_config(magic_state: None) -> None:
    try:
        await run_cell("--approval-timeout 5", "one")
        session = current().sessions["default"]
        config = session.config
        await run_cell("", "two")
    finally:
        await _close_all()
    assert session.config.approval_timeout == config.approval_timeout == current().settings.approval_timeout
    with pytest.raises(AttributeError):
        session.config.approval_timeout = 1  # type: ignore[misc]  # frozen


async def test_a_bad_launch_value_is_one_line_and_sends_nothing(magic_state: None, fake_cli: Path) -> None:
    with pytest.raises(UsageError, match="max_turns must be at least 1"):
        await run_cell("--max-turns 0", "never sent")
    assert not (fake_cli.parent / "fake.log").exists() or not _launches(fake_cli)


def test_the_notebook_state_is_fresh_per_test_and_the_spend_does_not_carry_over(notebook_state: NotebookState) -> None:
    assert kandev_nb.settings is notebook_state.settings and kandev_nb.sessions is notebook_state.sessions
    assert notebook_state.spent() == 0 and kandev_nb.last_turn() is None
    turn = Turn(prompt="p")
    turn.stats = TurnStats(cost_usd=0.25)
    notebook_state.turns.append(turn)
    kandev_nb.configure(budget_usd=0.1)
    assert kandev_nb.last_turn() is turn and notebook_state.spent() == 0.25
    with pytest.raises(RuntimeError, match="budget"):
        magic._check_budget()


def test_the_next_test_sees_none_of_that(notebook_state: NotebookState) -> None:
    assert notebook_state.spent() == 0 and notebook_state.settings.budget_usd is None
    magic._check_budget()  # no budget, nothing spent


def test_load_ipython_extension_keeps_the_state_of_the_same_shell(notebook_state: NotebookState) -> None:
    from kandev_nb.notebook import state

    class Shell:
        pass

    shell = Shell()
    made = state.install(shell=shell)
    assert made is notebook_state and made.shell is shell
    assert state.install(shell=shell) is made  # %reload_ext
    assert state.install(shell=Shell()) is not made  # another shell gets its own


def test_session_config_is_frozen_and_checked_once() -> None:
    config = SessionConfig(allowed_tools=["Read"])  # type: ignore[arg-type]
    assert config.allowed_tools == ("Read",)
    with pytest.raises(AttributeError):
        config.mode = "plan"  # type: ignore[misc]
    with pytest.raises(ValueError, match="unknown permission mode"):
        SessionConfig(mode="yolo")
    with pytest.raises(TypeError, match="approval_timeout"):
        SessionConfig(approval_timeout="1")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="approve must be a callable"):
        SessionConfig(approve="allow")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="disallowed_tools must be a tuple"):
        SessionConfig(disallowed_tools="Bash")  # type: ignore[arg-type]


async def test_a_per_turn_timeout_is_checked_before_anything_starts(fake_cli: Path, tmp_path: Path) -> None:
    session = Session(cli_path=fake_cli, cwd=tmp_path)
    with pytest.raises(TypeError, match="approval_timeout"):
        await session.run("hi", approval_timeout="1")  # type: ignore[arg-type]
    assert session.pid is None and not (fake_cli.parent / "fake.log").exists()
