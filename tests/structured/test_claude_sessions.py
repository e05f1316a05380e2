"""`claude_sessions()`: the CLI's transcripts of a project as a DataFrame, joined with the ledger
(three real sessions of CLI 2.1.332 against the scripted model)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kandev_nb.agent.session import Session
from kandev_nb.ledger import RunLedger
from kandev_nb.ledger.transcripts import COLUMNS, claude_sessions, config_dir, project_dir
from kandev_nb.testing import Reply, ScriptedModelServer, text

pytestmark = pytest.mark.timeout(240)


async def test_three_sessions_are_listed_with_turns_and_ledger_costs(
    claude_env: dict[str, str], claude_workdir: Path, scripted_model: ScriptedModelServer, tmp_path: Path
) -> None:
    ledger = RunLedger(tmp_path / "ledger.sqlite")
    scripted_model.push(*[Reply(text(f"answer {i}")) for i in range(5)])
    ids: list[str] = []
    for prompts in (["first question"], ["second one", "a follow-up"], ["third\nwith two lines"]):
        session = Session(cwd=claude_workdir, env=claude_env)
        try:
            for prompt in prompts:
                ledger.record(await session.run(prompt))
        finally:
            await session.close()
        assert session.session_id
        ids.append(session.session_id)
    config = config_dir(claude_env)
    folder = project_dir(claude_workdir, config)
    (folder / "broken.jsonl").write_bytes(b"\xff\xfe not json")  # unreadable: skipped and counted
    (folder / "empty.jsonl").write_text('{"type": "summary", "summary": "nothing"}\n')  # no prompt

    frame = claude_sessions(claude_workdir, config=config, ledger=ledger)

    assert list(frame.columns) == list(COLUMNS)
    assert sorted(frame["session_id"]) == sorted(ids)
    assert frame.attrs["skipped"] == 2
    by_id = frame.set_index("session_id")
    assert by_id.loc[ids[1], "turns"] == 2 and by_id.loc[ids[0], "turns"] == 1
    assert by_id.loc[ids[0], "first_prompt"] == "first question"
    assert by_id.loc[ids[2], "title"] == "third"  # the first line of the first prompt
    assert by_id.loc[ids[1], "ledger_turns"] == 2
    runs = ledger.runs()
    assert by_id.loc[ids[1], "cost_usd"] == pytest.approx(runs[runs.session_id == ids[1]].cost_usd.sum())
    assert by_id.loc[ids[1], "output_tokens"] == runs[runs.session_id == ids[1]].output_tokens.sum() > 0
    assert frame["last_active"].is_monotonic_decreasing
    assert (frame["started"] <= frame["last_active"]).all()
    # What --resume picks from: the newest conversation resumes with its history.
    scripted_model.push(Reply(text("resumed")))
    resumed = Session(cwd=claude_workdir, env=claude_env, resume=str(frame.iloc[0]["session_id"]))
    try:
        await resumed.run("go on")
    finally:
        await resumed.close()
    assert "third" in repr(scripted_model.main_requests[-1].body["messages"])


def test_a_project_without_transcripts_gives_an_empty_frame(tmp_path: Path) -> None:
    frame = claude_sessions(tmp_path, config=tmp_path / "config", ledger=None)
    assert frame.empty and list(frame.columns) == list(COLUMNS) and frame.attrs["skipped"] == 0
