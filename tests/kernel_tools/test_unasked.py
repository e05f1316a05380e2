"""issue 17, 2: a `tools/call` of a kernel tool that changes state, with no allowed
can_use_tool before it, asks a person itself (the same PermissionRequest card), in every mode.

The peer is a stand-in CLI (unasked_cli.py) that sends the `mcp_message` unasked, as an
intruder on the transport or a CLI whose own settings allowed the tool would.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from kandev_nb.agent import events as ev
from kandev_nb.agent.permissions import MODES, Rules
from kandev_nb.agent.session import Session, SessionConfig
from kandev_nb.kernel_tools import KernelTools, with_kernel_tools
from kandev_nb.wire.transport import StdioTransport, Transport
from tests.kernel.conftest import setup_code

pytestmark = pytest.mark.timeout(120)

STAND_IN = str(Path(__file__).with_name("unasked_cli.py"))


def stand_in_session(
    tools: KernelTools,
    cwd: Path,
    *,
    mode: str = "supervised",
    tool: str = "run_code",
    arguments: dict[str, Any] | None = None,
    **config: Any,
) -> Session:
    extra = {"UNASKED_TOOL": tool, "UNASKED_ARGS": json.dumps(arguments or {"code": "ran = True"})}

    def factory(argv: list[str], env: dict[str, str], workdir: str) -> Transport:
        return StdioTransport([sys.executable, STAND_IN], {**env, **extra}, workdir)

    base = SessionConfig(cwd=cwd, mode=mode, allow_root_bypass=True, cli_path=sys.executable, **config)  # type: ignore[arg-type]
    return Session(with_kernel_tools(base, server=tools), transport_factory=factory)


def of(kind: type[ev.AgentEvent], events: list[ev.AgentEvent]) -> list[Any]:
    return [e for e in events if isinstance(e, kind)]


@pytest.mark.parametrize("mode", MODES)
async def test_an_unasked_run_code_asks_a_person_in_every_mode(mode: str, tmp_path: Path) -> None:
    ns: dict[str, Any] = {}
    tools = KernelTools(namespace=ns)
    seen: list[ev.PermissionRequest] = []

    def person(event: ev.AgentEvent) -> None:
        if isinstance(event, ev.PermissionRequest):
            seen.append(event)
            event.approval.deny("not this one")

    session = stand_in_session(tools, tmp_path, mode=mode, approval_timeout=30)
    try:
        turn = await session.run("go", consumers=[person])
    finally:
        await session.close()
    assert "ran" not in ns and tools.calls == []  # nothing ran
    assert [(r.tool_name, r.input) for r in seen] == [("mcp__kernel__run_code", {"code": "ran = True"})]
    decided = of(ev.PermissionDecided, turn.events)
    assert [(d.behavior, d.decided_by) for d in decided] == [("deny", "person")]
    assert turn.stats is not None and "denied" in (turn.stats.result_text or "")  # what the peer got back


async def test_an_unanswered_unasked_call_is_denied_by_the_timeout(tmp_path: Path) -> None:
    ns: dict[str, Any] = {}
    session = stand_in_session(KernelTools(namespace=ns), tmp_path, approval_timeout=0.2)
    try:
        turn = await session.run("go")
    finally:
        await session.close()
    assert "ran" not in ns
    assert [d.decided_by for d in of(ev.PermissionDecided, turn.events)] == ["timeout"]


async def test_allowed_on_its_card_it_runs_and_a_policy_may_answer(tmp_path: Path) -> None:
    ns: dict[str, Any] = {}

    def person(event: ev.AgentEvent) -> None:
        if isinstance(event, ev.PermissionRequest):
            event.approval.allow()

    session = stand_in_session(KernelTools(namespace=ns), tmp_path, approval_timeout=30)
    try:
        turn = await session.run("go", consumers=[person])
    finally:
        await session.close()
    assert ns["ran"] is True and "ok (no output)" in (turn.stats.result_text if turn.stats else "")

    ns.clear()
    session = stand_in_session(
        KernelTools(namespace=ns),
        tmp_path,
        approval_timeout=30,
        approve=Rules(deny=["mcp__kernel__*"], allow=["mcp__kernel__run_code"]),
    )
    try:
        turn = await session.run("go")
    finally:
        await session.close()
    assert "ran" not in ns  # deny beats allow on mcp__*
    assert [d.decided_by for d in of(ev.PermissionDecided, turn.events)] == ["policy"]


async def test_read_only_kernel_tools_need_no_request(tmp_path: Path) -> None:
    ns: dict[str, Any] = {"rows": [1, 2]}
    tools = KernelTools(namespace=ns)
    session = stand_in_session(tools, tmp_path, tool="list_variables", arguments={}, approval_timeout=30)
    try:
        turn = await session.run("go")
    finally:
        await session.close()
    assert of(ev.PermissionRequest, turn.events) == []
    assert [c.tool for c in tools.calls] == ["list_variables"] and "rows" in tools.calls[0].text


@pytest.mark.parametrize("answer", ["Allow", "Deny"])
def test_in_a_kernel_the_unasked_call_shows_the_approval_card(answer: str, kernel: Any, claude_workdir: Path) -> None:
    kernel.execute(setup_code({}, claude_workdir, cli_path=STAND_IN))
    run = kernel.start("%%claude\ngo")
    controls = kernel.wait_for_approval()
    card = kernel.widget_texts()
    assert "wants to use kernel · run_code" in card and "called without a permission request" in card
    kernel.answer(controls, answer.lower())
    kernel.wait(run)
    assert kernel.eval("'ran' in dir()") is (answer == "Allow")
    decided = kernel.eval(
        "[(e.tool_name, e.behavior, e.decided_by) for e in kandev_nb.last_turn().events "
        "if e.type == 'permission_decided']"
    )
    assert decided == [["mcp__kernel__run_code", answer.lower(), "person"]]
