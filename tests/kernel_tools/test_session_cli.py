"""The kernel server behind a Session on the real CLI (no kernel): the MCP traffic as the
CLI sends it, and an interrupt that stops a running run_code."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from kandev_nb.agent.session import Session, SessionConfig
from kandev_nb.kernel_tools import KernelTools, KernelToolsOptions, with_kernel_tools
from kandev_nb.testing import Reply, ScriptedModelServer, text, tool_use
from tests.kernel_tools.conftest import result_text, tool_results

pytestmark = pytest.mark.timeout(180)


class RecordingKernelTools(KernelTools):
    """Keeps every JSON-RPC message from the CLI and our answer."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.traffic: list[tuple[dict[str, Any], dict[str, Any]]] = []

    async def handle(self, message: dict[str, Any]) -> dict[str, Any]:
        reply = await super().handle(message)
        self.traffic.append((message, reply))
        return reply


def make_session(tools: KernelTools, claude_cli: Path, claude_env: dict[str, str], claude_workdir: Path) -> Session:
    config = SessionConfig(
        cwd=claude_workdir,
        cli_path=claude_cli,
        env=dict(claude_env),
        approval_timeout=60,
        approve=lambda tool, tool_input: "allow" if tool == "mcp__kernel__run_code" else None,
    )
    return Session(with_kernel_tools(config, server=tools))


@pytest.mark.parametrize("claude_cli", ["2.1.332", "2.1.197"], indirect=True)
async def test_the_cli_speaks_mcp_through_control_requests(
    claude_cli: Path,
    scripted_model: ScriptedModelServer,
    claude_env: dict[str, str],
    claude_workdir: Path,
) -> None:
    ns: dict[str, Any] = {"rows": [1, 2, 3]}
    tools = RecordingKernelTools(namespace=ns)
    scripted_model.push(
        Reply(tool_use("mcp__kernel__list_variables", {"name_pattern": "row*"})),
        Reply(tool_use("mcp__kernel__run_code", {"code": "total = sum(rows)\ntotal"})),
        Reply(text("The total is 6.")),
    )
    session = make_session(tools, claude_cli, claude_env, claude_workdir)
    try:
        turn = await session.run("Sum my rows")
    finally:
        await session.close()
        await tools.aclose()
    assert turn.text == "The total is 6." and ns["total"] == 6
    # the CLI's can_use_tool was allowed, so its tools/call (same toolUseId) is not asked again
    asked = [e.tool_name for e in turn.events if e.type == "permission_request"]  # type: ignore[attr-defined]
    assert asked == ["mcp__kernel__run_code"]

    methods = [m.get("method") for m, _ in tools.traffic]
    handshake = ["initialize", "notifications/initialized"]
    if "2.1.197" in str(claude_cli):
        # Two MCP clients of its own, running side by side: everything twice, with the same ids.
        assert sorted(methods[:6]) == sorted([*handshake, "tools/list"] * 2) and methods[0] == "initialize"
        assert [m["id"] for m, _ in tools.traffic if m.get("method") == "initialize"] == [0, 0]
        assert [m["id"] for m, _ in tools.traffic if m.get("method") == "tools/list"] == [1, 1]
    else:
        assert methods[:3] == [*handshake, "tools/list"]
    assert methods[-2:] == ["tools/call", "tools/call"]
    for message, reply in tools.traffic:
        if "id" in message:
            assert reply["id"] == message["id"] and "result" in reply
        else:
            assert reply == {"jsonrpc": "2.0", "result": {}}  # the acknowledgement of a notification
    calls = [m["params"] for m, _ in tools.traffic if m.get("method") == "tools/call"]
    assert [c["name"] for c in calls] == ["list_variables", "run_code"]
    assert calls[0]["arguments"] == {"name_pattern": "row*"}
    assert calls[0]["_meta"]["claudecode/toolUseId"]  # the CLI says which tool_use it runs

    answers = [result_text(tool_results(r)[-1]) for r in scripted_model.main_requests[1:]]
    assert answers[0].splitlines()[1].split()[:3] == ["rows", "list", "len"]
    assert answers[1].startswith("result:\n6\n")


async def test_an_interrupt_stops_a_running_run_code_at_once(
    claude_cli: Path,
    scripted_model: ScriptedModelServer,
    claude_env: dict[str, str],
    claude_workdir: Path,
) -> None:
    ns: dict[str, Any] = {}
    tools = RecordingKernelTools(namespace=ns, options=KernelToolsOptions(run_timeout_s=120))
    scripted_model.push(
        Reply(
            tool_use(
                "mcp__kernel__run_code",
                {"code": "import time\nticks = 0\nwhile True:\n    ticks += 1\n    time.sleep(0.01)"},
            )
        ),
        Reply(text("Next turn.")),
    )
    session = make_session(tools, claude_cli, claude_env, claude_workdir)
    try:
        running = asyncio.ensure_future(session.run("Loop forever"))
        while ns.get("ticks", 0) < 5:
            await asyncio.sleep(0.05)
        await session.interrupt()
        turn = await running
        assert turn.interrupted and not tools.runner.busy
        ticks = ns["ticks"]
        await asyncio.sleep(0.3)
        assert ns["ticks"] == ticks  # the loop is stopped, not left running
        cancelled = [m for m, _ in tools.traffic if m.get("method") == "notifications/cancelled"]
        call_ids = [m["id"] for m, _ in tools.traffic if m.get("method") == "tools/call"]
        assert [m["params"]["requestId"] for m in cancelled] == call_ids  # the CLI cancels the call
        assert (await session.run("again")).text == "Next turn."  # the process and the server go on
    finally:
        await session.close()
        await tools.aclose()
