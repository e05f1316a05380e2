"""Finding the Claude Code binary, building its argv and environment, probing its version.

:func:`build_argv` is pure: options in, argument list out, so it has its own tests.
"""

from __future__ import annotations

import atexit
import hashlib
import json
import math
import os
import re
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any, Final

from kandev_nb.errors import CLINotFoundError
from kandev_nb.redact import is_secret_name

__all__ = [
    "CHILD_ENV_NAMES",
    "CHILD_ENV_PREFIXES",
    "CLI_PERMISSION_MODES",
    "ENV_CLI_PATH",
    "PROVIDER_ENV",
    "SDK_URL_REFUSED_FROM",
    "CLINotFoundError",
    "LaunchOptions",
    "build_argv",
    "bundled_cli",
    "check_agents",
    "child_env",
    "cli_version",
    "find_cli",
    "private_file",
    "process_env",
    "resume_drops_turn_supported",
    "sdk_url_supported",
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


CLI_PERMISSION_MODES: tuple[str, ...] = ("default", "plan", "acceptEdits", "bypassPermissions")
"""The CLI's own ``--permission-mode`` values that :class:`LaunchOptions` takes."""

_FLAG_FIELDS = ("fork_session", "include_partial_messages", "is_sandbox", "forward_subagent_text", "session_mirror")
_TEXT_FIELDS = (
    "model",
    "resume",
    "resume_session_at",
    "resume_drops_turn",
    "mcp_config",
    "system_prompt",
    "append_system_prompt",
)


class _PrivateFiles:
    """Texts the CLI reads from a file rather than its command line, which every local user
    can read (``/proc/<pid>/cmdline``, ``ps``): one folder per kernel process, made by
    :func:`tempfile.mkdtemp` (mode 0700, a new random name), files created exclusively
    (``O_CREAT | O_EXCL | O_NOFOLLOW``, mode 0600) and named by their content's hash, so the
    same text is one file; the folder is removed when the kernel process exits (``atexit``)."""

    def __init__(self) -> None:
        self._folder: str | None = None
        self._lock = threading.Lock()

    def path(self, text: str, suffix: str) -> str:
        with self._lock:
            if self._folder is None or not os.path.isdir(self._folder):
                self._folder = tempfile.mkdtemp(prefix="kandev-nb-")  # 0700, O_EXCL by construction
            target = os.path.join(self._folder, hashlib.sha256(text.encode()).hexdigest()[:24] + suffix)
            if not os.path.exists(target):
                flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
                fd = os.open(target, flags, 0o600)
                with os.fdopen(fd, "w", encoding="utf-8") as handle:
                    handle.write(text)
            return target

    def remove(self) -> None:
        with self._lock:
            folder, self._folder = self._folder, None
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)


_private_files = _PrivateFiles()
atexit.register(_private_files.remove)


def private_file(text: str, suffix: str = ".txt") -> str:
    """The path of a file holding `text`, readable by this user only (0600 in a 0700 folder
    of its own), removed when the kernel process ends: what the CLI gets instead of a
    secret-bearing value on its command line (``--mcp-config``, ``--system-prompt-file``).

    Raises:
        OSError: the temporary folder cannot be written.
    """
    return _private_files.path(text, suffix)


