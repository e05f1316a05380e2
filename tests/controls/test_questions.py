"""AskUserQuestion on the real CLI: the question card, the answer policy, the timeout, bad
input, and the saved rendering showing each question with its answer."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from kandev_nb.agent import events as ev
from kandev_nb.agent.permissions import Approval
from kandev_nb.agent.questions import NOBODY_ANSWERED, answers_input, parse_questions, prepare
from kandev_nb.errors import QuestionError
from kandev_nb.notebook.widgets import TurnView
from kandev_nb.notebook.widgets.questions import QuestionCard
from kandev_nb.notebook.widgets.recording import Recorder
from kandev_nb.testing import Reply, ScriptedModelServer, text, tool_use
from tests.approvals.conftest import SessionMaker
from tests.approvals.test_answers import tool_result
from tests.widgets.test_static import plain

pytestmark = pytest.mark.timeout(180)
BOTH = pytest.mark.parametrize("claude_cli", ["2.1.332", "2.1.197"], indirect=True)

COLOR = {
    "question": "Which colour?",
    "header": "Colour",
    "multiSelect": False,
    "options": [
        {"label": "Red", "description": "warm"},
        {"label": "Blue", "description": "cool", "preview": "#0000ff"},
    ],
}
SIDES = {
    "question": "Which sides?",
    "header": "Sides",
    "multiSelect": True,
    "options": [
        {"label": "Fries", "description": ""},
        {"label": "Salad", "description": ""},
        {"label": "Soup", "description": ""},
    ],
}


def result_text(scripted_model: ScriptedModelServer) -> str:
    return str(tool_result(scripted_model.main_requests[-1].messages)["content"])


@BOTH
async def test_the_question_card_answers_and_the_saved_rendering_shows_q_and_a(
    make_session: SessionMaker, scripted_model: ScriptedModelServer, rec: Recorder
) -> None:
    scripted_model.push(Reply(tool_use("AskUserQuestion", {"questions": [COLOR, SIDES]})), Reply(text("noted")))
    view = TurnView("ask me", session_name="t")
    cards: list[Any] = []

    def click(event: ev.AgentEvent) -> None:  # the person: Blue, then Fries + Soup, then Submit
        if isinstance(event, ev.PermissionRequest):
            card = view.approvals[event.request_id]
            cards.append(card)
            assert not card.press("answer", answers={"Which colour?": "Blue"})  # Sides missing: nothing sent
            assert "no answer for 'Which sides?'" in card.controls.error
            card._on_view_msg(
                card.controls,
                {"action": "answer", "answers": {"Which colour?": "Blue", "Which sides?": ["Fries", "Soup"]}},
                [],
            )

    turn = await make_session().run("ask me", consumers=[view.handle, click])
    assert turn.error is None and isinstance(cards[0], QuestionCard)
    assert result_text(scripted_model).startswith(
        'Your questions have been answered: "Which colour?"="Blue", "Which sides?"="Fries, Soup"'
    )
    assert not cards[0].controls.pending and "Answered" in plain(cards[0].status.value)
    assert "Fries, Soup" in plain(cards[0].status.value)
    saved = plain(view.finish(turn)["text/html"])
    assert "Which colour?" in saved and "Answer: Blue" in saved and "Answer: Fries, Soup" in saved


@BOTH
async def test_a_headless_answer_policy_answers_and_none_leaves_it_to_a_person(
    make_session: SessionMaker, scripted_model: ScriptedModelServer
) -> None:
    seen: list[list[str]] = []

    def answer(questions: list[Any]) -> list[str] | None:
        seen.append([q.question for q in questions])
        return ["Red"] if len(seen) == 1 else None

    scripted_model.push(
        Reply(tool_use("AskUserQuestion", {"questions": [COLOR]})),
        Reply(text("a")),
        Reply(tool_use("AskUserQuestion", {"questions": [COLOR]})),
        Reply(text("b")),
    )
    session = make_session(answer=answer)
    await session.run("one")
    assert result_text(scripted_model).startswith('Your questions have been answered: "Which colour?"="Red"')
    decided = [e for e in session.turns[0].events if isinstance(e, ev.PermissionDecided)]
    assert [d.decided_by for d in decided] == ["policy"]

    def person(event: ev.AgentEvent) -> None:
        if isinstance(event, ev.PermissionRequest):
            event.approval.allow(updated_input=answers_input(event.input, ["typed by hand"]))

    await session.run("two", consumers=[person])
    assert len(seen) == 2
    assert '"Which colour?"="typed by hand"' in result_text(scripted_model)


async def test_nobody_answering_tells_the_model_so(
    make_session: SessionMaker, scripted_model: ScriptedModelServer
) -> None:
    scripted_model.push(Reply(tool_use("AskUserQuestion", {"questions": [COLOR]})), Reply(text("ok, I will wait")))
    turn = await make_session(approval_timeout=1).run("ask")
    sent_back = result_text(scripted_model)
    assert sent_back.startswith("Nobody answered these questions within 1 s")
    assert NOBODY_ANSWERED.format(timeout=1) in sent_back
    assert [e.decided_by for e in turn.events if isinstance(e, ev.PermissionDecided)] == ["timeout"]


@BOTH
async def test_zero_or_five_options_end_clearly_and_the_session_stays_usable(
    make_session: SessionMaker, scripted_model: ScriptedModelServer
) -> None:
    bad = [{**COLOR, "options": []}, {**COLOR, "options": [{"label": str(i)} for i in range(5)]}]
    scripted_model.push(
        *(Reply(tool_use("AskUserQuestion", {"questions": [q]})) for q in bad),
        Reply(text("fine")),
        Reply(text("still here")),
    )
    session = make_session()
    turn = await session.run("ask badly")  # the CLI refuses both itself: no can_use_tool, nothing waits
    errors = [e for e in turn.events if isinstance(e, ev.ToolUpdate)]
    assert [e.status for e in errors] == ["error", "error"] and all("InputValidationError" in e.output for e in errors)
    assert (await session.run("again")).text == "still here"


async def test_unusable_inputs_from_a_peer_are_denied_with_the_reason() -> None:
    for questions, reason in (
        ([], "no questions"),
        ([COLOR] * 5, "5 questions"),
        ([{**COLOR, "options": []}], "has 0 options"),
        ([{**COLOR, "options": COLOR["options"] * 3}], "has 6 options"),
    ):
        with pytest.raises(QuestionError, match=reason):
            parse_questions({"questions": questions})
        approval = Approval("r1", "AskUserQuestion", {"questions": questions})
        prepare(approval, None)  # what the session does before the card shows
        decision = await asyncio.wait_for(approval.wait(None), 1)
        assert decision.behavior == "deny" and reason in decision.message
    with pytest.raises(QuestionError, match="2 answers for 1 questions"):
        answers_input({"questions": [COLOR]}, ["Red", "Blue"])
