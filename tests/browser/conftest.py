"""Fixtures for the real-browser tests: a JupyterLab 4 server and headless Chromium.

`jupyter_lab` starts ``jupyter lab`` on a free 127.0.0.1 port with a random token, no
browser, and a temporary root dir (``lab.root``) where tests put notebooks. Its kernels
inherit ``KANDEV_NB_LEDGER`` (a temporary SQLite file) and private Jupyter/IPython dirs.
At the end every kernel is shut down through the REST API, then the server itself.

`page` is a Chromium page (Playwright's sync API) in a fresh profile, launched with the
flags this closed-network machine needs; the browser is Debian's ``/usr/bin/chromium``,
never a downloaded one.
"""

from __future__ import annotations

import dataclasses
import http.client
import json
import os
import re
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import sync_playwright

CHROMIUM = Path(os.environ.get("KANDEV_NB_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
REPO = Path(__file__).resolve().parents[2]
SCREENSHOTS = REPO / "artifacts" / "screenshots"
"""Where every browser test saves its screenshots (CI keeps this folder as an artifact)."""
DOCS_SCREENSHOTS = REPO / "docs" / "screenshots"
"""Committed screenshots the README shows (refreshed by ``KANDEV_NB_UPDATE_DOCS=1``)."""

# Settings that keep toasts and news prompts out of the screenshots, and every cell in the
# DOM (no windowing), so cell locators can count cells.
_LAB_SETTINGS = {
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {
        "fetchNews": "false",
        "checkForUpdates": False,
    },
}


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class LabServer:
    """A running ``jupyter lab`` process.

    Attributes:
        url: base URL without a trailing slash, e.g. ``http://127.0.0.1:41231``.
        token: the server's token (every request needs it).
        root: the test's dir; notebooks put here open as ``/lab/tree/<prefix><name>``.
        process: the server process.
        log: its combined stdout/stderr file.
        prefix: ``root`` relative to the server's own root dir, with a trailing ``/`` (``""``
            for a server of the test's own; ``"<test>/"`` for the shared one).
    """

    url: str
    token: str
    root: Path
    process: subprocess.Popen[bytes]
    log: Path
    prefix: str = ""

    def api(self, method: str, path: str, body: Any = None, timeout: float = 10.0) -> Any:
        """Call the REST API (``path`` like ``/api/kernels``); returns the decoded JSON or None.

        Raises:
            urllib.error.HTTPError: a non-2xx answer.
        """
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(
            f"{self.url}{path}",
            data=data,
            method=method,
            headers={"Authorization": f"token {self.token}", "Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=timeout) as response:
            raw = response.read()
        return json.loads(raw) if raw else None

    def notebook_url(self, name: str) -> str:
        """The page that opens notebook ``name`` (relative to ``root``), token included."""
        return f"{self.url}/lab/tree/{self.prefix}{name}?token={self.token}&reset"

    def log_tail(self, lines: int = 40) -> str:
        """The last lines of the server log (for failure messages)."""
        text = self.log.read_text(errors="replace") if self.log.exists() else ""
        return "\n".join(text.splitlines()[-lines:])

    def wait_ready(self, timeout: float = 90.0) -> None:
        """Block until ``/api/status`` answers.

        Raises:
            RuntimeError: the process exited, or ``timeout`` seconds passed.
        """
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"jupyter lab exited with {self.process.returncode}:\n{self.log_tail()}")
            try:
                self.api("GET", "/api/status", timeout=2)
                return
            except (urllib.error.URLError, ConnectionError, TimeoutError, http.client.HTTPException):
                # HTTPException: something that is not an HTTP server answered on the port
                # (another test's process took it first); Lab then exits and the fixture retries
                time.sleep(0.25)
        raise RuntimeError(f"jupyter lab did not answer /api/status in {timeout} s:\n{self.log_tail()}")

    def shutdown_kernels(self) -> None:
        """Shut down every session and kernel of the server (errors ignored)."""
        for kind in ("sessions", "kernels"):
            try:
                items = self.api("GET", f"/api/{kind}")
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                return
            for item in items or []:
                try:
                    self.api("DELETE", f"/api/{kind}/{item['id']}", timeout=30)
                except (urllib.error.URLError, ConnectionError, TimeoutError):
                    pass

    def stop(self) -> None:
        """Kernels first, then ``POST /api/shutdown``; terminate, then kill, if it lingers."""
        if self.process.poll() is None:
            self.shutdown_kernels()
            try:
                self.api("POST", "/api/shutdown")
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                pass
        for sig, wait in ((None, 20.0), (signal.SIGTERM, 10.0), (signal.SIGKILL, 10.0)):
            if sig is not None and self.process.poll() is None:
                self.process.send_signal(sig)
            try:
                self.process.wait(wait)
                return
            except subprocess.TimeoutExpired:
                continue


def _lab_env(tmp: Path, ledger: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        KANDEV_NB_LEDGER=str(ledger),
        JUPYTER_CONFIG_DIR=str(tmp / "jupyter-config"),
        JUPYTER_RUNTIME_DIR=str(tmp / "jupyter-runtime"),
        JUPYTER_DATA_DIR=str(tmp / "jupyter-data"),  # the trust database lives here
        IPYTHONDIR=str(tmp / "ipython"),
        JUPYTER_PLATFORM_DIRS="1",
        PYTHONUNBUFFERED="1",
    )
    env.pop("JUPYTER_TOKEN", None)
    return env


def disable_extensions(tmp: Path, *names: str) -> None:
    """Disable the frontend extensions `names` (e.g. ``"kandev-nb"``) for the servers whose
    ``JUPYTER_CONFIG_DIR`` is ``tmp / "jupyter-config"`` (:func:`_lab_env`): ``labconfig/page_config.json``,
    as ``jupyter labextension disable`` writes it. Call it before the server starts."""
    target = tmp / "jupyter-config" / "labconfig" / "page_config.json"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps({"disabledExtensions": {name: True for name in names}}))


def start_lab(
    tmp: Path,
    ledger: Path,
    extra_env: dict[str, str] | None = None,
    *,
    expose_app: bool = True,
) -> LabServer:
    """Start ``jupyter lab`` with its root at ``tmp / "root"`` and wait until it answers.

    `expose_app` False starts it as a person does (no ``window.jupyterapp``): the page is then
    driven only through what it shows (tests/extension).

    Raises:
        RuntimeError: the server did not come up (its log tail is in the message).
    """
    root = tmp / "root"
    root.mkdir(parents=True, exist_ok=True)
    settings = tmp / "lab-settings"
    for name, values in _LAB_SETTINGS.items():
        target = settings / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(values))
    port = free_port()
    token = secrets.token_hex(16)
    log = tmp / "jupyter-lab.log"
    env = _lab_env(tmp, ledger) | (extra_env or {})
    argv = [
        sys.executable,
        "-m",
        "jupyterlab",
        "--no-browser",
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",
        f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={root}",
        "--ServerApp.terminals_enabled=False",
        f"--LabServerApp.user_settings_dir={settings}",
        f"--LabServerApp.workspaces_dir={tmp / 'lab-workspaces'}",
        "--LabApp.news_url=None",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        "--LabApp.extension_manager=readonly",
    ]
    if expose_app:
        argv.append("--LabApp.expose_app_in_browser=True")
    if os.geteuid() == 0:
        argv.append("--ServerApp.allow_root=True")
    with log.open("wb") as out:
        process = subprocess.Popen(argv, cwd=root, env=env, stdout=out, stderr=subprocess.STDOUT)
    lab = LabServer(f"http://127.0.0.1:{port}", token, root, process, log)
    try:
        lab.wait_ready()
    except BaseException:
        lab.stop()
        raise
    return lab


@pytest.fixture
def lab_ledger(tmp_path: Path) -> Path:
    """The SQLite ledger file the Lab's kernels write to (``KANDEV_NB_LEDGER``)."""
    return tmp_path / "ledger.sqlite"


def _start_lab_retrying(tmp: Path, ledger: Path) -> LabServer:
    """:func:`start_lab`, with a second attempt on another port for the rare case where the
    free port was taken between :func:`free_port` and the server binding it."""
    try:
        return start_lab(tmp / "lab", ledger)
    except RuntimeError:
        return start_lab(tmp / "lab-2", ledger)


@pytest.fixture(scope="package")
def shared_lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LabServer]:
    """One JupyterLab server for every test of the package that needs no server of its own
    (a server starts in 5-15 s on 2 cores; there are about 40 browser tests)."""
    tmp = tmp_path_factory.mktemp("shared-lab")
    lab = _start_lab_retrying(tmp, tmp / "ledger.sqlite")
    try:
        yield lab
    finally:
        lab.stop()


