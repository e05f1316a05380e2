"""%claude_undo, %claude_mcp and configure(answer=...) in a real kernel on the real CLI."""

from __future__ import annotations

from pathlib import Path

import pytest

from kandev_nb.testing import Reply, ScriptedModelServer, text, tool_use
from tests.kernel.conftest import setup_code
from tests.kernel.kernel_harness import KernelHarness
from tests.widgets.test_static import plain

pytestmark = pytest.mark.timeout(240)


def test_undo_restores_the_last_turns_files_and_says_which(
    kernel: KernelHarness, scripted_model: ScriptedModelServer, claude_env: dict[str, str], claude_workdir: Path
) -> None:
    keep, new = claude_workdir / "keep.txt", claude_workdir / "new.txt"
    keep.write_text("v1\n")
    scripted_model.push(
        Reply(tool_use("Edit", {"file_path": str(keep), "old_string": "v1", "new_string": "v2"})),
        Reply(text("1")),
        Reply(tool_use("Write", {"file_path": str(new), "content": "x\n"})),
        Reply(text("2")),
    )
    kernel.execute(setup_code(claude_env, claude_workdir))
    kernel.execute("%%claude --mode acceptEdits\nedit keep")
    kernel.execute("%%claude --mode acceptEdits\nwrite new")
    assert keep.read_text() == "v2\n" and new.exists()
    run = kernel.wait(kernel.start("%claude_undo"))
    assert run.status == "ok", repr(run.error)
    assert not new.exists() and keep.read_text() == "v2\n"  # only the last turn's changes
    assert "Undid the file changes of the last turn" in repr(run.outputs) and str(new) in repr(run.outputs)
    run = kernel.wait(kernel.start("%claude_undo --turn 1"))  # 1-based, as the header says "turn 1"
    assert run.status == "ok" and keep.read_text() == "v1\n"
    for cell, message in (
        ("%claude_undo --turn 9", "no turn 9"),
        ("%claude_undo --session nope", "no session 'nope'"),
        ("%claude_undo --bogus", "unknown arguments --bogus"),
    ):
        run = kernel.wait(kernel.start(cell))
        assert run.status == "error" and message in repr(run.error) + run.stdout(), repr(run.error)
    table = kernel.eval("(await __import__('kandev_nb.notebook.commands').notebook.commands.mcp('')).to_dict('list')")
    assert "kernel" in table["server"]  # the in-kernel MCP server, as the CLI reports it
    kernel.execute("%%claude\nstill usable?")  # the session survives every bad input


def test_undo_without_checkpoints_says_why_and_changes_nothing(
    kernel: KernelHarness, scripted_model: ScriptedModelServer, claude_env: dict[str, str], claude_workdir: Path
) -> None:
    new = claude_workdir / "new.txt"
    scripted_model.push(Reply(tool_use("Write", {"file_path": str(new), "content": "x\n"})), Reply(text("1")))
    kernel.execute("import os; os.environ['KANDEV_NB_FILE_CHECKPOINTS'] = '0'")
    kernel.execute(setup_code(claude_env, claude_workdir))
    kernel.execute("%%claude --mode acceptEdits\nwrite new")
    run = kernel.wait(kernel.start("%claude_undo"))
    said = repr(run.error) + run.stdout() + repr(run.outputs)
    assert run.status == "error" and "has no file checkpoint" in said and "nothing was changed" in said, said
    assert new.exists()


def test_configure_answer_answers_questions_in_a_headless_kernel(
    kernel: KernelHarness, scripted_model: ScriptedModelServer, claude_env: dict[str, str], claude_workdir: Path
) -> None:
    question = {
        "question": "Which colour?",
        "header": "Colour",
        "multiSelect": False,
        "options": [{"label": "Red", "description": ""}, {"label": "Blue", "description": ""}],
    }
    scripted_model.push(Reply(tool_use("AskUserQuestion", {"questions": [question]})), Reply(text("red then")))
    kernel.execute(setup_code(claude_env, claude_workdir))
    kernel.execute("kandev_nb.configure(answer=lambda questions: [q.options[0].label for q in questions])")
    kernel.execute("%%claude\nask me")
    sent = repr(scripted_model.main_requests[-1].body["messages"])
    assert '"Which colour?"="Red"' in sent
    assert "Answer: Red" in plain(kernel.eval("kandev_nb.last_turn()._repr_html_()"))
    run = kernel.wait(kernel.start("kandev_nb.configure(answer='Red')"))
    assert run.status == "error" and "callable" in repr(run.error)


def test_undo_keeps_the_users_later_edits_in_a_copy_and_dry_run_changes_nothing(
    kernel: KernelHarness, scripted_model: ScriptedModelServer, claude_env: dict[str, str], claude_workdir: Path
) -> None:
    # issue 24, 11: the user edits a file after the turn that wrote it; undo must not lose that work
    report, notes = claude_workdir / "report.md", claude_workdir / "notes.md"
    report.write_text("v1\n")
    scripted_model.push(
        Reply(tool_use("Edit", {"file_path": str(report), "old_string": "v1", "new_string": "v2"})),
        Reply(tool_use("Write", {"file_path": str(notes), "content": "from the turn\n"})),
        Reply(text("done")),
    )
    kernel.execute(setup_code(claude_env, claude_workdir))
    kernel.execute("%%claude --mode acceptEdits\nedit the report, write notes")
    assert report.read_text() == "v2\n" and notes.read_text() == "from the turn\n"
    report.write_text("v2\ntwo hours of the user's own work\n")  # after the turn ended

    run = kernel.wait(kernel.start("%claude_undo --dry-run"))
    said = repr(run.outputs)
    assert run.status == "ok", repr(run.error)
    assert "Dry run" in said and "nothing changed" in said and str(report) in said and str(notes) in said
    assert f"{report} has changed since that turn" in said and f"{notes} has changed" not in said
    assert report.read_text() == "v2\ntwo hours of the user's own work\n" and notes.exists()
    assert sorted(p.name for p in claude_workdir.iterdir()) == ["notes.md", "report.md"]

    run = kernel.wait(kernel.start("%claude_undo"))
    said = repr(run.outputs)
    assert run.status == "ok", repr(run.error)
    assert report.read_text() == "v1\n" and not notes.exists()  # undone
    copies = list(claude_workdir.glob("report.md.kandev-undo-*.bak"))
    assert len(copies) == 1 and copies[0].read_text() == "v2\ntwo hours of the user's own work\n"
    assert f"{report} had changed since that turn: your version is kept in {copies[0]}" in said
    assert "notes.md had changed" not in said and not list(claude_workdir.glob("notes.md.*"))
