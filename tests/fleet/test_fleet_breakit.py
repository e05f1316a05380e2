"""A skeptic's findings on the fleet (issue 25): each test failed on the code it was written against."""

from __future__ import annotations

import asyncio
import os
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from kandev_nb.agent.session import SessionConfig
from kandev_nb.fleet import build_fleet, fleet_results
from kandev_nb.fleet.spec import FleetError, FleetSpec
from kandev_nb.fleet.worktrees import Worktrees
from kandev_nb.ledger import RunLedger
from kandev_nb.testing import RecordedRequest, Reply, ScriptedModelServer, text, tool_use
from tests.fleet.conftest import answer_per_row
from tests.fleet.test_fleet_queue_budget import _until, touch_then_answer


def test_a_notebook_secret_in_the_template_is_redacted_as_in_a_cell() -> None:
    """A cell's ``{api_key}`` sends ``<redacted>``; a fleet row's prompt sent the key itself."""
    key = "sk-live-4f9a8b7c6d5e4f3a2b1c"
    cfg = {"password": "hunter2-very-secret"}
    spec = FleetSpec.of(
        pd.DataFrame({"id": [1]}),
        "Ticket {id}: call the API with {api_key}, log in with {cfg}",
        variables={"api_key": key, "cfg": cfg},
    )
    prompt = spec.prompts[0]
    assert prompt.startswith("Ticket 1: call the API with <redacted>")
    assert key not in prompt and "hunter2-very-secret" not in prompt


@pytest.mark.parametrize("template", ["{os.environ}", "{os.path}", "{_secret}", "{id.__class__}", "{In}"])
def test_module_private_and_ipython_names_are_refused_as_in_a_cell(template: str) -> None:
    """``{os.environ}`` sent the kernel's whole environment (tokens included) to every row."""
    with pytest.raises(FleetError):
        FleetSpec.of(pd.DataFrame({"id": [1]}), template, variables={"os": os, "_secret": "x", "In": ["a"]})


def _repo(path: Path) -> Path:
    path.mkdir()
    for args in (
        ["init", "-q", "-b", "main"],
        ["-c", "user.email=t@t", "-c", "user.name=t", "commit", "-q", "--allow-empty", "-m", "0"],
    ):
        subprocess.run(["git", "-C", str(path), *args], check=True, capture_output=True)
    return path


def test_row_keys_that_slug_alike_get_their_own_worktree_and_branch(tmp_path: Path) -> None:
    """Keys ``a b``, ``a/b``, ``a-b`` (and int 1 vs ``"1"``, ``../../x`` vs ``x``) shared one worktree and one
    branch, so two rows' agents edited the same checkout; ``a..b`` and ``x.lock`` made branch names git refuses."""
    repo = _repo(tmp_path / "repo")
    trees = Worktrees(repo, "edits")
    keys: list[Any] = ["a b", "a/b", "a-b", 1, "1", "../../x", "x", "a..b", "x.lock", "-f", ("t", 2)]

    async def make_all() -> list[Any]:
        return [await trees.make(k) for k in keys]

    made = asyncio.run(make_all())
    assert len({t.path for t in made}) == len(keys)
    assert len({t.branch for t in made}) == len(keys)
    folder = (tmp_path / "repo.kandev-worktrees" / "edits").resolve()
    for tree in made:
        assert tree.path.resolve().parent == folder  # never outside the fleet's folder, never the user's checkout
        assert tree.branch.startswith("kandev/edits/") and not tree.branch.split("/")[-1].startswith("-")
    status = subprocess.run(
        ["git", "-C", str(repo), "status", "--porcelain"], capture_output=True, text=True, check=True
    )
    assert status.stdout == ""
    assert Worktrees(repo, "edits").path_of("a") == folder / "a"  # plain keys keep plain names


async def test_a_multiindex_fleet_rebuilt_from_the_ledger_joins_back(
    base_config: SessionConfig, ledger: RunLedger, scripted_model: ScriptedModelServer, feed: Callable[..., None]
) -> None:
    """A tuple key was kept as a list of JSON texts (``["\\"t\\"", "1"]``), so ``fleet_results`` gave the
    keys ``('"t"', '1')`` and ``frame.join(fleet_results(...))`` matched no row; and the rebuilt rows came
    in the order they finished, not the frame's (row 1 answers slowly here, so it finishes last)."""
    feed(answer_per_row(lambda n, _r: Reply(text(f"answer {n}"), delay_first_byte=1.5 if n == 1 else 0.0)), 2)
    frame = pd.DataFrame({"id": [1, 2]}, index=pd.MultiIndex.from_tuples([("t", 1), ("t", 2)], names=["a", "b"]))
    result = await build_fleet(frame, "Do ticket {id}.", name="multi", config=base_config, ledger=ledger).run()
    assert list(result["status"]) == ["done", "done"], result["error"].tolist()
    rebuilt = fleet_results("multi", ledger=ledger)
    assert list(rebuilt.index) == [("t", 1), ("t", 2)]
    rebuilt.index = rebuilt.index.set_names(frame.index.names)  # the ledger keeps no index names
    assert list(frame.join(rebuilt[["answer"]])["answer"]) == ["answer 1", "answer 2"]


