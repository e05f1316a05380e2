"""The code stays typed (mypy --strict), linted (ruff), and its public surface deliberate."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _run(*cmd: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *cmd], cwd=ROOT, capture_output=True, text=True, check=False)


@pytest.mark.timeout(600)
@pytest.mark.slow
def test_mypy_strict() -> None:
    done = _run("mypy", "kandev_nb")
    assert done.returncode == 0, done.stdout[-4000:]


def test_ruff() -> None:
    done = _run("ruff", "check", "kandev_nb", "tests", "benchmarks")
    assert done.returncode == 0, done.stdout[-4000:]


def test_ruff_format() -> None:
    """The tree is as `ruff format` writes it (line length 120, pyproject.toml)."""
    done = _run("ruff", "format", "--check", "kandev_nb", "tests", "benchmarks")
    assert done.returncode == 0, done.stdout[-4000:]


@pytest.mark.parametrize(
    "module",
    [
        "kandev_nb",
        "kandev_nb.agent.events",
        "kandev_nb.agent.tools",
        "kandev_nb.wire.protocol",
        "kandev_nb.agent.session",
        "kandev_nb.agent.permissions",
        "kandev_nb.policy",
        "kandev_nb.testing",
    ],
)
def test_all_names_exist_and_are_documented(module: str) -> None:
    mod = importlib.import_module(module)
    for name in mod.__all__:
        obj = getattr(mod, name)  # raises if __all__ names something missing
        if callable(obj) and not name.startswith("__") and getattr(obj, "__module__", "").startswith("kandev_nb"):
            assert (obj.__doc__ or "").strip(), f"{module}.{name} has no docstring"
