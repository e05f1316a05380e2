"""Fixtures shared by every test folder."""

from __future__ import annotations

from collections.abc import Iterator
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from packaging.utils import canonicalize_name

from kandev_nb.notebook import state as notebook_state_module
from kandev_nb.notebook.state import NotebookState

# Property tests check what a function gives, never how fast: on a busy 2-core machine one
# example can take 10x its quiet time, and a 200 ms deadline then fails a correct test.
settings.register_profile("kandev", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("kandev")

_SLOW_FOLDERS = ("binder", "bench", "controls", "fleet", "kernel", "kernel_tools", "notebooks", "record")
"""Folders whose tests each start a real kernel, a notebook, a fleet or a benchmark (seconds each)."""


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Every test under ``tests/browser/``, and every test that asks for a Chromium ``page``, is a
    ``browser`` test, and
    every test in :data:`_SLOW_FOLDERS` a ``slow`` one (others are marked where they are).

    Under pytest-xdist (``--dist loadgroup``) the browser tests go to one worker, which starts
    the one JupyterLab server and Chromium they share, and the cluster tests to one worker too
    (a LocalCluster of worker processes is heavy enough on 2 cores).

    A browser or cluster test that fails runs once more (pytest-rerunfailures), as JupyterLab's
    own Playwright suite retries once on CI: both drive processes with races of their own (Jupyter
    Server's kernel websocket, Chromium's rendering, a Dask scheduler's heartbeats) on two busy
    cores. Every rerun is reported in the summary (``R`` and "rerun"), and a test that fails
    twice fails the run."""
    tests = Path(__file__).parent
    reruns = config.pluginmanager.hasplugin("rerunfailures")  # off with -p no:rerunfailures
    for item in items:
        parts = item.path.relative_to(tests).parts if item.path.is_relative_to(tests) else ()
        if parts and parts[0] == "browser" or "page" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.browser)
        if parts and parts[0] in _SLOW_FOLDERS:
            item.add_marker(pytest.mark.slow)
        for group in ("browser", "cluster"):
            if item.get_closest_marker(group) is not None:
                item.add_marker(pytest.mark.xdist_group(group))
                if reruns and item.get_closest_marker("flaky") is None:
                    item.add_marker(pytest.mark.flaky(reruns=1, reruns_delay=2))
                break


@pytest.fixture
def notebook_state() -> Iterator[NotebookState]:
    """A fresh :class:`NotebookState` (settings, sessions, turns, spend) for one test; the
    one before it is put back afterwards, so nothing leaks between tests."""
    before = notebook_state_module._current
    state = notebook_state_module.install(NotebookState())
    try:
        yield state
    finally:
        notebook_state_module._current = before


# -- the versions the suite was last green with ---------------------------------------------

CONSTRAINTS = Path(__file__).with_name("constraints.txt")
"""``name==version`` for every distribution the suite was last green with (``pip freeze``);
the README's test install uses it as pip's constraints file (``-c``)."""


def constraint_drift(constraints: Path | None = None) -> list[tuple[str, str, str | None]]:
    """Distributions whose installed version differs from ``constraints`` (default :data:`CONSTRAINTS`).

    Returns:
        ``(name, version last green, version installed or None if missing)`` for each
        ``name==version`` line of the file that this environment does not match, sorted by name.
        An unreadable or missing file gives ``[]``.
    """
    try:
        lines = (constraints or CONSTRAINTS).read_text().splitlines()
    except OSError:
        return []
    drift = []
    for line in lines:
        name, sep, pinned = line.split("#", 1)[0].strip().partition("==")
        if not sep:
            continue
        try:
            installed: str | None = metadata.version(name)
        except metadata.PackageNotFoundError:
            installed = None
        if installed != pinned.strip():
            drift.append((canonicalize_name(name), pinned.strip(), installed))
    return sorted(drift)


def pytest_report_header(config: pytest.Config) -> str:
    drift = constraint_drift()
    if not drift:
        return f"dependencies: as in {CONSTRAINTS.relative_to(CONSTRAINTS.parents[1])} (last green)"
    names = ", ".join(f"{name} {installed or 'missing'}" for name, _, installed in drift[:8])
    more = f" and {len(drift) - 8} more" if len(drift) > 8 else ""
    return f"dependencies: {len(drift)} differ from tests/constraints.txt (last green): {names}{more}"


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    """After a failing run, name every dependency that is not the version the suite was last
    green with: a new release that breaks a test shows up here by name."""
    if exitstatus in (pytest.ExitCode.OK, pytest.ExitCode.NO_TESTS_COLLECTED):
        return
    drift = constraint_drift()
    if not drift:
        return
    terminalreporter.section("dependencies that differ from the last green run (tests/constraints.txt)")
    for name, pinned, installed in drift:
        terminalreporter.write_line(f"{name}: {installed or 'not installed'} here, green with {pinned}")
    terminalreporter.write_line(
        'a failure above may come from one of these; `python -m pip install -e ".[test]" -c tests/constraints.txt` '
        "installs the green set"
    )
