"""Issue 27, point 1: `%%claude --background` in a real kernel with the real CLI and the
scripted model; the test is the frontend (it says hello to the notebook bridge as a tab does).

The background cell returns at once, its turn streams into its own cell while another cell
computes, ``-o VAR`` is assigned when it ends (and the cell says so), a second turn of the same
session is queued, and cells queued behind it (Run All) or no frontend (nbclient) keep it
blocking."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kandev_nb.testing import Reply, ScriptedModelServer, text, tool_use
from tests.kernel.conftest import setup_code
from tests.kernel.kernel_harness import KernelHarness
from tests.kernel.test_approvals import answer, wait_for_card

BRIDGE = "kandev_nb.notebook.bridge.NotebookBridge"  # the bridge widget's _anywidget_id

pytestmark = pytest.mark.timeout(300)

TYPES = """
from pydantic import BaseModel

class Month(BaseModel):
    month: str
    revenue: float
    customers: int
"""

MONTHS = [{"month": f"2026-0{i}", "revenue": 10.0 + i, "customers": i} for i in range(1, 5)]
SLOW = "Reading the sales table month by month, " * 12  # streamed in 12-character chunks, 60 ms apart


def attach_frontend(kernel: KernelHarness) -> None:
    """Say hello to the notebook bridge as an open JupyterLab tab does (src/widgets/bridge.ts)."""
    kernel.pump_for(0.5)
    bridge = next(w for w in kernel.widgets.values() if w.state.get("_anywidget_id") == BRIDGE)
    kernel.send_custom(bridge, {"kind": "hello", "view": "tab-1", "ok": True, "path": "work.ipynb", "client": "c1"})
    kernel.pump_for(0.3)


def _html(kernel: KernelHarness, run: object) -> str:
    return "\n".join(str(h) for h in run.data("text/html"))  # type: ignore[attr-defined]


def test_a_background_turn_streams_while_another_cell_computes_and_o_is_assigned_at_its_end(
    kernel: KernelHarness, scripted_model: ScriptedModelServer, claude_env: dict[str, str], claude_workdir: Path
) -> None:
    scripted_model.push(Reply(text(SLOW, delay=0.06), tool_use("StructuredOutput", {"items": MONTHS})))
    kernel.execute(setup_code(claude_env, claude_workdir))
    kernel.execute(TYPES)
    attach_frontend(kernel)

    cell = kernel.execute("%%claude --background --schema Month --frame -o months\nRevenue by month")
    assert cell.status == "ok" and kernel.eval("'months' in globals()") is False  # it returned at once

    # Once the text streams, another cell computes (in slices that await); the text grows during it.
    while not any(kernel.live_texts()):
        kernel._pump()
    other = kernel.start(
        "import asyncio\ntotal = 0\nfor i in range(40):\n"
        "    total += sum(range(100_000))\n    await asyncio.sleep(0.05)\n"
    )
    lengths_during = []
    while not other.done:
        kernel._pump()
        texts = kernel.live_texts()
        lengths_during.append(len(texts[-1]) if texts else 0)
    kernel.wait(other)
    assert other.status == "ok" and kernel.eval("total") == 40 * sum(range(100_000))
    assert len(set(lengths_during) - {0}) > 1  # several text updates arrived while the other cell ran

    turn = kernel.eval("(await kandev_nb.wait()).output.shape")  # wait() returns the Turn
    assert turn == [4, 3]
    assert kernel.eval("months.revenue.sum()") == sum(m["revenue"] for m in MONTHS)
    assert kernel.eval("kandev_nb.last_turn().output is months")
    kernel.pump_for(0.3)
    html = _html(kernel, cell)  # what the background cell itself shows now
    assert "→ months: DataFrame 4 × 3 (month string, revenue Float64, customers Int64)" in html
    assert "Reading the sales table" in html  # its static rendering replaced the live view
    assert "Reading the sales table month by month" in kernel.live_texts()[-1]


def test_an_approval_of_a_background_turn_is_answered_while_other_cells_run(
    kernel: KernelHarness, scripted_model: ScriptedModelServer, claude_env: dict[str, str], claude_workdir: Path
) -> None:
    scripted_model.push(Reply(tool_use("Bash", {"command": "touch made.txt"})), Reply(text("Made it.")))
    kernel.execute(setup_code(claude_env, claude_workdir))
    attach_frontend(kernel)
    cell = kernel.execute("%%claude --background\nMake made.txt")
    card = wait_for_card(kernel, 1)  # the card comes after the cell returned
    assert kernel.execute("x = 41 + 1").status == "ok"  # the kernel takes other cells while it waits
    assert not (claude_workdir / "made.txt").exists()
    answer(kernel, card, "allow")
    assert kernel.eval("(await kandev_nb.wait()).text") == "Made it."
    assert (claude_workdir / "made.txt").exists() and kernel.eval("x") == 42
    kernel.pump_for(0.3)
    assert "allowed by you" in _html(kernel, cell)


def test_a_second_turn_of_the_session_is_queued_and_shown_as_queued(
    kernel: KernelHarness, scripted_model: ScriptedModelServer, claude_env: dict[str, str], claude_workdir: Path
) -> None:
    scripted_model.push(Reply(text(SLOW, delay=0.04)), Reply(text("Second answer.")))
    kernel.execute(setup_code(claude_env, claude_workdir))
    attach_frontend(kernel)
    first = kernel.execute("%%claude --background\nFirst question")
    second = kernel.execute("%%claude --background\nSecond question")
    first_count = first.reply["execution_count"]
    queued = "\n".join(str(p) for p in second.data("text/plain"))
    assert f"queued behind the turn of cell [{first_count}] (session default)" in queued
    assert kernel.eval("(await kandev_nb.wait()).text") == "Second answer."
    assert kernel.eval("[t.text for t in kandev_nb.sessions['default'].turns]") == [SLOW, "Second answer."]
    # The second request reached the model after the first turn ended, in the same conversation.
    assert "First question" in repr(scripted_model.main_requests[1].body["messages"])
    kernel.pump_for(0.3)
    assert f"started after the turn of cell [{first_count}] ended" in "\n".join(
        str(p) for p in second.data("text/plain")
    )
    assert "Second answer." in _html(kernel, second)


def test_cells_queued_behind_a_background_cell_keep_it_blocking(
    kernel: KernelHarness, scripted_model: ScriptedModelServer, claude_env: dict[str, str], claude_workdir: Path
) -> None:
    """Run All: the next cells' execute requests wait behind the cell, so it blocks and they see the answer."""
    scripted_model.push(Reply(text("Blocking answer.", delay=0.02)))
    kernel.execute(setup_code(claude_env, claude_workdir, background=True))
    attach_frontend(kernel)
    runs = [kernel.start("%%claude\nAnything"), kernel.start("seen = kandev_nb.last_turn().text")]
    for run in runs:
        kernel.wait(run)
        assert run.status == "ok", run.error
    assert kernel.eval("seen") == "Blocking answer."


