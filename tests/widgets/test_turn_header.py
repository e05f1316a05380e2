"""A turn's header and footer lines, live (TurnView) and saved (static HTML/Markdown):
the run line names session, mode and model; a stop reads "stopped by you", not an error."""

from __future__ import annotations

from kandev_nb.agent import events as ev
from kandev_nb.agent.turn import Turn
from kandev_nb.notebook.widgets import TurnView
from kandev_nb.notebook.widgets.recording import Recorder
from kandev_nb.render.static import render_html, render_markdown
from tests.widgets.conftest import Clock
from tests.widgets.test_static import plain
from tests.widgets.widget_events import complete

STOPPED = ev.Error(message="Request interrupted by user", subtype="error_during_execution", interrupted=True)
TIMEOUT = ev.Error(message="No message from Claude Code for 301 s", subtype="inactivity_timeout")


def _events(*errors: ev.Error) -> list[ev.AgentEvent]:
    return [
        ev.SessionStatus(model="claude-opus-5-5"),
        ev.MessageChunk(text="Partial"),
        *errors,
        complete(
            result_subtype="error_during_execution", is_error=True, cost_usd=0.0018, input_tokens=100, output_tokens=3
        ),
    ]


def test_live_header_names_mode_and_model_and_a_stop_is_not_an_error(rec: Recorder, clock: Clock) -> None:
    view = TurnView("go", session_name="review", mode="acceptEdits", clock=clock)
    assert plain(view.run_info.value) == "claude · review · acceptEdits"
    assert 'data-kandev-session="review"' in view.run_info.value  # the tab's chips (issue 27 point 9)
    assert '<span class="kandev-run-mode">acceptEdits</span>' in view.run_info.value
    for event in _events(STOPPED):
        view.handle(event)
    assert "claude · review · acceptEdits · claude-opus-5-5" in plain(view.run_info.value)
    assert "stopped by you" in view.footer.value and "error" not in view.footer.value
    assert "in 100" in view.footer.value
    assert "Stopped by you" in view.activity.value
    assert all("kandev-note" not in str(c._dom_classes) for c in view.body.children)


def test_a_timeout_that_interrupts_stays_an_error(rec: Recorder, clock: Clock) -> None:
    view = TurnView("go", clock=clock)
    for event in _events(TIMEOUT, STOPPED):
        view.handle(event)
    assert "stopped by you" not in view.footer.value and "✗ failed" in view.footer.value  # issue 28.6: in words
    assert "Failed" in view.activity.value


def test_saved_header_and_footer() -> None:
    turn = Turn(prompt="go", session_name="default")
    turn.mode, turn.interrupted = "supervised", True
    for event in _events(STOPPED):
        turn.add(event)
    page, text = render_html(turn), render_markdown(turn)
    assert "claude · default · supervised · claude-opus-5-5" in plain(page)
    assert turn.stopped and not turn.failed
    assert "stopped by you" in page and "error" not in page.lower()
    assert "**stopped by you**" in text and "error" not in text.lower()
    timed_out = Turn(prompt="go")
    for event in _events(TIMEOUT, STOPPED):
        timed_out.add(event)
    assert timed_out.failed and not timed_out.stopped
    assert "No message from Claude Code" in render_html(timed_out)
