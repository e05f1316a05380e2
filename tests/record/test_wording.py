"""Issue 28.8, wording that said the wrong thing (widgets driven with AgentEvents)."""

from __future__ import annotations

from kandev_nb.agent import events as ev
from kandev_nb.notebook.widgets import TurnView
from kandev_nb.notebook.widgets.recording import Recorder
from kandev_nb.render.card_view import card_view
from tests.widgets.conftest import Clock
from tests.widgets.test_approval import request
from tests.widgets.test_static import plain
from tests.widgets.widget_events import call, result


async def test_a_call_queued_behind_an_approval_is_not_said_to_run(rec: Recorder, clock: Clock) -> None:
    v = TurnView("go", clock=clock)
    v.handle(call("toolu_1", "Write", {"file_path": "/p/a.txt", "content": "a"}))
    v.handle(request("Write", {"file_path": "/p/a.txt", "content": "a"}))
    v.handle(call("toolu_2", "Bash", {"command": "pip install pyarrow"}))  # parallel, asked after the first
    v.refresh()
    assert "Waiting for your approval" in plain(v.activity.value)
    assert "Running Bash" not in plain(v.activity.value)  # old code: "Running Bash: pip install pyarrow"


async def test_a_tools_time_leaves_out_the_approval_wait(rec: Recorder, clock: Clock) -> None:
    c = call("toolu_1", "Bash", {"command": "make"})
    decided = ev.PermissionDecided(
        request_id="r", tool_name="Bash", behavior="allow", decided_by="person", waited_ms=8000, tool_use_id="toolu_1"
    )
    update = result(c, "ok")
    view = card_view("Bash", c.title, update.normalized, "ok", status="complete", duration_ms=9200, decision=decided)
    shown = [b.text for b in view.badges if hasattr(b, "text")]
    assert "1.2 s" in shown and "9.2 s" not in shown  # old code: 9.2 s, the person's 8 s included


def _decided(tool: str, behavior: str, message: str = "") -> ev.PermissionDecided:
    return ev.PermissionDecided(
        request_id="r",
        tool_name=tool,
        behavior=behavior,
        decided_by="person",
        waited_ms=2000,
        message=message,  # type: ignore[arg-type]
    )


def test_an_answered_question_plan_feedback_and_a_failed_allowed_call_read_as_what_they_are() -> None:
    from kandev_nb.render import card_html, card_md
    from kandev_nb.render.card_view import card_view
    from kandev_nb.render.theme import OK

    question = _decided("AskUserQuestion", "allow")
    assert "answered by you" in card_html.verdict_html(question) and "allowed" not in card_html.verdict_html(question)
    assert "answered by you" in card_md._verdict(question)

    feedback = _decided("ExitPlanMode", "deny", "The user wants you to keep planning: split step 2")
    html = card_html.verdict_html(feedback)
    assert "You asked to keep planning: split step 2" in html and "denied" not in html and "Not run" not in html
    plan = call("toolu_p", "ExitPlanMode", {"plan": "1. a\n2. b"})
    view = card_view("ExitPlanMode", plan.title, plan.normalized, decision=feedback)
    shown = card_html.summary_html(view)
    assert "keep planning" in shown and "(not run)" not in shown and "denied by" not in shown

    allowed = _decided("mcp__kernel__edit_cell", "allow")
    assert OK not in card_html.verdict_html(allowed)  # not green under the call's red ✗


async def test_stop_while_a_card_waits_reads_stopped_by_you_not_the_clis_message(
    claude_cli: object, claude_env: dict[str, str], claude_workdir: object, scripted_model: object
) -> None:
    import asyncio

    from kandev_nb.agent.session import Session
    from kandev_nb.render import card_html
    from kandev_nb.render.static import card_of
    from kandev_nb.testing import Reply, ScriptedModelServer, tool_use

    assert isinstance(scripted_model, ScriptedModelServer)
    session = Session(cwd=claude_workdir, cli_path=claude_cli, env=dict(claude_env), inactivity_timeout=120)
    scripted_model.push(Reply(tool_use("Write", {"file_path": "a.txt", "content": "x"})))

    def stop_at_card(event: ev.AgentEvent) -> None:
        if isinstance(event, ev.PermissionRequest):
            asyncio.get_running_loop().create_task(session.interrupt())

    try:
        turn = await session.run("write", consumers=[stop_at_card])
    finally:
        await session.close()
    (record,) = turn.tools.values()
    shown = card_html.summary_html(card_of(record))
    assert "stopped by you" in shown and "(not run)" in shown
    assert "doesn't want to proceed" not in shown and "✗" not in shown  # old code: ✗ error, the CLI's message


def test_a_denied_write_shows_its_lines_as_proposed_not_applied() -> None:
    from kandev_nb.render import card_html, card_md
    from kandev_nb.render.card_view import card_view

    c = call("toolu_w", "Write", {"file_path": "/p/new.py", "content": "print('hi')\n"})
    denied = _decided("Write", "deny", "not now")
    view = card_view("Write", c.title, c.normalized, decision=denied)
    html = card_html.parts_html(view.parts)
    assert "Proposed, not written:" in html and "kandev-proposed" in html  # old code: green + lines, unlabeled
    assert "Proposed, not written" in "".join(card_md._part(p, "") for p in view.parts)
    allowed = card_view("Write", c.title, c.normalized, status="complete", decision=_decided("Write", "allow"))
    assert "Proposed, not written" not in card_html.parts_html(allowed.parts)


async def test_the_context_gauge_never_shows_a_guessed_window_size(
    claude_cli: object, claude_env: dict[str, str], claude_workdir: object, scripted_model: object
) -> None:
    from kandev_nb.agent.session import Session
    from kandev_nb.render.html import context_html
    from kandev_nb.testing import Reply, ScriptedModelServer, text

    assert isinstance(scripted_model, ScriptedModelServer)
    scripted_model.push(Reply(text("Hello there.")))
    session = Session(cwd=claude_workdir, cli_path=claude_cli, env=dict(claude_env), inactivity_timeout=120)
    try:
        turn = await session.run("hi")
    finally:
        await session.close()
    gauges = [context_html(e) for e in turn.events if isinstance(e, ev.ContextWindow)]
    assert gauges and all("200.0k" not in g for g in gauges)  # old code: "/ 200.0k" while streaming
    assert "/ 1.00M" in gauges[-1]  # what the result said, once it said it


def test_the_approval_cards_edit_diff_has_the_files_line_numbers_and_no_false_eof_marker(tmp_path: object) -> None:
    from pathlib import Path

    from kandev_nb.agent import tools as t
    from kandev_nb.agent.file_lines import with_file_lines

    assert isinstance(tmp_path, Path)
    target = tmp_path / "app.py"
    target.write_text("".join(f"line {n}\n" for n in range(1, 40)) + "return a - b\n" + "tail\n")
    proposal = t.normalize_tool_call(
        "Edit", {"file_path": str(target), "old_string": "return a - b", "new_string": "return a + b"}
    )
    shown = with_file_lines(proposal)
    assert isinstance(shown, t.ModifyFile)
    diff = shown.mutations[0].diff
    assert "@@ -40 +40 @@" in diff  # old code: "@@ -1 +1 @@", counted within the snippet
    assert "No newline at end of file" not in diff  # old code: a marker after both lines
