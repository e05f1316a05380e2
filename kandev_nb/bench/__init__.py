"""Benchmarks: ``python -m kandev_nb.bench <name> [args]`` runs ``kandev_nb.bench_<name>.main(args)``.

Add a benchmark by writing a module ``kandev_nb/bench_<name>.py`` with
``main(argv: list[str]) -> int``; nothing here needs to change. Benchmarks print tables of
ratios measured in one run; they assert nothing.
"""

from __future__ import annotations

import importlib
import pkgutil

__all__ = ["available", "run"]


def available() -> list[str]:
    """Names of the benchmark modules found next to this package (``bench_<name>``)."""
    import kandev_nb

    return sorted(m.name.removeprefix("bench_") for m in pkgutil.iter_modules(kandev_nb.__path__)
                  if m.name.startswith("bench_"))


def run(name: str, argv: list[str]) -> int:
    """Run benchmark `name` with `argv`; returns its exit code.

    Raises:
        ModuleNotFoundError: there is no ``kandev_nb.bench_<name>`` module.
    """
    module = importlib.import_module(f"kandev_nb.bench_{name}")
    return int(module.main(argv) or 0)
