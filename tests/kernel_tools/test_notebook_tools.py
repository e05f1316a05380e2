"""Issue 13 without a notebook tab: a real kernel whose only frontend is the test harness.

The harness opens the bridge's comm like any frontend but runs no JavaScript, so no view ever
says hello: every notebook tool answers at once that there is no open notebook view, and the
turn goes on. Also: what the CLI sends the model in ``tools`` for the kernel server's tools.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kandev_nb.testing import Reply, ScriptedModelServer, text, tool_use
from tests.kernel.conftest import setup_code
from tests.kernel.kernel_harness import KernelHarness
from tests.kernel_tools.conftest import result_text, tool_results

pytestmark = pytest.mark.timeout(240)

NOTEBOOK_TOOLS = ["read_notebook", "insert_cell", "edit_cell", "delete_cell", "run_cell"]


def test_without_a_view_the_notebook_tools_answer_that_there_is_none(
    kernel: KernelHarness,
    scripted_model: ScriptedModelServer,
    claude_env: dict[str, str],
    claude_workdir: Path,
) -> None:
    scripted_model.push(
        Reply(tool_use("mcp__kernel__read_notebook", {})),
        Reply(tool_use("mcp__kernel__insert_cell", {"source": "print('hi')"})),
        Reply(tool_use("mcp__kernel__run_cell", {"index": 0})),
        Reply(text("No tab, so I answer here.")),
    )
    kernel.execute(
        setup_code(claude_env, claude_workdir)
        + "kandev_nb.configure(approve=kandev_nb.Rules(allow=['mcp__kernel__*']))\n"
    )
    run = kernel.execute("%%claude\nAdd a cell")

    answers = [result_text(tool_results(scripted_model.main_requests[i])[-1]) for i in (1, 2, 3)]
    for answer in answers:
        assert answer.startswith("There is no open notebook view"), answer
        assert "run_code" in answer  # what still works
    assert "No tab, so I answer here." in "\n".join(run.data("text/html"))
    records = kernel.eval(
        "[(c.tool, c.is_error) for c in kandev_nb.sessions['default'].config.mcp_servers['kernel'].calls]"
    )
    assert records == [["read_notebook", True], ["insert_cell", True], ["run_cell", True]]


def test_the_cli_sends_the_notebook_tools_with_their_schemas(
    kernel: KernelHarness,
    scripted_model: ScriptedModelServer,
    claude_env: dict[str, str],
    claude_workdir: Path,
) -> None:
    """CLI 2.1.332 (the pinned newest) defers MCP tools behind ToolSearch (their names only, in
    a system message) unless the server's config says ``"alwaysLoad": true``, which the
    kernel server's does: the tools arrive in the first request's ``tools`` with their full
    ``input_schema``, so a model calls them without a ToolSearch round trip."""
    scripted_model.push(Reply(text("ok")))
    kernel.execute(setup_code(claude_env, claude_workdir))
    kernel.execute("%%claude\nhello")

    tools = {t["name"]: t for t in scripted_model.main_requests[0].body["tools"]}
    for name in NOTEBOOK_TOOLS:
        tool = tools[f"mcp__kernel__{name}"]
        assert "defer_loading" not in tool, tool
        assert tool["input_schema"]["type"] == "object" and tool["input_schema"]["properties"], tool
    assert tools["mcp__kernel__edit_cell"]["input_schema"]["required"] == ["source"]
    deferred = [
        b["text"]
        for m in scripted_model.main_requests[0].messages
        if isinstance(m.get("content"), list)
        for b in m["content"]
        if isinstance(b, dict) and "deferred tools" in str(b.get("text"))
    ]
    assert deferred and "NotebookEdit" in deferred[0]  # the CLI still defers its own rarer tools
    assert "mcp__kernel__" not in deferred[0]  # but not the kernel's ("alwaysLoad" in the MCP config)


def test_a_frontend_that_honours_set_next_input_gets_the_inserted_cell_that_way(
    kernel: KernelHarness,
    scripted_model: ScriptedModelServer,
    claude_env: dict[str, str],
    claude_workdir: Path,
) -> None:
    """VS Code sets ``__vsc_ipynb_file__`` and shows a ``set_next_input`` payload as a new cell."""
    scripted_model.push(
        Reply(tool_use("mcp__kernel__insert_cell", {"source": "print('from Claude')"})),
        Reply(tool_use("mcp__kernel__insert_cell", {"source": "print('a second one')"})),
        Reply(text("One cell will show below.")),
    )
    kernel.execute(
        setup_code(claude_env, claude_workdir)
        + "kandev_nb.configure(approve=kandev_nb.Rules(allow=['mcp__kernel__*']))\n"
        + "__vsc_ipynb_file__ = '/home/me/analysis.ipynb'\n"
    )
    run = kernel.execute("%%claude\nAdd a cell")

    first = result_text(tool_results(scripted_model.main_requests[1])[-1])
    second = result_text(tool_results(scripted_model.main_requests[2])[-1])
    assert "set_next_input" in first and "only one cell per turn" in first
    assert "only one new cell per turn" in second
    payloads = [p for p in run.reply.get("payload", []) if p.get("source") == "set_next_input"]
    assert [p["text"] for p in payloads] == ["print('from Claude')"]