@dataclass(frozen=True)
class LaunchOptions:
    """Everything one CLI process is started with; the argv comes from :func:`build_argv`.

    Frozen and validated once, here: :class:`kandev_nb.agent.session.SessionConfig` makes one
    (:meth:`~kandev_nb.agent.session.SessionConfig.launch_options`) and the `%%claude` magic
    compares them to decide whether a cell needs a new process (:meth:`same_process`).

    Attributes:
        cli_path: the binary (None: :func:`find_cli` looks it up). Paths are kept as strings.
        cwd: the process's working directory (None: the kernel's).
        env: extra environment on top of the kernel's allow-listed variables (:func:`child_env`), read-only.
        model: ``--model``.
        permission_mode: the CLI's own value (``default``, ``plan``, ``acceptEdits``,
            ``bypassPermissions``; see :func:`kandev_nb.agent.permissions.cli_permission_mode`).
        resume, resume_session_at, fork_session: ``--resume <session_id>``,
            ``--resume-session-at <message uuid>`` and ``--fork-session`` (both only with resume).
        resume_drops_turn: ``--resume-drops-turn=<prompt uuid>`` (the Agent SDK's option; only
            with `resume_session_at`): the CLI resumes only if every entry after the resume
            point belongs to the turn that prompt started, and refuses otherwise (an error
            result, exit code 1, "Resume rejected by --resume-drops-turn: ..." on stderr;
            :class:`~kandev_nb.errors.ResumeRejectedError`). Measured on 2.1.332.
        max_turns: ``--max-turns`` (API round trips, a positive int).
        max_budget_usd: ``--max-budget-usd`` (USD, >= 0).
        mcp_config: ``--mcp-config``: the user's path (passed as it is) or inline JSON
            (passed as it is too: visible to every local user, as any command line).
        mcp_config_files: more ``--mcp-config`` files (the ``kernel`` server's entry, in a
            :func:`private_file`), after `mcp_config`.
        system_prompt, append_system_prompt: the texts of ``--system-prompt-file`` /
            ``--append-system-prompt-file`` (each written to a :func:`private_file`, never
            on the command line).
        allowed_tools, disallowed_tools: ``--allowedTools`` / ``--disallowedTools`` rules
            (``"Read"``, ``"Bash(git *)"``), a tuple of strings (a list is turned into one).
        include_partial_messages: ``--include-partial-messages`` (`stream_event` deltas).
        extra_args: more flags, appended as they are (``--add-dir``, ``--effort``,
            ``--replay-user-messages``...: :mod:`kandev_nb.notebook.live_options`); never
            ``--agents`` (see `agents`).
        agents: subagent definitions, ``{name: {"description", "prompt", "tools"?, "model"?,
            ...}}`` (the Agent SDK's ``AgentDefinition`` keys), sent in the `initialize`
            control request as the SDK does, never on the command line: a definition may
            hold secrets, and Linux refuses one argument over 128 KiB ("Argument list too
            long"), so large definitions never started the CLI. Accepted by the `initialize`
            of every pinned CLI (2.1.332, 2.1.197, 2.1.118), which lists them in its answer's
            ``agents``. A JSON text of that dict is read as it; stored as a plain dict.
        json_schema: the JSON text of ``--json-schema`` (structured output: the model answers
            through a `StructuredOutput` tool, the `result` carries `structured_output`).
        forward_subagent_text: the Agent SDK's option of that name: ask the CLI, in
            `initialize` (``"forwardSubagentText": true``, never on argv), to send a subagent's
            text and thinking too, not only its tool calls: `assistant` lines whose
            `parent_tool_use_id` is the spawning Agent call's id (and whose `agent_id` names
            the subagent), with no `stream_event` deltas (measured on 2.1.332 and 2.1.197;
            2.1.118 ignores it). Off by default, as in the SDK.
        session_mirror: ``--session-mirror``: the CLI also prints every batch of entries it
            appends to a transcript as a ``transcript_mirror`` line (CLI 2.1.332; the session's
            :class:`~kandev_nb.agent.session_store.SessionStore` takes them).
        is_sandbox: set ``IS_SANDBOX=1`` for the process, the user's opt-in that lets the
            CLI run ``bypassPermissions`` as root; without it an inherited ``IS_SANDBOX`` is
            removed (:func:`process_env`).

    Raises:
        TypeError: a value of the wrong type (e.g. ``allowed_tools="Read"``, ``max_turns=1.5``).
        ValueError: an unknown permission mode, ``max_turns < 1`` or a negative budget.
    """

    cli_path: str | None = None
    cwd: str | None = None
    env: Mapping[str, str] = field(default_factory=dict)
    model: str | None = None
    permission_mode: str = "default"
    resume: str | None = None
    resume_session_at: str | None = None
    resume_drops_turn: str | None = None
    fork_session: bool = False
    max_turns: int | None = None
    max_budget_usd: float | None = None
    mcp_config: str | None = None
    mcp_config_files: tuple[str, ...] = ()
    system_prompt: str | None = None
    append_system_prompt: str | None = None
    allowed_tools: tuple[str, ...] = ()
    disallowed_tools: tuple[str, ...] = ()
    include_partial_messages: bool = True
    is_sandbox: bool = False
    json_schema: str | None = None
    extra_args: tuple[str, ...] = ()
    agents: Mapping[str, Mapping[str, Any]] | None = None
    forward_subagent_text: bool = False
    session_mirror: bool = False

    def __post_init__(self) -> None:
        for name in ("cli_path", "cwd"):
            value = getattr(self, name)
            if value is not None:
                if not isinstance(value, str | os.PathLike):
                    raise TypeError(f"{name} must be a path (str or os.PathLike) or None, not {value!r}")
                object.__setattr__(self, name, os.fspath(value))
        for name in _TEXT_FIELDS:
            value = getattr(self, name)
            if value is not None and not isinstance(value, str):
                raise TypeError(f"{name} must be a string or None, not {value!r}")
        if not isinstance(self.env, Mapping) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in self.env.items()
        ):
            raise TypeError(f"env must be a mapping of strings to strings, not {self.env!r}")
        object.__setattr__(self, "env", MappingProxyType(dict(self.env)))
        if self.permission_mode not in CLI_PERMISSION_MODES:
            raise ValueError(
                f"permission_mode must be one of {', '.join(CLI_PERMISSION_MODES)}, not {self.permission_mode!r}"
            )
        if self.max_turns is not None:
            if isinstance(self.max_turns, bool) or not isinstance(self.max_turns, int):
                raise TypeError(f"max_turns must be an int or None, not {self.max_turns!r}")
            if self.max_turns < 1:
                raise ValueError(f"max_turns must be at least 1, not {self.max_turns}")
        budget = self.max_budget_usd
        if budget is not None:
            if isinstance(budget, bool) or not isinstance(budget, int | float):
                raise TypeError(f"max_budget_usd must be a number of USD or None, not {budget!r}")
            if budget < 0 or math.isnan(budget):
                raise ValueError(f"max_budget_usd must be a non-negative number of USD, not {budget!r}")
        for name in ("allowed_tools", "disallowed_tools", "mcp_config_files"):
            value = getattr(self, name)
            if (
                isinstance(value, str)
                or not isinstance(value, tuple | list)
                or not all(isinstance(t, str) for t in value)
            ):
                raise TypeError(f"{name} must be a tuple of tool rules like ('Read', 'Bash(git *)'), not {value!r}")
            object.__setattr__(self, name, tuple(value))
        for name in _FLAG_FIELDS:
            if not isinstance(getattr(self, name), bool):
                raise TypeError(f"{name} must be True or False, not {getattr(self, name)!r}")
        if any(a == "--agents" or a.startswith("--agents=") for a in self.extra_args):
            raise ValueError(
                "--agents in extra_args would put agent definitions on the command line; "
                "pass them as agents={...}: they go in the initialize request"
            )
        object.__setattr__(self, "agents", check_agents(self.agents))

    def __hash__(self) -> int:
        # A tuple of the fields (this hashed a generator, by identity, before): env as its
        # sorted items, agents as sorted JSON (both are mappings).
        def value(name: str) -> Any:
            if name == "env":
                return tuple(sorted(self.env.items()))
            if name == "agents":
                return json.dumps(self.agents, sort_keys=True)
            return getattr(self, name)

        return hash(tuple(value(f.name) for f in fields(self)))

    def same_process(self, other: LaunchOptions) -> bool:
        """Whether a process started with `other` serves these options as well: equal but for
        the conversation it resumes (`resume`, `resume_session_at`, `fork_session`), its
        `permission_mode` and `is_sandbox` (a live process changes mode by the
        ``set_permission_mode`` control request; the Session restarts it for autonomous)."""

        def key(options: LaunchOptions) -> LaunchOptions:
            return replace(
                options,
                resume=None,
                resume_session_at=None,
                resume_drops_turn=None,
                fork_session=False,
                permission_mode="default",
                is_sandbox=False,
            )

        return key(self) == key(other)


