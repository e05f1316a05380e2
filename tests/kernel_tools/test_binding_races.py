"""Issue 23 points 1, 3 and 6: an allow of a notebook tool covers exactly what its card showed.

The real CLI against the scripted model, a :class:`~kandev_nb.agent.session.Session` with the
kernel server, and a Python stand-in of the notebook tab (tests/kernel_tools/stand_in_tab.py)
that the tests change the way a person typing in the tab would. The model's requests are
routed by conversation (the main one, or a subagent by its prompt) and by how many
tool_results it has seen, so two subagents running side by side each get their own script.

On the old main (before the binding): the two-subagent race ran the edited code the person
never saw; a cell the person changed while the card waited (and the agent read again) ran
changed; ``run_cell {"index": 3}`` showed one cell and ran the one above it; ``edit_cell``
rewrote the running `%%claude` cell.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from kandev_nb.agent import events as ev
from kandev_nb.agent.cells import NotebookCell
from kandev_nb.agent.permissions import Rules
from kandev_nb.agent.session import Session, SessionConfig
from kandev_nb.kernel_tools import KernelTools, with_kernel_tools
from kandev_nb.testing import RecordedRequest, Reply, ScriptedModelServer, text, tool_use
from tests.kernel_tools.stand_in_tab import StandInTab

pytestmark = pytest.mark.timeout(180)

RUN = "mcp__kernel__run_cell"
EDIT = "mcp__kernel__edit_cell"
Step = Callable[[], Reply]
WAIT_S = 60.0  # a bound on waiting for the other side, never a timed assertion


def conversation(request: RecordedRequest) -> str:
    """The first user message of the request's conversation (main prompt or subagent prompt)."""
    return json.dumps(request.messages[0].get("content")) if request.messages else ""


def results_seen(request: RecordedRequest) -> int:
    return sum(
        1
        for m in request.messages
        if m.get("role") == "user" and isinstance(m.get("content"), list)
        for b in m["content"]
        if isinstance(b, dict) and b.get("type") == "tool_result"
    )


def router(scripts: dict[str, list[Step]]) -> Callable[[RecordedRequest], Reply]:
    """A script entry that answers each conversation (keyed by a marker in its first user
    message) with its next step: step n once n tool_results are in the conversation."""

    def route(request: RecordedRequest) -> Reply:
        first = conversation(request)
        for marker, steps in scripts.items():
            if marker in first:
                n = results_seen(request)
                return steps[n]() if n < len(steps) else Reply(text(f"{marker} done."))
        return Reply(text("(not scripted)"))

    return route


def agent(marker: str, cli: Path | None = None) -> Any:
    """The `tool_use` that starts a subagent with `marker` in its prompt (``Agent`` in 2.1.332,
    which runs agents in the background unless told not to; ``Task`` in 2.1.197)."""
    call: dict[str, Any] = {
        "description": f"subagent {marker}",
        "subagent_type": "general-purpose",
        "prompt": f"{marker}: work on the notebook",
    }
    if cli is not None and "2.1.197" in str(cli):
        return tool_use("Task", call)
    return tool_use("Agent", {**call, "run_in_background": False})


def session_for(tools: KernelTools, cli: Path, env: dict[str, str], cwd: Path, **config: Any) -> Session:
    base = SessionConfig(cwd=cwd, cli_path=cli, env=dict(env), approval_timeout=WAIT_S, **config)
    return Session(with_kernel_tools(base, server=tools))


def reply(*blocks: Any) -> Step:
    return lambda: Reply(*blocks)


def run_results(tools: KernelTools, name: str = "run_cell") -> list[str]:
    return [c.text for c in tools.calls if c.tool == name]


def cards(events: list[ev.AgentEvent], tool: str) -> list[NotebookCell]:
    found = [e.normalized for e in events if isinstance(e, ev.PermissionRequest) and e.tool_name == tool]
    assert all(isinstance(p, NotebookCell) for p in found)
    return found  # type: ignore[return-value]


