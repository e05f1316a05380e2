"""Issue 33.6: a fleet row's key keeps its type through the ledger (SQLite and PostgreSQL).

``turns.fleet_key`` held JSON text (``"f04"`` with its quotes), so ``runs(fleet=...)`` did not
join with the input frame and ``fleet_results`` came back ``int64``/``str``. Now it holds a
typed encoding, read back as the index value (an int, a Timestamp, a tuple for a MultiIndex);
rows an older release wrote (plain JSON text) still read and still count on a rerun.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pandas as pd
import pytest
from pydantic import BaseModel

from kandev_nb.fleet import build_fleet, fleet_results
from kandev_nb.fleet.spec import key_text
from kandev_nb.ledger import RunLedger
from kandev_nb.ledger.keys import decode_key, encode_key
from tests.ledger.conftest import make_turn


class Item(BaseModel):
    count: int
    label: str
    urgent: bool
    score: float


FRAMES = {
    "int": pd.DataFrame({"id": [7, 8, 9]}, index=pd.Index([10, 20, 30])),
    "string": pd.DataFrame({"id": [7, 8, 9]}, index=pd.Index(["f04", "f05", "f06"])),
    "timestamp": pd.DataFrame({"id": [7, 8, 9]}, index=pd.to_datetime(["2026-01-05", "2026-01-06", "2026-01-07"])),
    "multiindex": pd.DataFrame(
        {"id": [7, 8, 9]}, index=pd.MultiIndex.from_tuples([("north", 1), ("north", 2), ("south", 1)])
    ),
}


def _record_rows(ledger: RunLedger, name: str, frame: pd.DataFrame, *, legacy: bool = False) -> Any:
    """Record one finished ("done") row per key of `frame` as the fleet does, each with a
    structured answer; `legacy`: the key as releases before the typed encoding wrote it."""
    fleet = build_fleet(frame, "Handle ticket {id}.", name=name, ledger=ledger)
    for position, key in enumerate(frame.index, start=1):
        turn = make_turn(f"Handle ticket {frame.loc[key, 'id']}.", cost_usd=0.001 * position)
        answer = {"count": position, "label": f"row {position}", "urgent": position % 2 == 1, "score": position / 2}
        turn.meta["fleet"] = {
            "fleet": name,
            "fleet_key": key_text(key) if legacy else encode_key(key),
            "fleet_fingerprint": fleet.row_fingerprint(key),
            "fleet_result": {"status": "done", "error": None, "answer": "", "output": answer, "position": position},
        }
        ledger.record(turn)
    return fleet


@pytest.mark.parametrize("kind", list(FRAMES))
def test_keys_come_back_with_their_type_and_join_with_the_input_frame(ledger: RunLedger, kind: str) -> None:
    frame = FRAMES[kind]
    _record_rows(ledger, "typed", frame)
    runs = ledger.runs(fleet="typed")
    keys = runs["fleet_key"].tolist()
    assert keys == list(frame.index)  # old code: ['{"..."}' text]: '"f04"', '10', '["north", 1]'
    assert all(type(k) is type(v) for k, v in zip(keys, frame.index, strict=True)), [type(k) for k in keys]
    by_key = runs.set_index("fleet_key")
    if kind == "multiindex":  # a column of tuples: a MultiIndex joins with a MultiIndex
        by_key.index = pd.MultiIndex.from_tuples(by_key.index)
    joined = frame.join(by_key[["cost_usd"]])
    assert joined["cost_usd"].tolist() == pytest.approx([0.001, 0.002, 0.003])  # old code: all NaN
    result = fleet_results("typed", ledger=ledger)
    assert list(result.index) == list(frame.index) and result.index.equals(frame.index)
    # Without a schema the JSON answers get the nullable dtypes --frame gives (old code: int64, str, bool, float64)
    dtypes = {c: str(result[c].dtype) for c in ("count", "label", "urgent", "score")}
    assert dtypes == {"count": "Int64", "label": "string", "urgent": "boolean", "score": "Float64"}
    typed = fleet_results("typed", schema=Item, ledger=ledger)
    assert {c: str(typed[c].dtype) for c in dtypes} == dtypes
    assert frame.join(result[["label"]])["label"].tolist() == ["row 1", "row 2", "row 3"]


@pytest.mark.parametrize("kind", ["string", "timestamp", "multiindex"])
def test_rows_an_older_release_wrote_still_read_and_a_rerun_sends_nothing(ledger: RunLedger, kind: str) -> None:
    frame = FRAMES[kind]
    _record_rows(ledger, "old", frame, legacy=True)
    if kind != "timestamp":  # JSON text of a Timestamp was its str: it reads back as that text
        assert ledger.runs(fleet="old")["fleet_key"].tolist() == list(frame.index)
    rerun = build_fleet(frame, "Handle ticket {id}.", name="old", ledger=ledger)
    result = asyncio.run(rerun.run())  # every row finished in the ledger: no CLI starts
    assert result["status"].tolist() == ["done"] * 3
    assert all(state.result is not None and state.result.from_ledger for state in rerun.rows.values())
    assert result["cost_usd"].sum() == pytest.approx(ledger.runs(fleet="old")["cost_usd"].sum())


def test_the_encoding_keeps_every_index_type_and_reads_the_old_text() -> None:
    values = [
        4,
        "f04",
        "4",
        True,
        2.5,
        None,
        pd.Timestamp("2026-01-02 03:04:05.123456789"),
        pd.Timestamp("2026-01-02 03:04", tz="Europe/Paris"),
        pd.Timedelta("90min"),
        pd.Period("2026-01", freq="M"),
        ("north", 1, pd.Timestamp("2026-01-02")),
    ]
    for value in values:
        back = decode_key(encode_key(value))
        assert back == value and type(back) is type(value), (value, back)
    assert encode_key("f04") == '{"str":"f04"}' and encode_key(4) == '{"int":4}'
    assert [decode_key(t) for t in ('"f04"', "4", '["north", 1]', None)] == ["f04", 4, ("north", 1), None]
