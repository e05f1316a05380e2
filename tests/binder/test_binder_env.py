"""The Binder configuration builds an environment in which every notebook runs as it is.

repo2docker installs `binder/requirements.txt` for `binder/runtime.txt`'s Python, then runs
`binder/postBuild` from the repository root. This test does the same in a fresh virtual
environment (no system site-packages) and executes each notebook in `notebooks/` there.
"""

from __future__ import annotations

import os
import subprocess
import sys
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))

pytestmark = pytest.mark.timeout(1500)


def test_runtime_matches_this_python() -> None:
    wanted = (ROOT / "binder" / "runtime.txt").read_text().strip()
    assert wanted == f"python-{sys.version_info.major}.{sys.version_info.minor}"


def test_binder_environment_runs_every_notebook(tmp_path: Path) -> None:
    assert NOTEBOOKS, "no notebooks to run"
    env_dir = tmp_path / "binder-env"
    venv.create(env_dir, with_pip=True)
    bin_dir = env_dir / "bin"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "KANDEV_CLAUDE_CLI")}
    env.update(
        PATH=f"{bin_dir}{os.pathsep}{env['PATH']}",
        VIRTUAL_ENV=str(env_dir),
        KANDEV_NB_LEDGER=str(tmp_path / "ledger.sqlite"),
        JUPYTER_PLATFORM_DIRS="1",
    )

    def run(*cmd: str, cwd: Path = ROOT) -> None:
        done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, check=False)
        assert done.returncode == 0, f"{' '.join(cmd)} failed:\n{done.stdout[-4000:]}\n{done.stderr[-4000:]}"

    run(str(bin_dir / "python"), "-m", "pip", "install", "-q", "-r", "binder/requirements.txt")
    run("bash", "binder/postBuild")
    for notebook in NOTEBOOKS:
        out = tmp_path / notebook.name
        run(
            str(bin_dir / "jupyter"),
            "nbconvert",
            "--to",
            "notebook",
            "--execute",
            "--ExecutePreprocessor.timeout=300",
            "--output",
            str(out),
            str(notebook),
        )
        assert out.exists()
