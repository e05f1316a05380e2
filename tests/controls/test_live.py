"""Live controls on the real CLI: set_model in the same process, a refused set_model, the
thinking budget, MCP status, and clear errors without a process."""

from __future__ import annotations

from typing import Any

import pytest

from kandev_nb.errors import ControlError, NotLiveError
from kandev_nb.testing import Reply, ScriptedModelServer, text
from tests.approvals.conftest import RecordingTransport, SessionMaker

pytestmark = pytest.mark.timeout(180)
BOTH = pytest.mark.parametrize("claude_cli", ["2.1.332", "2.1.197"], indirect=True)


class NonStringModel(RecordingTransport):
    """Sends set_model with a number for a model: the real CLI refuses it (its own error answer)."""

    async def send(self, message: dict[str, Any]) -> None:
        request = message.get("request") or {}
        if request.get("subtype") == "set_model":
            message = {**message, "request": {**request, "model": 123}}
        await super().send(message)


@BOTH
async def test_set_model_keeps_the_process_and_the_next_request_uses_the_model(
    make_session: SessionMaker, scripted_model: ScriptedModelServer
) -> None:
    scripted_model.push(Reply(text("one")), Reply(text("two")))
    session = make_session()
    first = await session.run("hello")
    pid = session.pid
    assert await session.set_model("claude-other-1") == "claude-other-1"
    await session.set_max_thinking_tokens(2048)
    second = await session.run("again")
    assert session.pid == pid and "hello" in repr(scripted_model.main_requests[-1].body["messages"])
    assert [r.body["model"] for r in scripted_model.main_requests] == [
        first.stats.model.removesuffix("[1m]"),
        "claude-other-1",
    ]
    assert second.stats.model == "claude-other-1"  # the footer's model: from the result's modelUsage
    assert await session.mcp_status() == []


async def test_a_refused_set_model_is_a_clear_error_and_the_session_stays_usable(
    make_session: SessionMaker, scripted_model: ScriptedModelServer
) -> None:
    scripted_model.push(Reply(text("one")), Reply(text("two")))
    session = make_session(transport_factory=NonStringModel)
    with pytest.raises(NotLiveError, match="run a turn first"):
        await session.set_model("claude-other-1")
    await session.run("hello")
    model = session.model
    with pytest.raises(ControlError, match="the CLI refused set_model: set_model: model must be a string"):
        await session.set_model("claude-other-1")
    with pytest.raises(ValueError, match="non-negative integer"):
        await session.set_max_thinking_tokens(-1)
    assert session.model == model
    assert (await session.run("still there?")).text == "two"
