"""Finding the Claude Code binary, building its argv and environment, probing its version.

:func:`build_argv` is pure: options in, argument list out, so it has its own tests.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from kandev_nb.errors import CLINotFoundError

__all__ = [
    "ENV_CLI_PATH",
    "CLINotFoundError",
    "CLIOptions",
    "build_argv",
    "bundled_cli",
    "child_env",
    "cli_version",
    "find_cli",
]

ENV_CLI_PATH = "KANDEV_CLAUDE_CLI"
"""Environment variable naming the `claude` binary to use."""


def bundled_cli() -> Path | None:
    """The binary bundled inside the `claude-agent-sdk` wheel, if that package is installed."""
    import importlib.util

    spec = importlib.util.find_spec("claude_agent_sdk")
    if spec is None or not spec.submodule_search_locations:
        return None
    for folder in spec.submodule_search_locations:
        path = Path(folder) / "_bundled" / "claude"
        if path.is_file():
            return path
    return None


def find_cli(path: str | os.PathLike[str] | None = None) -> Path:
    """Locate the `claude` binary.

    Looks, in order, at: the explicit `path`; the ``KANDEV_CLAUDE_CLI`` environment
    variable; `claude` on ``PATH``; the binary bundled in the `claude-agent-sdk` wheel.

    Raises:
        CLINotFoundError: none of the four gave an existing file; the message names all four.
    """
    if path is not None:
        candidate = Path(path).expanduser()
        if candidate.is_file():
            return candidate
        raise CLINotFoundError(f"Claude Code CLI not found at the explicit path {candidate}")
    env = os.environ.get(ENV_CLI_PATH)
    if env:
        candidate = Path(env).expanduser()
        if candidate.is_file():
            return candidate
        raise CLINotFoundError(f"{ENV_CLI_PATH}={env} does not name an existing file")
    on_path = shutil.which("claude")
    if on_path:
        return Path(on_path)
    bundled = bundled_cli()
    if bundled:
        return bundled
    raise CLINotFoundError(
        "Claude Code CLI not found. Looked at: (1) an explicit path (`cli_path=` / `--cli`), "
        f"(2) the {ENV_CLI_PATH} environment variable, (3) `claude` on PATH, "
        "(4) the binary bundled in the claude-agent-sdk package. "
        "Install one with `pip install claude-agent-sdk` or `npm install -g @anthropic-ai/claude-code`."
    )


_VERSION = re.compile(r"(\d+\.\d+\.\d+)")
_version_cache: dict[Path, str] = {}


def cli_version(path: Path) -> str:
    """The CLI's version (``"2.1.332"``) from ``claude --version``; cached per path.

    Raises:
        RuntimeError: the binary did not print a version within 30 s.
    """
    if path in _version_cache:
        return _version_cache[path]
    out = subprocess.run([str(path), "--version"], capture_output=True, text=True, timeout=30, check=False)
    match = _VERSION.search(out.stdout)
    if not match:
        raise RuntimeError(f"{path} --version printed no version: {out.stdout!r} {out.stderr!r}")
    _version_cache[path] = match.group(1)
    return match.group(1)


@dataclass(frozen=True)
class CLIOptions:
    """What the CLI is launched with. Paths are strings so that options stay hashable.

    `json_schema` is the JSON text of ``--json-schema`` (structured output), or None.
    `permission_mode` is the CLI's own value (default, plan, acceptEdits, bypassPermissions);
    see :func:`kandev_nb.agent.permissions.cli_permission_mode`.
    """

    model: str | None = None
    permission_mode: str = "default"
    resume: str | None = None
    resume_session_at: str | None = None
    fork_session: bool = False
    max_turns: int | None = None
    max_budget_usd: float | None = None
    mcp_config: str | None = None
    system_prompt: str | None = None
    append_system_prompt: str | None = None
    allowed_tools: tuple[str, ...] = ()
    disallowed_tools: tuple[str, ...] = ()
    include_partial_messages: bool = True
    sdk_url: str | None = None
    json_schema: str | None = None
    extra_args: tuple[str, ...] = field(default=())


def build_argv(cli: str | os.PathLike[str], options: CLIOptions) -> list[str]:
    """The full argv for a stream-json session (the seed's flags)."""
    argv = [
        str(cli),
        "-p",
        "--output-format",
        "stream-json",
        "--input-format",
        "stream-json",
        "--verbose",
        "--permission-prompt-tool",
        "stdio",
    ]
    if options.permission_mode != "default":
        # Omitted for the default: 2.1.332 renamed it "manual", 2.1.197 only knows "default".
        argv += ["--permission-mode", options.permission_mode]
    if options.include_partial_messages:
        argv.append("--include-partial-messages")
    if options.model:
        argv += ["--model", options.model]
    if options.resume:
        argv += ["--resume", options.resume]
        if options.resume_session_at:
            argv += ["--resume-session-at", options.resume_session_at]
        if options.fork_session:
            argv.append("--fork-session")
    if options.max_turns is not None:
        argv += ["--max-turns", str(options.max_turns)]
    if options.max_budget_usd is not None:
        argv += ["--max-budget-usd", f"{options.max_budget_usd:g}"]
    if options.mcp_config:
        argv += ["--mcp-config", options.mcp_config]
    if options.system_prompt is not None:
        argv += ["--system-prompt", options.system_prompt]
    if options.append_system_prompt is not None:
        argv += ["--append-system-prompt", options.append_system_prompt]
    if options.allowed_tools:
        argv += ["--allowedTools", ",".join(options.allowed_tools)]
    if options.disallowed_tools:
        argv += ["--disallowedTools", ",".join(options.disallowed_tools)]
    if options.json_schema is not None:  # structured output (agent/structured.py)
        argv += ["--json-schema", options.json_schema]
    if options.sdk_url:
        argv += ["--sdk-url", options.sdk_url]
    argv += list(options.extra_args)
    return argv


def child_env(extra: dict[str, str] | None = None, base: dict[str, str] | None = None) -> dict[str, str]:
    """The child's environment: ours (or `base`), minus ``CLAUDECODE``, plus `extra`.

    ``CLAUDECODE`` is dropped so the CLI does not refuse to start "inside another Claude
    Code session" when the kernel itself was started from one.
    """
    env = dict(os.environ if base is None else base)
    env.pop("CLAUDECODE", None)
    env.setdefault("CLAUDE_CODE_ENTRYPOINT", "sdk-py")
    env.update(extra or {})
    return env
