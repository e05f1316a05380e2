"""What an allow binds to (kandev_nb/policy/binding.py, issue 23 points 1 and 3): the pure
check, the record's round trip through a `tools/call`'s ``_meta``, and the broker that makes
the record from what a card showed."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from kandev_nb.agent import cells
from kandev_nb.agent import events as ev
from kandev_nb.agent.cells import CellSnapshot
from kandev_nb.agent.permissions import Rules
from kandev_nb.policy.binding import META_KEY, BoundPayload, Shown, check
from tests.approvals.test_broker import Harness, KernelLike, tools_call

RUN = BoundPayload("tu-1", "mcp__kernel__run_cell", Shown("c1", 1, "print('hello')"))


def test_the_same_cell_and_source_passes() -> None:
    assert check(RUN, Shown("c1", 4, "print('hello')")) is None  # the cell may have moved


def test_a_changed_source_is_refused_with_both_sources_and_what_to_do() -> None:
    refusal = check(RUN, Shown("c1", 1, "print('edited')"))
    assert refusal is not None and refusal.startswith("run_cell refused: cell 1 (id c1) changed after you asked")
    assert "running this source:\nprint('hello')\n" in refusal and "now holds:\nprint('edited')" in refusal
    assert refusal.endswith("Read the notebook again (read_notebook) and ask again.")


def test_another_cell_at_the_index_is_refused() -> None:
    refusal = check(RUN, Shown("c0", 1, "print('hello')"))  # same source, another cell
    assert refusal is not None and refusal.startswith(
        "run_cell refused: the cell at index 1 is cell c0, not the cell the person approved (cell 1 (id c1)"
    )


def test_a_card_that_showed_no_source_binds_to_nothing_that_runs() -> None:
    blind = BoundPayload("tu-2", "mcp__kernel__delete_cell", Shown(cell_id="c1"))
    refusal = check(blind, Shown("c1", 1, "x = 1"))
    assert refusal is not None and "could not show the cell's source" in refusal


def test_edit_binds_the_replaced_and_the_new_source_and_run_code_its_code() -> None:
    edit = BoundPayload("tu-3", "mcp__kernel__edit_cell", Shown("c1", 1, "a = 1", "a = 2"))
    assert check(edit, Shown("c1", 1, "a = 1", "a = 2")) is None
    assert "the new source is not the one" in (check(edit, Shown("c1", 1, "a = 1", "a = 3")) or "")
    code = BoundPayload("tu-4", "mcp__kernel__run_code", Shown(code="x = 1"))
    assert check(code, Shown(code="x = 1")) is None
    assert "not the code the person approved" in (check(code, Shown(code="import os")) or "")


def test_the_record_round_trips_and_a_changed_one_is_rejected() -> None:
    bound = BoundPayload("tu-5", "mcp__kernel__edit_cell", Shown("c1", 1, "a", "b"), {"cell_id": "c1", "source": "b"})
    meta = bound.to_meta()
    assert BoundPayload.from_meta(meta) == bound and len(bound.digest) == 64
    with pytest.raises(ValueError, match="digest"):
        BoundPayload.from_meta({**meta, "shown": {**meta["shown"], "source": "other"}})
    with pytest.raises(TypeError, match="not a bound payload"):
        BoundPayload.from_meta({"tool_name": "x"})


@pytest.fixture
def tab_cells() -> Iterator[dict[str, CellSnapshot]]:
    """A registered resolver over these cells (the tab now), restored afterwards."""
    now: dict[str, CellSnapshot] = {"c1": CellSnapshot("c1", 1, "code", "print('tab')")}
    before = cells._resolver

    async def resolve(cell_id: str | None, index: int | None) -> CellSnapshot | None:
        await asyncio.sleep(0)
        return now.get(cell_id or "") or next((c for c in now.values() if c.index == index), None)

    cells.set_cell_resolver(resolve)
    try:
        yield now
    finally:
        cells.set_cell_resolver(before)


async def test_the_card_shows_the_tab_and_the_allow_carries_it_to_the_tools_call(
    tab_cells: dict[str, CellSnapshot],
) -> None:
    h = Harness()
    h.ask("r1", "mcp__kernel__run_cell", {"index": 1}, tool_use_id="tu-1")
    await h.settle()
    (request,) = h.of(ev.PermissionRequest)
    assert (request.normalized.cell_id, request.normalized.source) == ("c1", "print('tab')")  # type: ignore[union-attr]
    request.approval.allow()
    await h.settle()
    assert h.answers == [("r1", {"behavior": "allow", "updatedInput": {"index": 1}})]
    message = tools_call("run_cell", {"index": 1}, "tu-1")
    assert await h.broker.authorize_tool_call("kernel", KernelLike(), message) is None
    bound = BoundPayload.from_meta(message["params"]["_meta"][META_KEY])
    assert bound.shown == Shown("c1", 1, "print('tab')") and bound.tool_use_id == "tu-1"


async def test_a_request_withdrawn_while_its_card_is_built_gets_no_card_and_no_answer(
    tab_cells: dict[str, CellSnapshot],
) -> None:
    h = Harness()
    h.ask("r2", "mcp__kernel__run_cell", {"cell_id": "c1"})
    h.broker.withdraw("r2")  # control_cancel_request before the tab answered
    await h.settle()
    assert h.of(ev.PermissionRequest) == [] and h.answers == []


async def test_a_peer_cannot_bring_its_own_binding() -> None:
    h = Harness(policy=Rules(allow=["mcp__kernel__run_code"]))
    forged = BoundPayload("tu-9", "mcp__kernel__run_code", Shown(code="x")).to_meta()
    for name in ("list_variables", "run_code"):  # a read-only call, and one that asks
        message = tools_call(name, {"code": "x = 1"}, "tu-9")
        message["params"]["_meta"][META_KEY] = forged
        assert await h.broker.authorize_tool_call("kernel", KernelLike(), message) is None
        got: Any = message["params"]["_meta"].get(META_KEY)
        assert got is None if name == "list_variables" else BoundPayload.from_meta(got).shown == Shown(code="x = 1")
