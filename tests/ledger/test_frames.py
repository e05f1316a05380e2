"""DataFrames from the ledger: dtypes, filters, summary, odd turns (synthetic turns)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pandas as pd
import pytest

from kandev_nb.agent import events as ev
from kandev_nb.ledger import RunLedger, turns_table
from tests.ledger.conftest import make_turn

UTC = dt.UTC
TEXT = "str" if int(pd.__version__.split(".")[0]) >= 3 else "object"
T0 = dt.datetime(2026, 3, 1, 12, 0, tzinfo=UTC)

RUN_DTYPES = {
    "id": "Int64",
    "started_at": "datetime64[ns, UTC]",
    "ended_at": "datetime64[ns, UTC]",
    "execution_count": "Int64",
    "session_name": "category",
    "model": "category",
    "result_subtype": "category",
    "cost_usd": "float64",
    "total_cost_usd": "float64",
    "input_tokens": "Int64",
    "output_tokens": "Int64",
    "cache_read_input_tokens": "Int64",
    "cache_creation_input_tokens": "Int64",
    "duration_ms": "Int64",
    "duration_api_ms": "Int64",
    "approval_wait_ms": "Int64",
    "num_turns": "Int64",
    "tool_call_count": "Int64",
    "permission_denials": "Int64",
    "is_error": "boolean",
    "interrupted": "boolean",
    "prompt": TEXT,
    "error": TEXT,
    "notebook": TEXT,
    "tool_calls": "object",
}


def _fill(ledger: RunLedger) -> list[int]:
    """Four turns: two sessions, two notebooks, one hour apart from T0."""
    specs = [("s1", "a.ipynb"), ("s1", "a.ipynb"), ("s2", "b.ipynb"), ("s2", None)]
    return [
        ledger.record(
            make_turn(
                f"p{i}",
                session_id=sid,
                started_at=T0 + dt.timedelta(hours=i),
                cost_usd=0.5 + i,
                tools=(("Bash", "allow"), ("Read", None)) if i % 2 else (),
            ),
            notebook=nb,
            execution_count=i,
        )
        for i, (sid, nb) in enumerate(specs)
    ]


@pytest.mark.parametrize("empty", [False, True])
def test_runs_dtypes(ledger: RunLedger, empty: bool) -> None:
    if not empty:
        _fill(ledger)
    frame = ledger.runs()
    assert len(frame) == (0 if empty else 4)
    for column, dtype in RUN_DTYPES.items():
        assert str(frame[column].dtype) == dtype, column


@pytest.mark.parametrize("empty", [False, True])
def test_tool_call_and_usage_dtypes(ledger: RunLedger, empty: bool) -> None:
    if not empty:
        _fill(ledger)
    calls, usage = ledger.tool_calls(), ledger.model_usage()
    assert len(calls) == (0 if empty else 4) and len(usage) == (0 if empty else 4)
    assert str(calls["started_at"].dtype) == "datetime64[ns, UTC]"
    assert str(calls["duration_ms"].dtype) == "Int64"
    assert str(calls["tool_name"].dtype) == "category"
    assert str(calls["decision"].dtype) == "category"
    assert str(usage["cost_usd"].dtype) == "float64"
    assert str(usage["context_window"].dtype) == "Int64"
    assert str(usage["model"].dtype) == "category"


def test_timestamps_round_trip_timezone_aware(ledger: RunLedger) -> None:
    paris = dt.timezone(dt.timedelta(hours=1))
    started = dt.datetime(2026, 3, 1, 13, 30, 15, 123456, tzinfo=paris)
    turn = make_turn(started_at=started)
    ledger.record(turn)
    row = ledger.runs().iloc[0]
    assert row["started_at"] == pd.Timestamp("2026-03-01 12:30:15.123456", tz="UTC")
    assert row["ended_at"] == pd.Timestamp(turn.ended_at)
    assert ledger.totals()["first"] == started  # aware datetimes compare across zones


def test_filters(ledger: RunLedger) -> None:
    ids = _fill(ledger)
    assert list(ledger.runs(session_id="s1")["id"]) == ids[:2]
    assert list(ledger.runs(notebook="b.ipynb")["id"]) == [ids[2]]
    assert list(ledger.runs(since=T0 + dt.timedelta(hours=1))["id"]) == ids[1:]
    assert list(ledger.runs(until=T0 + dt.timedelta(hours=1))["id"]) == ids[:1]
    assert list(ledger.runs(since="2026-03-01T13:00Z", until="2026-03-01T15:00+00:00")["id"]) == ids[1:3]
    assert list(ledger.runs(session_id="s2", notebook="b.ipynb")["id"]) == [ids[2]]
    assert ledger.runs(session_id="nope").empty
    assert list(ledger.tool_calls(session_id="s1")["turn_id"]) == [ids[1], ids[1]]
    assert list(ledger.tool_calls(since=T0 + dt.timedelta(hours=2))["turn_id"]) == [ids[3], ids[3]]
    assert list(ledger.model_usage(notebook="a.ipynb")["turn_id"]) == ids[:2]


def test_naive_filter_times_are_local_time(ledger: RunLedger) -> None:
    ids = _fill(ledger)
    local_start = (T0 + dt.timedelta(hours=2)).astimezone().replace(tzinfo=None)
    assert list(ledger.runs(since=local_start)["id"]) == ids[2:]
    with pytest.raises(ValueError, match="not a point in time"):
        ledger.runs(since="NaT")


def test_an_unknown_filter_is_a_type_error(ledger: RunLedger) -> None:
    with pytest.raises(TypeError, match="unknown ledger filter"):
        ledger.runs(notebok="a.ipynb")  # type: ignore[call-arg]


def test_tool_call_columns(ledger: RunLedger) -> None:
    turn = make_turn(tools=(("Bash", "allow"), ("Bash", "deny"), ("Read", None)))
    ledger_id = ledger.record(turn)
    calls = ledger.tool_calls()
    assert list(calls["seq"]) == [0, 1, 2]
    assert list(calls["tool_name"]) == ["Bash", "Bash", "Read"]
    assert list(calls["kind"]) == ["shell_exec", "shell_exec", "read_file"]
    assert list(calls["status"]) == ["complete", "error", "complete"]
    assert list(calls["decision"].astype(object).fillna("-")) == ["allow", "deny", "-"]
    assert list(calls["decided_by"].astype(object).fillna("-")) == ["policy", "policy", "-"]
    assert list(calls["duration_ms"]) == [245, 245, 250]  # the tool's own time: 250 ms less the 5 ms wait
    assert list(calls["approval_wait_ms"]) == [5, 5, 0] and str(calls["approval_wait_ms"].dtype) == "Int64"
    run = ledger.runs().iloc[0]
    assert run["id"] == ledger_id
    assert run["tool_calls"] == {"Bash": 2, "Read": 1}
    assert (run["tool_call_count"], run["permission_denials"], run["approval_wait_ms"]) == (3, 1, 10)


def test_unfinished_turn_records_what_is_there(ledger: RunLedger) -> None:
    turn = make_turn("cut short", cost_usd=None, tools=(("Bash", "allow"),))
    assert turn.stats is None
    ledger.record(turn, execution_count=3)
    row = ledger.runs().iloc[0]
    assert row["prompt"] == "cut short" and row["execution_count"] == 3
    assert pd.isna(row["cost_usd"]) and pd.isna(row["input_tokens"]) and pd.isna(row["ended_at"])
    assert pd.isna(row["model"]) and pd.isna(row["result_subtype"])
    assert row["tool_call_count"] == 1 and row["session_id"] == "sess-1"
    assert not row["is_error"] and not row["interrupted"]
    assert ledger.model_usage().empty
    assert len(ledger.tool_calls()) == 1


def test_summary(ledger: RunLedger) -> None:
    ids = _fill(ledger)
    today = make_turn("now", session_id="s3", cost_usd=2.0, model="claude-other", tools=(("Bash", "deny"),))
    ids.append(ledger.record(today, notebook="a.ipynb"))
    out = ledger.summary(notebook="a.ipynb", session_id="s2", top=1)
    assert out["today"]["turns"] == 1 and out["today"]["cost_usd"] == 2.0
    assert out["all"]["turns"] == 5 and out["all"]["cost_usd"] == pytest.approx(0.5 + 1.5 + 2.5 + 3.5 + 2.0)
    assert out["notebook"]["turns"] == 3 and out["session"]["turns"] == 2
    assert out["all"]["tool_calls"] == 5 and out["all"]["errors"] == 0
    by_model = out["by_model"]
    assert list(by_model.index) == ["claude-test", "claude-other"]
    assert list(by_model["turns"]) == [4, 1]
    assert by_model.loc["claude-test", "cost_usd"] == pytest.approx(8.0)
    top = out["top_tools"]
    assert list(top.index) == ["Bash"]
    assert (top.loc["Bash", "calls"], top.loc["Bash", "denied"], top.loc["Bash", "errors"]) == (
        3,
        1,
        0,
    )  # denied, not failed
    assert top.loc["Bash", "mean_duration_ms"] == 245.0  # the tools' own time, not their approvals'
    recent = ledger.summary(since=T0 + dt.timedelta(hours=2, minutes=30))
    assert list(recent["by_model"]["turns"]) == [1, 1]
    assert "notebook" not in recent and "session" not in recent


def test_summary_of_an_empty_ledger(ledger: RunLedger) -> None:
    out = ledger.summary()
    assert out["all"] == {
        "turns": 0,
        "cost_usd": 0.0,
        "input_tokens": 0,
        "output_tokens": 0,
        "tool_calls": 0,
        "errors": 0,
        "interrupted": 0,
        "denials": 0,
        "first": None,
        "last": None,
    }
    assert out["by_model"].empty and out["top_tools"].empty


def test_rows_written_by_other_tools_with_nulls_read_back(ledger: RunLedger) -> None:
    ledger.record(make_turn("normal", tools=(("Bash", None),)))
    with ledger.engine.begin() as conn:  # e.g. a bulk import: only the required column
        conn.execute(turns_table.insert(), [{"started_at": T0}])
    frame = ledger.runs()
    assert list(frame["tool_calls"]) == [{"Bash": 1}, None]
    assert frame["is_error"].isna().tolist() == [False, True]
    assert frame["started_at"].iloc[1] == pd.Timestamp(T0)


def test_summary_dtypes(ledger: RunLedger) -> None:
    _fill(ledger)
    out = ledger.summary()
    assert {c: str(d) for c, d in out["by_model"].dtypes.items()} == {
        "turns": "Int64",
        "cost_usd": "float64",
        "input_tokens": "Int64",
        "output_tokens": "Int64",
    }
    assert {c: str(d) for c, d in out["top_tools"].dtypes.items()} == {
        "calls": "Int64",
        "errors": "Int64",
        "denied": "Int64",
        "mean_duration_ms": "float64",
    }
    assert list(out["top_tools"].index) == ["Bash", "Read"]


def test_a_denial_keeps_its_whole_reason(ledger: RunLedger) -> None:
    """Issue 18.2: the ledger row carries the reason the person typed, as sent to the CLI."""
    from kandev_nb.agent import events as ev

    reason = "No! That folder is our only copy of the raw data."
    turn = make_turn(tools=(("Bash", "allow"), ("Bash", "deny")), cost_usd=0.01)
    turn.events[:] = [
        e.model_copy(update={"message": reason}) if isinstance(e, ev.PermissionDecided) and e.behavior == "deny" else e
        for e in turn.events
    ]
    ledger.record(turn)
    calls = ledger.tool_calls()
    assert list(calls["decision_message"].astype(object).fillna("-")) == ["-", reason]


def test_a_ledger_from_before_the_reason_column_is_upgraded(ledger_path: Path) -> None:
    """The ledger file the previous release wrote gains ``decision_message`` (migration 0003):
    its rows read NULL there, a new denial keeps its reason."""
    import shutil

    ledger_path.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(Path(__file__).parent / "data" / "ledger-before-alembic.sqlite", ledger_path)
    with RunLedger(ledger_path) as led:
        old = len(led.tool_calls())
        assert old > 0 and led.tool_calls()["decision_message"].isna().all()
        turn = make_turn(tools=(("Bash", "deny"),), cost_usd=0.01)
        turn.events[:] = [
            e.model_copy(update={"message": "not that folder"}) if isinstance(e, ev.PermissionDecided) else e
            for e in turn.events
        ]
        led.record(turn)
        assert list(led.tool_calls()["decision_message"].dropna()) == ["not that folder"]
    with RunLedger(ledger_path) as again:  # opening an upgraded ledger changes nothing
        assert again.upgraded == [] and len(again.tool_calls()) == old + 1
