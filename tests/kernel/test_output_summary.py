"""Issue 27, point 7: after ``--schema ... -o months`` the cell shows what the variable got
("→ months: DataFrame 4 × 3 (...)" and the first rows), not the CLI's `result` text (the
minified JSON with our ``{"items": ...}`` wrapper). A real kernel, the real CLI, the scripted model."""

from __future__ import annotations

from pathlib import Path

import pytest

from kandev_nb.testing import Reply, ScriptedModelServer, tool_use
from tests.kernel.conftest import setup_code
from tests.kernel.kernel_harness import KernelHarness

pytestmark = pytest.mark.timeout(300)

MONTHS = [
    {"month": "2026-01", "revenue": 10.5, "customers": 3},
    {"month": "2026-02", "revenue": 12.25, "customers": 4},
    {"month": "2026-03", "revenue": 9.0, "customers": 2},
    {"month": "2026-04", "revenue": 15.75, "customers": 6},
]

TYPES = """
from pydantic import BaseModel

class Month(BaseModel):
    month: str
    revenue: float
    customers: int
"""


def test_a_frame_answer_shows_its_shape_dtypes_and_first_rows_not_the_wrapped_json(
    kernel: KernelHarness, scripted_model: ScriptedModelServer, claude_env: dict[str, str], claude_workdir: Path
) -> None:
    scripted_model.push(
        Reply(tool_use("StructuredOutput", {"items": MONTHS})), Reply(tool_use("StructuredOutput", MONTHS[1]))
    )
    kernel.execute(setup_code(claude_env, claude_workdir))
    kernel.execute(TYPES)
    run = kernel.execute("%%claude --schema Month --frame -o months\nRevenue by month")
    html = "\n".join(str(h) for h in run.data("text/html"))
    plain = "\n".join(str(p) for p in run.data("text/plain"))
    markdown = "\n".join(str(m) for m in run.data("text/markdown"))
    line = "→ months: DataFrame 4 × 3 (month string, revenue Float64, customers Int64)"
    assert line in html and line in plain
    assert "<td" in html and "2026-03" in html and "15.75" in html  # the first rows, as a table
    assert "| 2026\\-01 | 10\\.5 | 3 |" in markdown  # the saved notebook's Markdown too
    assert '{"items"' not in html + plain + markdown  # no wrapped, minified JSON anywhere in the cell
    assert kernel.eval("kandev_nb.last_turn().text") == ""
    assert kernel.eval("months.shape[0]") == 4

    run = kernel.execute("%%claude --schema Month -o feb\nFebruary only")
    plain = "\n".join(str(p) for p in run.data("text/plain"))
    assert "→ feb: Month (3 fields)" in plain and "2026-02" in plain
