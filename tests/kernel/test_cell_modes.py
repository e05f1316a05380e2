"""Per-cell options in a real kernel with the real CLI: a mode given on one cell never
carries over to the next; every turn's header says the mode and model it ran with; a stop
is "stopped by you", not an error; ``%%claude?`` and ``%claude_stats`` read as text."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from kandev_nb.testing import Reply, ScriptedModelServer, text, tool_use
from tests.kernel.conftest import setup_code
from tests.kernel.kernel_harness import KernelHarness
from tests.kernel.test_approvals import html_of, part, wait_for_card, wait_until_decided, with_class
from tests.widgets.test_static import plain

pytestmark = pytest.mark.timeout(300)


def _run_info(kernel: KernelHarness) -> list[str]:
    """The live headers' "claude · session · turn N · mode · model" lines, oldest first."""
    return [plain(str(w.state.get("value", ""))) for w in with_class(kernel, "kandev-run-info")]


def test_a_mode_given_on_one_cell_does_not_carry_over_to_the_next(
    kernel: KernelHarness, scripted_model: ScriptedModelServer, claude_env: dict[str, str], claude_workdir: Path
) -> None:
    first, second = claude_workdir / "scratch", claude_workdir / "data"
    for folder in (first, second):
        folder.mkdir()
        (folder / "only_copy.csv").write_text("a,b\n1,2\n")
    scripted_model.push(
        Reply(tool_use("Bash", {"command": f"rm -rf {first}", "description": "Delete scratch"})),
        Reply(text("Deleted scratch.")),
        Reply(tool_use("Bash", {"command": f"rm -rf {second}", "description": "Delete raw data"})),
        Reply(text("Not deleted.")),
    )
    kernel.execute(setup_code(claude_env, claude_workdir))
    kernel.execute("%%claude --mode acceptEdits\nClean up scratch")
    assert not first.exists() and with_class(kernel, "kandev-approval") == []  # acceptEdits ran it unasked
    run = kernel.start("%%claude\nAnd now the data folder")
    card = wait_for_card(kernel, 1)  # the notebook's mode (supervised) asks again
    assert "supervised" in _run_info(kernel)[-1]
    kernel.answer(part(kernel, card, "kandev-approval-controls"), "deny")
    assert "denied" in wait_until_decided(kernel, card).lower()
    kernel.wait(run)
    assert run.status == "ok", run.error
    assert (second / "only_copy.csv").exists()
    modes = kernel.eval("[(t.mode, t.model) for t in kandev_nb.notebook.magic._turns]")
    model = modes[0][1]
    assert [m for m, _ in modes] == ["acceptEdits", "supervised"] and model and modes[1][1] == model
    assert kernel.eval("kandev_nb.sessions['default'].config.mode") == "supervised"
    assert kernel.eval("len({t.session_id for t in kandev_nb.notebook.magic._turns})") == 1  # one conversation
    saved = html_of(run)
    assert f"claude · default · turn 2 · supervised · {model}" in plain(saved)  # the turn's number (issue 27.5)
    live = _run_info(kernel)
    assert f"acceptEdits · {model}" in live[0] and f"supervised · {model}" in live[1]


def test_configure_mode_is_the_mode_of_every_plain_cell(
    kernel: KernelHarness, scripted_model: ScriptedModelServer, claude_env: dict[str, str], claude_workdir: Path
) -> None:
    scripted_model.push(
        Reply(tool_use("Write", {"file_path": str(claude_workdir / "a.txt"), "content": "a\n"})),
        Reply(text("Wrote a.")),
        Reply(text("Planned.")),
        Reply(tool_use("Write", {"file_path": str(claude_workdir / "b.txt"), "content": "b\n"})),
        Reply(text("Wrote b.")),
    )
    kernel.execute(setup_code(claude_env, claude_workdir, mode="acceptEdits"))
    kernel.execute("%%claude\nWrite a.txt")
    kernel.execute("%%claude --mode plan\nOnly plan")
    kernel.execute("%%claude\nWrite b.txt")
    assert (claude_workdir / "b.txt").read_text() == "b\n" and with_class(kernel, "kandev-approval") == []
    assert kernel.eval("[t.mode for t in kandev_nb.notebook.magic._turns]") == ["acceptEdits", "plan", "acceptEdits"]


def test_stop_is_stopped_by_you_with_the_tokens_its_cost_paid_for(
    kernel: KernelHarness, scripted_model: ScriptedModelServer, claude_env: dict[str, str], claude_workdir: Path
) -> None:
    scripted_model.push(Reply(text("z" * 300, chunk_size=1, delay=0.2)))
    kernel.execute(setup_code(claude_env, claude_workdir))
    run = kernel.start("%%claude\nWrite a long answer")
    stop = kernel.wait_for_button("Stop")
    end = time.monotonic() + 60
    while "zzz" not in kernel.widget_texts() and time.monotonic() < end:
        kernel.pump_for(0.1)
    kernel.click(stop)
    end = time.monotonic() + 60
    footer = with_class(kernel, "kandev-footer")[-1]
    while not footer.state.get("value") and time.monotonic() < end:
        kernel.pump_for(0.1)
    live = str(footer.state["value"])
    kernel.wait(run)
    saved = html_of(run)
    for page in (live, saved):
        assert "stopped by you" in page
        assert "error" not in page.lower() and "Request interrupted" not in page
        assert "in 0 ·" not in page  # the tokens the cost paid for, not zeros
    notes = " ".join(str(w.state.get("value", "")) for w in with_class(kernel, "kandev-note"))
    assert "error" not in notes
    row = kernel.eval("kandev_nb.runs().iloc[-1][['is_error', 'interrupted', 'input_tokens', 'cost_usd']].tolist()")
    assert row[:2] == [False, True] and row[2] > 0 and row[3] > 0


def test_help_and_stats_read_as_text(
    kernel: KernelHarness, scripted_model: ScriptedModelServer, claude_env: dict[str, str], claude_workdir: Path
) -> None:
    scripted_model.push(Reply(text("Hi.")))
    kernel.execute(setup_code(claude_env, claude_workdir))
    bad = kernel.wait(kernel.start("%%claude --mdoe plan\nhi"))
    assert bad.status == "error" and "did you mean --mode?" in bad.stdout() + repr(bad.error)
    helped = kernel.execute("%%claude?")
    page = " ".join(str(p.get("data", {}).get("text/plain", "")) for p in helped.reply.get("payload", []))
    assert "Examples:" in page and "%%claude --mode plan" in page and "``" not in page
    assert "For this cell only" in page
    kernel.execute("%%claude\nhello")
    stats = kernel.execute("%claude_stats")
    html = "\n".join(stats.data("text/html"))
    plain = "\n".join(stats.data("text/plain"))
    assert "<table" in html and "datetime" not in html + plain
    assert "all time" in plain and "denials" in plain
