"""`notebooks/kernel_tools.ipynb` runs top to bottom offline with ``jupyter execute``."""

from __future__ import annotations

import base64
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

REPO = Path(__file__).resolve().parents[2]
NOTEBOOK = REPO / "notebooks" / "kernel_tools.ipynb"

pytestmark = pytest.mark.timeout(300)


def test_kernel_tools_notebook_runs_offline_with_jupyter_execute(tmp_path: Path) -> None:
    copy = tmp_path / NOTEBOOK.name
    shutil.copy(NOTEBOOK, copy)
    env = dict(
        os.environ,
        KANDEV_NB_LEDGER=str(tmp_path / "ledger.sqlite"),
        IPYTHONDIR=str(tmp_path / "ipython"),
        JUPYTER_RUNTIME_DIR=str(tmp_path / "runtime"),
    )
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "KANDEV_NB_APPROVAL_TIMEOUT"):
        env.pop(name, None)
    done = subprocess.run(
        [sys.executable, "-m", "jupyter", "execute", "--inplace", str(copy)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=280,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-4000:]

    cells = [c for c in nbformat.read(copy, as_version=4).cells if c.cell_type == "code"]
    by_source = {c.source.splitlines()[0] if c.source else "": c for c in cells}
    asked = by_source["%%claude"].outputs
    answer = "\n".join(o.get("data", {}).get("text/plain", "") for o in asked)
    assert "sales: pandas.DataFrame" in answer and "shape: (4, 3)" in answer  # what inspect_variable returned

    ran = by_source["%%claude --approve allow_run_code"].outputs
    assert not [o for o in ran if "image/png" in o.get("data", {})]  # the figure is on its card:
    saved = "".join(o.get("data", {}).get("text/html", "") for o in ran)
    pngs = re.findall(r'class="kandev-figure" src="data:image/png;base64,([^"]+)"', saved)
    assert len(pngs) == 1 and base64.b64decode(pngs[0]).startswith(b"\x89PNG")
    assert saved.index("kandev-figure") < saved.index("kandev-footer")
    assert "1226.75" in saved  # the value is on the run_code card ("result:") ...
    assert not [o for o in ran if o.get("data", {}).get("text/plain") == "1226.75"]  # ... not below the footer

    checks = by_source["import json"].outputs[0]["text"]
    assert checks.splitlines() == ["columns seen: True", "chart sent as an image: True", "secret value seen: False"]
