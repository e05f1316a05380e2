"""Fixtures for kandev-nb's JupyterLab / Notebook 7 extension (issue 37).

`user_lab` is ``jupyter lab`` started as a person starts it: no dev mode and no
``expose_app_in_browser``, so the page is driven only through what it shows (palette, menus,
keys, the Settings Editor). `page` and `screenshots` are tests/browser's fixtures.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.browser.conftest import (  # noqa: F401  (fixtures and the report hook, shared)
    LabServer,
    chromium,
    lab_ledger,
    page,
    pytest_runtest_makereport,
    screenshots,
    start_lab,
)


@pytest.fixture
def user_lab(tmp_path: Path, lab_ledger: Path) -> Iterator[LabServer]:  # noqa: F811
    """A JupyterLab 4 server without ``window.jupyterapp``; stopped afterwards."""
    try:
        lab = start_lab(tmp_path / "lab", lab_ledger, expose_app=False)
    except RuntimeError:
        lab = start_lab(tmp_path / "lab-2", lab_ledger, expose_app=False)
    try:
        yield lab
    finally:
        lab.stop()
