"""The MCP side without the CLI: JSON-RPC dicts in, the `mcp` library's answers out."""

from __future__ import annotations

import asyncio
from typing import Any

import pandas as pd

from kandev_nb.kernel_tools import KernelTools, KernelToolsOptions

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "claude-code", "version": "2.1.197"},
    },
}


def call(request_id: int, tool: str, **arguments: Any) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": tool, "arguments": arguments, "_meta": {"claudecode/toolUseId": "toolu_1"}},
    }


async def test_handshake_twice_then_list_and_call() -> None:
    tools = KernelTools(namespace={"sales": pd.DataFrame({"units": [1, 2]})})
    try:
        first = await tools.handle(INITIALIZE)
        second = await tools.handle(INITIALIZE)  # CLI 2.1.197 sends it twice, with the same id
        assert first["id"] == second["id"] == 0
        assert first["result"]["serverInfo"]["name"] == "kernel"
        assert first["result"]["capabilities"] == {"tools": {"listChanged": False}}
        assert "live Jupyter kernel" in first["result"]["instructions"]
        assert await tools.handle({"jsonrpc": "2.0", "method": "notifications/initialized"}) == {
            "jsonrpc": "2.0",
            "result": {},
        }

        listed = await tools.handle({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        by_name = {t["name"]: t for t in listed["result"]["tools"]}
        assert sorted(by_name) == [
            "delete_cell",
            "edit_cell",
            "insert_cell",
            "inspect_variable",
            "list_variables",
            "read_notebook",
            "recent_history",
            "run_cell",
            "run_code",
        ]
        assert by_name["read_notebook"]["annotations"]["readOnlyHint"] is True
        assert by_name["insert_cell"]["inputSchema"]["required"] == ["source"]
        assert by_name["run_code"]["inputSchema"]["required"] == ["code"]
        assert by_name["list_variables"]["annotations"]["readOnlyHint"] is True
        assert by_name["run_code"]["annotations"]["readOnlyHint"] is False

        answer = await tools.handle(call(2, "list_variables"))
        assert answer["id"] == 2 and answer["result"]["isError"] is False
        assert "sales  pandas.DataFrame  (2, 1)" in answer["result"]["content"][0]["text"]

        missing = await tools.handle(call(3, "inspect_variable", name="nope"))
        assert missing["result"]["isError"] is True
        assert "no variable 'nope'" in missing["result"]["content"][0]["text"]

        unknown = await tools.handle({"jsonrpc": "2.0", "id": 4, "method": "resources/list"})
        assert unknown["error"]["code"] == -32601
    finally:
        await tools.aclose()


async def test_cancelled_call_stops_the_code_and_is_answered() -> None:
    ns: dict[str, Any] = {}
    tools = KernelTools(namespace=ns, options=KernelToolsOptions(run_timeout_s=30))
    try:
        await tools.handle(INITIALIZE)
        await tools.handle({"jsonrpc": "2.0", "method": "notifications/initialized"})
        running = asyncio.ensure_future(
            tools.handle(call(5, "run_code", code="import time\nwhile True:\n    time.sleep(0.01)"))
        )
        while not tools.runner.busy:
            await asyncio.sleep(0.01)
        await tools.handle({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 5}})
        answer = await running
        assert answer == {"jsonrpc": "2.0", "id": 5, "error": {"code": -32800, "message": "Request cancelled"}}
        after = await tools.handle(call(6, "run_code", code="x = 1\nx + 1"))  # the runner is free again
        assert "result:\n2" in after["result"]["content"][0]["text"]
    finally:
        await tools.aclose()


async def test_requests_in_flight_with_the_same_id_each_get_their_answer() -> None:
    tools = KernelTools(namespace={"x": 1})
    try:
        await tools.handle(INITIALIZE)
        await tools.handle({"jsonrpc": "2.0", "method": "notifications/initialized"})
        both = await asyncio.gather(
            tools.handle(call(7, "list_variables")), tools.handle(call(7, "inspect_variable", name="x"))
        )
        assert [a["id"] for a in both] == [7, 7]
        assert both[0]["result"]["content"][0]["text"].startswith("name")
        assert both[1]["result"]["content"][0]["text"].startswith("x: int")
    finally:
        await tools.aclose()
