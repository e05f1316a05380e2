"""``kandev_nb.pending()``'s items over a real broker (issue 27, point 2): what they list, and
that an allow given from a cell binds to the payload the card showed, as the card's allow does."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from kandev_nb.agent.questions import QUESTION_TOOL
from kandev_nb.notebook.pending import summary, waiting
from kandev_nb.policy.binding import META_KEY
from tests.approvals.test_broker import Harness, KernelLike, tools_call


async def test_an_allow_from_pending_binds_to_what_the_card_showed() -> None:
    h = Harness()
    h.broker.cell = 7
    h.ask("r1", "mcp__kernel__run_code", {"code": "x = 1\nprint(x)"}, tool_use_id="tu-9")
    listed = waiting({"default": SimpleNamespace(broker=h.broker)})
    assert len(listed) == 1
    item = listed[0]
    assert item.row() | {"age": "", "request_id": ""} == {
        "tool": "run_code",
        "summary": "x = 1 print(x)",
        "cell": "In [7]",
        "age": "",
        "left": "waits",
        "session": "default",
        "request_id": "",
    }
    assert item.bound.shown.code == "x = 1\nprint(x)" and item.bound.tool_use_id == "tu-9"
    assert "1 approval(s) waiting" in repr(listed) and "run_code" in repr(listed)
    assert "<table>" in listed._repr_html_() and list(listed.frame().columns)[:2] == ["tool", "summary"]

    assert item.allow() is True
    await h.settle()
    assert h.answers[0][0] == "r1" and h.answers[0][1]["behavior"] == "allow"
    message = tools_call("run_code", {"code": "x = 1\nprint(x)"}, "tu-9")
    assert await h.broker.authorize_tool_call("kernel", KernelLike(), message) is None
    assert message["params"]["_meta"][META_KEY]["digest"] == item.bound.digest  # the card's payload, bound
    with pytest.raises(RuntimeError, match="already answered"):
        item.deny("late")
    assert repr(waiting({"default": SimpleNamespace(broker=h.broker)})) == "No approval is waiting."


async def test_a_deny_from_pending_sends_its_reason_and_bad_input_changes_nothing() -> None:
    h = Harness(timeout=60.0)
    h.ask("r2", "Bash", {"command": "rm -rf build", "description": "clean"})
    item = waiting({"s": SimpleNamespace(broker=h.broker)})[0]
    assert item.summary == "rm -rf build" and item.left_s is not None and 0 < item.left_s <= 60
    with pytest.raises(TypeError, match="reason must be a string"):
        item.deny(3)  # type: ignore[arg-type]
    assert item.approval.decision is None
    assert item.deny("  keep the build  ") is True
    await h.settle()
    assert h.answers[0][1]["behavior"] == "deny" and h.answers[0][1]["message"] == "keep the build"


async def test_a_question_is_listed_by_its_question_and_not_allowed_blindly() -> None:
    h = Harness()
    options = [{"label": "SQLite", "description": "a file"}, {"label": "PostgreSQL", "description": "a server"}]
    questions = [{"question": "Which database?", "header": "DB", "options": options, "multiSelect": False}]
    h.ask("r3", QUESTION_TOOL, {"questions": questions})
    item = waiting({"s": SimpleNamespace(broker=h.broker)})[0]
    assert item.question and item.summary == "Which database?"
    with pytest.raises(ValueError, match="answered on its card"):
        item.allow()
    assert summary("Edit", {"file_path": "/a/" + "x" * 100}).endswith("…")
    assert summary("Custom", {"b": 1, "a": 2}) == "a, b"
