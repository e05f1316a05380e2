"""What kandev-nb writes to the CLI's stdin (stream-json): prompts and control messages.

Pure builders of JSON-ready dicts; :mod:`kandev_nb.wire.protocol` re-exports them.
"""

from __future__ import annotations

from typing import Any

__all__ = ["HUMAN_ORIGIN", "control_error", "control_request", "control_success", "user_message"]


HUMAN_ORIGIN: dict[str, str] = {"kind": "human"}
"""The `origin` a host stamps on a prompt: the only kind the CLI takes from a host. Measured
on CLI 2.1.332: ``{"kind": "human"}`` comes back as the result's `origin` and is kept on the
transcript's user entry; any other key (``{"kind": "human", "cell": ...}``) is dropped and any
other kind (``"peer"``) comes back as no origin at all."""


def user_message(
    content: str | list[dict[str, Any]],
    session_id: str = "",
    *,
    uuid: str | None = None,
    origin: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A prompt in the nested shape the CLI requires (the flat shape crashes it).

    Args:
        content: the prompt's text, or its content blocks.
        session_id: the session's id ("" before the CLI named one).
        uuid: the prompt's id (a new UUID string per message): the CLI keeps it as the user
            entry's `uuid` in its transcript and names it in the turn's result
            (`user_message_uuid`, `user_message_uuids`; :attr:`ResultMessage.user_message_uuids`).
        origin: the prompt's `origin` (:data:`HUMAN_ORIGIN`), echoed as the result's `origin`.
    """
    message: dict[str, Any] = {
        "type": "user",
        "message": {"role": "user", "content": content},
        "parent_tool_use_id": None,
        "session_id": session_id,
    }
    if uuid is not None:
        message["uuid"] = uuid
    if origin is not None:
        message["origin"] = origin
    return message


def control_request(request_id: str, subtype: str, **fields: Any) -> dict[str, Any]:
    """An outgoing control_request, e.g. ``control_request(id, "interrupt")``."""
    return {"type": "control_request", "request_id": request_id, "request": {"subtype": subtype, **fields}}


def control_success(request_id: str, response: dict[str, Any]) -> dict[str, Any]:
    """The control_response shape the CLI accepts (`request_id` inside `response`)."""
    return {
        "type": "control_response",
        "response": {"subtype": "success", "request_id": request_id, "response": response},
    }


def control_error(request_id: str, error: str) -> dict[str, Any]:
    """An error answer to a control_request."""
    return {"type": "control_response", "response": {"subtype": "error", "request_id": request_id, "error": error}}
