"""Test helpers shipped with kandev_nb: a scripted Anthropic API and pinned Claude Code CLIs.

``ScriptedModelServer`` answers the real CLI's API calls from a script of replies;
``pinned_cli`` finds the CLI versions the project is tested against; ``scripted_env``
is the environment that connects the two. The pytest fixtures live in
``kandev_nb.testing.pytest_plugin`` (registered as the ``kandev_nb`` pytest plugin).

Names are imported lazily: pytest loads the plugin (and so this package) in every
environment where kandev_nb is installed, and starlette/uvicorn come only with the
``kandev-nb[testing]`` extra.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kandev_nb.testing.clis import (
        NEWEST_PINNED,
        PINNED_CLI_VERSIONS,
        CLIInstallError,
        cli_dir,
        cli_version,
        install_pinned_clis,
        pinned_cli,
        scripted_env,
    )
    from kandev_nb.testing.model_server import (
        HttpError,
        RecordedRequest,
        Reply,
        ScriptedModelServer,
        ScriptEntry,
        TextBlock,
        ThinkingBlock,
        ToolUseBlock,
        Usage,
        http_error,
        text,
        thinking,
        tool_use,
    )

__all__ = [
    "NEWEST_PINNED",
    "PINNED_CLI_VERSIONS",
    "CLIInstallError",
    "HttpError",
    "RecordedRequest",
    "Reply",
    "ScriptEntry",
    "ScriptedModelServer",
    "TextBlock",
    "ThinkingBlock",
    "ToolUseBlock",
    "Usage",
    "cli_dir",
    "cli_version",
    "http_error",
    "install_pinned_clis",
    "pinned_cli",
    "scripted_env",
    "text",
    "thinking",
    "tool_use",
]

_FROM_CLIS = frozenset(
    {
        "NEWEST_PINNED",
        "PINNED_CLI_VERSIONS",
        "CLIInstallError",
        "cli_dir",
        "cli_version",
        "install_pinned_clis",
        "pinned_cli",
        "scripted_env",
    }
)


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module = "clis" if name in _FROM_CLIS else "model_server"
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
