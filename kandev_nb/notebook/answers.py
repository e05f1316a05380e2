"""Answers become notebook content; the header's chips choose the next turn (issue 27 points 4, 9).

The tab side is ``src/widgets/answer_actions.ts``, bundled with the notebook bridge (``bridge.ts``), so it
runs only in a tab whose widget manager made this kernel's bridge. There it adds, to a
finished turn's output, "Insert as Markdown cell below" (the answer) and, on each code block
of the answer, "Insert as code cell below" and "Copy"; the cells are inserted by the bridge's
own ``insert`` into the tab's notebook, below the `%%claude` cell. Headless runs (nbclient,
papermill), a saved notebook opened without its kernel and nbconvert have no bridge: no
buttons, and the saved HTML never holds any.

:func:`mark` is what the live view's ``finish`` puts in the cell: the static HTML inside
``<div class="kandev-answer-host" data-kandev-turn=T data-kandev-kernel=K>`` and the display
metadata ``{"kandev": {"turn": T, "answer": <the Markdown cell's source, markdown_cell_text>}}``
(the answer, ``Turn.text``, with its dollars escaped; "" for a turn with no answer text, which
gets no "Insert as Markdown cell below").

The header's mode and model (``claude · default · supervised · sonnet``) become chips; a
choice sends ``{"kind": "next", "session", "mode" | "model"}`` over the bridge's comm.
:func:`choose_next` applies it as ``%%claude --mode`` / ``--model`` would on the session's next
cell: the mode is the session's until changed (as a card's "switch to ... mode for this
session", ``NotebookState.card_modes``), the model is passed as that cell's ``--model`` (kept by
later cells, switched live with ``set_model``) by :func:`take_next`.
"""

from __future__ import annotations

import argparse
import logging
import re
import secrets
from typing import TYPE_CHECKING, Any

from kandev_nb.agent.permissions import MODES
from kandev_nb.render import static
from kandev_nb.render.mdsafe import escape_math

if TYPE_CHECKING:
    from kandev_nb.agent.turn import Turn
    from kandev_nb.notebook.bridge import NotebookBridge

__all__ = [
    "KERNEL_TOKEN",
    "MODELS",
    "TURN_MIME",
    "choose_next",
    "install",
    "kernel_class",
    "mark",
    "markdown_cell_text",
    "next_model",
    "tab_bundle",
    "take_next",
]

log = logging.getLogger("kandev_nb")

KERNEL_TOKEN = secrets.token_hex(8)
"""This kernel process's token: a tab decorates only the outputs that carry it."""

MODELS = ("sonnet", "opus", "haiku")
"""The model chip's choices (the CLI's model aliases), as in ``src/widgets/answer_actions.ts``."""

TURN_MIME = "application/vnd.kandev-nb.turn+json"
"""The MIME type that marks a finished turn's bundle (``{"version": 1}``): kandev-nb's JupyterLab
extension (``src/mime.ts``, ranked ahead of text/html) draws the bundle's text/html with Lab's
own renderer without a MathJax pass (issue 35); other frontends ignore it."""

_MODEL_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._\-\[\]]{0,99}$")
_next_models: dict[str, str] = {}


def kernel_class() -> str:
    """The ``_dom_classes`` entry of a live view's root that lets this kernel's tab find its chips."""
    return f"kandev-k-{KERNEL_TOKEN}"


def _connected() -> bool:
    from kandev_nb.notebook.bridge import bridge

    b = bridge()
    return b is not None and bool(b.views)


def mark(bundle: dict[str, Any], turn: Turn) -> tuple[dict[str, Any], dict[str, Any]]:
    """The finished turn's MIME bundle and display metadata, marked for the tab's buttons.

    Args:
        bundle: :func:`kandev_nb.render.static.mime_bundle` of `turn` (text/html, text/markdown, text/plain).
        turn: the finished turn; its `text` (the main thread's message_chunk text) is the answer.

    Returns:
        ``(bundle, metadata)``; unchanged with ``{}`` when no tab is connected to the bridge
        (headless: nothing would show the buttons).
    """
    if not _connected() or "text/html" not in bundle:
        return bundle, {}
    token = secrets.token_hex(8)
    host = f'<div class="kandev-answer-host" data-kandev-turn="{token}" data-kandev-kernel="{KERNEL_TOKEN}">'
    return {**bundle, "text/html": host + bundle["text/html"] + "</div>"}, {
        "kandev": {"turn": token, "answer": markdown_cell_text(turn)}
    }


def tab_bundle(turn: Turn) -> tuple[dict[str, Any], dict[str, Any]]:
    """What a finished turn's output holds in a tab: :func:`kandev_nb.render.static.mime_bundle`
    of `turn`, :func:`mark`-ed for the tab's buttons, with :data:`TURN_MIME` added; and its
    display metadata. The live view's ``finish`` and a card's Undo (which redraws the turn's
    cards as "undone") both put this in the cell.

    Returns:
        ``(bundle, metadata)``: text/html, text/markdown, text/plain and :data:`TURN_MIME`;
        metadata as :func:`mark` gives it.
    """
    bundle, metadata = mark(static.mime_bundle(turn), turn)
    return {**bundle, TURN_MIME: {"version": 1}}, metadata


def markdown_cell_text(turn: Turn) -> str:
    """The source "Insert as Markdown cell below" gives the new cell: the answer (`turn.text`)
    with each ``$`` a Markdown cell would typeset as LaTeX escaped (``\\$``, code left as it
    is: :func:`kandev_nb.render.mdsafe.escape_math`, as the saved ``text/markdown`` copy reads
    it). "" when the turn has no answer text (a ``--schema`` turn that answered only through
    the StructuredOutput tool): the tab then offers no such button."""
    text = turn.text
    return escape_math(text) if text.strip() else ""


def choose_next(session: str, *, mode: str | None = None, model: str | None = None) -> None:
    """Apply a header chip's choice to `session`'s next turn.

    Args:
        session: the session's name (the header's ``data-kandev-session``).
        mode: one of :data:`~kandev_nb.agent.permissions.MODES`; kept for the session's later
            cells without ``--mode`` (forgotten on ``--new``).
        model: a model name or alias; the next cell of the session runs as with ``--model``.

    Raises:
        ValueError: an unknown mode or a malformed model name (nothing is changed).
    """
    from kandev_nb.notebook.state import current

    if mode is not None and mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}; one of {', '.join(MODES)}")
    if model is not None and not _MODEL_NAME.match(model):
        raise ValueError(f"not a model name: {model!r}")
    if mode is not None:
        current().card_modes[session] = mode
    if model is not None:
        _next_models[session] = model


def next_model(session: str) -> str | None:
    """The model a chip chose for `session`'s next cell, not yet used (None if none)."""
    return _next_models.get(session)


def take_next(args: argparse.Namespace) -> None:
    """Give a `%%claude` cell the model a chip chose for its session, unless it has ``--model``
    of its own (the chip's choice is used once: ``--model`` is kept by later cells anyway)."""
    chosen = _next_models.pop(str(args.session), None)
    if chosen is not None and not args.model and not args.over:
        args.model = chosen


def _on_next(content: dict[str, Any]) -> None:
    session = content.get("session")
    mode, model = content.get("mode"), content.get("model")
    if not isinstance(session, str):
        return
    try:
        choose_next(
            session, mode=mode if isinstance(mode, str) else None, model=model if isinstance(model, str) else None
        )
    except ValueError as exc:
        log.warning("kandev-nb: %s", exc)


def install(bridge: NotebookBridge) -> None:
    """Handle the chips' ``"next"`` messages on `bridge`."""
    bridge.handlers["next"] = _on_next