async def test_stop_all_with_approvals_waiting_closes_every_card_and_keeps_the_reason(
    base_config: SessionConfig, ledger: RunLedger, scripted_model: ScriptedModelServer, feed: Callable[..., None]
) -> None:
    """(Held.) Stop all while two rows wait in the approval queue: the queue empties, both rows end "stopped"
    with the reason, a row never started is "skipped" with its reason, and the cost columns are the ledger's."""
    feed(answer_per_row(touch_then_answer), 20)
    frame = pd.DataFrame({"id": [1, 2, 3]}, index=["a", "b", "c"])
    fleet = build_fleet(frame, "Handle ticket {id}.", concurrency=2, name="halt", config=base_config, ledger=ledger)
    run = asyncio.create_task(fleet.run())
    await _until(lambda: len(fleet.queue.pending) == 2, "two queued approvals")
    fleet.stop()
    result = await asyncio.wait_for(run, 180)
    assert fleet.queue.pending == []
    assert list(result["status"]) == ["stopped", "stopped", "skipped"], result["error"].tolist()
    assert all(isinstance(e, str) and e for e in result["error"]), result["error"].tolist()
    runs = ledger.runs(fleet="halt").set_index("fleet_key")
    for key in ("a", "b"):
        row = runs.loc[key]
        assert result.loc[key, "cost_usd"] == pytest.approx(row["cost_usd"])
        assert result.loc[key, "input_tokens"] == row["input_tokens"]
    assert len(scripted_model.main_requests) == 2  # the stopped rows asked once each; the skipped one never


async def test_a_rerun_runs_again_the_rows_whose_prompt_changed(
    base_config: SessionConfig, ledger: RunLedger, scripted_model: ScriptedModelServer, feed: Callable[..., None]
) -> None:
    """The fingerprint held the template, not the row's prompt: after ticket b's text (or a notebook
    variable the template reads) changed, a rerun gave b's old answer to the new question, sending nothing."""
    feed(answer_per_row(lambda n, r: Reply(text(f"answer {n}: {r.last_user_text()[-12:]}"))), 10)
    frame = pd.DataFrame({"id": [1, 2], "subject": ["printer", "laptop"]}, index=["a", "b"])
    template = "Do ticket {id} about {subject} for {team}."
    first = await build_fleet(
        frame, template, name="data", config=base_config, ledger=ledger, variables={"team": "ops"}
    ).run()
    assert list(first["status"]) == ["done", "done"], first["error"].tolist()
    sent = len(scripted_model.main_requests)
    frame.loc["b", "subject"] = "phone"
    again = await build_fleet(
        frame, template, name="data", config=base_config, ledger=ledger, variables={"team": "ops"}
    ).run()
    assert len(scripted_model.main_requests) == sent + 1  # only b, whose prompt changed
    assert again.loc["a", "answer"] == first.loc["a", "answer"]
    assert "phone" in scripted_model.main_requests[-1].last_user_text()
    assert again.loc["b", "answer"] != first.loc["b", "answer"]
    await build_fleet(frame, template, name="data", config=base_config, ledger=ledger, variables={"team": "dev"}).run()
    assert len(scripted_model.main_requests) == sent + 3  # a notebook variable changed every prompt


