"""Retries of transient failures (resuming the row's session) and the rate-limit backoff."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable

import pandas as pd
import pytest

from kandev_nb.agent.session import SessionConfig
from kandev_nb.fleet import build_fleet
from kandev_nb.testing import HttpError, RecordedRequest, Reply, ScriptedModelServer, http_error, text
from tests.fleet.conftest import answer_per_row

pytestmark = pytest.mark.timeout(240)


async def test_a_transient_api_error_is_retried_in_the_same_session_and_a_lasting_one_keeps_its_error(
    base_config: SessionConfig, scripted_model: ScriptedModelServer, feed: Callable[..., None]
) -> None:
    seen: Counter[int] = Counter()
    lock = threading.Lock()

    def flaky(number: int, request: RecordedRequest) -> Reply | HttpError:
        with lock:
            seen[number] += 1
            attempt = seen[number]
        if number == 1 and attempt == 1 or number == 2:  # row 2 fails every time
            return http_error(500, f"boom {number}", headers={"x-should-retry": "false"})
        return Reply(text(f"fine {number}"))

    feed(answer_per_row(flaky), 12)
    fleet = build_fleet(
        pd.DataFrame({"id": [1, 2, 3]}), "Handle ticket {id}.", retries=1, config=base_config, ledger=None
    )
    result = await fleet.run()
    assert list(result["status"]) == ["done", "error", "done"], result["error"].tolist()
    assert result.loc[0, "answer"] == "fine 1" and "boom 2" in result.loc[1, "error"]
    assert seen == {1: 2, 2: 2, 3: 1}
    # The retry resumed row 1's conversation: one session, its first prompt in the history.
    turns = fleet.rows[0].result.turn  # type: ignore[union-attr]
    assert turns is not None and result.loc[0, "session_id"] == turns.session_id
    retried = [r for r in scripted_model.main_requests if "ticket 1" in repr(r.messages)]
    assert len(retried) == 2 and repr(retried[1].messages).count("Handle ticket 1.") == 2


async def test_a_429_burst_lowers_the_concurrency_and_it_comes_back(
    base_config: SessionConfig, scripted_model: ScriptedModelServer, feed: Callable[..., None]
) -> None:
    seen: Counter[int] = Counter()
    lock = threading.Lock()

    def limited(number: int, request: RecordedRequest) -> Reply | HttpError:
        with lock:
            seen[number] += 1
            attempt = seen[number]
        if number == 1 and attempt == 1:
            return http_error(429, "slow down", headers={"retry-after": "0"})  # the CLI retries (api_retry)
        return Reply(text(f"fine {number}"), delay_first_byte=0.3)

    feed(answer_per_row(limited), 20)
    fleet = build_fleet(
        pd.DataFrame({"id": range(1, 7)}), "Handle ticket {id}.", concurrency=4, config=base_config, ledger=None
    )
    fleet.pacing.quiet_s = 0.5
    notes: list[str] = []
    fleet.listeners.append(lambda: notes.append(fleet.pacing.note))
    result = await fleet.run()
    assert list(result["status"]) == ["done"] * 6
    assert fleet.pacing.history[0] == 2, fleet.pacing.history  # 4 -> 2 at the first api_retry after a 429
    notes.append(fleet.pacing.note)
    assert "rate limited: 4 -> 2" in notes
    assert max(fleet.pacing.history[1:]) >= 3, fleet.pacing.history  # raised again after 0.5 s without a 429
