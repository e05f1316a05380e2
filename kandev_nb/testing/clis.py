"""Pinned Claude Code CLI binaries for tests, and the environment that points them at a script.

The newest pinned version comes inside the ``claude-agent-sdk`` wheel; the others are
installed from npm into :func:`cli_dir` by ``python -m kandev_nb.testing.clis install``.
Whether npm runs the package's ``postinstall`` (which links ``bin/claude.exe`` to the
native binary) depends on the npm version and its settings, so the binary is taken from
the platform package, ``node_modules/@anthropic-ai/claude-code-<platform>/claude``.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import platform
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Final

import platformdirs

from kandev_nb.errors import CLIInstallError

if TYPE_CHECKING:
    from kandev_nb.testing.model_server import ScriptedModelServer

__all__ = [
    "NEWEST_PINNED",
    "PINNED_CLI_VERSIONS",
    "CLIInstallError",
    "cli_dir",
    "cli_version",
    "install_pinned_clis",
    "pinned_cli",
    "scripted_env",
]

PINNED_CLI_VERSIONS: Final[dict[str, str]] = {
    "2.1.332": "pypi:claude-agent-sdk==0.2.189 (bundled)",
    "2.1.197": "npm",
    "2.1.118": "npm",
}
"""CLI version -> where it comes from. 2.1.118 is the last known-good ``--sdk-url`` version."""

NEWEST_PINNED: Final = "2.1.332"
BUNDLED_SDK: Final = "claude-agent-sdk==0.2.189"
NPM_PACKAGE: Final = "@anthropic-ai/claude-code"
_VERSION_TIMEOUT = 60.0  # seconds; a cold first start of a 200 MB binary can be slow


def cli_dir() -> Path:
    """Root of the npm-installed CLIs: ``$KANDEV_NB_CLI_DIR`` or the user cache dir."""
    override = os.environ.get("KANDEV_NB_CLI_DIR")
    if override:
        return Path(override).expanduser()
    return Path(platformdirs.user_cache_dir("kandev-nb")) / "cli"


def _check_pinned(version: str) -> None:
    if version not in PINNED_CLI_VERSIONS:
        pinned = ", ".join(PINNED_CLI_VERSIONS)
        raise ValueError(f"Claude Code CLI {version} is not pinned (pinned: {pinned})")


def _install_command(version: str) -> str:
    prefix = ""
    if os.environ.get("KANDEV_NB_CLI_DIR"):
        prefix = f"KANDEV_NB_CLI_DIR={shlex.quote(os.environ['KANDEV_NB_CLI_DIR'])} "
    return f"{prefix}{shlex.quote(sys.executable)} -m kandev_nb.testing.clis install {version}"


def _platform_package() -> str:
    """The npm platform package suffix for this machine, e.g. ``linux-x64``."""
    system = {"win32": "win32", "darwin": "darwin"}.get(sys.platform, "linux")
    machine = platform.machine().lower()
    arch = "arm64" if machine in ("arm64", "aarch64") else "x64"
    return f"{system}-{arch}"


def _bundled_binary() -> Path | None:
    spec = importlib.util.find_spec("claude_agent_sdk")
    if spec is None or not spec.submodule_search_locations:
        return None
    for root in spec.submodule_search_locations:
        for name in ("claude", "claude.exe"):
            candidate = Path(root) / "_bundled" / name
            if candidate.is_file():
                return candidate
    return None


def _npm_binary(version: str) -> Path | None:
    """The native binary under ``cli_dir()/version``, preferring this platform's package."""
    modules = cli_dir() / version / "node_modules"
    if not modules.is_dir():
        return None
    candidates = [
        path
        for pattern in (
            "**/@anthropic-ai/claude-code-*/claude",
            "**/@anthropic-ai/claude-code-*/claude.exe",
        )
        for path in modules.glob(pattern)
        if path.is_file()
    ]
    wanted = f"claude-code-{_platform_package()}"
    candidates.sort(key=lambda p: (p.parent.name != wanted, len(p.parts), str(p)))
    return candidates[0] if candidates else None


