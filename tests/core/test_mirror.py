"""The transcript mirror batcher (no CLI): order, background flushes, retries, dropped batches;
and a fleet row's resume on a worker whose disk lacks the transcript (cluster_worker._resume_id)."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from kandev_nb.agent import mirror
from kandev_nb.agent.mirror import TranscriptMirrorBatcher
from kandev_nb.agent.session_store import FolderSessionStore, SessionKey, project_key_for_directory
from kandev_nb.fleet import cluster_worker

SID = "0d7c4c8e-5b8f-4a53-9a3b-6b1f7e0f2a11"
FILE = f"/home/ana/.claude/projects/-work/{SID}.jsonl"


class Flaky:
    """A store that refuses its first `fails` appends."""

    def __init__(self, fails: int) -> None:
        self.fails = fails
        self.got: list[tuple[SessionKey, list[Any]]] = []

    def append(self, key: SessionKey, entries: Sequence[Mapping[str, Any]]) -> None:
        if self.fails:
            self.fails -= 1
            raise OSError("disk full")
        self.got.append((key, list(entries)))

    def load(self, key: SessionKey) -> list[dict[str, Any]] | None:
        return None

    def list_subkeys(self, key: SessionKey) -> list[str]:
        return []


@pytest.fixture(autouse=True)
def quick_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(mirror, "MIRROR_BACKOFF_S", (0.01, 0.01))


async def test_entries_reach_the_store_in_order_in_the_background() -> None:
    store = Flaky(0)
    batcher = TranscriptMirrorBatcher(store)
    batcher.enqueue(FILE, [{"uuid": "1"}])
    batcher.enqueue(FILE, [{"uuid": "2"}, {"uuid": "3"}])
    batcher.enqueue(FILE.replace(".jsonl", "/subagents/agent-a1.jsonl"), [{"type": "agent_metadata"}])
    for _ in range(100):  # nobody awaits: the background flush writes them
        if sum(len(e) for _, e in store.got) == 4:
            break
        await asyncio.sleep(0.01)
    await batcher.flush()
    main = [e["uuid"] for k, entries in store.got if k.subpath is None for e in entries]
    assert main == ["1", "2", "3"]
    assert {k for k, _ in store.got} == {SessionKey("-work", SID), SessionKey("-work", SID, "subagents/agent-a1")}


async def test_a_refused_batch_is_tried_again_then_dropped_with_a_message() -> None:
    store, told = Flaky(2), []
    batcher = TranscriptMirrorBatcher(store, on_error=told.append)
    batcher.enqueue(FILE, [{"uuid": "1"}])
    await batcher.flush()
    assert store.got == [(SessionKey("-work", SID), [{"uuid": "1"}])] and told == []
    store.fails = 3
    batcher.enqueue(FILE, [{"uuid": "2"}])
    await batcher.flush()
    assert len(told) == 1 and "1 transcript entries" in told[0] and "disk full" in told[0]
    batcher.enqueue("/somewhere/else.txt", [{"uuid": "3"}])
    assert "no transcript" in told[-1] and batcher.errors == told


def test_a_fleet_row_resumes_on_a_worker_without_its_transcript(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = FolderSessionStore(tmp_path / "shared")
    cwd = tmp_path / "project"
    cwd.mkdir()
    store.append(SessionKey("-elsewhere", SID), [{"type": "user", "uuid": "u1", "message": {"content": "hi"}}])
    monkeypatch.setenv("HOME", str(tmp_path / "worker-b"))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    assert cluster_worker._resume_id({"session_id": SID}, "b") is None  # no store: the row starts over
    assert cluster_worker._resume_id({"session_id": SID}, "b", store, str(cwd)) == SID
    written = tmp_path / "worker-b" / ".claude" / "projects" / project_key_for_directory(cwd) / f"{SID}.jsonl"
    assert written.read_text().count('"u1"') == 1