def check_agents(agents: Any) -> dict[str, dict[str, Any]] | None:
    """`agents` as a plain JSON-able dict ``{name: {"description": str, "prompt": str, ...}}``
    (a copy), or None for none or an empty one. A str is read as JSON.

    Raises:
        TypeError: not a dict of dicts (or JSON of one), a name that is not a str, a value
            JSON cannot carry.
        ValueError: JSON text that does not parse.
    """
    if agents is None:
        return None
    if isinstance(agents, str):
        agents = json.loads(agents)
    if not isinstance(agents, Mapping) or not all(
        isinstance(k, str) and isinstance(v, Mapping) for k, v in agents.items()
    ):
        raise TypeError(
            'agents must be a dict of agent definitions like {"reviewer": {"description": "...", '
            f'"prompt": "..."}}}}, not {str(agents)[:80]!r}'
        )
    return json.loads(json.dumps({k: dict(v) for k, v in agents.items()})) or None


def build_argv(
    cli: str | os.PathLike[str], options: LaunchOptions, *, text_file: Callable[[str, str], str] | None = None
) -> list[str]:
    """The full argv for a stream-json session (the seed's flags) from `options`.

    Nothing is looked up or started. `options.cli_path`, `cwd` and `env` are not part of the
    argv (`cli` is the binary found for it; cwd and env go to the process). No value that
    may hold a secret is on it either (issue 24: every local user reads a command line):
    the system prompts go in files (`text_file`, default :func:`private_file`:
    ``(text, suffix) -> path``), ``--mcp-config`` gets the user's value as given (a path,
    or inline JSON the user typed) and the files of `options.mcp_config_files`. What
    stays on it: the binary, modes, model, session ids and message uuids, limits, tool rules,
    ``--json-schema`` (a schema, built from a type) and `extra_args` as the user wrote
    them (``--settings``; the README says they are visible). `options.agents` is not on it:
    agent definitions go in `initialize` (:class:`LaunchOptions`).
    """
    write = text_file or (lambda text, suffix: private_file(text, suffix))
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
            if options.resume_drops_turn is not None:  # equals form: never read as a flag of its own
                argv.append(f"--resume-drops-turn={options.resume_drops_turn}")
        if options.fork_session:
            argv.append("--fork-session")
    if options.max_turns is not None:
        argv += ["--max-turns", str(options.max_turns)]
    if options.max_budget_usd is not None:
        argv += ["--max-budget-usd", f"{options.max_budget_usd:g}"]
    configs = ([options.mcp_config] if options.mcp_config else []) + list(options.mcp_config_files)
    if configs:  # `--mcp-config <configs...>`: one flag per config, so no value is read as a config
        for config in configs:
            argv += ["--mcp-config", config]
    if options.system_prompt is not None:
        argv += ["--system-prompt-file", write(options.system_prompt, ".md")]
    if options.append_system_prompt is not None:
        argv += ["--append-system-prompt-file", write(options.append_system_prompt, ".md")]
    if options.allowed_tools:
        argv += ["--allowedTools", ",".join(options.allowed_tools)]
    if options.disallowed_tools:
        argv += ["--disallowedTools", ",".join(options.disallowed_tools)]
    if options.session_mirror:  # transcript_mirror lines for the session store (agent/session_store.py)
        argv.append("--session-mirror")
    if options.json_schema is not None:  # structured output (agent/structured.py)
        argv += ["--json-schema", options.json_schema]
    argv += list(options.extra_args)
    return argv


