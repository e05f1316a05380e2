from __future__ import annotations

import stat
from pathlib import Path

import pytest

from kandev_nb.wire import cli
from kandev_nb.wire.cli import CLINotFoundError, LaunchOptions, build_argv, child_env, find_cli


def _fake_binary(path: Path) -> Path:
    path.write_text("#!/bin/sh\necho '9.9.9 (Claude Code)'\n")
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return path


def test_build_argv_has_the_seed_flags_and_omits_the_default_mode() -> None:
    argv = build_argv("/bin/claude", LaunchOptions(model="sonnet"))
    assert argv[:8] == ["/bin/claude", "-p", "--output-format", "stream-json", "--input-format", "stream-json",
                        "--verbose", "--permission-prompt-tool"]
    assert "--include-partial-messages" in argv
    assert argv[argv.index("--model") + 1] == "sonnet"
    assert "--permission-mode" not in argv


def test_build_argv_resume_fork_and_limits() -> None:
    argv = build_argv("c", LaunchOptions(permission_mode="plan", resume="s1", resume_session_at="u1", fork_session=True,
                                      max_turns=3, max_budget_usd=0.5, allowed_tools=("Read", "Bash(git *)")))
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
