from __future__ import annotations

import stat
from dataclasses import replace
from pathlib import Path

import pytest

from kandev_nb.wire import cli
from kandev_nb.wire.cli import (
    CLINotFoundError,
    LaunchOptions,
    build_argv,
    child_env,
    find_cli,
    process_env,
)


def _fake_binary(path: Path) -> Path:
    path.write_text("#!/bin/sh\necho '9.9.9 (Claude Code)'\n")
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return path


def test_build_argv_has_the_seed_flags_and_omits_the_default_mode() -> None:
    argv = build_argv("/bin/claude", LaunchOptions(model="sonnet"))
    assert argv[:8] == [
        "/bin/claude",
        "-p",
        "--output-format",
        "stream-json",
        "--input-format",
        "stream-json",
        "--verbose",
        "--permission-prompt-tool",
    ]
    assert "--include-partial-messages" in argv
    assert argv[argv.index("--model") + 1] == "sonnet"
    assert "--permission-mode" not in argv


def test_build_argv_resume_fork_and_limits() -> None:
    argv = build_argv(
        "c",
        LaunchOptions(
            permission_mode="plan",
            resume="s1",
            resume_session_at="u1",
            fork_session=True,
            max_turns=3,
            max_budget_usd=0.5,
            allowed_tools=("Read", "Bash(git *)"),
        ),
    )
    joined = " ".join(argv)
    assert "--permission-mode plan" in joined
    assert "--resume s1 --resume-session-at u1 --fork-session" in joined
    assert "--max-turns 3" in joined and "--max-budget-usd 0.5" in joined
    assert argv[argv.index("--allowedTools") + 1] == "Read,Bash(git *)"


def test_resume_at_needs_resume() -> None:
    assert "--resume-session-at" not in build_argv("c", LaunchOptions(resume_session_at="u1"))


def test_child_env_drops_claudecode() -> None:
    env = child_env({"A": "1"}, base={"CLAUDECODE": "1", "PATH": "/bin"})
    assert "CLAUDECODE" not in env and env["A"] == "1" and env["PATH"] == "/bin"


def test_find_cli_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    explicit = _fake_binary(tmp_path / "explicit")
    from_env = _fake_binary(tmp_path / "from_env")
    bindir = tmp_path / "bin"
    bindir.mkdir()
    on_path = _fake_binary(bindir / "claude")
    monkeypatch.setenv(cli.ENV_CLI_PATH, str(from_env))
    monkeypatch.setenv("PATH", str(bindir))
    assert find_cli(explicit) == explicit
    assert find_cli() == from_env
    monkeypatch.delenv(cli.ENV_CLI_PATH)
    assert find_cli() == on_path
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    bundled = cli.bundled_cli()
    if bundled is not None:
        assert find_cli() == bundled
    monkeypatch.setattr(cli, "bundled_cli", lambda: None)
    with pytest.raises(CLINotFoundError) as err:
        find_cli()
    message = str(err.value)
    for place in ("explicit path", cli.ENV_CLI_PATH, "PATH", "claude-agent-sdk"):
        assert place in message


def test_explicit_missing_path_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(CLINotFoundError, match="explicit path"):
        find_cli(tmp_path / "nope")


def test_cli_version_parses(tmp_path: Path) -> None:
    assert cli.cli_version(_fake_binary(tmp_path / "c")) == "9.9.9"


def test_build_argv_disallowed_tools_and_nothing_extra() -> None:
    argv = build_argv(
        "c",
        LaunchOptions(disallowed_tools=("WebFetch", "Bash(rm *)"), cli_path="/x/claude", cwd="/work", env={"A": "1"}),
    )
    assert argv[argv.index("--disallowedTools") + 1] == "WebFetch,Bash(rm *)"
    assert "/x/claude" not in argv and "/work" not in argv and "A" not in argv  # not flags
    assert "--sdk-url" not in argv


def test_launch_options_are_frozen_hashable_and_checked_when_made() -> None:
    options = LaunchOptions(allowed_tools=["Read"], env={"A": "1"}, cwd=Path("/tmp"))  # type: ignore[arg-type]
    assert options.allowed_tools == ("Read",) and options.cwd == "/tmp"
    assert hash(options) == hash(LaunchOptions(allowed_tools=("Read",), env={"A": "1"}, cwd="/tmp"))
    with pytest.raises(TypeError):
        options.env["B"] = "2"  # type: ignore[index]  # read-only
    with pytest.raises(AttributeError):
        options.model = "opus"  # type: ignore[misc]
    for bad, error in [
        ({"permission_mode": "yolo"}, ValueError),
        ({"max_turns": 0}, ValueError),
        ({"max_turns": 1.5}, TypeError),
        ({"max_budget_usd": -1}, ValueError),
        ({"allowed_tools": "Read"}, TypeError),
        ({"env": {"A": 1}}, TypeError),
        ({"model": 3}, TypeError),
        ({"fork_session": "yes"}, TypeError),
    ]:
        with pytest.raises(error):
            LaunchOptions(**bad)  # type: ignore[arg-type]


def test_same_process_ignores_only_the_conversation_and_the_mode() -> None:
    base = LaunchOptions(model="sonnet")
    assert base.same_process(
        replace(base, resume="s1", resume_session_at="u1", fork_session=True, permission_mode="plan", is_sandbox=True)
    )
    for change in (
        {"model": "opus"},
        {"max_budget_usd": 1.0},
        {"cwd": "/elsewhere"},
        {"env": {"X": "1"}},
        {"disallowed_tools": ("WebFetch",)},
        {"cli_path": "/other/claude"},
    ):
        assert not base.same_process(replace(base, **change)), change


def test_process_env_sets_is_sandbox_only_on_the_opt_in() -> None:
    inherited = {"IS_SANDBOX": "1", "PATH": "/bin"}
    assert "IS_SANDBOX" not in process_env(LaunchOptions(), base=inherited)
    assert process_env(LaunchOptions(is_sandbox=True), base={})["IS_SANDBOX"] == "1"
    assert process_env(LaunchOptions(env={"IS_SANDBOX": "1"}), base={})["IS_SANDBOX"] == "1"
