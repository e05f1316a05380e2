"""MCP servers on the real CLI 2.1.332: a server that failed to connect is named on the turn's
card; mcp_status, mcp_reconnect and mcp_toggle from Python, refusals as clear errors."""

from __future__ import annotations

import json

import pytest

from kandev_nb.agent import events as ev
from kandev_nb.errors import ControlError
from kandev_nb.notebook.widgets import TurnView
from kandev_nb.notebook.widgets.recording import Recorder
from kandev_nb.testing import Reply, ScriptedModelServer, text
from tests.approvals.conftest import SessionMaker
from tests.widgets.test_static import plain
from tests.widgets.test_view import find

pytestmark = pytest.mark.timeout(180)


async def test_a_failed_server_is_named_and_reconnect_says_why(
    make_session: SessionMaker, scripted_model: ScriptedModelServer, rec: Recorder
) -> None:
    scripted_model.push(Reply(text("one")), Reply(text("two")))
    session = make_session(mcp_config=json.dumps({"mcpServers": {"broken": {"command": "/no/such/binary"}}}))
    view = TurnView("hi", session_name="t")
    turn = await session.run("hi", consumers=[view.handle])
    status = next(e for e in turn.events if isinstance(e, ev.SessionStatus))
    assert status.mcp_failed == ("broken",)
    notes = [plain(n.value) for n in find(view.root, "kandev-note")]
    assert any("MCP server(s) failed to connect: broken" in n for n in notes), notes
    servers = await session.mcp_status()
    assert [(s["name"], s["status"]) for s in servers] == [("broken", "failed")] and servers[0]["error"]
    with pytest.raises(ControlError, match="the CLI refused mcp_reconnect: .*ENOENT"):
        await session.mcp_reconnect("broken")
    with pytest.raises(ControlError, match="Server not found: nope"):
        await session.mcp_toggle("nope", False)
    assert (await session.run("still fine?")).text == "two"
