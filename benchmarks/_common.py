"""What the benchmarks share: finding the package, and the shape of their last lines.

Each benchmark is a script: ``python benchmarks/bench_<name>.py [--quick]`` from a clone.
It measures this clone's ``kandev_nb`` (its root goes first on ``sys.path``), unless
``PYTHONPATH`` is set: then whatever that finds (e.g. an older checkout, to compare). It
prints its tables, then, last, one ``headline:`` line per headline
ratio, ``headline: <label>: <number>x <baseline>`` (for example ``headline: framer +
parse + adapter: 1.52x json.loads``); ``tests/bench`` reads those lines and the tables.
"""

from __future__ import annotations

import math
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
"""The clone: ``tests/transcripts`` (recorded CLI output) lives under it."""


def use_this_clone() -> None:
    """Put the clone's root first on ``sys.path`` unless ``PYTHONPATH`` chooses the package."""
    if not os.environ.get("PYTHONPATH"):
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
