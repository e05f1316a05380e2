"""`notebooks/quickstart.ipynb` runs top to bottom offline, exactly as the README says.

``jupyter execute`` has no frontend, so the notebook's approval turn must end by itself:
its setup cell sets a 20 s approval timeout, which denies the Write. The ledger (a
temporary ``KANDEV_NB_LEDGER``) then holds the notebook's three turns.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kandev_nb.ledger import RunLedger

REPO = Path(__file__).resolve().parents[2]
QUICKSTART = REPO / "notebooks" / "quickstart.ipynb"

pytestmark = pytest.mark.timeout(300)


def test_quickstart_runs_offline_with_jupyter_execute(tmp_path: Path) -> None:
    ledger = tmp_path / "ledger.sqlite"
    env = dict(
        os.environ,
        KANDEV_NB_LEDGER=str(ledger),
        IPYTHONDIR=str(tmp_path / "ipython"),
        JUPYTER_RUNTIME_DIR=str(tmp_path / "runtime"),
    )
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "KANDEV_NB_APPROVAL_TIMEOUT"):
        env.pop(name, None)
    copy = tmp_path / "notebooks"
    shutil.copytree(REPO / "notebooks", copy, ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    done = subprocess.run(
        [sys.executable, "-m", "jupyter", "execute", "quickstart.ipynb", "--output", "quickstart-run"],
        cwd=copy,
        env=env,
        capture_output=True,
        text=True,
        timeout=280,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-4000:]

    runs = RunLedger(ledger).runs()
    assert runs["prompt"].tolist() == ["What does greet.py do?", "Add a test for greet.", "Use an f-string in greet."]
    assert not runs["is_error"].any()
    assert runs["permission_denials"].tolist() == [0, 1, 0]  # nobody clicked: the Write was denied
    assert runs["session_id"].nunique() == 1  # one conversation across the cells
    assert (runs["cost_usd"] > 0).all()

    # what a headless run saves: the turns' static renderings and no widget but the bridge's
    # first page code (bridge_stub.ts, a few lines): no page ever said it was there (issue 37;
    # nbclient keeps every widget state it saw, closed or not: 366 KB here before issue 37)
    executed = copy / "quickstart-run.ipynb"
    states = json.loads(executed.read_text())["metadata"].get("widgets", {})
    models = states.get("application/vnd.jupyter.widget-state+json", {}).get("state", {}).values()
    kinds = sorted((m["model_name"], str(m["state"].get("_anywidget_id"))) for m in models)
    assert kinds == [("AnyModel", "kandev_nb.notebook.bridge.NotebookBridge"), ("LayoutModel", "None")], kinds
    assert all(len(m["state"].get("_esm", "")) < 1_000 for m in models)  # the stub, not the bridge
    turns = [c for c in json.loads(executed.read_text())["cells"] if "".join(c["source"]).startswith("%%claude")]
    assert len(turns) == 3
    for cell in turns:  # each turn's static rendering, as a cell output of its own
        assert [list(o.get("data", {})) for o in cell["outputs"]] == [["text/html", "text/markdown", "text/plain"]]
    assert executed.stat().st_size < 40_000, executed.stat().st_size