def cli_version(binary: Path) -> str | None:
    """The version ``binary --version`` reports (``"2.1.197"``), ``None`` if it fails."""
    try:
        proc = subprocess.run(
            [str(binary), "--version"],
            check=False,
            capture_output=True,
            text=True,
            timeout=_VERSION_TIMEOUT,
            env=os.environ | {"DISABLE_AUTOUPDATER": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"},
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    words = proc.stdout.split()
    return words[0] if proc.returncode == 0 and words else None


def pinned_cli(version: str = NEWEST_PINNED) -> Path:
    """Path of the installed native binary of a pinned CLI version.

    Does not run the binary; :func:`install_pinned_clis` checked its ``--version``.

    Raises:
        ValueError: ``version`` is not in :data:`PINNED_CLI_VERSIONS`.
        FileNotFoundError: it is not installed; the message names the command that
            installs it.
    """
    _check_pinned(version)
    if PINNED_CLI_VERSIONS[version] == "npm":
        found = _npm_binary(version)
        where = f"under {cli_dir() / version}"
    else:
        found = _bundled_binary()
        where = f"in the installed claude_agent_sdk package (pip install {BUNDLED_SDK})"
    if found is None:
        raise FileNotFoundError(
            f"Claude Code CLI {version} is not installed {where}. Install it with: {_install_command(version)}"
        )
    return found


def _npm_install(version: str) -> None:
    npm = shutil.which("npm")
    if npm is None:
        raise CLIInstallError(version, "npm not found on PATH; install Node.js (which brings npm)")
    target = cli_dir() / version
    target.mkdir(parents=True, exist_ok=True)
    cmd = [
        npm,
        "install",
        "--prefix",
        str(target),
        "--no-audit",
        "--no-fund",
        f"{NPM_PACKAGE}@{version}",
    ]
    proc = subprocess.run(cmd, check=False, capture_output=True, text=True)
    if proc.returncode != 0:
        raise CLIInstallError(version, (proc.stderr or proc.stdout)[-2000:])


def _install_one(version: str) -> Path:
    _check_pinned(version)
    if PINNED_CLI_VERSIONS[version] == "npm":
        binary = _npm_binary(version)
        if binary is None or cli_version(binary) != version:
            _npm_install(version)
            binary = _npm_binary(version)
        if binary is None:
            raise CLIInstallError(version, f"npm installed no native binary under {cli_dir() / version}")
    else:
        binary = _bundled_binary()
        if binary is None:
            raise CLIInstallError(version, f"claude_agent_sdk is not installed: pip install {BUNDLED_SDK}")
    reported = cli_version(binary)
    if reported != version:
        raise CLIInstallError(version, f"{binary} --version reports {reported!r}")
    return binary


def install_pinned_clis(versions: Iterable[str] | None = None) -> dict[str, Path]:
    """Install (or find) pinned CLIs and check that each reports its version.

    npm versions go to ``cli_dir()/<version>`` with the npm registry npm is configured
    for; an existing install whose ``--version`` matches is kept. The bundled version is
    only located in the installed ``claude_agent_sdk`` package.

    Args:
        versions: Versions to install; ``None`` means all of :data:`PINNED_CLI_VERSIONS`.

    Returns:
        Version -> path of its native binary.

    Raises:
        ValueError: a version is not pinned.
        CLIInstallError: npm failed, or a binary reports another version.
    """
    return {v: _install_one(v) for v in (list(versions) if versions is not None else PINNED_CLI_VERSIONS)}


def scripted_env(server: ScriptedModelServer | str, home: str | os.PathLike[str]) -> dict[str, str]:
    """Environment additions for a child CLI that must talk only to ``server``.

    Merge them over ``os.environ``. Besides the base URL and a fake key, they turn off
    nonessential traffic (telemetry, error reporting, auto-update, feature flags, the
    startup probes), blank credentials and provider switches the parent might carry (so
    a real account or Bedrock/Vertex is never used), bypass proxies for loopback, and
    give the CLI its own ``HOME`` and config dir (``<home>/.claude``). Measured with a
    recording proxy: 2.1.197 and 2.1.332 then reach only the server; 2.1.118 still asks
    ``https://api.anthropic.com/api/claude_code/organizations/metrics_enabled`` once
    (harmless; it fails fast offline).

    Args:
        server: A started :class:`ScriptedModelServer`, or its base URL.
        home: Directory to use as ``HOME``; created if missing.
    """
    url = server if isinstance(server, str) else server.url
    home_path = Path(home)
    (home_path / ".claude").mkdir(parents=True, exist_ok=True)
    env = {
        "ANTHROPIC_BASE_URL": url,
        "ANTHROPIC_API_KEY": "sk-ant-scripted-model-key",  # distinctive: known secrets are masked by value
        "HOME": str(home_path),
        "CLAUDE_CONFIG_DIR": str(home_path / ".claude"),
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_ERROR_REPORTING": "1",
        "NO_PROXY": "127.0.0.1,localhost",
        "no_proxy": "127.0.0.1,localhost",
    }
    for inherited in (
        "ANTHROPIC_AUTH_TOKEN",
        "CLAUDE_CODE_OAUTH_TOKEN",
        "CLAUDE_CODE_USE_BEDROCK",
        "CLAUDE_CODE_USE_VERTEX",
        "CLAUDE_CODE_USE_FOUNDRY",
        "CLAUDE_CODE_ENABLE_TELEMETRY",
        "CLAUDE_CODE_SSE_PORT",
    ):
        env[inherited] = ""
    return env


def main(argv: list[str] | None = None) -> int:
    """``python -m kandev_nb.testing.clis [install] [VERSION ...]``: prints ``version  path``."""
    parser = argparse.ArgumentParser(prog="python -m kandev_nb.testing.clis", description=__doc__)
    parser.add_argument("command", nargs="?", default="install", choices=["install"])
    parser.add_argument("versions", nargs="*", help="pinned versions (default: all)")
    args = parser.parse_args(argv)
    try:
        installed = install_pinned_clis(args.versions or None)
    except (ValueError, CLIInstallError) as exc:
        print(exc, file=sys.stderr)
        return 1
    for version, path in installed.items():
        print(f"{version}  {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
