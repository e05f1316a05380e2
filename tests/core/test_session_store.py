"""Issue 34.10: transcripts mirrored to a store (the Agent SDK's ``SessionStore``), so a session
resumes on another machine or after its local transcript is gone.

Measured on CLI 2.1.332 with ``--session-mirror``: ``{"type": "transcript_mirror", "filePath":
".../projects/<key>/<sid>.jsonl", "entries": [...]}`` lines, before the turn's `result`; a
subagent's transcript comes under ``<sid>/subagents/agent-<id>.jsonl`` with its sidecar as
``agent_metadata`` entries. Another machine is another ``HOME`` here: an empty config folder.
"""

from __future__ import annotations

import errno
import json
import os
import pickle
import shutil
from pathlib import Path
from typing import Any

import pytest

from kandev_nb.agent import events as ev
from kandev_nb.agent.session import Session
from kandev_nb.agent.session_store import (
    FolderSessionStore,
    SessionKey,
    key_for_file,
    materialize,
    project_key_for_directory,
)
from kandev_nb.agent.transcript import find_transcript
from kandev_nb.errors import CLIProcessError
from kandev_nb.testing import Reply, ScriptedModelServer, scripted_env, text, tool_use

pytestmark = pytest.mark.timeout(300)


def _allow(event: ev.AgentEvent) -> None:
    if isinstance(event, ev.PermissionRequest):
        event.approval.allow()


def test_folder_store_keys_and_layout(tmp_path: Path) -> None:
    store = FolderSessionStore(tmp_path / "store")
    sid = "0d7c4c8e-5b8f-4a53-9a3b-6b1f7e0f2a11"
    main, sub = SessionKey("-p", sid), SessionKey("-p", sid, "subagents/agent-a1")
    assert store.load(main) is None and store.list_subkeys(main) == []
    store.append(main, [{"type": "user", "uuid": "u1"}])
    store.append(main, [{"type": "assistant", "uuid": "u2"}])
    store.append(sub, [{"type": "agent_metadata", "toolUseId": "t1"}])
    assert [e["uuid"] for e in store.load(main) or []] == ["u1", "u2"]
    assert store.list_subkeys(main) == ["subagents/agent-a1"] and store.find(sid) == ["-p"]
    assert (tmp_path / "store" / "-p" / sid / "subagents" / "agent-a1.jsonl").is_file()
    assert oct((tmp_path / "store" / "-p" / f"{sid}.jsonl").stat().st_mode & 0o777) == "0o600"
    with pytest.raises(ValueError):
        store.append(SessionKey("..", sid), [{}])
    assert key_for_file(f"/h/.claude/projects/-p/{sid}.jsonl") == main
    assert key_for_file(f"/h/.claude/projects/-p/{sid}/subagents/agent-a1.jsonl") == sub
    assert key_for_file("/h/.claude/settings.json") is None
    assert project_key_for_directory("/tmp") == "-tmp"


def test_a_retried_batch_adds_no_line_twice_to_a_folder_store(tmp_path: Path) -> None:
    """As the ledger's store: an entry whose uuid the transcript holds is skipped (the CLI
    retries a batch whose answer it did not get); entries without a uuid are always added."""
    store = FolderSessionStore(tmp_path / "store")
    key = SessionKey("-p", "0d7c4c8e-5b8f-4a53-9a3b-6b1f7e0f2a11")
    batch = [{"type": "user", "uuid": "u1"}, {"type": "assistant", "uuid": "u2"}, {"type": "summary"}]
    store.append(key, batch)
    store.append(key, batch)  # the retry
    other = pickle.loads(pickle.dumps(store))  # another process (a Dask worker) that appends too
    other.append(key, [{"type": "user", "uuid": "u2"}, {"type": "user", "uuid": "u3"}])
    store.append(key, [{"type": "user", "uuid": "u3"}, {"type": "user", "uuid": "u4"}])  # it sees u3 on disk
    entries = store.load(key) or []
    assert [e.get("uuid") for e in entries] == ["u1", "u2", None, None, "u3", "u4"]


def test_a_batch_whose_write_failed_is_written_by_its_retry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A refused append (a full disk) remembers nothing: the mirror's retry writes the batch."""
    store = FolderSessionStore(tmp_path / "store")
    key = SessionKey("-p", "0d7c4c8e-5b8f-4a53-9a3b-6b1f7e0f2a11")
    store.append(key, [{"type": "user", "uuid": "a"}])
    real_open = os.open

    def full(*args: Any, **kwargs: Any) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "open", full)
    with pytest.raises(OSError):
        store.append(key, [{"type": "user", "uuid": "b"}])
    monkeypatch.setattr(os, "open", real_open)
    store.append(key, [{"type": "user", "uuid": "b"}])
    with pytest.raises(TypeError):
        store.append(key, [{"type": "user", "uuid": "c", "bad": object()}])
    store.append(key, [{"type": "user", "uuid": "c"}])
    assert [e["uuid"] for e in store.load(key) or []] == ["a", "b", "c"]


