"""Smoke test of ``python -m kandev_nb.bench ui --quick``: it runs and prints every row of
the issue-8 summary table. Figures are printed, never asserted (the machine is shared)."""

from __future__ import annotations

import subprocess
import sys

import pytest

ROWS = (
    "bytes/byte, 80 KB over 60 s",
    "bytes/byte, 6,000-delta turn, simulated",
    "bytes/byte, 6,000-delta turn, real CLI",
    "text updates in any 1 s while streaming, simulated",
    "text updates in any 1 s while streaming, real CLI",
    "first token: CLI line read -> widget append sent",
    "prompt sent -> first delta: raw loop vs %%claude widget",
    "final rendering equal to the text: Markdown",
    "final rendering equal to the text: a code block split across chunks",
    "final rendering equal to the text: a table",
    "final rendering: real CLI turn text == scripted text",
    "large output, shell stdout 5 MB",
    "large output, file read 2 MB",
    "warm turn, raw loop",
    "warm turn, %%claude path",
    "per-turn overhead: %%claude / raw",
    "our CPU per warm turn: raw loop vs %%claude",
    "start-up (process + initialize): raw vs kandev Session.start",
    "first turn incl. start-up: raw vs %%claude",
    "warm %%claude turns, one session: RSS growth",
    "warm %%claude turns: Python heap growth",
)


def test_quick_benchmark_prints_every_figure(cli_binary: object) -> None:
    out = subprocess.run([sys.executable, "-m", "kandev_nb.bench", "ui", "--quick", "--turns", "10"],
                         capture_output=True, text=True, timeout=600, check=False)
    assert out.returncode == 0, out.stderr[-3000:]
    table = out.stdout.split("Issue 8: every figure", 1)
    assert len(table) == 2, out.stdout[-3000:]
    missing = [row for row in ROWS if row not in table[1]]
    assert not missing, f"rows missing: {missing}\n{table[1]}"
    assert "DIFFERENT" not in out.stdout  # the rendering checks are exact, not timed


def test_without_the_cli_the_table_still_has_the_offline_rows() -> None:
    out = subprocess.run([sys.executable, "-m", "kandev_nb.bench", "ui", "--quick", "--no-real", "--turns", "10"],
                         capture_output=True, text=True, timeout=600, check=False)
    assert out.returncode == 0, out.stderr[-3000:]
    table = out.stdout.split("Issue 8: every figure", 1)[1]
    offline = [row for row in ROWS if "real CLI" not in row and "raw" not in row and "%%claude" not in row
               and "first token" not in row]
    missing = [row for row in (*offline, "finished TurnViews (no CLI): Python heap growth") if row not in table]
    assert len(offline) == 8 and not missing, f"rows missing: {missing}\n{table}"


@pytest.fixture
def cli_binary() -> object:
    from kandev_nb.wire.cli import CLINotFoundError, find_cli

    try:
        return find_cli(None)
    except CLINotFoundError:
        pytest.skip("no Claude Code CLI here")
