"""Team budgets (issue 15, 5): the spend of each scope and period is read from the shared
ledger, and the refusal names the scope, the period and the spend. On SQLite and PostgreSQL;
the kernel-level refusal and footer are in tests/kernel/test_team_ledger.py."""

from __future__ import annotations

import datetime as dt

import pytest

from kandev_nb import ledger as ledger_mod
from kandev_nb.ledger import ENV_LEDGER, RunLedger, period_start
from kandev_nb.notebook import ledger_hooks
from kandev_nb.notebook.magic import NotebookSettings, configure, settings
from tests.ledger.conftest import make_turn


@pytest.fixture
def shared(ledger_url: str, monkeypatch: pytest.MonkeyPatch) -> RunLedger:
    """The default ledger at `ledger_url`, holding turns of two users in two notebooks."""
    monkeypatch.setenv(ENV_LEDGER, ledger_url)
    monkeypatch.setattr(ledger_mod, "_defaults", {})
    ledger = ledger_mod.default_ledger()
    long_ago = period_start("month") - dt.timedelta(days=40)
    for user, notebook, cost, when in (
        ("ana", "a.ipynb", 0.10, None),
        ("ana", "b.ipynb", 0.20, None),
        ("ben", "a.ipynb", 0.40, None),
        ("ana", "a.ipynb", 5.00, long_ago),
    ):
        monkeypatch.setenv("JUPYTERHUB_USER", user)
        ledger.record(make_turn(f"{user} {notebook}", cost_usd=cost, started_at=when), notebook=notebook)
    monkeypatch.setenv("JUPYTERHUB_USER", "ana")
    return ledger


@pytest.mark.parametrize(
    ("scope", "period", "expected"),
    [
        ("notebook", "day", 0.10),
        ("notebook", "month", 0.10),
        ("user", "day", 0.30),
        ("user", None, 5.30),
        ("team", "day", 0.70),
        ("team", "month", 0.70),
        ("team", None, 5.70),
    ],
)
def test_the_spend_of_each_scope_and_period_comes_from_the_ledger(
    shared: RunLedger, scope: str, period: str | None, expected: float
) -> None:
    budget = NotebookSettings(budget_usd=1.0, budget_scope=scope, budget_period=period)
    assert ledger_hooks.spent(budget, [], "a.ipynb") == pytest.approx(expected)


def test_the_refusal_names_scope_period_and_spend(shared: RunLedger) -> None:
    budget = NotebookSettings(budget_usd=0.5, budget_scope="team", budget_period="day")
    with pytest.raises(RuntimeError) as info:
        ledger_hooks.check_budget(budget, ledger_hooks.spent(budget, [], "a.ipynb"))
    assert str(info.value).startswith("the team, today budget of $0.50 is spent: $0.7000 today (team scope)")
    user = NotebookSettings(budget_usd=0.5, budget_scope="user", budget_period="month")
    ledger_hooks.check_budget(user, ledger_hooks.spent(user, [], "a.ipynb"))  # ana: $0.30 < $0.50
    assert ledger_hooks.budget_label(user) == "user ana, this month"


def test_a_bad_scope_or_period_is_refused_and_nothing_changes() -> None:
    before = (settings.budget_scope, settings.budget_period, settings.budget_usd)
    with pytest.raises(ValueError, match="budget_scope must be one of notebook, user, team"):
        configure(budget_scope="everyone", budget_usd=3)
    with pytest.raises(ValueError, match="budget_period"):
        configure(budget_period="week")
    assert (settings.budget_scope, settings.budget_period, settings.budget_usd) == before
