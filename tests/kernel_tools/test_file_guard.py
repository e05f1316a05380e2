"""``SessionConfig.file_guard``: a PreToolUse hook refuses file tools the guard names (real CLI).

The notebook layer uses it to keep NotebookEdit / Write off the notebook open in a tab; here
a guard refuses every ``.ipynb`` in acceptEdits mode, where the CLI would otherwise write
without asking anyone.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kandev_nb.agent.session import Session
from kandev_nb.testing import Reply, ScriptedModelServer, text, tool_use
from tests.kernel_tools.conftest import result_text, tool_results

pytestmark = pytest.mark.timeout(180)


async def test_the_file_guard_refuses_in_every_mode_and_lets_the_rest_through(
    claude_env: dict[str, str], claude_workdir: Path, scripted_model: ScriptedModelServer
) -> None:
    notebook, notes = claude_workdir / "analysis.ipynb", claude_workdir / "notes.txt"
    asked: list[tuple[str, str]] = []

    def guard(tool_name: str, tool_input: dict[str, Any]) -> str | None:
        path = str(tool_input.get("file_path") or tool_input.get("notebook_path"))
        asked.append((tool_name, Path(path).name))
        return "Refused: that notebook is open; use the kernel tools." if path.endswith(".ipynb") else None

    scripted_model.push(
        Reply(tool_use("Write", {"file_path": str(notebook), "content": "{}"})),
        Reply(tool_use("Write", {"file_path": str(notes), "content": "kept\n"})),
        Reply(text("One refused, one written.")),
    )
    session = Session(cwd=claude_workdir, env=claude_env, mode="acceptEdits", file_guard=guard)
    try:
        turn = await session.run("Write two files")
    finally:
        await session.close()

    assert asked == [("Write", "analysis.ipynb"), ("Write", "notes.txt")]
    refusal = result_text(tool_results(scripted_model.main_requests[1])[-1])
    assert "Refused: that notebook is open; use the kernel tools." in refusal
    assert not notebook.exists() and notes.read_text() == "kept\n"
    assert turn.text == "One refused, one written."