@pytest.mark.parametrize("claude_cli", ["2.1.332", "2.1.197"], indirect=True)
async def test_two_subagents_an_edit_after_the_card_does_not_run_unseen(
    claude_cli: Path, scripted_model: ScriptedModelServer, claude_env: dict[str, str], claude_workdir: Path
) -> None:
    """Point 1: one subagent's run_cell card shows ran.append('hello'); the other subagent's
    edit_cell (allowed by a policy) rewrites the cell while the card waits; the person then
    allows what they saw. The edited code must not run, and the agent is told why."""
    tab = StandInTab([("c0", "code", "%%claude\nwork"), ("c1", "code", "ran.append('hello')")])
    ns: dict[str, Any] = {"ran": []}
    tools = KernelTools(namespace=ns, notebook_view=tab)
    tools.notebook.running_cell_id = "c0"
    card_shown = threading.Event()

    def edit_after_the_card() -> Reply:
        card_shown.wait(WAIT_S)  # the model server's worker thread: the edit comes after the card
        return Reply(tool_use(EDIT, {"cell_id": "c1", "source": "ran.append('edited')"}))

    route = router(
        {
            "MAIN": [
                reply(tool_use("mcp__kernel__read_notebook", {})),
                reply(agent("SUB-RUN", claude_cli), agent("SUB-EDIT", claude_cli)),
            ],
            "SUB-RUN": [reply(tool_use(RUN, {"cell_id": "c1"}))],
            "SUB-EDIT": [edit_after_the_card],
        }
    )
    scripted_model.push(*[route] * 12)
    loop = asyncio.get_running_loop()

    async def allow_once_edited(event: ev.PermissionRequest) -> None:
        await asyncio.wait_for(tab.changed.wait(), WAIT_S)  # the other subagent's edit landed
        event.approval.allow()

    def person(event: ev.AgentEvent) -> None:
        if isinstance(event, ev.PermissionRequest) and event.tool_name == RUN:
            card_shown.set()
            loop.create_task(allow_once_edited(event))

    session = session_for(tools, claude_cli, claude_env, claude_workdir, approve=Rules(allow=[EDIT]))
    try:
        turn = await session.run("MAIN: run cell 1 and fix it, with two subagents", consumers=[person])
    finally:
        card_shown.set()
        await session.close()
        await tools.aclose()

    assert [c.source for c in cards(turn.events, RUN)] == ["ran.append('hello')"]  # what the person saw
    assert tab.source("c1") == "ran.append('edited')"  # the policy-allowed edit did happen
    assert ns["ran"] == []  # and the code the person never saw did not run
    [answer] = run_results(tools)
    assert answer.startswith("run_cell refused: cell 1 (id c1) changed after you asked"), answer
    assert "ran.append('hello')" in answer and "ran.append('edited')" in answer and "ask again" in answer
    updates = [e for e in turn.events if isinstance(e, ev.ToolUpdate) and e.tool_name == RUN]
    assert updates and updates[-1].status == "error" and "changed after you asked" in updates[-1].output


