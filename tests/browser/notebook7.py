"""A Jupyter Notebook 7 server for the browser tests (the same :class:`LabServer` handle).

Notebook 7 is JupyterLab's components in a one-document page: ``/notebooks/<name>``. The
`notebook` package may be installed normally or with ``pip install --target DIR`` (then
``KANDEV_NB_NOTEBOOK7_SITE=DIR`` puts it on the server's and kernels' path, with its
labextension and schemas): the tests skip when it cannot be imported at all.
"""

from __future__ import annotations

import importlib.util
import json
import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest

from tests.browser.conftest import _LAB_SETTINGS, LabServer, _lab_env, free_port

SITE = os.environ.get("KANDEV_NB_NOTEBOOK7_SITE", "")


def notebook7_env() -> dict[str, str]:
    """Environment additions that make `notebook` importable (for a ``--target`` install)."""
    if not SITE:
        return {}
    share = Path(SITE) / "share" / "jupyter"
    path = os.pathsep.join(p for p in (os.environ.get("PYTHONPATH", ""), SITE) if p)
    return {"PYTHONPATH": path, "JUPYTER_PATH": str(share)}


def require_notebook7() -> None:
    """Skip the test when Notebook 7 is not installed (here or in ``KANDEV_NB_NOTEBOOK7_SITE``)."""
    if SITE and (Path(SITE) / "notebook" / "app.py").exists():
        return
    if importlib.util.find_spec("notebook.app") is None:
        pytest.skip("Jupyter Notebook 7 is not installed (pip install 'notebook>=7')")


def start_notebook7(tmp: Path, ledger: Path) -> LabServer:
    """Start ``jupyter notebook`` (7) with its root at ``tmp / "root"``; wait until it answers.

    Raises:
        RuntimeError: the server did not come up (its log tail is in the message).
    """
    root = tmp / "root"
    root.mkdir(parents=True, exist_ok=True)
    settings = tmp / "settings"
    for name, values in _LAB_SETTINGS.items():
        target = settings / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(values))
    port, token, log = free_port(), secrets.token_hex(16), tmp / "notebook7.log"
    argv = [
        sys.executable,
        "-m",
        "notebook",
        "--no-browser",
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",
        f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={root}",
        "--ServerApp.terminals_enabled=False",
        f"--JupyterNotebookApp.user_settings_dir={settings}",
        f"--JupyterNotebookApp.workspaces_dir={tmp / 'workspaces'}",
        "--JupyterNotebookApp.expose_app_in_browser=True",
    ]
    if SITE:
        argv.append(f"--JupyterNotebookApp.schemas_dir={Path(SITE) / 'share' / 'jupyter' / 'lab' / 'schemas'}")
    if os.geteuid() == 0:
        argv.append("--ServerApp.allow_root=True")
    with log.open("wb") as out:
        process = subprocess.Popen(
            argv, cwd=root, env=_lab_env(tmp, ledger) | notebook7_env(), stdout=out, stderr=subprocess.STDOUT
        )
    server = LabServer(f"http://127.0.0.1:{port}", token, root, process, log)
    try:
        server.wait_ready()
    except BaseException:
        server.stop()
        raise
    return server


def notebook_url(server: LabServer, name: str) -> str:
    """Notebook 7's page for notebook `name` (relative to the root), token included."""
    return f"{server.url}/notebooks/{name}?token={server.token}"
