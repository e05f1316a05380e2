"""Where the widgets' page code is: the ES modules and stylesheets built into ``kandev_nb/static/``.

The page code of kandev_nb's anywidgets (their ``_esm`` and ``_css``) lives in the JupyterLab
extension's TypeScript tree (``src/widgets/*.ts``, ``style/widgets/*.css``). ``jlpm
build:widgets`` (run by ``jlpm build``, ``jlpm build:prod``, hence by ``pip install -e .`` and by
building the wheel) bundles each widget's module with esbuild into :data:`STATIC`, which the
wheel and the sdist ship; it is not in git.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["STATIC", "page_file", "page_text"]

STATIC = Path(__file__).resolve().parents[1] / "static"
"""The built page code: one ``<widget>.js`` ES module per widget, and its ``<name>.css``."""


def page_file(name: str) -> Path:
    """The built file `name` of :data:`STATIC` (e.g. ``"bridge.js"``).

    Raises:
        FileNotFoundError: it was not built (a source checkout before ``jlpm build:widgets``).
    """
    path = STATIC / name
    if not path.is_file():
        raise FileNotFoundError(
            f"{path} is missing: kandev_nb's page code is built from src/widgets/ by "
            "`jlpm build:widgets` (run by `pip install -e .` and by building the wheel)"
        )
    return path


def page_text(name: str) -> str:
    """The text of the built file `name` of :data:`STATIC` (see :func:`page_file`)."""
    return page_file(name).read_text(encoding="utf-8")