def test_a_transcript_replaced_by_another_writer_is_read_again(tmp_path: Path) -> None:
    store = FolderSessionStore(tmp_path / "store")
    key = SessionKey("-p", "0d7c4c8e-5b8f-4a53-9a3b-6b1f7e0f2a11")
    store.append(key, [{"type": "user", "uuid": "u1"}])
    path = tmp_path / "store" / "-p" / f"{key.session_id}.jsonl"
    replacement = tmp_path / "other.jsonl"
    replacement.write_text(path.read_text().replace("u1", "x1"))  # the same size, another file
    os.replace(replacement, path)
    store.append(key, [{"type": "user", "uuid": "u1"}, {"type": "user", "uuid": "x1"}])
    assert [e["uuid"] for e in store.load(key) or []] == ["x1", "u1"]


async def test_a_session_resumes_on_another_machine_from_the_store(
    claude_cli: Path,
    claude_env: dict[str, str],
    claude_workdir: Path,
    scripted_model: ScriptedModelServer,
    tmp_path: Path,
) -> None:
    store = FolderSessionStore(tmp_path / "shared" / "transcripts")
    (claude_workdir / "notes.md").write_text("# Notes\nThe build uses make.\n")
    call = {"description": "Read the notes", "subagent_type": "general-purpose", "prompt": "Read notes.md"}
    scripted_model.push(
        Reply(tool_use("Agent", {**call, "run_in_background": False})),
        Reply(tool_use("Read", {"file_path": f"{claude_workdir}/notes.md"})),
        Reply(text("It builds with make.")),
        Reply(text("REMEMBERED: the code word is PAPAYA.")),
        Reply(text("You told me PAPAYA.")),
        Reply(text("Still PAPAYA.")),
    )
    here = Session(
        cwd=claude_workdir, cli_path=claude_cli, env=dict(claude_env), session_store=store, inactivity_timeout=120
    )
    try:
        first = await here.run("The code word is PAPAYA. Ask a subagent how the project builds.", consumers=[_allow])
        assert here.launch_options.session_mirror and "--session-mirror" in here.transport.argv  # type: ignore[union-attr]
    finally:
        await here.close()
    assert not first.failed and first.session_id
    sid = first.session_id
    key = SessionKey(project_key_for_directory(claude_workdir), sid)
    stored = store.load(key) or []
    assert first.prompt_uuid in {e.get("uuid") for e in stored}  # the turn is in the store once run() returned
    assert any(e.get("type") == "assistant" for e in stored)
    (subpath,) = store.list_subkeys(key)
    assert subpath.startswith("subagents/agent-")
    assert any(e.get("type") == "agent_metadata" for e in store.load(SessionKey(key.project_key, sid, subpath)) or [])
    local = find_transcript(claude_env, sid)
    assert local is not None
    local_uuids = [json.loads(line).get("uuid") for line in local.read_text().splitlines()]
    assert [e.get("uuid") for e in stored if e.get("uuid")] == [
        u for u in local_uuids if u and u in {e.get("uuid") for e in stored}
    ]

    # "Another machine": a new HOME whose config folder has never seen this session.
    elsewhere = scripted_env(scripted_model, tmp_path / "other-home")
    assert find_transcript(elsewhere, sid) is None
    without = Session(cwd=claude_workdir, cli_path=claude_cli, env=dict(elsewhere), resume=sid)
    with pytest.raises(CLIProcessError):  # what a fleet row on another Dask worker met: no conversation
        await without.start()
    await without.close()
    there = Session(
        cwd=claude_workdir,
        cli_path=claude_cli,
        env=dict(elsewhere),
        resume=sid,
        session_store=store,
        inactivity_timeout=120,
    )
    try:
        second = await there.run("What was the code word?")
        infos = there.subagents()
    finally:
        await there.close()
    assert not second.failed and second.text == "You told me PAPAYA." and second.session_id == sid
    sent = json.dumps(scripted_model.main_requests[-1].messages)
    assert "The code word is PAPAYA" in sent and "REMEMBERED: the code word is PAPAYA." in sent
    assert find_transcript(elsewhere, sid) is not None  # written back from the store
    assert [i.tool_use_id for i in infos] == [next(t for t, r in first.tools.items() if r.call.tool_name == "Agent")]

    # The local transcript gone too: the store's copy (with the second turn) resumes it.
    shutil.rmtree(tmp_path / "other-home" / ".claude" / "projects")
    assert second.prompt_uuid in {e.get("uuid") for e in store.load(key) or []}
    again = Session(cwd=claude_workdir, cli_path=claude_cli, env=dict(elsewhere), resume=sid, session_store=store)
    try:
        third = await again.run("And now?")
    finally:
        await again.close()
    assert not third.failed and third.text == "Still PAPAYA."
    sent = json.dumps(scripted_model.main_requests[-1].messages)
    assert "The code word is PAPAYA" in sent and "What was the code word?" in sent and "You told me PAPAYA." in sent


