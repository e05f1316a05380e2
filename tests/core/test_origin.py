"""Issue 34.10: an origin stamp on a turn's user message that comes back on its result, kept in
the ledger.

Measured on CLI 2.1.332 (the scripted model): a prompt sent with ``"uuid": U`` and ``"origin":
{"kind": "human"}`` is the transcript's user entry ``U`` (with that origin), and the turn's
`result` carries ``user_message_uuid: U``, ``user_message_uuids: [U]`` and ``origin: {"kind":
"human"}``. Extra keys in `origin` and other kinds are dropped by the CLI, so which cell or row
sent the prompt is kept by kandev-nb, tied to the prompt by that uuid.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest

from kandev_nb.agent.origin import Origin
from kandev_nb.agent.session import Session
from kandev_nb.agent.transcript import find_transcript
from kandev_nb.ledger import RunLedger
from kandev_nb.testing import Reply, ScriptedModelServer, text

pytestmark = pytest.mark.timeout(300)


def _transcript_prompts(env: dict[str, str], session_id: str) -> dict[str, dict[str, object]]:
    path = find_transcript(env, session_id)
    assert path is not None
    entries = [json.loads(line) for line in path.read_text().splitlines()]
    return {
        e["uuid"]: e
        for e in entries
        if e.get("type") == "user" and isinstance(e.get("message", {}).get("content"), str) and e.get("uuid")
    }


async def test_the_prompt_uuid_comes_back_on_the_result_and_the_ledger_keeps_the_origin(
    claude_cli: Path,
    claude_env: dict[str, str],
    claude_workdir: Path,
    scripted_model: ScriptedModelServer,
    tmp_path: Path,
) -> None:
    scripted_model.push(Reply(text("First answer.")), Reply(text("Second answer.")))
    session = Session(cwd=claude_workdir, cli_path=claude_cli, env=dict(claude_env), inactivity_timeout=120)
    cell = Origin.cell(notebook="/home/ana/analysis.ipynb", cell_id="c0ffee-12", execution_count=7)
    try:
        first = await session.run("first prompt", origin=cell)
        second = await session.run("second prompt")  # from Python: kind "python"
    finally:
        await session.close()
    assert not first.failed and not second.failed
    for turn in (first, second):
        assert turn.prompt_uuid is not None and uuid.UUID(turn.prompt_uuid)
        assert turn.stats is not None
        assert turn.stats.user_message_uuids == (turn.prompt_uuid,)  # the result named our prompt
        assert turn.stats.result_origin == {"kind": "human"}
        assert turn.origin_echoed
    assert first.prompt_uuid != second.prompt_uuid
    assert first.origin == cell and second.origin == Origin()

    # The CLI kept the uuid as the prompt's entry in its transcript (what resume points name).
    assert first.session_id is not None
    prompts = _transcript_prompts(claude_env, first.session_id)
    assert prompts[first.prompt_uuid]["message"] == {"role": "user", "content": "first prompt"}  # type: ignore[index]
    assert prompts[first.prompt_uuid]["origin"] == {"kind": "human"}
    assert prompts[second.prompt_uuid]["message"]["content"] == "second prompt"  # type: ignore[index]

    with RunLedger(tmp_path / "ledger.sqlite") as ledger:
        ledger.record(first, notebook=cell.notebook, execution_count=7)
        ledger.record(second)
        runs = ledger.runs()
    assert list(runs["prompt_uuid"]) == [first.prompt_uuid, second.prompt_uuid]
    assert list(runs["origin_kind"]) == ["cell", "python"]
    assert runs["origin"].iloc[0] == {
        "kind": "cell",
        "notebook": "/home/ana/analysis.ipynb",
        "cell_id": "c0ffee-12",
        "execution_count": 7,
        "echoed": True,
        "result_origin": {"kind": "human"},
    }
    assert runs["origin"].iloc[1] == {"kind": "python", "echoed": True, "result_origin": {"kind": "human"}}


@pytest.mark.parametrize("claude_cli", ["2.1.197"], indirect=True)
async def test_an_older_cli_takes_the_stamp_and_names_no_prompt(
    claude_cli: Path, claude_env: dict[str, str], claude_workdir: Path, scripted_model: ScriptedModelServer
) -> None:
    scripted_model.push(Reply(text("Hello.")))
    session = Session(cwd=claude_workdir, cli_path=claude_cli, env=dict(claude_env), inactivity_timeout=120)
    try:
        turn = await session.run("hi", origin=Origin.fleet_row("reviews", row=("a", 1), position=0))
    finally:
        await session.close()
    assert not turn.failed and turn.text == "Hello."
    assert turn.prompt_uuid is not None and not turn.origin_echoed  # 2.1.197 sends no user_message_uuid
    assert turn.origin is not None and turn.origin.as_dict() == {
        "kind": "fleet_row",
        "fleet": "reviews",
        "row": ["a", 1],
        "position": 0,
    }
