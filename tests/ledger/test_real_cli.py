"""Turns of the real Claude Code CLI (scripted model) recorded in the ledger and read back.

One CLI process runs six turns (module fixture): plain text, a Write that is allowed, a
Write that is denied, an API error (HTTP 400, which the CLI gives up on quickly), an
interrupted turn and a last plain turn. Every check compares the ledger to what the CLI
itself reported in its `result` messages (``turn.stats``).
"""

from __future__ import annotations

import asyncio
import json
import math
import subprocess
import sys
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pytest

from kandev_nb._version import __version__
from kandev_nb.agent import events as ev
from kandev_nb.agent.session import Session
from kandev_nb.agent.turn import Turn
from kandev_nb.ledger import RunLedger
from kandev_nb.testing.model_server import (
    HttpError,
    RecordedRequest,
    Reply,
    ScriptedModelServer,
    Usage,
    http_error,
    text,
    tool_use,
)
from tests.ledger.conftest import BACKENDS, cli_env

FAIL = "please fail now"
NOTEBOOK = "/home/user/analysis.ipynb"


@dataclass
class Recorded:
    turns: list[Turn]
    ids: list[int]
    path: str
    cwd: Path
    server: ScriptedModelServer


def _script(cwd: Path) -> list[Reply]:
    return [
        Reply(
            text("Hello there"),
            usage=Usage(input_tokens=120, output_tokens=30, cache_read_input_tokens=50, cache_creation_input_tokens=7),
        ),
        Reply(tool_use("Write", {"file_path": f"{cwd}/yes.txt", "content": "yes\n"})),
        Reply(text("Wrote it."), usage=Usage(input_tokens=300, output_tokens=12)),
        Reply(tool_use("Write", {"file_path": f"{cwd}/no.txt", "content": "no\n"})),
        Reply(text("Understood, not written.")),
        Reply(text("word " * 200, chunk_size=5, delay=0.02)),  # interrupted while streaming
        Reply(text("Back again."), usage=Usage(input_tokens=80, output_tokens=9)),
    ]


