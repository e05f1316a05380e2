"""Issue 33.8: a fleet's dry run estimates from the ledger's done rows of the same fleet
fingerprint (``fleet_result.fingerprint``, :meth:`RunLedger.fleet_rows`), on SQLite and
PostgreSQL; failed rows, other templates and rows of releases that kept no fingerprint do not
count."""

from __future__ import annotations

import statistics

import pandas as pd
import pytest

from kandev_nb.fleet import build_fleet
from kandev_nb.ledger import RunLedger
from kandev_nb.ledger.keys import encode_key
from tests.ledger.conftest import make_turn

TEMPLATE = "Handle ticket {id}."


def _record(
    ledger: RunLedger, name: str | None, key: object, cost: float, status: str, fingerprint: str | None
) -> None:
    turn = make_turn(f"Handle ticket {key}.", cost_usd=cost)
    saved: dict[str, object] = {"status": status, "error": None, "answer": "ok", "output": None, "position": 1}
    if fingerprint is not None:
        saved["fingerprint"] = fingerprint
    turn.meta["fleet"] = {
        "fleet": name,
        "fleet_key": encode_key(key),
        "fleet_fingerprint": "0" * 16,
        "fleet_result": saved,
    }
    ledger.record(turn)


async def test_the_estimate_is_the_mean_of_the_done_rows_of_the_same_fingerprint(ledger: RunLedger) -> None:
    frame = pd.DataFrame({"id": [1, 2, 3, 4]})
    fleet = build_fleet(frame, TEMPLATE, ledger=ledger)
    other = build_fleet(frame, "Something else for {id}.", ledger=ledger).fingerprint
    _record(ledger, "nov", 1, 0.001, "done", fleet.fingerprint)
    _record(ledger, "nov", 2, 0.002, "done", fleet.fingerprint)
    _record(ledger, None, 9, 0.006, "done", fleet.fingerprint)  # an unnamed fleet's row counts too
    _record(ledger, "nov", 3, 0.050, "error", fleet.fingerprint)  # a failed attempt: not a row's cost
    _record(ledger, "other", 1, 0.900, "done", other)  # another template
    _record(ledger, "old", 1, 0.700, "done", None)  # a release that kept no fingerprint

    rows = ledger.fleet_rows(fleet.fingerprint)
    assert sorted(rows["status"]) == ["done", "done", "done", "error"]
    assert rows["fleet_key"].tolist() == [1, 2, 9, 3]

    plan = await fleet.dry_run()
    costs = [0.001, 0.002, 0.006]
    assert (plan.rows, plan.to_run, plan.based_on, plan.fleets) == (4, 4, 3, ("nov", "(unnamed)"))
    assert plan.per_row_usd == pytest.approx(statistics.fmean(costs))
    assert plan.median_usd == pytest.approx(0.002)
    assert plan.estimate_usd == pytest.approx(statistics.fmean(costs) * 4)
    assert "the mean of 3 done rows of earlier fleets with this template and options: nov, (unnamed)" in repr(plan)

    assert (await build_fleet(frame, "A new one for {id}.", ledger=ledger).dry_run()).based_on == 0
