"""kandev-nb's own PostToolUse hook: the CLI's tool outputs reach the model with secrets masked.

Registered in `initialize` beside the file guard (:meth:`kandev_nb.agent.connection.CLIConnection`),
for every tool (no matcher). On its `hook_callback` the input carries ``tool_response`` (the
tool's output as the CLI holds it: Bash's ``{"stdout", "stderr", "interrupted", ...}``,
Read's ``{"type": "text", "file": {...}}``, an MCP tool's content list...); when masking
(:func:`kandev_nb.redact.redact_json`: known values and credentials by shape) changes it,
the answer is ``{"hookSpecificOutput": {"hookEventName": "PostToolUse",
"updatedToolOutput": <the masked copy, same shape>}}``, which replaces the output before
the model reads it. Measured for Bash (``tool_response`` ``{"stdout", "stderr",
"interrupted", "isImage", "noOutputExpected"}``): CLI 2.1.332 and 2.1.197 apply an object of
the same shape (the next API request's tool_result and the `user` line on stdout both
carry the masked text); a plain string instead is ignored; 2.1.118 ignores
``updatedToolOutput`` altogether. Whatever the CLI does, its stdout is masked by the
connection's :class:`~kandev_nb.redact.LineMasker`, so cards, saved outputs, the ledger and
recordings never hold the secret; with 2.1.118 only the model's copy is unmasked.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from typing import Any, Final

from kandev_nb.redact import REDACTED, redact_json

__all__ = ["CALLBACK_ID", "hook_answer", "initialize_hooks"]

log = logging.getLogger("kandev_nb")

CALLBACK_ID: Final = "kandev_nb_redact_tool_output"
"""The `hookCallbackIds` entry of kandev-nb's PostToolUse hook."""


def initialize_hooks(secrets: Sequence[str]) -> dict[str, Any] | None:
    """The `initialize` request's ``hooks`` for the redaction hook: every tool's PostToolUse.

    Always registered (credentials by shape are masked even with no known `secrets`)."""
    del secrets  # the hook masks shapes too: registered whatever is known
    return {"PostToolUse": [{"matcher": None, "hookCallbackIds": [CALLBACK_ID]}]}


def hook_answer(request: dict[str, Any], secrets: Sequence[str]) -> dict[str, Any]:
    """The answer to this hook's `hook_callback`: ``updatedToolOutput`` when the input's
    ``tool_response`` holds a secret (masked here, or already by the connection's
    :class:`~kandev_nb.redact.LineMasker`: it holds ``<redacted>``), else ``{}`` (no
    opinion). Never raises."""
    raw = request.get("input")
    hook_input: dict[str, Any] = raw if isinstance(raw, dict) else {}
    if "tool_response" not in hook_input:
        return {}
    response = hook_input["tool_response"]
    try:
        masked = redact_json(response, secrets)
    except Exception:  # a bug of ours must not fail the tool
        log.exception("kandev-nb output redaction failed")
        return {}
    # The connection's LineMasker has already masked the request line itself, so an output
    # holding <redacted> was changed too: the CLI still holds the original, send the masked one.
    if masked is response and REDACTED not in json.dumps(response):
        return {}
    return {"hookSpecificOutput": {"hookEventName": "PostToolUse", "updatedToolOutput": masked}}