async def test_a_cell_the_person_changes_while_the_card_waits_does_not_run(
    claude_cli: Path, scripted_model: ScriptedModelServer, claude_env: dict[str, str], claude_workdir: Path
) -> None:
    """Point 1, no edit permission at all: the person changes the cell in the tab while the
    run_cell card waits, another subagent reads the notebook again (so the agent's last read
    is the new source), then the person allows the card. What runs must be what it showed."""
    tab = StandInTab([("c0", "code", "%%claude\nwork"), ("c1", "code", "ran.append('hello')")])
    ns: dict[str, Any] = {"ran": []}
    tools = KernelTools(namespace=ns, notebook_view=tab)
    tools.notebook.running_cell_id = "c0"
    typed = threading.Event()

    def read_after_typing() -> Reply:
        typed.wait(WAIT_S)
        return Reply(tool_use("mcp__kernel__read_notebook", {}))

    route = router(
        {
            "MAIN": [
                reply(tool_use("mcp__kernel__read_notebook", {})),
                reply(agent("SUB-RUN", claude_cli), agent("SUB-READ", claude_cli)),
            ],
            "SUB-RUN": [reply(tool_use(RUN, {"cell_id": "c1"}))],
            "SUB-READ": [read_after_typing],
        }
    )
    scripted_model.push(*[route] * 12)
    loop = asyncio.get_running_loop()

    async def allow_after_the_reread(event: ev.PermissionRequest) -> None:
        tab.type_in("c1", "ran.append('typed later')")  # the person, in the tab
        typed.set()
        while sum(1 for c in tools.calls if c.tool == "read_notebook") < 2:  # the second read
            await asyncio.sleep(0.05)
        event.approval.allow()

    def person(event: ev.AgentEvent) -> None:
        if isinstance(event, ev.PermissionRequest) and event.tool_name == RUN:
            loop.create_task(allow_after_the_reread(event))

    session = session_for(tools, claude_cli, claude_env, claude_workdir)
    try:
        turn = await session.run("MAIN: run cell 1, with two subagents", consumers=[person])
    finally:
        typed.set()
        await session.close()
        await tools.aclose()

    assert [c.source for c in cards(turn.events, RUN)] == ["ran.append('hello')"]
    assert ns["ran"] == []
    [answer] = run_results(tools)
    assert "changed after you asked" in answer and "ran.append('typed later')" in answer, answer


INDEX_CELLS = [
    ("c0", "code", "%%claude\nwork"),
    ("c1", "code", "ran.append('load')"),
    ("c2", "code", "ran.append('clean')"),
    ("c3", "code", "ran.append('summary stats')"),
]


@pytest.mark.parametrize("claude_cli", ["2.1.332", "2.1.197"], indirect=True)
@pytest.mark.parametrize("when", ["before the call", "while the card waits"])
async def test_run_cell_by_index_runs_the_cell_its_card_showed(
    when: str, claude_cli: Path, scripted_model: ScriptedModelServer, claude_env: dict[str, str], claude_workdir: Path
) -> None:
    """Point 3: the person inserts a cell near the top after the agent read the notebook.
    The index is resolved once, against the tab, when the card is built: before the call, the
    card shows the cell now at index 3 and that one runs; while the card waits, the cell at
    index 3 is no longer the one the card showed, and nothing runs."""
    tab = StandInTab(INDEX_CELLS)
    ns: dict[str, Any] = {"ran": []}
    tools = KernelTools(namespace=ns, notebook_view=tab)
    tools.notebook.running_cell_id = "c0"

    def run_third() -> Reply:
        if when == "before the call":
            tab.insert_by_person(1, "u1", "ran.append('the person inserted this')")
        return Reply(tool_use(RUN, {"index": 3}))

    route = router({"MAIN": [reply(tool_use("mcp__kernel__read_notebook", {})), run_third]})
    scripted_model.push(*[route] * 4)

    def person(event: ev.AgentEvent) -> None:
        if isinstance(event, ev.PermissionRequest) and event.tool_name == RUN:
            if when == "while the card waits":
                tab.insert_by_person(1, "u1", "ran.append('the person inserted this')")
            event.approval.allow()

    session = session_for(tools, claude_cli, claude_env, claude_workdir)
    try:
        turn = await session.run("MAIN: run the summary cell", consumers=[person])
    finally:
        await session.close()
        await tools.aclose()

    [card] = cards(turn.events, RUN)
    [answer] = run_results(tools)
    if when == "before the call":
        assert (card.cell_id, card.index, card.source) == ("c2", 3, "ran.append('clean')")  # the tab's cell 3
        assert ns["ran"] == ["clean"], answer  # the cell the card showed, and nothing else
        [update] = [e for e in turn.events if isinstance(e, ev.ToolUpdate) and e.tool_name == RUN]
        assert isinstance(update.normalized, NotebookCell)  # the tool card names the same cell
        assert (update.normalized.cell_id, update.normalized.source) == ("c2", "ran.append('clean')")
    else:
        assert (card.cell_id, card.source) == ("c3", "ran.append('summary stats')")
        assert ns["ran"] == []
        assert answer.startswith("run_cell refused: the cell at index 3 is cell c2, not the cell the person approved")


