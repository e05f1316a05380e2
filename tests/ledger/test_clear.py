"""Issue 34.1: the ledger after ``/clear`` charges each turn what the model server answered.

CLI 2.1.332 restarts its cumulative figures at ``/clear`` (a `conversation_reset` message,
then a `result` with ``total_cost_usd: 0``); a delta from the old total charged the next turn
$0. 2.1.197 keeps counting through ``/clear`` (no `conversation_reset`): the same check holds.
Every ledger row's cost is compared with the scripted model server's own record: the usage
it answered each request of that turn with, priced at the model's list price.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kandev_nb.agent.session import Session
from kandev_nb.ledger import RunLedger
from kandev_nb.testing import Reply, ScriptedModelServer, text
from kandev_nb.testing.script import Usage

pytestmark = pytest.mark.timeout(300)

PRICES = {"claude-opus-5-5": (4.0, 20.0), "claude-opus-4-8": (5.0, 25.0)}
"""USD per million (input, output) tokens of the model each pinned CLI asks for by default
(2.1.332, 2.1.197), as their own `modelUsage.costUSD` prices them."""


def _charged(server: ScriptedModelServer, first: int, end: int) -> tuple[float, int, int]:
    """USD, input and output tokens of the requests `first:end` as the server answered them."""
    cost, tokens_in, tokens_out = 0.0, 0, 0
    for request, usage in zip(server.requests[first:end], server.answered_usage[first:end], strict=True):
        if usage is None:
            continue
        price_in, price_out = PRICES[request.body["model"].split("[")[0]]
        cost += (usage.input_tokens * price_in + usage.output_tokens * price_out) / 1e6
        tokens_in, tokens_out = tokens_in + usage.input_tokens, tokens_out + usage.output_tokens
    return cost, tokens_in, tokens_out


@pytest.mark.parametrize("claude_cli", ["2.1.332", "2.1.197"], indirect=True)
async def test_each_turn_costs_its_own_requests_across_clear(
    claude_cli: Path,
    claude_env: dict[str, str],
    claude_workdir: Path,
    scripted_model: ScriptedModelServer,
    tmp_path: Path,
) -> None:
    scripted_model.push(
        Reply(text("One."), usage=Usage(1000, 100)),
        Reply(text("Two."), usage=Usage(2000, 200)),
        Reply(text("Three."), usage=Usage(600, 50)),  # cheaper than the totals before /clear
        Reply(text("Four."), usage=Usage(4000, 400)),
    )
    session = Session(cwd=claude_workdir, cli_path=claude_cli, env=dict(claude_env), inactivity_timeout=120)
    ledger = RunLedger(tmp_path / "ledger.sqlite")
    windows: list[tuple[int, int]] = []
    try:
        for prompt in ("one", "two", "/clear", "three", "four"):
            first = len(scripted_model.requests)
            turn = await session.run(prompt)
            assert not turn.failed, turn.error
            windows.append((first, len(scripted_model.requests)))
            ledger.record(turn)
        pid = session.pid
    finally:
        await session.close()
    runs = ledger.runs()
    ledger.close()
    assert len(runs) == 5 and pid is not None
    for (first, end), (_, row) in zip(windows, runs.iterrows(), strict=True):
        cost, tokens_in, tokens_out = _charged(scripted_model, first, end)
        assert row["cost_usd"] == pytest.approx(cost, abs=1e-9), row["prompt"]
        assert (int(row["input_tokens"]), int(row["output_tokens"])) == (tokens_in, tokens_out), row["prompt"]
    clear, after = runs.iloc[2], runs.iloc[3]
    assert clear["cost_usd"] == 0
    assert after["cost_usd"] > 0 and int(after["input_tokens"]) == 600
    assert runs["cost_usd"].sum() == pytest.approx(_charged(scripted_model, 0, len(scripted_model.requests))[0])


def test_a_total_below_the_previous_one_restarts_the_meter() -> None:
    # Any other point where the CLI's totals restart (no `conversation_reset` seen): a
    # cumulative total that went down counts from zero, for cost and tokens alike.
    from kandev_nb.agent.usage import UsageMeter
    from kandev_nb.wire.protocol import parse_object

    def result(total: float, tokens_in: int) -> object:
        usage = {"m": {"inputTokens": tokens_in, "outputTokens": 0, "costUSD": total}}
        return parse_object({"type": "result", "subtype": "success", "total_cost_usd": total, "modelUsage": usage})

    meter = UsageMeter()
    costs = []
    for total, tokens_in in ((0.05, 5000), (0.08, 8000), (0.0, 0), (0.01, 1000)):
        msg = result(total, tokens_in)
        per_model = meter.delta(msg.model_usage, msg.total_cost_usd)  # type: ignore[attr-defined]
        stats = meter.stats(msg, per_model, "m", None)  # type: ignore[arg-type]
        costs.append((round(stats.cost_usd, 9), stats.input_tokens))
    assert costs == [(0.05, 5000), (0.03, 3000), (0.0, 0), (0.01, 1000)]
