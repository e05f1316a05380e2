from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.kernel.kernel_harness import KernelHarness


@pytest.fixture
def ledger_path(tmp_path: Path) -> Path:
    return tmp_path / "ledger.sqlite"


@pytest.fixture
def kernel(claude_workdir: Path, ledger_path: Path) -> Iterator[KernelHarness]:
    """A real python3 kernel whose ledger is a temporary SQLite file."""
    env = dict(os.environ)
    env["KANDEV_NB_LEDGER"] = str(ledger_path)
    env["KANDEV_NB_SPOOL"] = str(ledger_path.parent / "spool")  # never the user's real spool
    harness = KernelHarness(env=env, cwd=str(claude_workdir))
    try:
        yield harness
    finally:
        harness.close()


def setup_code(claude_env: dict[str, str], cwd: Path, **settings: object) -> str:
    """The cell a notebook runs first: load the extension, point it at the scripted model."""
    extra = "".join(f", {k}={v!r}" for k, v in settings.items())
    return f"%load_ext kandev_nb\nimport kandev_nb\nkandev_nb.configure(env={claude_env!r}, cwd={str(cwd)!r}{extra})\n"
