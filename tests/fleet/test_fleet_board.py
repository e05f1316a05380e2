"""The fleet board (widgets built in the kernel process, no browser) and the magic's options."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable

import pandas as pd
import pytest

from kandev_nb.agent.session import SessionConfig
from kandev_nb.fleet import build_fleet
from kandev_nb.notebook.fleet_board import FleetBoard, board_html
from kandev_nb.notebook.magic import parse_options
from tests.fleet.conftest import answer_per_row
from tests.fleet.test_fleet_queue_budget import _until, touch_then_answer

pytestmark = pytest.mark.timeout(240)


async def test_the_board_shows_the_queue_card_and_its_for_all_rows_buttons_answer(
    base_config: SessionConfig, feed: Callable[..., None]
) -> None:
    feed(answer_per_row(touch_then_answer), 12)
    fleet = build_fleet(pd.DataFrame({"id": [1, 2]}), "Handle ticket {id}.", name="b", config=base_config, ledger=None)
    board = FleetBoard(fleet)  # not displayed: refreshed by hand
    run = asyncio.create_task(fleet.run())
    await _until(lambda: fleet.queue.head is not None, "a queued approval")
    board.refresh()
    assert board.queue_box.children, "the card is on top"
    await _until(lambda: len(fleet.queue.pending) == 2, "both rows waiting")
    board.refresh()
    label = board.queue_box.children[0].value
    assert "of 2 · Bash · touch out-" in label and "2 waiting" in label  # the count follows the queue
    card = board._card
    state = json.loads(card.controls.fleet)  # the rule on the button, and what it answers now
    assert state["allow_label"] == "Allow `touch …` for all rows" and state["rule"] == "Bash(touch:*)"
    assert state["count"] == "answers 2 waiting rows" and state["can_allow"] and not state["too_broad"]
    assert card.press("allow_all", rule=state["rule"])  # the field's text comes with the click
    result = await asyncio.wait_for(run, 180)
    assert list(result["status"]) == ["done", "done"]
    board.refresh()
    assert board.queue_box.children == ()
    assert "2 done of 2" in board.progress.value and "Bash(touch:*)" in board.rules.value
    saved = board_html(fleet, result)
    assert "kandev-fleet-board" in saved and "allow for all rows: <code>Bash(touch:*)</code>" in saved
    assert "<table" in saved and "made out-1.txt" in saved
    before = board.redraws
    board.refresh()
    assert board.redraws == before  # nothing changed: no redraw, no comm message
    board.finish(result)


def test_the_magic_takes_the_fleet_options() -> None:
    args = parse_options("--over tickets -o triage --schema Triage --concurrency 8 --budget 5 --fleet triage-dec")
    assert (args.over, args.output, args.schema, args.concurrency, args.budget, args.fleet, args.redo) == (
        "tickets",
        "triage",
        "Triage",
        8,
        5.0,
        "triage-dec",
        False,
    )


async def test_a_rows_turn_opens_live_under_the_board_and_becomes_its_saved_rendering(
    base_config: SessionConfig, scripted_model: object, feed: Callable[..., None]
) -> None:
    from tests.fleet.test_fleet_stop import slow

    feed(answer_per_row(slow), 6)
    fleet = build_fleet(pd.DataFrame({"id": [1]}), "Handle ticket {id}.", config=base_config, ledger=None)
    board = FleetBoard(fleet)
    run = asyncio.create_task(fleet.run())
    await _until(lambda: fleet.rows[0].status == "running" and fleet.rows[0].activity == "writing", "row 1 writes")
    board.open_row(0)
    view = board._view
    assert view is not None and board.row_box.children == (view.root,)
    await _until(lambda: "slow slow" in view.turn.text, "the live view gets the row's text")
    fleet.stop(0)
    result = await asyncio.wait_for(run, 60)
    assert list(result["status"]) == ["stopped"]
    board.refresh()
    assert board._view is None and "kandev-fleet-row-static" in board.row_box.children[0]._dom_classes
    assert "row 1 slow" in board.row_box.children[0].value  # the saved rendering of the row's turn
    board.finish(result)


async def test_a_rows_question_queues_with_the_question_card_answered_for_that_row(
    base_config: SessionConfig, scripted_model: object, feed: Callable[..., None]
) -> None:
    from kandev_nb.testing import RecordedRequest, Reply, text, tool_use

    question = {
        "questions": [
            {
                "question": "Which colour?",
                "header": "Colour",
                "multiSelect": False,
                "options": [{"label": "Red", "description": "warm"}, {"label": "Blue", "description": "cool"}],
            }
        ]
    }

    def ask(number: int, request: RecordedRequest) -> Reply:
        if request.last_user_text():
            return Reply(tool_use("AskUserQuestion", question))
        said = "Blue" if "Blue" in repr(request.messages[-1]) else "nothing"
        return Reply(text(f"row {number} got {said}"))

    feed(answer_per_row(ask), 6)
    fleet = build_fleet(pd.DataFrame({"id": [1]}), "Handle ticket {id}.", config=base_config, ledger=None)
    board = FleetBoard(fleet)
    run = asyncio.create_task(fleet.run())
    await _until(lambda: fleet.queue.head is not None, "the question queued")
    board.refresh()
    assert type(board._card).__name__ == "QuestionCard" and len(board.queue_box.children) == 2  # no "for all rows"
    assert board._card.press("answer", answers={"Which colour?": "Blue"})
    result = await asyncio.wait_for(run, 120)
    assert list(result["answer"]) == ["row 1 got Blue"]
    board.finish(result)
