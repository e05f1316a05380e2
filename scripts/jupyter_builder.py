"""hatch-jupyter-builder's npm builder, forced when a built file the package needs is missing.

The editable install (``pip install -e .``) rebuilds only when ``src/`` is newer than
``kandev_nb/labextension/`` (the builder's build_dir / source_dir check). A checkout whose
labextension was built before the widgets' page code moved into ``src/widgets/`` has no
``kandev_nb/static/``: this builds it anyway. pyproject.toml names it as the build function.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hatch_jupyter_builder import npm_builder

NEEDED = ("kandev_nb/labextension/package.json", "kandev_nb/static/kandev_lib.js", "kandev_nb/static/bridge.js")
"""Built files without which the package does not work: their absence forces the build."""


def build(target_name: str, version: str, **kwargs: Any) -> None:
    """Run :func:`hatch_jupyter_builder.npm_builder`, with ``force`` when a :data:`NEEDED` file is missing."""
    if not all(Path(path).exists() for path in NEEDED):
        kwargs["force"] = True
    npm_builder(target_name, version, **kwargs)