def test_under_nbclient_background_cells_block_so_the_next_cell_sees_the_answer(
    tmp_path: Path, scripted_model: ScriptedModelServer, claude_env: dict[str, str], claude_workdir: Path
) -> None:
    """nbclient (papermill, `jupyter execute`) runs no frontend: no tab says hello to the bridge,
    so `--background` and configure(background=True) run blocking."""
    import nbformat
    from nbclient import NotebookClient

    scripted_model.push(
        Reply(text("First, ", delay=0.02), tool_use("StructuredOutput", {"items": MONTHS})),
        Reply(text("Plain answer.", delay=0.02)),
    )
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell(setup_code(claude_env, claude_workdir, background=True) + TYPES),
        nbformat.v4.new_code_cell("%%claude --background --schema Month --frame -o months\nRevenue by month"),
        nbformat.v4.new_code_cell("print('rows', len(months))"),
        nbformat.v4.new_code_cell("%%claude\nAnd now?"),  # background by configure(background=True)
        nbformat.v4.new_code_cell("print('answer', kandev_nb.last_turn().text)"),
    ]
    env = dict(os.environ, KANDEV_NB_LEDGER=str(tmp_path / "ledger.sqlite"), KANDEV_NB_SPOOL=str(tmp_path / "spool"))
    NotebookClient(
        nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(claude_workdir)}}
    ).execute(env=env)
    printed = ["".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream") for cell in nb.cells]
    assert printed[2] == "rows 4\n" and printed[4] == "answer Plain answer.\n"
    saved = "".join(str(o.get("data", {}).get("text/html", "")) for o in nb.cells[1].outputs)
    assert "→ months: DataFrame 4 × 3 (month string, revenue Float64, customers Int64)" in saved
    assert "First," in saved and '{"items"' not in saved  # the saved turn, and what -o got, without the wrapper


def test_a_blocking_cell_waits_for_the_background_turn_and_a_failed_one_is_raised_by_wait(
    kernel: KernelHarness, scripted_model: ScriptedModelServer, claude_env: dict[str, str], claude_workdir: Path
) -> None:
    scripted_model.push(
        Reply(text(SLOW, delay=0.03)),
        Reply(text("In order.")),
        Reply(text("No table today.")),  # no StructuredOutput call: the CLI nudges once,
        Reply(text("Still none.")),  # then the turn ends without a structured answer
    )
    kernel.execute(setup_code(claude_env, claude_workdir))
    kernel.execute(TYPES)
    attach_frontend(kernel)
    first = kernel.execute("%%claude --background\nFirst")
    blocking = kernel.execute("%%claude\nSecond, blocking")  # same session: it waits, then runs
    waited = "\n".join(str(p) for p in blocking.data("text/plain"))
    assert f"waiting for the background turn of cell [{first.reply['execution_count']}] (session default)" in waited
    assert kernel.eval("[t.text for t in kandev_nb.sessions['default'].turns]") == [SLOW, "In order."]

    failing = kernel.execute("%%claude --background --schema Month -o bad\nA month")
    waiting = kernel.wait(kernel.start("await kandev_nb.wait()"))
    assert waiting.status == "error" and "no structured answer for Month" in waiting.stdout()  # a UsageError
    kernel.pump_for(0.3)
    shown = "".join(m["content"].get("text", "") for m in failing.outputs if m["msg_type"] == "stream")
    assert "UsageError: %%claude --schema Month: no structured answer for Month" in shown  # in its own cell
    assert kernel.eval("'bad' in globals()") is False
    assert kernel.eval("(await kandev_nb.wait()).text").endswith("Still none.")  # reported once; then the last turn
