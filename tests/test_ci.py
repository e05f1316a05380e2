"""CI runs what a newcomer runs: `.ci/run` is the README's two commands in a fresh virtual
environment, and the suite names a dependency that is not the version it was last green with."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.conftest import CONSTRAINTS, constraint_drift

ROOT = Path(__file__).resolve().parents[1]


def _readme_block(after_heading: str, starting: str) -> str:
    """The first ```bash block under ``after_heading`` whose command starts with ``starting``."""
    readme = (ROOT / "README.md").read_text()
    section = readme.split(after_heading, 1)[1]
    for block in re.findall(r"```bash\n(.*?)```", section, flags=re.DOTALL):
        if block.strip().startswith(starting):
            return block.strip()
    raise AssertionError(f"no ```bash block starting {starting!r} under {after_heading!r} in README.md")


def _commands(script: str) -> list[str]:
    return [line.strip() for line in script.splitlines() if line.strip() and not line.lstrip().startswith("#")]


def test_ci_runs_the_readme_commands_in_a_fresh_venv() -> None:
    install = _readme_block("For development", "python -m pip install")
    test = _readme_block("## Run the tests", "python -m pytest")
    ci = _commands((ROOT / ".ci" / "run").read_text())
    assert install in ci and test in ci, f".ci/run does not run the README's commands:\n{install}\n{test}"
    assert ci.index(install) < ci.index(test)
    # the venv is made anew and entered before the install
    venv = next(i for i, line in enumerate(ci) if "-m venv" in line)
    activate = next(i for i, line in enumerate(ci) if line.startswith(". ") and "activate" in line)
    assert any(line.startswith('rm -rf "$VENV"') for line in ci[:venv])
    assert venv < activate < ci.index(install)
    assert "-c tests/constraints.txt" in install  # the last green versions


def test_the_constraints_pin_what_the_suite_needs() -> None:
    pins = dict(line.split("==", 1) for line in CONSTRAINTS.read_text().splitlines() if "==" in line)
    names = {name.lower().replace("_", "-") for name in pins}
    for needed in ("pygments", "jupyterlab", "ipykernel", "claude-agent-sdk", "distributed", "pytest"):
        assert needed in names, f"tests/constraints.txt does not pin {needed}"
    assert "kandev-nb" not in names  # the project itself is never pinned


def test_drift_names_the_package_and_both_versions(tmp_path: Path) -> None:
    file = tmp_path / "constraints.txt"
    file.write_text("# comment\npytest==0.0.1\nno-such-dist-kandev==1.0\nPygments==99.0  # old\n")
    drift = {name: (pinned, installed) for name, pinned, installed in constraint_drift(file)}
    assert drift["pytest"] == ("0.0.1", pytest.__version__)
    assert drift["no-such-dist-kandev"] == ("1.0", None)
    assert drift["pygments"][0] == "99.0" and drift["pygments"][1] is not None


class _Reporter:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def section(self, title: str) -> None:
        self.lines.append(f"== {title} ==")

    def write_line(self, line: str) -> None:
        self.lines.append(line)


def test_drift_is_reported_after_a_failing_run_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tests import conftest

    file = tmp_path / "constraints.txt"
    file.write_text("pytest==0.0.1\n")
    monkeypatch.setattr(conftest, "CONSTRAINTS", file)
    failed, passed = _Reporter(), _Reporter()
    conftest.pytest_terminal_summary(failed, pytest.ExitCode.TESTS_FAILED, None)  # type: ignore[arg-type]
    conftest.pytest_terminal_summary(passed, pytest.ExitCode.OK, None)  # type: ignore[arg-type]
    assert f"pytest: {pytest.__version__} here, green with 0.0.1" in failed.lines
    assert passed.lines == []
