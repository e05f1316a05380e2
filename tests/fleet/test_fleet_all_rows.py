"""One click answers every row (issue 33, points 1 to 3), on the real CLI (2.1.332) against the
scripted model: each row asks to run ``python3 tools/profile.py data/fNN.csv`` on its own file.

On the old main, "Allow for all rows" gave ``Bash(python3 tools/profile.py data/f00.csv)``: each
other row asked again (one click per row), and nothing outside the board listed a fleet's rows
(``pending()`` showed 0 while rows waited).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import kandev_nb
from kandev_nb.agent.session import SessionConfig
from kandev_nb.fleet import Fleet, build_fleet
from kandev_nb.fleet.proposal import TooBroadError
from kandev_nb.fleet.runner import running_fleets
from kandev_nb.notebook.fleet_board import FleetBoard
from kandev_nb.notebook.pending import FleetPendingApproval
from kandev_nb.testing import RecordedRequest, Reply, text, tool_use
from tests.fleet.conftest import answer_per_row
from tests.fleet.test_fleet_queue_budget import _until

pytestmark = [pytest.mark.timeout(300), pytest.mark.slow]

RULE = "Bash(python3 tools/profile.py:*)"
PROFILE = "import sys\nprint('rows:', sum(1 for _ in open(sys.argv[1])))\n"


def profile_then_answer(number: int, request: RecordedRequest) -> Reply:
    """Row N runs ``python3 tools/profile.py data/f{N-1:02d}.csv`` (the CLI asks); then answers."""
    if request.last_user_text():
        command = f"python3 tools/profile.py data/f{number - 1:02d}.csv"
        return Reply(tool_use("Bash", {"command": command, "description": "profile the file"}))
    return Reply(text(f"profiled row {number}"))


def rows(workdir: Path, n: int) -> pd.DataFrame:
    """`n` rows, each naming its own file, and the script and files they profile."""
    (workdir / "tools").mkdir(exist_ok=True)
    (workdir / "tools" / "profile.py").write_text(PROFILE)
    (workdir / "data").mkdir(exist_ok=True)
    for i in range(n):
        (workdir / "data" / f"f{i:02d}.csv").write_text("a,b\n" * (i + 1))
    return pd.DataFrame(
        {"id": range(1, n + 1), "file": [f"f{i:02d}" for i in range(n)]}, index=[f"r{i}" for i in range(n)]
    )


TEMPLATE = "Profile ticket {id}: the file data/{file}.csv"


def decisions(fleet: Fleet) -> dict[Any, tuple[str, str, str]]:
    """By row key: (who decided its Bash call, the rule named, the call's output)."""
    out = {}
    for key, state in fleet.rows.items():
        assert state.result is not None and state.result.turn is not None, key
        records = list(state.result.turn.tools.values())
        assert len(records) == 1 and records[0].decision is not None, key
        output = records[0].update.output if records[0].update is not None else ""
        out[key] = (records[0].decision.decided_by, records[0].decision.rule, output)
    return out


async def test_one_allow_for_all_rows_answers_six_rows_that_each_name_their_own_file(
    base_config: SessionConfig, claude_workdir: Path, feed: Callable[..., None]
) -> None:
    """Fails on the old code: the exact command answered one row; the five others waited for the
    approval timeout (20 s here) and were denied."""
    feed(answer_per_row(profile_then_answer), 30)
    fleet = build_fleet(
        rows(claude_workdir, 6), TEMPLATE, concurrency=6, config=base_config, ledger=None, approval_timeout=20
    )
    run = asyncio.create_task(fleet.run())
    await _until(lambda: fleet.queue.head is not None, "a first approval")
    head = fleet.queue.head
    assert head is not None
    assert fleet.queue.allow_all(head) == RULE  # the one click
    result = await asyncio.wait_for(run, 200)
    assert list(result["status"]) == ["done"] * 6, result["error"].tolist()
    decided = decisions(fleet)
    assert [who for who, _, _ in decided.values()].count("person") == 1, decided
    assert all(rule == RULE for who, rule, _ in decided.values() if who != "person"), decided
    assert {who for who, _, _ in decided.values()} == {"person", "policy"}, decided
    for i, key in enumerate(fleet.rows):  # each row's own file, profiled by the real python3
        assert f"rows: {i + 1}" in decided[key][2], decided[key]
    assert [r.rule for r in fleet.queue.rules] == [RULE] and fleet.queue.pending == []


async def test_the_board_card_shows_the_rule_and_its_count_and_one_press_answers_every_row(
    base_config: SessionConfig, claude_workdir: Path, feed: Callable[..., None]
) -> None:
    feed(answer_per_row(profile_then_answer), 30)
    fleet = build_fleet(rows(claude_workdir, 5), TEMPLATE, concurrency=5, config=base_config, ledger=None)
    board = FleetBoard(fleet)  # not displayed: refreshed by hand
    shown: set[str] = set()
    fleet.queue.on_change.append(lambda: shown.update(i.approval.request_id for i in fleet.queue.pending))
    run = asyncio.create_task(fleet.run())
    await _until(lambda: len(fleet.queue.waiting()) >= 3, "three rows waiting")
    board.refresh(force=True)
    card = board._card
    state = json.loads(card.controls.fleet)
    waiting = len({i.key for i in fleet.queue.waiting()})
    assert state["rule"] == RULE and state["allow_label"] == "Allow `python3 tools/profile.py …` for all rows"
    assert state["count"] == f"answers {waiting} waiting rows" and state["can_allow"] and not state["too_broad"]
    assert "holds the row's value" in state["why"] or "differs between the waiting rows" in state["why"]
    assert "for this row's agent" in card.controls.tool_label  # the grants are the row's, behind More
    assert "for this session" not in card.controls.tool_label + card.controls.grant_label
    # the person edits the rule: the count follows it, by the same matcher
    card.press("rule_preview", rule="Bash(python3 tools/other.py:*)")
    edited = json.loads(card.controls.fleet)
    assert "does not allow this row's request" in edited["error"] and not edited["can_allow"]
    assert not card.press("allow_all", rule="Bash(python3 tools/other.py:*)") and fleet.queue.rules == []
    # a too-broad rule takes a second click
    assert not card.press("allow_all", rule="Bash(python3:*)")
    assert json.loads(card.controls.fleet)["allow_label"] == "Really allow `python3 …` for all rows?"
    assert fleet.queue.rules == [] and card.approval.decision is None
    card.press("rule_preview", rule=RULE)  # changed back: no longer armed
    assert json.loads(card.controls.fleet)["allow_label"].startswith("Allow `python3 tools/profile.py")
    assert card.press("allow_all", rule=RULE)  # the one click
    result = await asyncio.wait_for(run, 200)
    assert list(result["status"]) == ["done"] * 5, result["error"].tolist()
    decided = decisions(fleet)
    assert [who for who, _, _ in decided.values()].count("person") == 1, decided
    assert len(shown) >= 3  # several rows waited; one press answered them all
    board.refresh()
    assert board.queue_box.children == () and RULE in board.rules.value
    board.finish(result)


async def test_pending_lists_fleet_rows_by_row_and_allow_all_rows_answers_the_rest(
    base_config: SessionConfig, claude_workdir: Path, feed: Callable[..., None]
) -> None:
    feed(answer_per_row(profile_then_answer), 30)
    fleet = build_fleet(rows(claude_workdir, 5), TEMPLATE, concurrency=5, name="prof", config=base_config, ledger=None)
    run = asyncio.create_task(fleet.run())
    await _until(lambda: len(fleet.queue.waiting()) >= 2, "two rows waiting")
    assert fleet in running_fleets()
    listed = kandev_nb.pending()
    items = [p for p in listed if isinstance(p, FleetPendingApproval)]
    assert len(items) >= 2
    for item in items:
        assert item.fleet_row == item.row_label == f"row {item.item.position} of 5" and item.fleet == "prof"
        assert item.row()["cell"] == item.fleet_row and item.row()["session"] == "fleet prof"
        assert item.summary.startswith("python3 tools/profile.py data/f0") and item.complete
    shown = repr(listed)
    assert items[0].fleet_row in shown and ".allow_all_rows()" in shown and RULE in shown
    first = items[0]
    assert first.allow()  # this row only, bound to the line listed
    with pytest.raises(RuntimeError, match="already answered"):
        first.allow()
    await _until(lambda: any(isinstance(p, FleetPendingApproval) for p in kandev_nb.pending()), "another row")
    second = next(p for p in kandev_nb.pending() if isinstance(p, FleetPendingApproval))
    assert second.proposal.rules == (RULE,)
    with pytest.raises(TooBroadError):
        second.allow_all_rows("Bash(python3:*)")
    assert second.approval.decision is None and fleet.queue.rules == []
    assert second.allow_all_rows() == RULE
    result = await asyncio.wait_for(run, 200)
    assert list(result["status"]) == ["done"] * 5, result["error"].tolist()
    decided = decisions(fleet)
    assert [who for who, _, _ in decided.values()].count("person") == 2, decided
    assert not [p for p in kandev_nb.pending() if isinstance(p, FleetPendingApproval)]
    assert fleet not in running_fleets()
