"""The first slice end to end: a real kernel, the real CLI, the scripted model, widget comms."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from kandev_nb.testing import Reply, ScriptedModelServer, Usage, text, tool_use
from tests.kernel.conftest import setup_code
from tests.kernel.kernel_harness import KernelHarness

pytestmark = pytest.mark.timeout(240)


def test_cell_streams_text_shows_tool_card_and_records_a_row(
    kernel: KernelHarness, scripted_model: ScriptedModelServer, claude_env: dict[str, str], claude_workdir: Path
) -> None:
    (claude_workdir / "notes.txt").write_text("hello from the notes\n")
    scripted_model.push(
        Reply(
            text("Let me read it."),
            tool_use("Read", {"file_path": str(claude_workdir / "notes.txt")}),
            usage=Usage(input_tokens=210, output_tokens=33, cache_read_input_tokens=40, cache_creation_input_tokens=7),
        ),
        Reply(
            text("The file says **hello from the notes**."),
            usage=Usage(input_tokens=250, output_tokens=12, cache_read_input_tokens=60, cache_creation_input_tokens=0),
        ),
    )
    kernel.execute(setup_code(claude_env, claude_workdir))
    run = kernel.execute("%%claude\nWhat does notes.txt say?")

    html = "\n".join(run.data("text/html"))
    assert "hello from the notes" in html  # the streamed answer, in the static rendering
    assert "notes.txt" in html  # the Read card's title
    live = kernel.live_texts()  # what the streaming views showed while the turn ran
    assert any("Let me read it." in t for t in live), live
    assert any("The file says **hello from the notes**." in t for t in live), live
    card_titles = [w.state for w in kernel.widgets.values() if "kandev-tool-card" in w.state.get("_dom_classes", ())]
    assert card_titles, "no tool card widget was shown"

    row = kernel.eval(
        "kandev_nb.runs().iloc[-1][['input_tokens','output_tokens','cache_read_input_tokens',"
        "'cache_creation_input_tokens','num_turns','is_error','result_subtype']].tolist()"
    )
    # The CLI sums the two API responses' usage into result.usage.
    assert row[:4] == [210 + 250, 33 + 12, 40 + 60, 7]
    assert row[4] == 2 and not row[5] and row[6] == "success"
    cost, total = kernel.eval("(kandev_nb.runs().iloc[-1]['cost_usd'], kandev_nb.last_turn().stats.total_cost_usd)")
    assert cost == pytest.approx(total) and cost > 0  # first turn: per-turn cost = the CLI's cumulative


@pytest.mark.parametrize("answer", ["Allow", "Deny"])
def test_approval_click_through_the_widget_comm(
    answer: str,
    kernel: KernelHarness,
    scripted_model: ScriptedModelServer,
    claude_env: dict[str, str],
    claude_workdir: Path,
) -> None:
    target = claude_workdir / "hello.txt"
    scripted_model.push(
        Reply(tool_use("Write", {"file_path": str(target), "content": "written by the CLI\n"})),
        Reply(text("Finished.")),
    )
    kernel.execute(setup_code(claude_env, claude_workdir))
    run = kernel.start("%%claude\nWrite hello.txt please")
    controls = kernel.wait_for_approval()
    assert not run.done, "the cell must still be running while the approval waits"
    assert not target.exists()
    kernel.answer(controls, answer.lower())
    kernel.wait(run)
    assert run.status == "ok", run.error
    html = "\n".join(run.data("text/html"))
    if answer == "Allow":
        assert target.read_text() == "written by the CLI\n"
        assert "allowed" in html.lower()
    else:
        assert not target.exists()
        assert "denied" in html.lower()
    decided = kernel.eval("[r.decision.decided_by for r in kandev_nb.last_turn().tools.values()]")
    assert decided == ["person"]


def test_two_cells_share_one_process_and_one_conversation(
    kernel: KernelHarness, scripted_model: ScriptedModelServer, claude_env: dict[str, str], claude_workdir: Path
) -> None:
    scripted_model.push(Reply(text("My favourite colour is teal.")), Reply(text("I said teal.")))
    kernel.execute(setup_code(claude_env, claude_workdir))
    kernel.execute("%%claude\nPick a favourite colour")
    first = kernel.eval("(kandev_nb.sessions['default'].pid, kandev_nb.last_turn().session_id)")
    kernel.execute("%%claude\nWhich colour did you pick?")
    second = kernel.eval("(kandev_nb.sessions['default'].pid, kandev_nb.last_turn().session_id)")
    assert first == second and first[0] is not None and first[1]
    history = scripted_model.main_requests[-1].body["messages"]
    flat = repr(history)
    assert "Pick a favourite colour" in flat and "My favourite colour is teal." in flat
    assert scripted_model.main_requests[-1].last_user_text().endswith("Which colour did you pick?")


def test_headless_approval_times_out_to_deny_and_the_notebook_finishes(
    scripted_model: ScriptedModelServer,
    claude_env: dict[str, str],
    claude_workdir: Path,
    ledger_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("KANDEV_NB_LEDGER", str(ledger_path))
    target = claude_workdir / "never.txt"
    scripted_model.push(
        Reply(tool_use("Write", {"file_path": str(target), "content": "x\n"})),
        Reply(text("Understood, I will not write it.")),
    )
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell(setup_code(claude_env, claude_workdir, approval_timeout=2.0)),
        nbformat.v4.new_code_cell("%%claude\nWrite never.txt"),
        nbformat.v4.new_code_cell("print('after', kandev_nb.last_turn().text)"),
    ]
    NotebookClient(
        nb, timeout=180, kernel_name="python3", resources={"metadata": {"path": str(claude_workdir)}}
    ).execute()
    assert not target.exists()
    outputs = nb.cells[1].outputs
    html = "\n".join(o.get("data", {}).get("text/html", "") for o in outputs)
    assert "timeout" in html.lower() and "denied" in html.lower()
    assert "after Understood, I will not write it." in nb.cells[2].outputs[0]["text"]
