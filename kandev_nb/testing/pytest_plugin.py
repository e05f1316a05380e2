"""pytest fixtures for tests that drive the real Claude Code CLI against a scripted model.

Registered as the ``kandev_nb`` pytest plugin (entry point ``pytest11``), so any project
with kandev_nb installed gets them::

    def test_hello(scripted_model, claude_cli, claude_env, claude_workdir):
        scripted_model.push(Reply(text("Hello")))
        subprocess.run([claude_cli, "-p", "hi"], env=os.environ | claude_env, cwd=claude_workdir)

``claude_cli`` is the newest pinned CLI; parametrize it indirectly with a version string
for another one: ``@pytest.mark.parametrize("claude_cli", ["2.1.197"], indirect=True)``.
A pinned CLI that is not installed fails the test with the command that installs it.

``postgres_url`` is a new database on a PostgreSQL cluster that runs for the whole test
session (``postgres_cluster``; :mod:`kandev_nb.testing.postgres`).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from kandev_nb.testing.clis import NEWEST_PINNED, pinned_cli, scripted_env

if TYPE_CHECKING:
    # Imported inside the fixture: this plugin loads wherever kandev_nb is installed,
    # and the server needs the optional starlette/uvicorn (``kandev-nb[testing]``).
    from kandev_nb.testing.model_server import ScriptedModelServer
    from kandev_nb.testing.postgres import PostgresCluster

_databases = itertools.count(1)


@pytest.fixture
def scripted_model() -> Iterator[ScriptedModelServer]:
    """A started :class:`ScriptedModelServer` with an empty script; stopped afterwards."""
    from kandev_nb.testing.model_server import ScriptedModelServer

    with ScriptedModelServer() as server:
        yield server


@pytest.fixture
def claude_home(tmp_path: Path) -> Path:
    """An empty directory to serve as the CLI's ``HOME``."""
    home = tmp_path / "home"
    home.mkdir()
    return home


@pytest.fixture
def claude_workdir(tmp_path: Path) -> Path:
    """An empty project directory for the CLI's cwd, separate from ``claude_home``."""
    workdir = tmp_path / "project"
    workdir.mkdir()
    return workdir


@pytest.fixture
def claude_env(scripted_model: ScriptedModelServer, claude_home: Path) -> dict[str, str]:
    """Environment additions (merge over ``os.environ``) pointing the CLI at ``scripted_model``."""
    return scripted_env(scripted_model, claude_home)


@pytest.fixture
def claude_cli(request: pytest.FixtureRequest) -> Path:
    """Path of a pinned CLI binary: ``NEWEST_PINNED`` or the indirect parameter's version."""
    version: str = getattr(request, "param", NEWEST_PINNED)
    try:
        return pinned_cli(version)
    except FileNotFoundError as exc:
        pytest.fail(str(exc), pytrace=False)


@pytest.fixture(scope="session")
def postgres_cluster() -> Iterator[PostgresCluster]:
    """A PostgreSQL cluster started once per test session (:class:`~kandev_nb.testing.postgres.PostgresCluster`).

    Initialized into a temporary directory (owned by the ``postgres`` user when run as root),
    listening on a free port of 127.0.0.1; stopped and removed at the end. No server
    installed fails the test with the command that installs one.
    """
    from kandev_nb.testing.postgres import PostgresCluster, PostgresNotInstalled

    try:
        cluster = PostgresCluster()
    except PostgresNotInstalled as exc:
        pytest.fail(str(exc), pytrace=False)
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.cleanup()


@pytest.fixture
def postgres_url(postgres_cluster: PostgresCluster) -> Iterator[str]:
    """The SQLAlchemy URL (``postgresql+psycopg://``, with password) of a new empty database.

    One database per test, dropped afterwards (open connections are closed by the drop).
    A test that stopped the server gets it started again first.
    """
    name = f"t_{next(_databases)}"
    if not postgres_cluster.running:
        postgres_cluster.start()
    url = postgres_cluster.create_database(name)
    try:
        yield url
    finally:
        if not postgres_cluster.running:
            postgres_cluster.start()
        postgres_cluster.drop_database(name)
