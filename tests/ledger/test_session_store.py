"""Issue 34.10: transcripts mirrored to the team ledger's database (``LedgerSessionStore``), on
SQLite and a real PostgreSQL, and a session resumed from it on "another machine" (another HOME)
with the real CLI (2.1.332) and the scripted model."""

from __future__ import annotations

import json
import pickle
from pathlib import Path

import pytest

from kandev_nb.agent.session import Session
from kandev_nb.agent.session_store import SessionKey, SessionStore, project_key_for_directory
from kandev_nb.agent.transcript import find_transcript
from kandev_nb.ledger.session_store import LedgerSessionStore
from kandev_nb.testing import Reply, ScriptedModelServer, scripted_env, text
from tests.ledger.conftest import cli_env

pytestmark = pytest.mark.timeout(300)

SID = "0d7c4c8e-5b8f-4a53-9a3b-6b1f7e0f2a11"


def test_entries_come_back_in_order_once_per_uuid(ledger_url: str) -> None:
    store = LedgerSessionStore(ledger_url)
    assert isinstance(store, SessionStore)
    main, sub = SessionKey("-p", SID), SessionKey("-p", SID, "subagents/agent-a1")
    assert store.load(main) is None and store.list_subkeys(main) == [] and store.find(SID) == []
    store.append(main, [{"type": "user", "uuid": "u1", "message": {"content": "é ✓"}}, {"type": "queue-operation"}])
    store.append(main, [{"type": "user", "uuid": "u1"}, {"type": "assistant", "uuid": "u2"}])  # a retried batch
    store.append(sub, [{"type": "agent_metadata", "toolUseId": "t1"}])
    loaded = store.load(main) or []
    assert [(e["type"], e.get("uuid")) for e in loaded] == [
        ("user", "u1"),
        ("queue-operation", None),
        ("assistant", "u2"),
    ]
    assert loaded[0]["message"] == {"content": "é ✓"}
    assert store.list_subkeys(main) == ["subagents/agent-a1"] and store.find(SID) == ["-p"]
    assert store.load(sub) == [{"type": "agent_metadata", "toolUseId": "t1"}]


def test_a_store_with_a_password_is_never_pickled(postgres_url: str) -> None:
    with pytest.raises(TypeError, match="KANDEV_NB_LEDGER"):
        pickle.dumps(LedgerSessionStore(postgres_url))
    copy = pickle.loads(pickle.dumps(LedgerSessionStore()))  # the workers' own KANDEV_NB_LEDGER
    assert repr(copy) == "LedgerSessionStore('KANDEV_NB_LEDGER')"


@pytest.mark.parametrize("ledger_url", ["postgresql"], indirect=True)
async def test_a_session_resumes_on_another_machine_from_the_team_ledger(
    ledger_url: str, tmp_path: Path, claude_workdir: Path
) -> None:
    store = LedgerSessionStore(ledger_url)
    with ScriptedModelServer() as server:
        server.push(Reply(text("Noted: KIWI.")), Reply(text("It was KIWI.")))
        here = cli_env(server, tmp_path / "home-a")
        first = Session(cwd=claude_workdir, env=here, session_store=store, inactivity_timeout=120)
        try:
            turn = await first.run("Remember the word KIWI.")
        finally:
            await first.close()
        assert not turn.failed and turn.session_id
        sid = turn.session_id
        stored = store.load(SessionKey(project_key_for_directory(claude_workdir), sid)) or []
        assert turn.prompt_uuid in {e.get("uuid") for e in stored}
        there = scripted_env(server, tmp_path / "home-b")
        assert find_transcript(there, sid) is None
        second = Session(cwd=claude_workdir, env=dict(there), resume=sid, session_store=LedgerSessionStore(ledger_url))
        try:
            again = await second.run("Which word?")
        finally:
            await second.close()
        assert not again.failed and again.text == "It was KIWI."
        assert "Remember the word KIWI." in json.dumps(server.main_requests[-1].messages)
