"""Without dask installed, ``cluster=`` and ``%%claude --cluster`` fail with the one command to run,
and kandev_nb (the fleet included) still imports."""

from __future__ import annotations

import subprocess
import sys
import textwrap


def test_without_dask_the_cluster_option_names_the_extra_to_install() -> None:
    script = textwrap.dedent(
        """
        import sys
        sys.modules["distributed"] = None  # as if dask/distributed were not installed
        import pandas as pd
        import kandev_nb
        from kandev_nb.fleet import FleetError, build_fleet
        try:
            build_fleet(pd.DataFrame({"id": [1]}), "Ticket {id}.", ledger=None, cluster=object())
        except FleetError as exc:
            print("ERROR:", exc)
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert 'pip install "kandev-nb[dask]"' in done.stdout, done.stdout
    assert "needs dask and distributed" in done.stdout
