"""Options of the kernel tools, read at every call (importable without the `mcp` library)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["KernelToolsOptions", "options"]


@dataclass
class KernelToolsOptions:
    """Settings read at every tool call (change ``kandev_nb.kernel_tools.options``).

    Attributes:
        reveal_secrets: list and inspect variables with secret-looking names (token, key,
            password, secret) and stop redacting their values. Default False.
        run_timeout_s: seconds a ``run_code`` may run before it is stopped. Default 60.
        max_output_chars: cap in characters of each tool's text answer. Default 20000.
        history_cells: how many recent cells ``recent_history`` shows by default. Default 8.
    """

    reveal_secrets: bool = False
    run_timeout_s: float = 60.0
    max_output_chars: int = 20_000
    history_cells: int = 8


options = KernelToolsOptions()
"""The notebook-wide options every :class:`KernelTools` reads unless given its own."""