def _last_prompt(request: RecordedRequest) -> str:
    """The last text block of the last user message (the CLI merges a failed turn's prompt
    with the next one into one user message, so the whole message text is not enough)."""
    for message in reversed(request.messages):
        if message.get("role") != "user":
            continue
        content = message.get("content")
        if isinstance(content, str):
            return content
        texts = [b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text"]
        texts = [t for t in texts if not t.startswith("<system-reminder>")]
        return texts[-1] if texts else ""
    return ""


async def _scenario(cwd: Path, home: Path) -> tuple[list[Turn], ScriptedModelServer]:
    replies = deque(_script(cwd))

    def route(request: RecordedRequest) -> Reply | HttpError:
        # The CLI retries a 400 a few times at once: answer every attempt of the failing
        # turn with the error, and everything else from the script in order.
        if _last_prompt(request) == FAIL:
            return http_error(400, "prompt rejected by the scripted model")
        return replies.popleft()

    server = ScriptedModelServer([route] * 60).start()
    session = Session(cwd=cwd, env=cli_env(server, home), name="ledger-test")
    turns: list[Turn] = []

    def decide(behavior: str):  # type: ignore[no-untyped-def]
        def consumer(event: ev.AgentEvent) -> None:
            if isinstance(event, ev.PermissionRequest):
                if behavior == "allow":
                    event.approval.allow()
                else:
                    event.approval.deny("Not this one.")

        return consumer

    try:
        turns.append(await session.run("say hello"))
        turns.append(await session.run("write yes.txt", consumers=[decide("allow")]))
        turns.append(await session.run("write no.txt", consumers=[decide("deny")]))
        turns.append(await session.run(FAIL))
        streaming = asyncio.Event()

        def on_chunk(event: ev.AgentEvent) -> None:
            if isinstance(event, ev.MessageChunk):
                streaming.set()

        task = asyncio.create_task(session.run("talk for a long time", consumers=[on_chunk]))
        await asyncio.wait_for(streaming.wait(), 60)
        await session.interrupt()
        turns.append(await task)
        turns.append(await session.run("are you back?"))
    finally:
        await session.close()
        server.stop()
    return turns, server


@pytest.fixture(scope="module")
def scenario(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[Turn], ScriptedModelServer, Path]:
    """The six turns of one real CLI process (run once for both backends)."""
    base = tmp_path_factory.mktemp("ledger-cli")
    cwd, home = base / "work", base / "home"
    cwd.mkdir()
    home.mkdir()
    turns, server = asyncio.run(_scenario(cwd, home))
    return turns, server, cwd


@pytest.fixture(scope="module", params=BACKENDS)
def recorded(
    request: pytest.FixtureRequest,
    scenario: tuple[list[Turn], ScriptedModelServer, Path],
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Recorded]:
    """The scenario's turns recorded in a new SQLite file, then in a new PostgreSQL database."""
    turns, server, cwd = scenario
    if request.param == "postgresql":
        cluster = request.getfixturevalue("postgres_cluster")
        location = cluster.create_database("real_cli")
    else:
        location = str(tmp_path_factory.mktemp("ledger-file") / "ledger.sqlite")
    with RunLedger(location, spool_dir=tmp_path_factory.mktemp("spool")) as ledger:
        ids = [ledger.record(t, notebook=NOTEBOOK, execution_count=n) for n, t in enumerate(turns, start=1)]
    yield Recorded(turns, ids, location, cwd, server)
    if request.param == "postgresql":
        cluster.drop_database("real_cli")


@pytest.fixture(scope="module")
def frame(recorded: Recorded) -> pd.DataFrame:
    with RunLedger(recorded.path) as ledger:
        return ledger.runs()


def test_scenario_ran_as_scripted(recorded: Recorded) -> None:
    plain, _allowed, _denied, failed, interrupted, last = recorded.turns
    assert plain.text == "Hello there" and last.text == "Back again."
    assert (recorded.cwd / "yes.txt").read_text() == "yes\n"
    assert not (recorded.cwd / "no.txt").exists()
    assert failed.stats is not None and failed.stats.api_error_status == 400
    assert interrupted.interrupted
    assert recorded.ids == sorted(recorded.ids) and len(set(recorded.ids)) == 6
    assert [t.meta["ledger_id"] for t in recorded.turns] == recorded.ids


def test_row_numbers_equal_the_cli_result(recorded: Recorded, frame: pd.DataFrame) -> None:
    assert list(frame["id"]) == recorded.ids
    for turn, (_, row) in zip(recorded.turns, frame.iterrows(), strict=True):
        stats = turn.stats
        assert stats is not None
        assert row["cost_usd"] == stats.cost_usd
        assert row["total_cost_usd"] == stats.total_cost_usd
        assert row["input_tokens"] == stats.input_tokens
        assert row["output_tokens"] == stats.output_tokens
        assert row["cache_read_input_tokens"] == stats.cache_read_input_tokens
        assert row["cache_creation_input_tokens"] == stats.cache_creation_input_tokens
        assert row["duration_ms"] == stats.duration_ms
        assert row["duration_api_ms"] == stats.duration_api_ms
        assert row["num_turns"] == stats.num_turns
        assert row["result_subtype"] == stats.result_subtype
        assert row["is_error"] == ((stats.is_error or turn.error is not None) and not turn.stopped)
        assert row["last_message_uuid"] == turn.last_message_uuid
        assert row["session_id"] == turn.session_id
        assert row["started_at"] == pd.Timestamp(turn.started_at)
        assert row["ended_at"] == pd.Timestamp(turn.ended_at)
        assert row["approval_wait_ms"] == turn.approval_wait_ms
    first = frame.iloc[0]
    assert (first["input_tokens"], first["output_tokens"]) == (120, 30)
    assert (first["cache_read_input_tokens"], first["cache_creation_input_tokens"]) == (50, 7)


def test_per_turn_costs_sum_to_the_cli_cumulative_total(recorded: Recorded, frame: pd.DataFrame) -> None:
    final = recorded.turns[-1].stats
    assert final is not None and final.total_cost_usd > 0
    assert math.isclose(frame["cost_usd"].sum(), final.total_cost_usd, rel_tol=1e-9)
    assert frame["total_cost_usd"].iloc[-1] == final.total_cost_usd
    assert frame["total_cost_usd"].is_monotonic_increasing


def test_context_columns(recorded: Recorded, frame: pd.DataFrame) -> None:
    assert list(frame["execution_count"]) == [1, 2, 3, 4, 5, 6]
    assert set(frame["notebook"]) == {NOTEBOOK}
    assert set(frame["session_name"]) == {"ledger-test"}
    assert frame["session_id"].nunique() == 1
    assert set(frame["cwd"]) == {str(recorded.cwd.resolve())}
    assert set(frame["kandev_nb_version"]) == {__version__}
    assert set(frame["cli_version"]) == {recorded.turns[0].cli_version} and recorded.turns[0].cli_version
    assert list(frame["prompt"])[:2] == ["say hello", "write yes.txt"]
    assert list(frame["prompt_chars"])[:2] == [9, 13]
    model = recorded.turns[0].stats.model  # type: ignore[union-attr]
    assert frame["model"].iloc[0] == model and frame["models"].iloc[0] == model


def test_tool_turns(recorded: Recorded, frame: pd.DataFrame) -> None:
    assert frame["tool_calls"].iloc[1] == {"Write": 1}
    assert frame["tool_calls"].iloc[0] == {}
    assert list(frame["tool_call_count"]) == [0, 1, 1, 0, 0, 0]
    assert list(frame["permission_denials"]) == [0, 0, 1, 0, 0, 0]
    with RunLedger(recorded.path) as ledger:
        calls = ledger.tool_calls()
    assert list(calls["turn_id"]) == recorded.ids[1:3]
    allowed, denied = calls.iloc[0], calls.iloc[1]
    assert (allowed["tool_name"], allowed["kind"], allowed["status"]) == ("Write", "modify_file", "complete")
    assert (allowed["decision"], allowed["decided_by"]) == ("allow", "person")
    assert (denied["status"], denied["decision"], denied["decided_by"]) == ("error", "deny", "person")
    assert allowed["tool_use_id"] == next(iter(recorded.turns[1].tools))
    assert allowed["duration_ms"] == recorded.turns[1].tools[allowed["tool_use_id"]].duration_ms
    assert allowed["notebook"] == NOTEBOOK


def test_error_turn(recorded: Recorded, frame: pd.DataFrame) -> None:
    row = frame.iloc[3]
    assert row["is_error"]
    assert row["api_error_status"] == 400
    assert row["terminal_reason"] == recorded.turns[3].stats.terminal_reason  # type: ignore[union-attr]
    assert "400" in row["error"] and "prompt rejected" in row["error"]
    assert row["cost_usd"] == 0.0
    assert not frame["is_error"].iloc[[0, 1, 2, 5]].any()


def test_interrupted_turn(recorded: Recorded, frame: pd.DataFrame) -> None:
    assert list(frame["interrupted"]) == [False, False, False, False, True, False]
    row = frame.iloc[4]
    assert row["result_subtype"] == recorded.turns[4].stats.result_subtype  # type: ignore[union-attr]
    assert recorded.turns[4].stopped and not row["is_error"]  # a stop by the user is not an error
    assert list(frame["is_error"]) == [False, False, False, True, False, False]


def test_an_interrupted_turn_has_the_tokens_its_cost_paid_for(recorded: Recorded, frame: pd.DataFrame) -> None:
    # The CLI's interrupted result has usage all zeros but a modelUsage delta and a cost;
    # every turn's tokens are the sums of its modelUsage deltas, like its cost.
    with RunLedger(recorded.path) as ledger:
        usage = ledger.model_usage()
    row = frame.iloc[4]
    assert row["cost_usd"] > 0 and row["input_tokens"] > 0 and row["output_tokens"] > 0
    for ledger_id, (_, turn_row) in zip(recorded.ids, frame.iterrows(), strict=True):
        rows = usage[usage["turn_id"] == ledger_id]
        assert turn_row["input_tokens"] == rows["input_tokens"].sum()
        assert turn_row["output_tokens"] == rows["output_tokens"].sum()
        assert math.isclose(turn_row["cost_usd"], rows["cost_usd"].sum(), rel_tol=1e-9, abs_tol=1e-12)


def test_summary_totals_agree_with_the_per_model_table_and_keep_denials_apart(recorded: Recorded) -> None:
    with RunLedger(recorded.path) as ledger:
        summary = ledger.summary()
    everything, by_model = summary["all"], summary["by_model"]
    assert everything["input_tokens"] == by_model["input_tokens"].sum() > 0
    assert everything["output_tokens"] == by_model["output_tokens"].sum() > 0
    assert math.isclose(everything["cost_usd"], by_model["cost_usd"].sum(), rel_tol=1e-9)
    assert (everything["errors"], everything["denials"], everything["interrupted"]) == (1, 1, 1)
    assert summary["top_tools"].loc["Write"].tolist()[:3] == [2, 0, 1]  # calls, errors, denied
    assert everything["first"].tzinfo is not None


def test_stats_render_as_tables_with_dates(recorded: Recorded) -> None:
    from kandev_nb.ledger.stats import Stats

    with RunLedger(recorded.path) as ledger:
        stats = Stats(ledger.summary())
    page, text = stats._repr_html_(), repr(stats)
    assert page.count("<table") == 3 and "datetime" not in page and "datetime" not in text
    first = recorded.turns[0].started_at.astimezone().strftime("%Y-%m-%d %H:%M")
    assert first in page and first in text
    total_line = next(line for line in text.splitlines() if line.startswith("all time"))
    cells = total_line.split()
    assert cells[2:5] == ["6", f"${stats['all']['cost_usd']:.4f}", f"{stats['all']['input_tokens']:,}"]
    header = text.splitlines()[1]
    assert header.index("errors") < header.index("denials") < header.index("stopped")
    assert len({len(line) for line in text.split("\n\n")[0].splitlines()[1:]}) == 1  # aligned columns


def test_runs_lead_with_what_is_read_first(frame: pd.DataFrame) -> None:
    assert list(frame.columns[:9]) == [
        "prompt",
        "answer",
        "cost_usd",
        "input_tokens",
        "output_tokens",
        "duration_ms",
        "tool_call_count",
        "is_error",
        "interrupted",
    ]
    assert "id" in frame.columns and "session_id" in frame.columns


def test_model_usage_rows(recorded: Recorded) -> None:
    with RunLedger(recorded.path) as ledger:
        usage = ledger.model_usage()
    for turn, ledger_id in zip(recorded.turns, recorded.ids, strict=True):
        rows = usage[usage["turn_id"] == ledger_id]
        assert turn.stats is not None
        assert sorted(rows["model"]) == sorted(turn.stats.model_usage)
        for _, row in rows.iterrows():
            expected = turn.stats.model_usage[row["model"]]
            assert row["input_tokens"] == expected.input_tokens
            assert row["output_tokens"] == expected.output_tokens
            assert row["cost_usd"] == expected.cost_usd
            assert row["context_window"] == expected.context_window
    assert math.isclose(usage["cost_usd"].sum(), recorded.turns[-1].stats.total_cost_usd, rel_tol=1e-9)  # type: ignore[union-attr]


def test_a_new_process_reads_the_ledger(recorded: Recorded) -> None:
    code = (
        "import json, sys\n"
        "from kandev_nb.ledger import RunLedger\n"
        "frame = RunLedger(sys.argv[1]).runs()\n"
        "print(json.dumps({'ids': [int(i) for i in frame['id']], 'cost': [float(c) for c in frame['cost_usd']],\n"
        "                  'tz': str(frame['started_at'].dt.tz), 'tools': list(frame['tool_calls'])}))\n"
    )
    out = subprocess.run([sys.executable, "-c", code, str(recorded.path)], capture_output=True, text=True, check=True)
    seen = json.loads(out.stdout)
    assert seen["ids"] == recorded.ids
    assert seen["cost"] == [t.stats.cost_usd for t in recorded.turns]  # type: ignore[union-attr]
    assert seen["tz"] == "UTC"
    assert seen["tools"][1] == {"Write": 1}