CHILD_ENV_NAMES: Final = frozenset(
    {
        # the system and the shell the Bash tool runs
        "PATH",
        "HOME",
        "USER",
        "LOGNAME",
        "SHELL",
        "TERM",
        "COLORTERM",
        "TMPDIR",
        "TEMP",
        "TMP",
        "LANG",
        "LANGUAGE",
        "TZ",
        "VIRTUAL_ENV",
        "CONDA_PREFIX",
        "CONDA_DEFAULT_ENV",
        # Windows
        "SYSTEMROOT",
        "COMSPEC",
        "PATHEXT",
        "USERPROFILE",
        "APPDATA",
        "LOCALAPPDATA",
        # proxies and certificates
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "NO_PROXY",
        "ALL_PROXY",
        "http_proxy",
        "https_proxy",
        "no_proxy",
        "all_proxy",
        "SSL_CERT_FILE",
        "SSL_CERT_DIR",
        "NODE_EXTRA_CA_CERTS",
        "REQUESTS_CA_BUNDLE",
        "CURL_CA_BUNDLE",
        # Claude Code's own settings that have no ANTHROPIC_/CLAUDE_ prefix
        "API_TIMEOUT_MS",
        "BASH_DEFAULT_TIMEOUT_MS",
        "BASH_MAX_TIMEOUT_MS",
        "BASH_MAX_OUTPUT_LENGTH",
        "MAX_THINKING_TOKENS",
        "MAX_MCP_OUTPUT_TOKENS",
        "SLASH_COMMAND_TOOL_CHAR_BUDGET",
        "USE_BUILTIN_RIPGREP",
    }
)
"""Variables of the kernel's environment the CLI inherits by name (:func:`child_env`)."""

