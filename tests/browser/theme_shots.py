"""Screenshots of one state of the page in JupyterLab's light and dark themes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.browser import lab_page

_THEME = "() => document.body.dataset.jpThemeLight === '{light}' && !document.querySelector('#jupyterlab-splash')"


def set_theme(page: Any, dark: bool) -> None:
    """Switch JupyterLab's theme and wait until it is applied (the splash gone)."""
    lab_page.command(page, "apputils:change-theme", {"theme": "JupyterLab Dark" if dark else "JupyterLab Light"})
    page.wait_for_function(_THEME.format(light="false" if dark else "true"), timeout=60_000)
    page.wait_for_timeout(300)  # the repaint after the stylesheet swap (not an assertion)


def shot_both(page: Any, folder: Path, stem: str, target: Any = None) -> tuple[Path, Path]:
    """``<stem>-light.png`` and ``<stem>-dark.png`` in `folder` (the page left in the light theme);
    `target` (a locator) is scrolled into view first."""
    paths = (folder / f"{stem}-light.png", folder / f"{stem}-dark.png")
    for dark, path in zip((False, True), paths, strict=True):
        set_theme(page, dark)
        if target is not None:
            target.evaluate("el => el.scrollIntoView({block: 'center'})")
        page.screenshot(path=str(path))
    set_theme(page, False)
    return paths