def _settings_files(lab: LabServer) -> dict[Path, bytes]:
    settings = lab.root.parent / "lab-settings"
    return {path: path.read_bytes() for path in settings.rglob("*") if path.is_file()}


def _restore_settings(lab: LabServer, before: dict[Path, bytes]) -> None:
    for path in (lab.root.parent / "lab-settings").rglob("*"):
        if path.is_file() and path not in before:
            path.unlink()
    for path, data in before.items():
        if path.read_bytes() != data:
            path.write_bytes(data)


@pytest.fixture
def jupyter_lab(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[LabServer]:
    """A JupyterLab 4 server for one test, whose notebooks go in ``lab.root``.

    A test that reads its kernels' ledger (it asks for ``lab_ledger``) gets a server of its
    own, started with ``KANDEV_NB_LEDGER`` pointing there. Every other test gets a fresh
    folder of the package's shared server (:func:`shared_lab`): its kernels and sessions are
    shut down afterwards and the Lab settings it changed (a theme) are put back.
    """
    if "lab_ledger" in request.fixturenames:
        lab = _start_lab_retrying(tmp_path, request.getfixturevalue("lab_ledger"))
        try:
            yield lab
        finally:
            lab.stop()
        return
    shared: LabServer = request.getfixturevalue("shared_lab")
    name = re.sub(r"[^\w.-]+", "-", request.node.name)[:80]
    root = shared.root / name
    root.mkdir()
    before = _settings_files(shared)
    try:
        yield dataclasses.replace(shared, root=root, prefix=f"{name}/")
    finally:
        shared.shutdown_kernels()
        _restore_settings(shared, before)


@pytest.fixture
def lab_without_extension(tmp_path: Path) -> Iterator[LabServer]:
    """A JupyterLab 4 server for one test with kandev-nb's extension disabled: the page as
    where no extension runs (the kernel's widgets alone: its own toasts, its bridge)."""
    disable_extensions(tmp_path / "plain-lab", "kandev-nb")
    lab = start_lab(tmp_path / "plain-lab", tmp_path / "ledger.sqlite")
    try:
        yield lab
    finally:
        lab.stop()


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """Keep each phase's report on the item, so `page` can tell that its test failed."""
    report = yield
    setattr(item, f"report_{report.when}", report)
    return report


@pytest.fixture(scope="package")
def chromium() -> Iterator[Any]:
    """One headless Chromium for the package's tests (each test gets a context of its own)."""
    if not CHROMIUM.exists():
        pytest.fail(f"no Chromium at {CHROMIUM}: run `python -m kandev_nb.testing.install`", pytrace=False)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture
def page(chromium: Any, request: pytest.FixtureRequest) -> Iterator[Any]:
    """A Playwright page in a fresh browser context (no cookies, storage or permissions from
    another test; 1400x1000 viewport) of the package's Chromium.

    When the test fails, the page is saved as ``artifacts/screenshots/FAILED-<test>.png``.
    """
    context = chromium.new_context(viewport={"width": 1400, "height": 1000})
    try:
        context.set_default_timeout(60_000)
        the_page = context.new_page()
        yield the_page
        report = getattr(request.node, "report_call", None)
        if report is not None and report.failed:
            SCREENSHOTS.mkdir(parents=True, exist_ok=True)
            the_page.screenshot(path=str(SCREENSHOTS / f"FAILED-{request.node.name}.png"))
    finally:
        context.close()


@pytest.fixture
def screenshots() -> Path:
    """``artifacts/screenshots/`` (created); tests save their PNGs here."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    return SCREENSHOTS
