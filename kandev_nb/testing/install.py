"""Install what the test suite needs beyond pip: pinned Claude Code CLIs, PostgreSQL, Chromium.

``python -m kandev_nb.testing.install`` is the second half of the README's install command:

- the pinned npm versions of the CLI (2.1.197, 2.1.118) into the CLI cache dir
  (:func:`kandev_nb.testing.clis.install_pinned_clis`; 2.1.332 comes with the
  `claude-agent-sdk` wheel that ``pip install -e ".[test]"`` installed);
- Debian's ``postgresql`` server (the ledger tests start a throwaway cluster with its
  ``initdb``/``pg_ctl``, :mod:`kandev_nb.testing.postgres`), when no server is found;
- Debian's Chromium at ``/usr/bin/chromium`` for the Playwright tests, with apt-get, when
  it is missing (as root, or through sudo). Playwright itself comes from pip and uses this
  browser through ``executable_path``; it never downloads one.

The Debian packages are installed in one apt-get call (``apt-get update`` first only if
the install fails). Exit code 0 when everything is in place; 1 with a message saying what is missing.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

CHROMIUM = Path("/usr/bin/chromium")
EMOJI_FONT = Path("/usr/share/fonts/truetype/noto/NotoColorEmoji.ttf")


def _apt_install(packages: list[str]) -> None:
    prefix = [] if os.geteuid() == 0 else (["sudo", "-n"] if shutil.which("sudo") else None)
    if prefix is None:
        raise RuntimeError(f"need root or sudo to apt-get install {' '.join(packages)}")
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    install = [*prefix, "apt-get", "install", "-y", "--no-install-recommends", *packages]
    if subprocess.run(install, env=env, check=False).returncode != 0:
        subprocess.run([*prefix, "apt-get", "update"], env=env, check=True)
        subprocess.run(install, env=env, check=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m kandev_nb.testing.install", description=__doc__.splitlines()[0])
    parser.add_argument("--no-browser", action="store_true", help="skip Chromium (PostgreSQL is still installed)")
    args = parser.parse_args(argv)

    from kandev_nb.testing.clis import install_pinned_clis
    from kandev_nb.testing.postgres import PostgresNotInstalled, find_bin_dir

    for version, path in install_pinned_clis().items():
        print(f"claude {version:10} {path}")
    packages = debian_packages(browser=not args.no_browser)
    if packages:
        print(f"installing Debian's {', '.join(packages)} with apt-get ...", flush=True)
        try:
            _apt_install(packages)
        except (RuntimeError, subprocess.CalledProcessError) as exc:
            print(f"could not install {' '.join(packages)}: {exc}", file=sys.stderr)
            return 1
    try:
        print(f"postgresql        {find_bin_dir()}")
    except PostgresNotInstalled as exc:
        print(str(exc), file=sys.stderr)
        return 1
    if not args.no_browser:
        print(f"chromium          {CHROMIUM}")
    return 0


def debian_packages(*, browser: bool) -> list[str]:
    """The Debian packages still missing: ``postgresql`` if no server is found; with
    `browser`, ``chromium`` and ``fonts-noto-color-emoji``."""
    from kandev_nb.testing.postgres import PostgresNotInstalled, find_bin_dir

    missing = []
    try:
        find_bin_dir()
    except PostgresNotInstalled:
        missing.append("postgresql")
    if browser and (not CHROMIUM.exists() or not EMOJI_FONT.exists()):
        missing += ["chromium", "fonts-noto-color-emoji"]
    return missing


if __name__ == "__main__":
    sys.exit(main())