CHILD_ENV_PREFIXES: Final = ("ANTHROPIC_", "CLAUDE_", "LC_", "XDG_", "DISABLE_", "ENABLE_", "MCP_")
"""Prefixes of inherited variables: Claude Code's own (``ANTHROPIC_*``, ``CLAUDE_*``,
``DISABLE_*``, ``ENABLE_*``, ``MCP_*``), the locale (``LC_*``) and the XDG folders."""

PROVIDER_ENV: Final = (
    ("CLAUDE_CODE_USE_BEDROCK", ("AWS_",), ()),
    ("CLAUDE_CODE_USE_VERTEX", ("GOOGLE_", "GCLOUD_", "CLOUDSDK_", "VERTEX_REGION_"), ("CLOUD_ML_REGION",)),
    ("CLAUDE_CODE_USE_FOUNDRY", ("AZURE_",), ()),
    ("CLAUDE_CODE_ENABLE_TELEMETRY", ("OTEL_",), ()),
)
"""A cloud provider's credentials (and OpenTelemetry's exporter settings) pass only while
the switch that uses them is on: ``(switch, prefixes, names)``."""

_OFF = frozenset({"", "0", "false", "no", "off"})


_CLAUDES_OWN: Final = ("ANTHROPIC_", "CLAUDE_")
"""Prefixes whose secret-looking names the CLI itself reads (``ANTHROPIC_API_KEY``,
``CLAUDE_CODE_OAUTH_TOKEN``); under the other prefixes a secret-looking name (``MCP_SERVER_TOKEN``,
``ENABLE_X_PASSWORD``) is somebody else's secret and stays in the kernel."""


def _inherited(name: str, env: Mapping[str, str]) -> bool:
    if name in CHILD_ENV_NAMES:
        return True
    if name.startswith(CHILD_ENV_PREFIXES):
        return name.startswith(_CLAUDES_OWN) or not is_secret_name(name)
    for switch, prefixes, names in PROVIDER_ENV:
        if env.get(switch, "").strip().lower() not in _OFF and (name.startswith(prefixes) or name in names):
            return True
    return False


