"""Break-it: events built without validation (fastpath.trusted) against validated ones, on hostile lines."""

from __future__ import annotations

import copy
import json
import pickle
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kandev_nb.agent import events as ev
from kandev_nb.agent import fastpath
from kandev_nb.agent.adapter import Adapter

_ODD: st.SearchStrategy[Any] = st.sampled_from(
    [True, False, None, 0, -1, 1.5, 2**70, "x", [], {}, float("nan"), float("inf"), 200_000]
)


def _events(lines: list[bytes], validate: bool) -> list[ev.AgentEvent]:
    before = fastpath.VALIDATE
    fastpath.VALIDATE = validate
    try:
        adapter = Adapter()
        adapter.observer = None
        return [e for _, evs in adapter.feed(lines) for e in evs]
    finally:
        fastpath.VALIDATE = before


def _shape(events: list[ev.AgentEvent]) -> list[tuple[str, str, list[str]]]:
    return [(type(e).__name__, repr(e), sorted(e.model_fields_set)) for e in events]


def _result(usage: dict[str, Any], **fields: Any) -> bytes:
    line = {
        "type": "result",
        "subtype": "success",
        "session_id": "s",
        "modelUsage": {"claude-x": usage},
        **fields,
    }
    return json.dumps(line).encode()


_INIT = b'{"type":"system","subtype":"init","session_id":"s","model":"claude-x","tools":[]}'
_ASSISTANT = b'{"type":"assistant","message":{"id":"m1","model":"claude-x","content":[{"type":"text","text":"hi"}]}}'


@settings(max_examples=150, deadline=None)
@given(window=_ODD, tokens=_ODD, cost=_ODD, api=_ODD, turns=_ODD, total=_ODD)
def test_built_events_of_odd_results_are_the_validated_ones(
    window: Any, tokens: Any, cost: Any, api: Any, turns: Any, total: Any
) -> None:
    usage = {"inputTokens": tokens, "outputTokens": 3, "costUSD": cost, "contextWindow": window}
    lines = [
        _INIT,
        _ASSISTANT,
        _result(usage, duration_api_ms=api, num_turns=turns, total_cost_usd=total),
    ]
    assert _shape(_events(lines, False)) == _shape(_events(lines, True))


def test_a_context_window_of_true_is_not_a_window_of_1_token() -> None:
    """`contextWindow: true` was taken as an int (isinstance(True, int)): the built
    ModelUsage / ContextWindow kept True where the validated ones say 1."""
    lines = [
        _INIT,
        _ASSISTANT,
        _result({"inputTokens": 5, "outputTokens": 3, "contextWindow": True}),
    ]
    built, valid = _events(lines, False), _events(lines, True)
    assert _shape(built) == _shape(valid)
    windows = [e for e in built if isinstance(e, ev.ContextWindow)]
    assert all(w.size == 200_000 for w in windows)


def test_built_events_copy_pickle_and_round_trip_as_validated() -> None:
    tool = (
        b'{"type":"assistant","message":{"id":"m2","model":"claude-x","content":[{"type":"tool_use","id":"toolu_1",'
        b'"name":"Bash","input":{"command":"echo <b>\\u00e9\\u2028</b>"}}]}}'
    )
    result = (
        b'{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1",'
        b'"content":"out\\u0000put"}]}}'
    )
    lines = [
        _INIT,
        _ASSISTANT,
        tool,
        result,
        _result({"inputTokens": 5, "outputTokens": 3, "costUSD": 0.1}),
    ]
    built, valid = _events(lines, False), _events(lines, True)
    assert _shape(built) == _shape(valid) and built == valid
    for b, v in zip(built, valid, strict=True):
        assert pickle.loads(pickle.dumps(b)) == v
        assert copy.deepcopy(b) == v and copy.copy(b) == v and b.model_copy() == v
        assert b.model_dump() == v.model_dump() and b.model_dump_json() == v.model_dump_json()
        assert b.model_dump(exclude_unset=True) == v.model_dump(exclude_unset=True)
        assert b.model_dump(exclude_defaults=True) == v.model_dump(exclude_defaults=True)
        again = type(v).model_validate_json(b.model_dump_json())
        assert again.model_dump() == v.model_dump()


@pytest.mark.parametrize("value", [b"Infinity", b"NaN", b"1e400", b"1" + b"0" * 400])
def test_a_non_finite_model_usage_figure_does_not_lose_the_result(value: bytes) -> None:
    """`modelUsage.inputTokens: Infinity` (or NaN, or an int beyond a float) made
    UsageMeter.delta raise (int(inf)): the `result` became one Unknown, with no Complete
    and no `result.result` text."""
    line = (
        b'{"type":"result","subtype":"success","session_id":"s","result":"ok","modelUsage":{"claude-x":'
        b'{"inputTokens":' + value + b',"outputTokens":3,"costUSD":0.1}}}'
    )
    events = _events([line], False)
    # a ContextWindow may come first: the result says the window size (issue 28.8: known from then on)
    assert [type(e).__name__ for e in events if not isinstance(e, ev.ContextWindow)] == ["MessageChunk", "Complete"]
    complete = events[-1]
    assert isinstance(complete, ev.Complete)
    stats = complete.stats
    assert stats.model_usage["claude-x"].input_tokens == 0 and stats.model_usage["claude-x"].output_tokens == 3


@pytest.mark.parametrize("value", [b"1" + b"0" * 400, b"1e400", b"NaN", b"-Infinity"])
def test_a_total_cost_that_is_not_a_finite_number_keeps_the_result(value: bytes) -> None:
    """`total_cost_usd` as an int beyond a float raised OverflowError (the result became an
    Unknown: no Complete, no text); NaN or inf became the turn's cost (a NaN cost makes
    every later budget comparison false). Now it counts as missing: the turn costs 0."""
    line = b'{"type":"result","subtype":"success","session_id":"s","result":"ok","total_cost_usd":' + value + b"}"
    events = _events([line], False)
    assert [type(e).__name__ for e in events] == ["MessageChunk", "Complete"]
    complete = events[-1]
    assert isinstance(complete, ev.Complete) and complete.stats.cost_usd == 0.0
