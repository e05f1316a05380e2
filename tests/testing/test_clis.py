"""Pinned CLIs: located where the installer puts them, reporting their own version."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import platformdirs
import pytest

from kandev_nb.testing import (
    NEWEST_PINNED,
    PINNED_CLI_VERSIONS,
    ScriptedModelServer,
    cli_dir,
    cli_version,
    clis,
    install_pinned_clis,
    pinned_cli,
    scripted_env,
)


@pytest.mark.parametrize("version", list(PINNED_CLI_VERSIONS))
def test_each_pinned_version_is_installed_and_reports_its_version(version: str) -> None:
    binary = pinned_cli(version)
    assert binary.is_file()
    assert cli_version(binary) == version


def test_newest_pinned_is_the_bundled_one() -> None:
    assert PINNED_CLI_VERSIONS[NEWEST_PINNED].startswith("pypi:claude-agent-sdk")
    assert pinned_cli().parent.name == "_bundled"


def test_claude_cli_fixture_defaults_to_the_newest(claude_cli: Path) -> None:
    assert claude_cli == pinned_cli(NEWEST_PINNED)


@pytest.mark.parametrize("claude_cli", ["2.1.118"], indirect=True)
def test_claude_cli_fixture_takes_a_version(claude_cli: Path) -> None:
    assert claude_cli == pinned_cli("2.1.118")


def test_missing_version_names_the_install_command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KANDEV_NB_CLI_DIR", str(tmp_path))
    with pytest.raises(FileNotFoundError) as caught:
        pinned_cli("2.1.197")
    message = str(caught.value)
    assert str(tmp_path / "2.1.197") in message
    assert f"KANDEV_NB_CLI_DIR={tmp_path} " in message
    assert f"{sys.executable} -m kandev_nb.testing.clis install 2.1.197" in message


def test_unpinned_version_is_refused() -> None:
    with pytest.raises(ValueError, match="not pinned"):
        pinned_cli("9.9.9")


def test_cli_dir_follows_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KANDEV_NB_CLI_DIR", str(tmp_path))
    assert cli_dir() == tmp_path
    monkeypatch.delenv("KANDEV_NB_CLI_DIR")
    assert cli_dir() == Path(platformdirs.user_cache_dir("kandev-nb")) / "cli"


def fake_binary(path: Path, version: str) -> Path:
    path.parent.mkdir(parents=True)
    path.write_text(f"#!/bin/sh\necho '{version} (Claude Code)'\n")
    path.chmod(0o755)
    return path


def test_native_binary_is_found_in_a_nested_platform_package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KANDEV_NB_CLI_DIR", str(tmp_path))
    modules = tmp_path / "2.1.197" / "node_modules" / "@anthropic-ai"
    nested = modules / "claude-code" / "node_modules" / "@anthropic-ai" / "claude-code-linux-x64" / "claude"
    binary = fake_binary(nested, "2.1.197")
    fake_binary(modules / "claude-code" / "bin" / "claude.exe", "placeholder")  # npm 11: no postinstall

    def no_npm(version: str) -> None:
        raise AssertionError("a matching install must not run npm")

    monkeypatch.setattr(clis, "_npm_install", no_npm)
    assert pinned_cli("2.1.197") == binary
    assert install_pinned_clis(["2.1.197"]) == {"2.1.197": binary}


def test_module_entry_point_installs_and_prints_version_and_path() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "kandev_nb.testing.clis", "install", NEWEST_PINNED],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    ).stdout
    assert out.split() == [NEWEST_PINNED, str(pinned_cli(NEWEST_PINNED))]


def test_scripted_env_points_at_the_server_and_isolates_home(tmp_path: Path) -> None:
    with ScriptedModelServer() as server:
        env = scripted_env(server, tmp_path / "home")
    assert env["ANTHROPIC_BASE_URL"] == server.url
    assert env["ANTHROPIC_API_KEY"] == "sk-ant-scripted-model-key"
    assert env["HOME"] == str(tmp_path / "home")
    assert env["CLAUDE_CONFIG_DIR"] == str(tmp_path / "home" / ".claude")
    assert (tmp_path / "home" / ".claude").is_dir()
    for flag in (
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC",
        "DISABLE_TELEMETRY",
        "DISABLE_AUTOUPDATER",
    ):
        assert env[flag] == "1"
    assert env["ANTHROPIC_AUTH_TOKEN"] == "" and env["CLAUDE_CODE_USE_BEDROCK"] == ""
    assert scripted_env("http://127.0.0.1:1", tmp_path)["ANTHROPIC_BASE_URL"] == "http://127.0.0.1:1"


def test_claude_cli_fixture_fails_with_the_install_command_when_missing(tmp_path: Path) -> None:
    (tmp_path / "test_needs_cli.py").write_text(
        "import pytest\n"
        "@pytest.mark.parametrize('claude_cli', ['2.1.197'], indirect=True)\n"
        "def test_it(claude_cli):\n"
        "    pass\n"
    )
    env = os.environ | {"KANDEV_NB_CLI_DIR": str(tmp_path / "empty")}
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "--rootdir",
            str(tmp_path),
            str(tmp_path),
        ],
        check=False,
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
    )
    assert proc.returncode == 1, proc.stdout
    assert "1 error" in proc.stdout or "1 failed" in proc.stdout
    assert "-m kandev_nb.testing.clis install 2.1.197" in proc.stdout