class _ListsAnEscape:
    """A store (a shared database anyone on the team can write) whose session lists a
    subagent transcript at ``../../../escaped``."""

    def __init__(self, sid: str) -> None:
        self.sid = sid

    def append(self, key: SessionKey, entries: object) -> None:
        raise AssertionError("not written to")

    def load(self, key: SessionKey) -> list[dict[str, object]] | None:
        return [{"type": "user", "uuid": "u1", "message": {"role": "user", "content": "hi"}}]

    def list_subkeys(self, key: SessionKey) -> list[str]:
        return ["../../../escaped"]


def test_a_store_s_subagent_path_never_leaves_the_session_folder(tmp_path: Path, caplog: Any) -> None:
    """materialize() leaves out a store's subpath with ``..`` (with a warning) and still
    resumes the main transcript (old code wrote ``<config>/escaped.jsonl``, outside
    ``projects/<key>/<session>/``)."""
    sid = "0d7c4c8e-5b8f-4a53-9a3b-6b1f7e0f2a11"
    env = {"CLAUDE_CONFIG_DIR": str(tmp_path / "config"), "HOME": str(tmp_path)}
    main = materialize(_ListsAnEscape(sid), sid, tmp_path / "project", env)
    assert main is not None and main.is_relative_to(tmp_path / "config" / "projects")
    assert [p for p in tmp_path.rglob("*") if p.is_file()] == [main]
    assert "not a transcript key: left out" in caplog.text


def test_a_folder_store_follows_no_symbolic_link_out_of_its_folder(tmp_path: Path) -> None:
    """A link planted in a shared store folder (a project key linked elsewhere, a transcript
    linked to another file) is refused, and nothing is written through it (old code wrote
    through both)."""
    sid = "0d7c4c8e-5b8f-4a53-9a3b-6b1f7e0f2a11"
    root, outside = tmp_path / "store", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (root / "-linked").symlink_to(outside, target_is_directory=True)
    store = FolderSessionStore(root)
    with pytest.raises(ValueError, match="leaves the store's folder"):
        store.append(SessionKey("-linked", sid), [{"uuid": "u1"}])
    victim = tmp_path / "precious.txt"
    victim.write_text("precious\n")
    (root / "-p").mkdir()
    (root / "-p" / f"{sid}.jsonl").symlink_to(victim)
    with pytest.raises(ValueError, match="leaves the store's folder"):
        store.append(SessionKey("-p", sid), [{"uuid": "u2"}])
    assert list(outside.iterdir()) == [] and victim.read_text() == "precious\n"


def test_a_session_resumed_from_another_folder_s_key_keeps_its_whole_history(tmp_path: Path) -> None:
    """A session the store holds under another folder's key is copied under this folder's key
    too, so the next resume from this folder finds the whole conversation (old code: only what
    the CLI wrote after the first resume)."""
    sid = "0d7c4c8e-5b8f-4a53-9a3b-6b1f7e0f2a11"
    store = FolderSessionStore(tmp_path / "store")
    first = [{"type": "user", "uuid": "t1-user"}, {"type": "assistant", "uuid": "t1-asst"}]
    store.append(SessionKey(project_key_for_directory(tmp_path / "a"), sid), first)
    env = {"CLAUDE_CONFIG_DIR": str(tmp_path / "config-b"), "HOME": str(tmp_path)}
    assert materialize(store, sid, tmp_path / "b", env) is not None
    here = SessionKey(project_key_for_directory(tmp_path / "b"), sid)
    store.append(here, [{"type": "user", "uuid": "t2-user"}])  # what the CLI mirrors next
    assert [e["uuid"] for e in store.load(here) or []] == ["t1-user", "t1-asst", "t2-user"]