@pytest.mark.parametrize("when", ["before the call", "while the card waits"])
async def test_edit_cell_by_index_replaces_the_cell_its_card_showed(
    when: str, claude_cli: Path, scripted_model: ScriptedModelServer, claude_env: dict[str, str], claude_workdir: Path
) -> None:
    """Point 3: ``edit_cell {"index": 2}`` after the person inserted a cell above: the card's
    diff is of the cell now at index 2 (the person's ``import pandas as pd``), so the person
    sees what is replaced; a cell inserted while the card waits makes the edit refused."""
    tab = StandInTab(
        [
            ("c0", "code", "%%claude\nwork"),
            ("c1", "code", "import pandas as pd"),
            ("c2", "code", "df = pd.read_csv('a.csv')"),
        ]
    )
    tools = KernelTools(namespace={}, notebook_view=tab)
    tools.notebook.running_cell_id = "c0"
    new = "df = pd.read_csv('a.csv', sep=';')"

    def edit_second() -> Reply:
        if when == "before the call":
            tab.insert_by_person(1, "u1", "%matplotlib inline")
        return Reply(tool_use(EDIT, {"index": 2, "source": new}))

    route = router({"MAIN": [reply(tool_use("mcp__kernel__read_notebook", {})), edit_second]})
    scripted_model.push(*[route] * 4)

    def person(event: ev.AgentEvent) -> None:
        if isinstance(event, ev.PermissionRequest) and event.tool_name == EDIT:
            if when == "while the card waits":
                tab.insert_by_person(1, "u1", "%matplotlib inline")
            event.approval.allow()

    session = session_for(tools, claude_cli, claude_env, claude_workdir)
    try:
        turn = await session.run("MAIN: use ; as the separator", consumers=[person])
    finally:
        await session.close()
        await tools.aclose()

    [card] = cards(turn.events, EDIT)
    [answer] = run_results(tools, "edit_cell")
    if when == "before the call":
        assert (card.cell_id, card.old_source) == ("c1", "import pandas as pd")  # the diff shows what goes
        assert tab.source("c1") == new, answer
    else:
        assert (card.cell_id, card.old_source) == ("c2", "df = pd.read_csv('a.csv')")
        assert tab.source("c1") == "import pandas as pd" and tab.source("c2") == "df = pd.read_csv('a.csv')"
        assert answer.startswith("edit_cell refused: the cell at index 2 is cell c1, not the cell the person approved")


async def test_edit_cell_refuses_the_running_claude_cell(
    claude_cli: Path, scripted_model: ScriptedModelServer, claude_env: dict[str, str], claude_workdir: Path
) -> None:
    """Point 6: like run_cell and delete_cell, edit_cell refuses the running `%%claude` cell
    (rewriting it would clear its live view and any approval card waiting in it), even when a
    policy allows every edit."""
    tab = StandInTab([("c0", "code", "%%claude\nwork"), ("c1", "code", "x = 1")])
    tools = KernelTools(namespace={}, notebook_view=tab)
    tools.notebook.running_cell_id = "c0"
    route = router(
        {
            "MAIN": [
                reply(tool_use("mcp__kernel__read_notebook", {})),
                reply(tool_use(EDIT, {"cell_id": "c0", "source": "print('rewritten')"})),
                reply(tool_use(EDIT, {"index": 0, "source": "print('rewritten')"})),
            ]
        }
    )
    scripted_model.push(*[route] * 4)
    session = session_for(tools, claude_cli, claude_env, claude_workdir, approve=Rules(allow=[EDIT]))
    try:
        await session.run("MAIN: rewrite your own cell")
    finally:
        await session.close()
        await tools.aclose()

    assert tab.source("c0") == "%%claude\nwork"
    assert run_results(tools, "edit_cell") == ["edit_cell refused: that is the running %%claude cell"] * 2
    assert not [op for op, _ in tab.ops if op == "edit"]
