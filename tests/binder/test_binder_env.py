"""The Binder configuration builds an environment in which every notebook runs as it is.

repo2docker installs `binder/requirements.txt` for `binder/runtime.txt`'s Python, then runs
`binder/postBuild` from the repository root. This test does the same in a fresh virtual
environment (no system site-packages). In it, every module any notebook imports (and every
extension it loads) imports, the scripted model server starts and the Claude Code CLI is
found; then the fleet notebook, which needs the most of that environment (the CLI, the
scripted model, pandas, pydantic and a Dask cluster), runs top to bottom.

Every notebook's own behaviour is checked once, by `tests/notebooks/`, in the test
environment; running each again here (203 s) proved nothing more than the imports and the one
full run do: what differs between the two environments is what is installed.
"""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
import venv
from pathlib import Path

import pytest
from IPython.core.inputtransformer2 import TransformerManager

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
RUN_WHOLE = ROOT / "notebooks" / "fleet.ipynb"

pytestmark = pytest.mark.timeout(1500)


def notebook_imports(notebook: Path) -> set[str]:
    """Every module a notebook's code cells import, and every extension they ``%load_ext``
    (dotted names, e.g. ``{"kandev_nb", "matplotlib.pyplot"}``)."""
    names: set[str] = set()
    for cell in json.loads(notebook.read_text())["cells"]:
        if cell["cell_type"] != "code":
            continue
        source = "".join(cell["source"])
        names.update(re.findall(r"^\s*%load_ext\s+([\w.]+)", source, flags=re.MULTILINE))
        # as IPython runs it: magics and shell lines become calls, a cell magic's body a string
        for node in ast.walk(ast.parse(TransformerManager().transform_cell(source))):
            if isinstance(node, ast.Import):
                names.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names.add(node.module)
    return names


def test_runtime_matches_this_python() -> None:
    wanted = (ROOT / "binder" / "runtime.txt").read_text().strip()
    assert wanted == f"python-{sys.version_info.major}.{sys.version_info.minor}"


def test_the_imports_are_read_from_every_notebook() -> None:
    assert RUN_WHOLE in NOTEBOOKS
    fleet = notebook_imports(RUN_WHOLE)
    assert {"kandev_nb", "kandev_nb.testing", "distributed", "pandas", "pydantic"} <= fleet
    assert "matplotlib.pyplot" in notebook_imports(ROOT / "notebooks" / "cost_analysis.ipynb")


@pytest.mark.slow
def test_binder_environment_runs_the_notebooks(tmp_path: Path) -> None:
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

    def run(*cmd: str, cwd: Path = ROOT) -> str:
        done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, check=False)
        assert done.returncode == 0, f"{' '.join(cmd)} failed:\n{done.stdout[-4000:]}\n{done.stderr[-4000:]}"
        return done.stdout

    run(str(bin_dir / "python"), "-m", "pip", "install", "-q", "-r", "binder/requirements.txt")
    run("bash", "binder/postBuild")

    modules = sorted(set().union(*(notebook_imports(nb) for nb in NOTEBOOKS)))
    check = (
        "import importlib, sys\n"
        f"for name in {modules!r}:\n"
        "    importlib.import_module(name)\n"
        "from kandev_nb.testing import ScriptedModelServer\n"
        "from kandev_nb.wire.cli import find_cli\n"
        "with ScriptedModelServer() as server:\n"
        "    print('model server', server.url)\n"
        "print('cli', find_cli())\n"
    )
    out = run(str(bin_dir / "python"), "-c", check, cwd=tmp_path)
    assert "model server http://127.0.0.1:" in out and "cli " in out

    executed = tmp_path / RUN_WHOLE.name
    run(
        str(bin_dir / "jupyter"),
        "nbconvert",
        "--to",
        "notebook",
        "--execute",
        "--ExecutePreprocessor.timeout=300",
        "--output",
        str(executed),
        str(RUN_WHOLE),
    )
    cells = json.loads(executed.read_text())["cells"]
    errors = [o for c in cells if c["cell_type"] == "code" for o in c.get("outputs", []) if o["output_type"] == "error"]
    assert not errors and all(c.get("execution_count") for c in cells if c["cell_type"] == "code" and c["source"])
