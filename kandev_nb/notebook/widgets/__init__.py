"""Notebook views of a turn: live widgets while it runs, a static rendering afterwards.

>>> view = TurnView(prompt, session_name="default")          # doctest: +SKIP
>>> view.display()
>>> turn = await session.run(prompt, consumers=[view.handle])
>>> view.finish(turn)      # the cell output becomes static HTML + Markdown

:func:`render_html` / :func:`render_markdown` render any Turn without a kernel (they back
``Turn._repr_html_`` / ``_repr_markdown_``). Modules: :mod:`.view` (TurnView),
:mod:`.cards` (tool cards), :mod:`.approval` (approval card), :mod:`.stream` (streaming
text widget and coalescing), :mod:`.render` (shared HTML builders), :mod:`.card_html` (a
tool card's HTML, live and saved), :mod:`.diffs` (reviewable diffs), :mod:`.theme`
(JupyterLab theme colours), :mod:`.mdsafe` (safe saved Markdown), :mod:`.static`,
:mod:`.recording` (a recording comm for tests and benchmarks).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kandev_nb.render.static import mime_bundle, render_html, render_markdown

if TYPE_CHECKING:
    from kandev_nb.notebook.widgets.view import TurnView

__all__ = ["TurnView", "mime_bundle", "render_html", "render_markdown"]


def __getattr__(name: str) -> Any:
    # TurnView imports ipywidgets/anywidget; keep `import kandev_nb.notebook.widgets` light for static use.
    if name == "TurnView":
        from kandev_nb.notebook.widgets.view import TurnView

        return TurnView
    raise AttributeError(name)
