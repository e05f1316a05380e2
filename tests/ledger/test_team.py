"""Who and where (issue 15, 2): each turn row names its user and host; readers filter by
user; ``RunLedger.team`` (``%claude_stats --team``) sums spend and tokens per user and per
notebook for today and this month. On SQLite and on PostgreSQL."""

from __future__ import annotations

import datetime as dt
import socket

import pytest

from kandev_nb.ledger import RunLedger, current_user, period_start
from kandev_nb.ledger.stats import Stats
from tests.ledger.conftest import make_turn


def _record(
    ledger: RunLedger,
    monkeypatch: pytest.MonkeyPatch,
    user: str,
    notebook: str,
    cost: float,
    started_at: dt.datetime | None = None,
    tools: tuple[tuple[str, str | None], ...] = (),
) -> None:
    monkeypatch.setenv("JUPYTERHUB_USER", user)
    ledger.record(
        make_turn(f"{user} in {notebook}", cost_usd=cost, started_at=started_at, tools=tools), notebook=notebook
    )


def _last_month() -> dt.datetime:
    return period_start("month") - dt.timedelta(days=3)


def test_the_user_is_jupyterhubs_else_the_os_login(monkeypatch: pytest.MonkeyPatch) -> None:
    import getpass

    monkeypatch.setenv("JUPYTERHUB_USER", "ana")
    assert current_user() == "ana"
    monkeypatch.delenv("JUPYTERHUB_USER")
    assert current_user() == getpass.getuser()


def test_rows_name_user_and_host_and_readers_filter_by_user(ledger: RunLedger, monkeypatch: pytest.MonkeyPatch) -> None:
    _record(ledger, monkeypatch, "ana", "a.ipynb", 0.10, tools=(("Bash", "allow"),))
    _record(ledger, monkeypatch, "ben", "b.ipynb", 0.20, tools=(("Read", None), ("Edit", "deny")))
    runs = ledger.runs()
    assert list(runs["user"]) == ["ana", "ben"]
    assert set(runs["host"]) == {socket.gethostname()}
    assert list(ledger.runs(user="ben")["prompt"]) == ["ben in b.ipynb"]
    assert list(ledger.tool_calls(user="ben")["tool_name"]) == ["Read", "Edit"]
    assert set(ledger.tool_calls()["user"]) == {"ana", "ben"}
    assert list(ledger.model_usage(user="ana")["cost_usd"]) == [0.10]
    assert ledger.totals(user="ana")["cost_usd"] == pytest.approx(0.10)
    assert ledger.summary(user="ben")["all"]["turns"] == 1
    assert ledger.summary(user="ben")["top_tools"].index.tolist() == ["Edit", "Read"]
    assert ledger.runs(user="nobody").empty


def test_team_spend_per_user_and_notebook_today_and_this_month(
    ledger: RunLedger, monkeypatch: pytest.MonkeyPatch
) -> None:
    now = dt.datetime.now(dt.UTC)
    earlier_this_month = max(period_start("month"), period_start("day") - dt.timedelta(days=1))
    _record(ledger, monkeypatch, "ana", "a.ipynb", 0.10, now)
    _record(ledger, monkeypatch, "ana", "a.ipynb", 0.05, now)
    _record(ledger, monkeypatch, "ana", "b.ipynb", 0.40, earlier_this_month)
    _record(ledger, monkeypatch, "ben", "a.ipynb", 0.30, now)
    _record(ledger, monkeypatch, "ben", "a.ipynb", 9.00, _last_month())  # outside both periods
    team = ledger.team()
    by_user = team["by_user"]
    assert by_user.loc["ana", "cost_today"] == pytest.approx(0.15 if earlier_this_month < period_start("day") else 0.55)
    assert by_user.loc["ana", "cost_month"] == pytest.approx(0.55)
    assert by_user.loc["ben", "cost_today"] == pytest.approx(0.30)
    assert by_user.loc["ben", "cost_month"] == pytest.approx(0.30)
    assert by_user.loc["ana", "tokens_in_month"] == 300 and by_user.loc["ben", "turns_month"] == 1
    assert list(by_user.index) == ["ana", "ben"]  # most expensive this month first
    by_notebook = team["by_notebook"]
    ana_a = by_notebook[(by_notebook.index == "a.ipynb") & (by_notebook["user"] == "ana")]
    assert ana_a["cost_month"].tolist() == [pytest.approx(0.15)] and ana_a["turns_today"].tolist() == [2]
    assert team["month"]["cost_usd"] == pytest.approx(0.85)
    assert ledger.team(user="ben")["by_user"].index.tolist() == ["ben"]
    shown = repr(Stats(team))
    assert "Per user" in shown and "Per notebook" in shown and "this month" in shown
    assert "$0.5500" in shown and "$9.0000" not in shown
    html = Stats(team)._repr_html_()
    assert "<th>cost month</th>" in html and "ana" in html


def test_spend_by_rejects_an_unknown_column(ledger: RunLedger) -> None:
    with pytest.raises(ValueError, match="not turns columns"):
        ledger.spend_by(("password",))
