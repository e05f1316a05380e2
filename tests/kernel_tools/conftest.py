"""Fixtures for the kernel tools: the real-kernel harness of tests/kernel, and helpers that
read what the scripted model received."""

from __future__ import annotations

import json
from typing import Any

from kandev_nb.testing import RecordedRequest
from tests.kernel.conftest import kernel, ledger_path  # noqa: F401 - fixtures used by the tests here


def tool_results(request: RecordedRequest) -> list[dict[str, Any]]:
    """Every ``tool_result`` block in the request's messages, in order."""
    return [
        block
        for message in request.messages
        if message.get("role") == "user" and isinstance(message.get("content"), list)
        for block in message["content"]
        if isinstance(block, dict) and block.get("type") == "tool_result"
    ]


def result_text(block: dict[str, Any]) -> str:
    """The text of a ``tool_result`` block (string content or its text blocks joined)."""
    content = block.get("content")
    if isinstance(content, str):
        return content
    return "\n".join(b.get("text", "") for b in content or [] if isinstance(b, dict) and b.get("type") == "text")


def result_images(block: dict[str, Any]) -> list[dict[str, Any]]:
    """The ``image`` blocks of a ``tool_result`` block."""
    content = block.get("content")
    return [b for b in content if isinstance(b, dict) and b.get("type") == "image"] if isinstance(content, list) else []


def body_text(request: RecordedRequest) -> str:
    """The whole request body as JSON text (to check something is absent everywhere)."""
    return json.dumps(request.body)
