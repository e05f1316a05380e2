"""What a finished turn gives the tab's answer buttons, in a real kernel with the real CLI (the
test says hello to the notebook bridge as a JupyterLab tab does), issue 34 points 6, 7 and 8:
the Markdown cell "Insert as Markdown cell below" writes keeps dollars as dollars; a --schema
turn with no answer text offers no such cell; its StructuredOutput card shows the answer as the
summary does, not kandev-nb's ``{"items": ...}`` wrapper."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kandev_nb.testing import Reply, ScriptedModelServer, text, tool_use
from tests.kernel.conftest import setup_code
from tests.kernel.kernel_harness import CellRun, KernelHarness
from tests.kernel.test_approvals import html_of

ANSWER = (
    "Revenue rose from $41.5k in July to $61k in August.\n\n"
    "```python\nprint(f'${total}')\n```\n\nThe `$HOME` variable and \\$5 stay as they are."
)
INSERTED = (
    "Revenue rose from \\\\$41.5k in July to \\\\$61k in August.\n\n"
    "```python\nprint(f'${total}')\n```\n\nThe `$HOME` variable and \\\\$5 stay as they are."
)
"""The Markdown cell's source: each dollar outside code as ``\\\\$`` (JupyterLab's MathJax shows
it as "$"; a plain ``\\$`` still became math there), code as it was."""
MONTHS = """
from pydantic import BaseModel

class Month(BaseModel):
    month: str
    revenue: float
"""


def _marks(run: CellRun) -> list[dict[str, Any]]:
    """The ``kandev`` display metadata of the cell's outputs (answers.mark: the live view's
    display is updated with the finished turn)."""
    return [
        m["content"]["metadata"]["kandev"]
        for m in run.outputs
        if m["msg_type"] in ("display_data", "update_display_data") and "kandev" in (m["content"].get("metadata") or {})
    ]


def test_the_inserted_markdown_escapes_dollars_and_a_schema_turn_offers_none(
    kernel: KernelHarness, scripted_model: ScriptedModelServer, claude_env: dict[str, str], claude_workdir: Path
) -> None:
    scripted_model.push(
        Reply(text(ANSWER)),
        Reply(tool_use("StructuredOutput", {"items": [{"month": "2026-07", "revenue": 41.5}]})),
    )
    kernel.execute(setup_code(claude_env, claude_workdir))
    (bridge,) = [w for w in kernel.widgets.values() if w.state.get("kernel")]
    kernel.send_custom(bridge, {"kind": "hello", "view": "v-test", "ok": True, "path": "answers.ipynb"})
    kernel.pump_for(0.5)

    run = kernel.execute("%%claude\nHow did revenue go?")
    (mark,) = _marks(run)
    assert mark["answer"] == INSERTED  # what the tab inserts: dollars, not LaTeX; code as it was
    assert kernel.eval("kandev_nb.last_turn().text") == ANSWER  # the turn keeps the answer as sent

    kernel.execute(MONTHS)
    run = kernel.execute("%%claude --schema Month --frame -o months\nThe months, please")
    (mark,) = _marks(run)
    assert mark["answer"] == ""  # no answer text: the tab offers no "Insert as Markdown cell below"
    assert kernel.eval("months['revenue'].tolist()") == [41.5]
    html = html_of(run)
    assert "kandev-kind-generic" in html or "StructuredOutput" in html
    assert "&quot;items&quot;" not in html and '"items"' not in html  # not the wrapper the frame schema needed
    assert "permission settings" not in html  # the StructuredOutput call is an answer, not a permission matter
