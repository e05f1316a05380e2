"""`--retry` in a real kernel with the real CLI (issue 28.2): it works every time, and the
conversation keeps what a successful retry answered."""

from __future__ import annotations

from pathlib import Path

import pytest

from kandev_nb.testing import Reply, ScriptedModelServer, http_error, text
from tests.kernel.conftest import setup_code
from tests.kernel.kernel_harness import KernelHarness

pytestmark = pytest.mark.timeout(300)

OVERLOADED = http_error(529, "Overloaded", headers={"x-should-retry": "false"})


def _texts(messages: list[dict[str, object]]) -> str:
    return repr(messages)


def test_retry_works_every_time_and_the_conversation_keeps_the_retried_answer(
    kernel: KernelHarness, scripted_model: ScriptedModelServer, claude_env: dict[str, str], claude_workdir: Path
) -> None:
    kernel.execute(setup_code(claude_env, claude_workdir))
    scripted_model.push(Reply(text("First answer.")))
    kernel.execute("%%claude\nFirst question")
    cells = [
        (OVERLOADED, "%%claude\nSecond question"),
        (OVERLOADED, "%%claude --retry\n"),
        (Reply(text("Second answer, on retry.")), "%%claude --retry\n"),
        (OVERLOADED, "%%claude\nThird question"),
        (OVERLOADED, "%%claude --retry\n"),
        (Reply(text("Third answer, on retry.")), "%%claude --retry\n"),
    ]
    for entry, cell in cells:
        scripted_model.push(entry)
        run = kernel.wait(kernel.start(cell))
        shown = run.stdout() + repr(run.error) + "".join(map(str, run.data("text/html")))
        assert run.status == "ok", shown
        assert "No message found" not in shown and "message.uuid" not in shown
    assert kernel.eval("kandev_nb.last_turn().text") == "Third answer, on retry."
    # A later restart (a changed launch option) resumes the branch the successful retries made.
    scripted_model.push(Reply(text("Fourth.")))
    kernel.execute("%%claude --max-turns 7\nFourth question")
    sent = _texts(scripted_model.main_requests[-1].messages)
    for said in ("First answer.", "Second answer, on retry.", "Third answer, on retry.", "Fourth question"):
        assert said in sent, sent
    assert "API Error" not in sent


def test_a_retry_the_cli_cannot_resume_at_falls_back_and_says_so_in_one_line(
    kernel: KernelHarness, scripted_model: ScriptedModelServer, claude_env: dict[str, str], claude_workdir: Path
) -> None:
    kernel.execute(setup_code(claude_env, claude_workdir))
    scripted_model.push(Reply(text("First answer.")), OVERLOADED, Reply(text("Second answer.")))
    kernel.execute("%%claude\nFirst question")
    kernel.wait(kernel.start("%%claude\nSecond question"))
    # A message the transcript does not hold (as a uuid of a branch the CLI did not save).
    kernel.execute("kandev_nb.last_turn().meta['retry_at'] = '00000000-0000-4000-8000-000000000000'")
    run = kernel.wait(kernel.start("%%claude --retry\n"))
    assert run.status == "ok", run.error
    out = run.stdout()
    assert "could not resume at the last good message" in out and "The prompt was sent again." in out
    assert "00000000" not in out and "message.uuid" not in out
    assert kernel.eval("kandev_nb.last_turn().text") == "Second answer."
    sent = repr(scripted_model.main_requests[-1].messages)
    assert "First answer." in sent and "Second question" in sent


def _header_turn(run: object) -> str:
    """The "turn N" of a finished cell's header (its saved HTML output)."""
    import re

    html = "".join(map(str, run.data("text/html")))  # type: ignore[attr-defined]
    found = re.findall(r"kandev-run-info.*?(turn \d+)", html, re.DOTALL)
    assert found, html[:2000]
    return str(found[0])


def test_a_retried_turn_keeps_the_sessions_numbering(
    kernel: KernelHarness, scripted_model: ScriptedModelServer, claude_env: dict[str, str], claude_workdir: Path
) -> None:
    # Issue 34.3: after --retry (a new CLI process resuming the conversation) the headers
    # counted from 1 again, so one session showed two "turn 1"s.
    kernel.execute(setup_code(claude_env, claude_workdir))
    shown = []
    for entry, cell in (
        (Reply(text("One.")), "%%claude\nFirst"),
        (Reply(text("Two.")), "%%claude\nSecond"),
        (OVERLOADED, "%%claude\nThird"),
        (Reply(text("Three, on retry.")), "%%claude --retry\n"),
        (Reply(text("Four.")), "%%claude\nFourth"),
        (Reply(text("Five.")), "%%claude --max-turns 9\nFifth"),  # another new process, same conversation
    ):
        scripted_model.push(entry)
        run = kernel.wait(kernel.start(cell))
        assert run.status == "ok", run.stdout() + repr(run.error)
        shown.append(_header_turn(run))
    assert shown == ["turn 1", "turn 2", "turn 3", "turn 3", "turn 4", "turn 5"]
    kernel.execute("from kandev_nb.notebook.state import current as _current")
    numbers = kernel.eval("[(t.meta.get('number'), t.meta.get('retry_of')) for t in _current().turns]")
    assert numbers == [[1, None], [2, None], [3, None], [3, 3], [4, None], [5, None]]
    # %claude_undo --turn takes the numbers the headers show: turn 4 is the one after the retry.
    assert kernel.eval("kandev_nb.notebook.turn_numbers.turn_label(kandev_nb.sessions['default'].turns, -1)") == (
        "the last turn"
    )
    run = kernel.wait(kernel.start("%claude_undo --turn 1 --dry-run"))
    assert "no turn 1" in run.stdout() + repr(run.error), "turn 1 ran in an earlier process: not this one's turn 1"