async def test_deny_for_all_rows_holds_for_calls_the_mode_runs_unasked(
    base_config: SessionConfig, claude_workdir: Path, tmp_path: Path, feed: Callable[..., None]
) -> None:
    """ "Deny for all rows" gave ``Bash(rm:*)`` on row 1's ``rm`` outside the folder; in acceptEdits row 2's
    ``rm data-2.csv`` inside the folder sends no can_use_tool, so the fleet's rule was never asked and it ran."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.csv").write_text("k\n")
    (claude_workdir / "data-2.csv").write_text("d\n")

    def remove(number: int, request: RecordedRequest) -> Reply:
        if request.last_user_text():
            target = str(outside / "keep.csv") if number == 1 else "data-2.csv"
            return Reply(tool_use("Bash", {"command": f"rm {target}", "description": "remove a file"}))
        return Reply(text(f"row {number} done"))

    feed(answer_per_row(remove), 10)
    frame = pd.DataFrame({"id": [1, 2]}, index=["a", "b"])
    fleet = build_fleet(
        frame, "Handle ticket {id}.", concurrency=1, mode="acceptEdits", config=base_config, ledger=None
    )
    run = asyncio.create_task(fleet.run())
    await _until(lambda: fleet.queue.head is not None, "row 1's rm in the queue")
    head = fleet.queue.head
    assert head is not None and head.key == "a"
    # the proposal is the exact command (nothing in it holds a row's value); the person widens it to every rm
    assert fleet.queue.deny_all(head, rule="Bash(rm:*)") == "Bash(rm:*)"
    result = await asyncio.wait_for(run, 180)
    assert list(result["status"]) == ["done", "done"], result["error"].tolist()
    assert (outside / "keep.csv").exists()
    assert (claude_workdir / "data-2.csv").exists()


_NESTED_VARS = {"os": os, "_private": "%Y", "In": ["%Y"]}


@pytest.mark.parametrize("template", ["{ts:{os.environ}}", "{ts:{_private}}", "{ts:{In}}", "{ts:%Y {ts:{os.path}}}"])
def test_a_field_nested_in_a_format_spec_is_refused_as_a_top_level_one(template: str) -> None:
    """Issue 32 point 4: ``{ts:{os.environ}}`` was filled unchecked (a datetime column takes any
    strftime text), so the kernel's environment reached every row's prompt."""
    frame = pd.DataFrame({"ts": [pd.Timestamp("2024-05-01")]})
    with pytest.raises(FleetError, match="private or IPython|is a module"):
        FleetSpec.of(frame, template, variables=_NESTED_VARS)


def test_a_secret_nested_in_a_format_spec_is_redacted_and_no_error_quotes_it() -> None:
    """Issue 32 point 4: ``{ts:{cfg.password}}`` put the password in a datetime's prompt, and a
    bad nested spec's error (an int column) quoted it."""

    class Config:
        password = "hunter2-very-secret"

    frame = pd.DataFrame({"id": [7], "ts": [pd.Timestamp("2024-05-01")]})
    spec = FleetSpec.of(frame, "when {ts:{cfg.password}}", variables={"cfg": Config()})
    assert "hunter2" not in spec.prompts[0]
    assert spec.prompts[0] == "when <redacted>"
    with pytest.raises(FleetError) as caught:
        FleetSpec.of(frame, "id {id:{cfg.password}}", variables={"cfg": Config()})
    assert "hunter2" not in str(caught.value)
    assert "{id:" in str(caught.value)  # the field that failed is named
    # a bad spec of the person's own: the error names the field, never the value
    frame2 = pd.DataFrame({"id": ["the-row-value-itself"]})
    with pytest.raises(FleetError) as caught2:
        FleetSpec.of(frame2, "{id:{fmt}}", variables={"fmt": "d"})
    assert "the-row-value-itself" not in str(caught2.value)


def test_a_nested_column_or_plain_variable_still_fills() -> None:
    frame = pd.DataFrame({"ts": [pd.Timestamp("2024-05-01")], "fmt": ["%Y"]})
    spec = FleetSpec.of(frame, "{ts:{fmt}} {ts:%m-{day}}", variables={"day": "%d"})
    assert spec.prompts[0] == "2024 05-01"


class _Holder:
    def __init__(self) -> None:
        self.d = {"k": os}
        self.env = dict(os.environ)


@pytest.mark.parametrize(
    "template",
    [
        "{mods[0].environ}",
        "{mdict[os].environ}",
        "{o.d[k].environ}",
        "{tup[0].environ[HOME]}",
        "{id:{mods[0].environ}}",
        "{environ}",
        "{environ!r}",
        "{environ[CANARY_FLEET_VAR]}",
        "{environ.copy}",
        "{envcopy}",
        "{o.env}",
        "{o}",
        "{wrapped}",
        "{mods[0]._Environ}",
    ],
)
def test_a_template_cannot_reach_a_module_or_the_environment_through_an_index(
    template: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Attack review C: only the chain before the first ``[`` was checked for modules, so
    ``{mods[0].environ}`` sent the environment; ``{environ}`` (``from os import environ``) too."""
    monkeypatch.setenv("CANARY_FLEET_VAR", "canary-value-123")
    variables = {
        "mods": [os],
        "mdict": {"os": os},
        "tup": (os,),
        "o": _Holder(),
        "environ": os.environ,
        "envcopy": dict(os.environ),
        "wrapped": {"env": os.environ},
    }
    with pytest.raises(FleetError) as err:
        FleetSpec.of(pd.DataFrame({"id": [1]}), template, variables=variables)
    assert "canary-value-123" not in str(err.value) and "/" not in str(err.value).split("}")[0]


def test_a_column_of_modules_is_refused_row_by_row() -> None:
    with pytest.raises(FleetError, match="module"):
        FleetSpec.of(pd.DataFrame({"m": [os]}), "{m.environ}")


def test_indexes_and_attributes_of_plain_values_still_fill() -> None:
    spec = FleetSpec.of(
        pd.DataFrame({"id": [1]}),
        "{id} {cfg[name]} {items[1]} {ns.sep}",
        variables={"cfg": {"name": "alpha"}, "items": ["a", "b"], "ns": type("N", (), {"sep": "-"})()},
    )
    assert spec.prompts[0] == "1 alpha b -"
