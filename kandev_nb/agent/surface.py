"""What a surface other than the card shows of a waiting approval, and whether it may allow
(issue 32, point 3).

The approval card shows a request whole (the command, the code, the cell, the file's
content). Other surfaces show one line of it: the toast (kandev-nb's own, or JupyterLab's
notification), a ``kandev_nb.pending()`` line. An answer is bound to what its surface showed,
so such a surface offers Allow only when that line *is* the whole payload, verbatim
(:attr:`SurfaceText.complete`): otherwise it offers Show (the card, or
``pending()[i].show()``) and Deny. The broker enforces it
(:meth:`~kandev_nb.agent.approvals.ApprovalBroker.allow_shown`): an allow carries the
:attr:`SurfaceText.digest` of the text its surface showed, and only the digest of a complete
line or of the whole payload (:func:`whole_text`) allows.

A line is complete when the input has one field (the first of :data:`SUMMARY_KEYS`; only
the built-in Bash tool's ``description``, the agent's own words about the call, and fields
that are None do not count: an MCP tool's ``description`` may be what it publishes, a False
``dry_run`` is what makes it act) and its value is printable ASCII on one line, no longer than
:data:`SUMMARY_CHARS`, with no run of spaces collapsed: no hidden tail, no second line, no
bidi or zero-width character, no look-alike letter. A call on an existing notebook cell is
never complete (what runs is the cell's source, which the line does not show).

Pure: no I/O; the cell payload is duck-typed (its ``operation`` and sources).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from kandev_nb.agent.questions import QUESTION_TOOL

__all__ = ["SUMMARY_CHARS", "SUMMARY_KEYS", "SurfaceText", "line_of", "summary", "whole_of", "whole_text"]

SUMMARY_KEYS = ("command", "file_path", "notebook_path", "path", "url", "query", "pattern", "code", "source")
"""The input fields a one-line summary names, first found first."""

SUMMARY_CHARS = 80
"""A summary is cut to this many characters (with an ellipsis)."""

_NOT_PAYLOAD: dict[str, frozenset[str]] = {"Bash": frozenset({"description"})}
"""Input fields, by built-in tool, that say what a call is for, not what it does (Bash's
``description``). Any other tool's fields all count: ``mcp__x__Bash`` is not Bash."""


_PATH_KEYS = frozenset({"file_path", "notebook_path", "path"})
"""Summaries of these keep a long value's end: the file's name matters more than its folders."""


def _cut(text: str, limit: int = SUMMARY_CHARS, *, keep_end: bool = False) -> str:
    line = " ".join(text.split())
    if len(line) <= limit:
        return line
    return "…" + line[-(limit - 1) :] if keep_end else line[: limit - 1] + "…"


def summary(tool_name: str, tool_input: dict[str, Any]) -> str:
    """One line naming what a call will do: its `command`, `file_path`, `url`, `code`... (the
    first such `input` field), an AskUserQuestion's first `question`, else its field names.
    At most :data:`SUMMARY_CHARS` characters: a longer path keeps its end (``…/src/app.py``),
    anything else its start; either way the line is then not the whole payload."""
    if tool_name == QUESTION_TOOL:
        questions = tool_input.get("questions")
        if isinstance(questions, list) and questions and isinstance(questions[0], dict):
            return _cut(str(questions[0].get("question") or "a question"))
    for key in SUMMARY_KEYS:
        value = tool_input.get(key)
        if isinstance(value, str) and value.strip():
            return _cut(value, keep_end=key in _PATH_KEYS)
    return _cut(", ".join(sorted(tool_input)) or "(no input)")


def _on_a_cell(payload: Any) -> bool:
    """The card's payload is an existing cell a notebook tool acts on (run, edit, delete)."""
    return getattr(payload, "operation", None) in ("run", "edit", "delete")


def _complete(tool_name: str, tool_input: dict[str, Any], payload: Any, line: str) -> bool:
    if tool_name == QUESTION_TOOL or _on_a_cell(payload):
        return False
    key = next((k for k in SUMMARY_KEYS if isinstance(tool_input.get(k), str) and tool_input[k].strip()), None)
    if key is None:
        return False
    ignored = _NOT_PAYLOAD.get(tool_name, frozenset())
    others = [k for k, v in tool_input.items() if k != key and k not in ignored and v is not None]
    value = tool_input[key]
    return not others and value == line and value.isascii() and value.isprintable()


def _digest(request_id: str, tool_name: str, text: str) -> str:
    blob = json.dumps(["kandev-nb surface", request_id, tool_name, text])
    return hashlib.sha256(blob.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass(frozen=True)
class SurfaceText:
    """What one surface shows of a waiting approval.

    Attributes:
        text: the text shown (a one-line summary, or the whole payload).
        complete: `text` is the whole payload, verbatim: the surface may offer Allow.
        digest: sha256 of the request, its tool and `text`: what an allow from the surface
            carries to the broker.
    """

    text: str
    complete: bool
    digest: str


def line_of(request_id: str, tool_name: str, tool_input: dict[str, Any], payload: Any = None) -> SurfaceText:
    """The one line a toast or a ``pending()`` row shows of a request, and whether it is all
    of it (`payload`: what the request's card showed, a notebook cell or None)."""
    line = summary(tool_name, tool_input)
    return SurfaceText(line, _complete(tool_name, tool_input, payload, line), _digest(request_id, tool_name, line))


def whole_text(tool_name: str, tool_input: dict[str, Any], payload: Any = None) -> str:
    """The whole payload as text (``pending()[i].show()``): the tool, every input field (text
    fields verbatim, others as JSON) and, for a call on an existing cell, the cell's source as
    the card showed it."""
    lines = [f"tool: {tool_name}"]
    if _on_a_cell(payload):
        where = f"cell {getattr(payload, 'index', None)} (id {getattr(payload, 'cell_id', None)})"
        old = getattr(payload, "old_source", None) if payload.operation == "edit" else getattr(payload, "source", None)
        lines.append(f"{where}, its source now:\n{old if old is not None else '(unknown)'}")
    for key, value in tool_input.items():
        shown = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
        lines.append(f"{key}:{chr(10) if chr(10) in shown else ' '}{shown}")
    return "\n".join(lines)


def whole_of(request_id: str, tool_name: str, tool_input: dict[str, Any], payload: Any = None) -> SurfaceText:
    """:func:`whole_text` as a complete :class:`SurfaceText` (what ``pending()[i].show()`` shows)."""
    text = whole_text(tool_name, tool_input, payload)
    return SurfaceText(text, True, _digest(request_id, tool_name, text))
