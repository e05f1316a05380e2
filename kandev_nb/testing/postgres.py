"""A throwaway PostgreSQL cluster for tests: Debian's server binaries, a temp dir, 127.0.0.1.

>>> with PostgresCluster() as cluster:              # doctest: +SKIP
...     url = cluster.create_database("t1")         # postgresql+psycopg://kandev:<pw>@127.0.0.1:PORT/t1

The cluster is made with ``initdb`` into a fresh temporary directory and started with
``pg_ctl`` on a free port of 127.0.0.1 only (no Unix socket outside that directory). As
root, every server command runs as the ``postgres`` user (PostgreSQL refuses to run as
root) and the directory is given to that user; otherwise as the current user. The
superuser ``kandev`` has a random password (scram-sha-256 over TCP), so the URLs carry a
real secret, as a team's would.

The server comes from ``python -m kandev_nb.testing.install`` (Debian's ``postgresql``).
The pytest plugin (:mod:`kandev_nb.testing.pytest_plugin`) starts one cluster per test
session (``postgres_cluster``) and gives each test a new database (``postgres_url``).
"""

from __future__ import annotations

import contextlib
import os
import pwd
import secrets
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path
from typing import Self

from kandev_nb.errors import PostgresNotInstalled

__all__ = ["PostgresCluster", "PostgresNotInstalled", "find_bin_dir"]

SERVER_USER = "postgres"
"""The OS user the server runs as when the tests run as root."""
SUPERUSER = "kandev"
"""The database superuser the cluster is made with."""


def find_bin_dir() -> Path:
    """The directory of the newest installed server's ``initdb`` and ``pg_ctl``.

    Looks in ``/usr/lib/postgresql/<major>/bin`` (Debian), then on ``PATH``.

    Raises:
        PostgresNotInstalled: none found; the message names the install command.
    """
    found = sorted(
        Path("/usr/lib/postgresql").glob("*/bin/initdb"),
        key=lambda p: int(p.parent.parent.name) if p.parent.parent.name.isdigit() else 0,
    )
    if found:
        return found[-1].parent
    on_path = shutil.which("initdb")
    if on_path:
        return Path(on_path).parent
    raise PostgresNotInstalled(
        "PostgreSQL's server is not installed (no initdb); run: python -m kandev_nb.testing.install"
    )


def free_port() -> int:
    """A TCP port of 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class PostgresCluster:
    """A PostgreSQL cluster in a temporary directory, listening on 127.0.0.1:`port`.

    Args:
        bin_dir: the server binaries (default: :func:`find_bin_dir`).

    Attributes:
        port: the TCP port, chosen free at :meth:`start`.
        password: the ``kandev`` superuser's password (random per cluster).
        root: the temporary directory (data, socket, log); removed by :meth:`cleanup`.

    Raises:
        PostgresNotInstalled: no server binaries.
    """

    def __init__(self, bin_dir: Path | None = None) -> None:
        self.bin_dir = bin_dir or find_bin_dir()
        self.password = secrets.token_urlsafe(16)
        self.port = 0
        self.root = Path(tempfile.mkdtemp(prefix="kandev-pg-"))
        self.data = self.root / "data"
        self.log = self.root / "server.log"
        self._as_server_user = os.geteuid() == 0
        if self._as_server_user:
            entry = pwd.getpwnam(SERVER_USER)
            os.chown(self.root, entry.pw_uid, entry.pw_gid)
        self.root.chmod(0o700)
        self._initdb()

    def _run(self, *argv: str) -> subprocess.CompletedProcess[str]:
        user = SERVER_USER if self._as_server_user else None
        done = subprocess.run(
            [str(self.bin_dir / argv[0]), *argv[1:]],
            user=user,
            cwd=self.root,
            capture_output=True,
            text=True,
            check=False,
            timeout=120,
        )
        if done.returncode != 0:
            log = self.log.read_text(errors="replace")[-2000:] if self.log.exists() else ""
            raise RuntimeError(f"{argv[0]} failed ({done.returncode}): {done.stderr.strip()}\n{log}")
        return done

    def _initdb(self) -> None:
        pwfile = self.root / "pw"
        pwfile.write_text(self.password + "\n")
        if self._as_server_user:
            entry = pwd.getpwnam(SERVER_USER)
            os.chown(pwfile, entry.pw_uid, entry.pw_gid)
        pwfile.chmod(0o600)
        try:
            self._run(
                "initdb",
                "-D",
                str(self.data),
                "-U",
                SUPERUSER,
                f"--pwfile={pwfile}",
                "--auth-host=scram-sha-256",
                "--auth-local=trust",
                "-E",
                "UTF8",
                "--no-sync",
            )
        finally:
            pwfile.unlink(missing_ok=True)

    def start(self) -> None:
        """Start the server on a free port (a new one if the old port was taken); waits until it accepts.

        Raises:
            RuntimeError: ``pg_ctl start`` failed; the server log's tail is in the message.
        """
        if not self.port:
            self.port = free_port()
        options = f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c fsync=off"
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.log), "-o", options, "-w", "-t", "60", "start")

    def stop(self) -> None:
        """Stop the server at once (``pg_ctl stop -m immediate``): clients see the server gone."""
        self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")

    @property
    def running(self) -> bool:
        """Whether the server process is up (``pg_ctl status``)."""
        user = SERVER_USER if self._as_server_user else None
        return (
            subprocess.run(
                [str(self.bin_dir / "pg_ctl"), "-D", str(self.data), "status"],
                user=user,
                cwd=self.root,
                capture_output=True,
                check=False,
            ).returncode
            == 0
        )

    def url(self, database: str = "postgres", *, driver: str = "psycopg") -> str:
        """The SQLAlchemy URL of `database`, with the password (keep it out of logs)."""
        return f"postgresql+{driver}://{SUPERUSER}:{self.password}@127.0.0.1:{self.port}/{database}"

    def _admin(self, sql: str) -> None:
        self._run(
            "psql",
            "-X",
            "-q",
            "-v",
            "ON_ERROR_STOP=1",
            "-h",
            str(self.root),
            "-p",
            str(self.port),
            "-U",
            SUPERUSER,
            "-d",
            "postgres",
            "-c",
            sql,
        )

    def create_database(self, name: str) -> str:
        """Create the empty database `name` (letters, digits, _) and return its URL."""
        if not name.replace("_", "").isalnum():
            raise ValueError(f"not a plain database name: {name!r}")
        self._admin(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def drop_database(self, name: str) -> None:
        """Drop `name`, closing the connections still open to it."""
        self._admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    def cleanup(self) -> None:
        """Stop the server if it runs and remove the directory."""
        with contextlib.suppress(RuntimeError, subprocess.TimeoutExpired):
            if self.running:
                self._run("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "stop")
        shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.cleanup()