def child_env(extra: Mapping[str, str] | None = None, base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The child's environment: an allow-list of ours (or of `base`), plus `extra`.

    Inherited: :data:`CHILD_ENV_NAMES` (``PATH``, ``HOME``, ``USER``, ``SHELL``, ``TERM``,
    ``TMPDIR``, ``LANG``, ``TZ``, proxies, certificate bundles, the active virtualenv or
    conda env, Claude Code's unprefixed settings) and :data:`CHILD_ENV_PREFIXES`
    (``ANTHROPIC_*``, ``CLAUDE_*``, ``DISABLE_*``, ``ENABLE_*``, ``MCP_*``, ``LC_*``,
    ``XDG_*``; under the last five, no secret-looking name such as ``MCP_SERVER_TOKEN``); a
    cloud provider's variables only with its switch on (:data:`PROVIDER_ENV`:
    ``AWS_*`` with ``CLAUDE_CODE_USE_BEDROCK=1``, ``GOOGLE_*``/``CLOUD_ML_REGION`` with
    ``CLAUDE_CODE_USE_VERTEX=1``, ``AZURE_*`` with ``CLAUDE_CODE_USE_FOUNDRY=1``, ``OTEL_*``
    with ``CLAUDE_CODE_ENABLE_TELEMETRY=1``). Nothing else: the kernel's secrets
    (``JUPYTERHUB_API_TOKEN``, ``PGPASSWORD``, ``GITHUB_TOKEN``, ``KANDEV_NB_LEDGER``...)
    stay in the kernel, where the agent's ``env`` in a Bash tool cannot print them. More
    variables are the user's to pass: `extra` (``configure(env=...)``, ``Session(env=...)``)
    is added as it is, and its switches count (``env={"CLAUDE_CODE_USE_BEDROCK": "1"}``).

    ``CLAUDECODE`` is never inherited, so the CLI does not refuse to start "inside another
    Claude Code session" when the kernel itself was started from one.
    """
    source = os.environ if base is None else base
    switches = {**source, **(extra or {})}
    env = {name: value for name, value in source.items() if _inherited(name, switches)}
    env.setdefault("CLAUDE_CODE_ENTRYPOINT", "sdk-py")
    env.update(extra or {})
    return env


def process_env(options: LaunchOptions, base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of a process started with `options`: :func:`child_env` with
    `options.env`, plus ``IS_SANDBOX=1`` if `options.is_sandbox`; otherwise any
    ``IS_SANDBOX`` inherited from the kernel is removed (only the user's opt-in counts)."""
    extra = dict(options.env)
    if options.is_sandbox:
        extra["IS_SANDBOX"] = "1"
    env = child_env(extra, base)
    if not options.is_sandbox and "IS_SANDBOX" not in options.env:
        env.pop("IS_SANDBOX", None)
    return env


SDK_URL_REFUSED_FROM: Final = (2, 1, 121)
"""The first CLI version that refuses ``--sdk-url`` to hosts other than Anthropic's."""


def sdk_url_supported(version: str) -> bool:
    """Whether CLI `version` ("2.1.118") still accepts ``--sdk-url`` to our own host.

    Raises:
        ValueError: `version` is not dotted integers.
    """
    parts = tuple(int(p) for p in version.split("."))
    return parts < SDK_URL_REFUSED_FROM


RESUME_DROPS_TURN_FROM: Final = (2, 1, 332)
"""The first CLI version known to take ``--resume-drops-turn`` (measured: 2.1.332 does; 2.1.197
and 2.1.118 stop at "error: unknown option '--resume-drops-turn=...'")."""


def resume_drops_turn_supported(version: str | None) -> bool:
    """Whether CLI `version` ("2.1.332") takes ``--resume-drops-turn``; None (a custom
    transport, no local binary) is taken as the newest. A version that is not dotted
    integers is taken as not supporting it."""
    if version is None:
        return True
    try:
        return tuple(int(p) for p in version.split(".")) >= RESUME_DROPS_TURN_FROM
    except ValueError:
        return False
