"""Driving a JupyterLab 4 page with Playwright: open, run, wait, save.

Clicks that matter to the test (Allow, Deny) are real clicks in the page. State that the
page shows only indirectly (kernel status, dirty flag) is read through ``window.jupyterapp``,
which the server exposes with ``--LabApp.expose_app_in_browser``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import nbformat

KERNELSPEC = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}

_PANEL = "() => window.jupyterapp && window.jupyterapp.shell.currentWidget"
_KERNEL_STATUS = """() => {
  const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;
  const k = w && w.sessionContext && w.sessionContext.session && w.sessionContext.session.kernel;
  return k ? k.status : null;
}"""
_PROMPT = re.compile(r"\[(\d+)\]")


def write_notebook(path: Path, *sources: str) -> Path:
    """Write a python3 notebook whose code cells are ``sources`` (a ``#md`` first line:
    a markdown cell holding the rest)."""
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = dict(KERNELSPEC)
    for source in sources:
        if source.startswith("#md\n"):
            nb.cells.append(nbformat.v4.new_markdown_cell(source[4:]))
        else:
            nb.cells.append(nbformat.v4.new_code_cell(source))
    nbformat.write(nb, path)
    return path


def open_notebook(page: Any, url: str, timeout_ms: float = 120_000) -> None:
    """Load ``url`` (a ``/lab/tree/<nb>`` page) and wait for the notebook's kernel to be idle.

    If the kernel has not said idle within half of `timeout_ms`, the page is loaded again once,
    as a person would: Jupyter Server can answer the page's first kernel websocket with a 500
    ("'NoneType' object has no attribute 'kernel_ws_protocol'", a race of its own while the
    kernel starts), and that page then never hears from the kernel."""
    for attempt in (1, 2):
        page.goto(url)
        page.wait_for_selector(".jp-NotebookPanel .jp-Cell", timeout=timeout_ms)
        if page.evaluate("() => !window.jupyterapp.shell.leftCollapsed"):
            command(page, "application:toggle-left-area")  # more room for the outputs
        try:
            wait_kernel_idle(page, timeout_ms / 2 if attempt == 1 else timeout_ms)
            return
        except Exception:  # playwright's TimeoutError: load the page again
            if attempt == 2:
                raise


def wait_kernel_idle(page: Any, timeout_ms: float = 120_000) -> None:
    """Wait until the current notebook's kernel reports ``idle``."""
    page.wait_for_function(f"() => ({_KERNEL_STATUS})() === 'idle'", timeout=timeout_ms)


def command(page: Any, name: str, args: dict[str, Any] | None = None) -> None:
    """Start a JupyterLab command (``notebook:run-all-cells``, ...); does not wait for it to end
    (run-all's promise only settles when every cell has run)."""
    page.evaluate("([name, args]) => { window.jupyterapp.commands.execute(name, args); }", [name, args or {}])


def cell(page: Any, index: int) -> Any:
    """The locator of the notebook's cell number ``index`` (0-based, markdown included)."""
    return page.locator(".jp-NotebookPanel:visible .jp-Notebook .jp-Cell").nth(index)


def prompt_text(page: Any, index: int) -> str:
    """The input prompt of cell ``index``: ``"[*]:"`` while it runs, ``"[3]:"`` after."""
    return str(cell(page, index).locator(".jp-InputPrompt").inner_text()).strip()


def wait_cell_done(page: Any, index: int, timeout_ms: float = 180_000) -> int:
    """Wait until code cell ``index`` shows an execution count; returns it."""
    handle = cell(page, index).locator(".jp-InputPrompt").element_handle()
    page.wait_for_function("el => /\\[\\d+\\]/.test(el.textContent)", arg=handle, timeout=timeout_ms)
    match = _PROMPT.search(prompt_text(page, index))
    assert match is not None
    return int(match.group(1))


def is_running(page: Any, index: int) -> bool:
    """Whether cell ``index`` is executing (its prompt shows ``[*]``)."""
    return "*" in prompt_text(page, index)


def save(page: Any, timeout_ms: float = 30_000) -> None:
    """Save with Ctrl+S, as a person would, and wait until the document is clean."""
    page.locator(".jp-NotebookPanel:visible .jp-Notebook").first.click(position={"x": 5, "y": 5})
    page.keyboard.press("Escape")
    page.keyboard.press("Control+s")
    page.wait_for_function(
        f"() => {{ const w = ({_PANEL})(); return w && w.context && !w.context.model.dirty; }}",
        timeout=timeout_ms,
    )
