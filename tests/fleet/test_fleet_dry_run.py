"""Issue 33, point 8: an estimate before spending. ``fleet(..., dry_run=True)`` and
``%%claude --over FRAME --dry-run`` send nothing and show the row count, the first three
prompts exactly as a run sends them, and a cost estimate from the ledger's done rows of
earlier fleets with the same template and options (or say there are none)."""

from __future__ import annotations

import statistics
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest

import kandev_nb
from kandev_nb.agent.session import SessionConfig
from kandev_nb.fleet import build_fleet
from kandev_nb.fleet.estimate import FleetEstimate, usd
from kandev_nb.ledger import RunLedger
from kandev_nb.notebook.magic import parse_options
from kandev_nb.render.html import fmt_usd
from kandev_nb.render.theme import NO_MATH
from kandev_nb.testing import ScriptedModelServer
from tests.fleet.conftest import answer_per_row, row_of, triage_answer

pytestmark = pytest.mark.timeout(240)

TEMPLATE = 'Classify ticket {id} ("{subject}"); {{braces}} stay.'


def tickets(ids: list[int]) -> pd.DataFrame:
    return pd.DataFrame({"id": ids, "subject": [f"s{i}" for i in ids]}, index=[f"t{i}" for i in ids])


def sent_prompts(model: ScriptedModelServer, since: int) -> dict[int, str]:
    """By ticket number, the prompt of the first request of each row after request `since`."""
    out: dict[int, str] = {}
    for request in model.main_requests[since:]:
        number = row_of(request)
        if number is not None and number not in out:
            out[number] = request.last_user_text()
    return out


async def test_a_dry_run_sends_nothing_shows_the_prompts_a_run_sends_and_estimates_from_past_rows(
    base_config: SessionConfig,
    ledger: RunLedger,
    scripted_model: ScriptedModelServer,
    feed: Callable[..., None],
) -> None:
    feed(answer_per_row(triage_answer), 20)
    past = await build_fleet(tickets([1, 2, 3]), TEMPLATE, name="past", config=base_config, ledger=ledger).run()
    assert list(past["status"]) == ["done"] * 3
    runs = ledger.runs(fleet="past")
    costs = [float(c) for c in runs["cost_usd"]]
    assert len(costs) == 3 and all(c > 0 for c in costs)

    before = len(scripted_model.requests)
    frame = tickets([11, 12, 13, 14, 15])
    plan = await kandev_nb.fleet(frame, TEMPLATE, config=base_config, ledger=ledger, dry_run=True)
    assert len(scripted_model.requests) == before  # nothing reached the model
    assert isinstance(plan, FleetEstimate)
    assert (plan.rows, plan.to_run, plan.done, plan.based_on, plan.fleets) == (5, 5, 0, 3, ("past",))
    assert plan.per_row_usd == pytest.approx(statistics.fmean(costs))
    assert plan.median_usd == pytest.approx(statistics.median(costs))
    assert plan.estimate_usd == pytest.approx(statistics.fmean(costs) * 5)
    assert [key for key, _ in plan.prompts] == ["t11", "t12", "t13"]
    text = repr(plan)
    assert "5 rows: 5 to run" in text and "nothing was sent" in text
    assert "the mean of 3 done rows of earlier fleets with this template and options: past" in text
    assert 'Classify ticket 11 ("s11"); {braces} stay.' in text and "… and 2 more prompts" in text
    html = plan._repr_html_()
    assert f'class="kandev-fleet-dry-run {NO_MATH}"' in html and "kandev-fleet-estimate" in html  # money, not LaTeX
    assert usd(plan.estimate_usd) == fmt_usd(plan.estimate_usd) and usd(0.00004) == fmt_usd(0.00004)

    # the same fleet run for real sends exactly the prompts the dry run showed
    result = await build_fleet(frame, TEMPLATE, config=base_config, ledger=ledger).run()
    assert list(result["status"]) == ["done"] * 5
    sent = sent_prompts(scripted_model, before)
    assert [sent[n] for n in (11, 12, 13)] == [prompt for _, prompt in plan.prompts]

    # a named fleet's rerun: the rows done already are read back, only the new row would run
    again = await kandev_nb.fleet(
        tickets([1, 2, 3, 4]), TEMPLATE, name="past", config=base_config, ledger=ledger, dry_run=True
    )
    done_costs = [float(c) for c in ledger.fleet_rows(plan.fingerprint)["cost_usd"]]
    assert (again.to_run, again.done, again.based_on) == (1, 3, 8)
    assert [key for key, _ in again.prompts] == ["t4"]
    assert again.estimate_usd == pytest.approx(statistics.fmean(done_costs))
    assert "1 to run, 3 done already" in repr(again)


async def test_a_dry_run_without_past_rows_says_so(
    base_config: SessionConfig, ledger: RunLedger, scripted_model: ScriptedModelServer
) -> None:
    plan = await kandev_nb.fleet(tickets([1, 2]), TEMPLATE, config=base_config, ledger=ledger, dry_run=True)
    assert scripted_model.requests == []
    assert (plan.to_run, plan.based_on, plan.per_row_usd, plan.estimate_usd) == (2, 0, None, None)
    assert "estimate: none (the ledger has no done row of this template" in repr(plan)
    assert [p for _, p in plan.prompts] == [
        'Classify ticket 1 ("s1"); {braces} stay.',
        'Classify ticket 2 ("s2"); {braces} stay.',
    ]


async def test_the_magics_dry_run_shows_the_same_as_the_function(
    notebook_state: object,
    scripted_model: ScriptedModelServer,
    claude_cli: Path,
    claude_env: dict[str, str],
    claude_workdir: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    feed: Callable[..., None],
) -> None:
    from kandev_nb.notebook.fleet_magic import run_over

    monkeypatch.setenv("KANDEV_NB_LEDGER", str(tmp_path / "magic-ledger.sqlite"))
    kandev_nb.configure(env=claude_env, cwd=str(claude_workdir), cli_path=str(claude_cli))
    feed(answer_per_row(triage_answer), 4)
    first = await kandev_nb.fleet(tickets([1, 2]), TEMPLATE, name="dec")  # the notebook's defaults, as the magic's
    assert list(first["status"]) == ["done", "done"]
    before = len(scripted_model.requests)
    namespace = {"tickets": tickets([1, 2, 3, 4])}
    await run_over(parse_options("--over tickets -o plan --fleet dec --dry-run"), TEMPLATE + "\n", namespace)
    shown = capsys.readouterr().out
    plan = await kandev_nb.fleet(namespace["tickets"], TEMPLATE, name="dec", dry_run=True)
    assert shown.strip() == repr(plan).strip()
    assert (plan.to_run, plan.done, plan.based_on) == (2, 2, 2) and "estimate: $" in shown
    assert isinstance(namespace["plan"], FleetEstimate) and namespace["plan"].prompts == plan.prompts
    assert len(scripted_model.requests) == before  # neither sent anything
