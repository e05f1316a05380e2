"""What the benchmarks share: finding the package, and the shape of their last lines.

Each benchmark is a script: ``python benchmarks/bench_<name>.py [--quick]`` from a clone.
It imports the installed ``kandev_nb`` (``pip install -e .``), or this clone's copy when
none is installed. It prints its tables, then, last, one ``headline:`` line per headline
ratio, ``headline: <label>: <number>x <baseline>`` (for example ``headline: framer +
parse + adapter: 1.52x json.loads``); ``tests/bench`` reads those lines and the tables.
"""

from __future__ import annotations

import importlib.util
import math
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
"""The clone: ``tests/transcripts`` (recorded CLI output) lives under it."""


def use_clone_if_not_installed() -> None:
    """Put the clone's root first on ``sys.path`` when ``kandev_nb`` is not importable."""
    if importlib.util.find_spec("kandev_nb") is None:
        sys.path.insert(0, str(ROOT))


def headline(label: str, ratio: float, baseline: str) -> str:
    """One headline line, ``headline: <label>: 1.52x <baseline>``; printed and returned.

    A ratio that is not a finite positive number is printed as it is (``nanx``), so that
    ``tests/bench`` fails on it rather than the benchmark hiding it.
    """
    value = f"{ratio:.2f}x" if math.isfinite(ratio) else f"{ratio}x"
    line = f"headline: {label}: {value} {baseline}"
    print(line, flush=True)
    return line
