"""Editing a tool's input on the approval card, field by field (issue 27 point 6).

The browser side is ``src/widgets/input_editor.ts``, bundled with the card's controls
(:class:`~kandev_nb.notebook.widgets.approval.ApprovalControls`): each field of the
can_use_tool `input` gets its own editor, a monospace code editor for :data:`CODE_FIELDS`
(newlines and tabs kept, the file's language named), one line for ``command``, and JSON only
for the fields left. The browser builds the edited input itself (``JSON.stringify``), so a
newline typed inside ``content`` is a newline of the string, never an "Invalid control
character" of hand-written JSON. What is sent with "Allow edited" is unchanged: ``{"action":
"allow_edited", "input": <JSON object text>}`` (the binding and the "edited by you" record of
:mod:`kandev_nb.policy.binding` and :mod:`kandev_nb.agent.approvals` apply as before).

While the person types, the editor sends ``{"action": "preview", "input": <JSON text>}``
(debounced); :func:`preview_html` renders the card's proposal for that input (the diff of a
Write / Edit, the command), so the diff above the editor follows the typing.

JupyterLab's own CodeMirror editor is not reachable from a widget's module without a lab
extension (its editor services are plugin tokens of the application), so the code editor is a
``textarea``; the syntax colouring is the diff's, above it.
"""

from __future__ import annotations

import json
from typing import Any

from kandev_nb.agent import events as ev
from kandev_nb.agent.tools import normalize_tool_call
from kandev_nb.notebook.page_code import page_text

__all__ = ["CODE_FIELDS", "controls_esm", "edited_request", "preview_html"]

CODE_FIELDS = ("content", "new_string", "code", "source")
"""Input fields edited as code (Write's `content`, Edit's `new_string`, the kernel tools' `code` / `source`)."""


def controls_esm() -> str:
    """The approval controls' module: ``src/widgets/approval.ts`` with ``input_editor.ts`` (the field editors)."""
    return page_text("approval.js")


def edited_request(event: ev.PermissionRequest, text: str) -> ev.PermissionRequest | None:
    """`event` with its `input` replaced by the edited one (JSON object text) and `normalized`
    recomputed from it; None when `text` is not a JSON object (the editor says why itself)."""
    try:
        value: Any = json.loads(text)
    except ValueError:
        return None
    if not isinstance(value, dict):
        return None
    return event.model_copy(update={"input": value, "normalized": normalize_tool_call(event.tool_name, value)})


def preview_html(event: ev.PermissionRequest, text: str) -> str | None:
    """The card's "what will happen" HTML for the edited input `text`, or None if it is not a
    JSON object. Marked "edited by you" above the proposal."""
    from kandev_nb.notebook.widgets.approval import header_html, what_html
    from kandev_nb.render import html as r
    from kandev_nb.render.reveal import displayable

    edited = edited_request(event, text)
    if edited is None:
        return None
    mark = (
        '<div class="kandev-edited-preview" style="color:var(--jp-warn-color1,#9a6700);font-size:85%">'
        f"{r.esc('✎ edited by you: below is what Allow edited runs')}</div>"
    )
    return displayable(header_html(event) + mark + what_html(edited))
