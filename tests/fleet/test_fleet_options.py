"""Per-row options: a cwd column, a policy every row uses, bad option values."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest

import kandev_nb
from kandev_nb.agent.session import SessionConfig
from kandev_nb.fleet import FleetError, build_fleet
from tests.fleet.conftest import answer_per_row
from tests.fleet.test_fleet_queue_budget import touch_then_answer

pytestmark = pytest.mark.timeout(240)


async def test_a_cwd_column_gives_each_row_its_folder_and_the_policy_answers_every_row(
    base_config: SessionConfig, claude_workdir: Path, feed: Callable[..., None]
) -> None:
    feed(answer_per_row(touch_then_answer), 12)
    folders = [claude_workdir / name for name in ("a", "b")]
    for folder in folders:
        folder.mkdir()
    frame = pd.DataFrame({"id": [1, 2], "where": [str(f) for f in folders]})
    fleet = build_fleet(
        frame,
        "Handle ticket {id}.",
        cwd="where",
        approve=kandev_nb.Rules(allow=["Bash(touch:*)"]),
        config=base_config,
        ledger=None,
    )
    result = await fleet.run()
    assert list(result["status"]) == ["done", "done"]
    assert (folders[0] / "out-1.txt").exists() and (folders[1] / "out-2.txt").exists()
    assert fleet.queue.pending == [] and fleet.queue.rules == []  # the policy answered, nobody was asked


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"cwd": "where"}, "row 1 has nan; each row's working directory must be a non-empty string"),
        ({"concurrency": 0}, "concurrency must be an integer >= 1"),
        ({"budget_usd": -1}, "budget_usd must be a number >= 0 or None"),
        ({"retries": -1}, "retries must be an integer >= 0"),
        ({"allowed_tools": "Read"}, "allowed_tools must be a list of rules"),
    ],
)
def test_bad_options_are_clear_errors(options: dict[str, object], message: str) -> None:
    frame = pd.DataFrame({"id": [1, 2], "where": ["/tmp", None]})
    with pytest.raises(FleetError) as caught:
        build_fleet(frame, "ticket {id}", ledger=None, **options)  # type: ignore[arg-type]
    assert message in str(caught.value)


async def test_the_notebooks_budget_still_applies(notebook_state: object, scripted_model: object) -> None:
    kandev_nb.configure(budget_usd=0.0)
    with pytest.raises(RuntimeError, match=r"budget of \$0\.0+ is spent"):
        await kandev_nb.fleet(pd.DataFrame({"id": [1]}), "ticket {id}", ledger=None)
    assert scripted_model.requests == []  # type: ignore[attr-defined]


def test_a_row_value_wins_over_a_variable_and_double_braces_stay_literal() -> None:
    from kandev_nb.fleet import FleetSpec

    spec = FleetSpec.of(
        pd.DataFrame({"id": [1, 2]}, index=["a", "b"]),
        "ticket {id} in {repo} {{not a field}}",
        variables={"id": 99, "repo": "core"},
    )
    assert spec.prompts == {"a": "ticket 1 in core {not a field}", "b": "ticket 2 in core {not a field}"}
