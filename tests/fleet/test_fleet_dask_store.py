"""Issue 34.10: a fleet row whose Dask worker died resumes on a worker of another machine (another
HOME: its disk never saw the row's transcript) from the fleet's session store.

Two workers of a ``distributed.SpecCluster``, each with its own HOME (the machines), the real
CLI (2.1.332) against the scripted model. The row's first attempt waits for an approval; once
the store holds its transcript, its worker is killed (its nanny told not to restart it), and
Dask runs the row again on the other worker, which restores the transcript from the store and
resumes the conversation.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from kandev_nb.agent.session import SessionConfig
from kandev_nb.agent.session_store import FolderSessionStore, project_key_for_directory
from kandev_nb.fleet import build_fleet
from kandev_nb.fleet.cluster import WORKER_LOST
from kandev_nb.testing import RecordedRequest, Reply, ScriptedModelServer, text, tool_use
from kandev_nb.testing.clis import pinned_cli, scripted_env

distributed = pytest.importorskip("distributed")

pytestmark = [pytest.mark.timeout(300), pytest.mark.cluster]


class Machines:
    def __init__(self, server: ScriptedModelServer, root: Path, client: Any) -> None:
        self.server, self.root, self.client = server, root, client

    def name_of(self, address: str) -> str:
        return str(self.client.scheduler_info()["workers"][address]["name"])


@pytest.fixture
def machines(tmp_path: Path) -> Iterator[Machines]:
    from kandev_nb.testing.model_server import ScriptedModelServer

    with ScriptedModelServer() as server:
        workers = {
            name: {
                "cls": distributed.Nanny,
                "options": {
                    "nthreads": 2,
                    "env": {**scripted_env(server, tmp_path / f"home-{name}"), "KANDEV_CLAUDE_CLI": str(pinned_cli())},
                },
            }
            for name in ("a", "b")
        }
        scheduler = {"cls": distributed.Scheduler, "options": {"dashboard_address": None}}
        with (
            distributed.SpecCluster(workers=workers, scheduler=scheduler) as cluster,
            distributed.Client(cluster) as client,
        ):
            client.wait_for_workers(2)
            yield Machines(server, tmp_path, client)


def touch_then_answer(request: RecordedRequest) -> Reply:
    if request.last_user_text():
        return Reply(tool_use("Bash", {"command": "touch out-201.txt", "description": "make a file"}))
    return Reply(text("made out-201.txt"))


async def until(condition: Any, what: str, seconds: float = 120) -> None:
    for _ in range(int(seconds / 0.05)):
        if condition():
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"never happened: {what}")


def _dismiss(dask_worker: Any) -> None:
    dask_worker.close_gracefully(reason="test: this machine goes away")  # the nanny: no restart


async def test_a_row_resumes_on_another_machine_from_the_store(machines: Machines) -> None:
    workdir = machines.root / "project"
    workdir.mkdir()
    store = FolderSessionStore(machines.root / "shared-store")
    machines.server.push(*[touch_then_answer for _ in range(10)])
    config = SessionConfig(cwd=workdir, approval_timeout=90, inactivity_timeout=120, session_store=store)
    fleet = build_fleet(
        pd.DataFrame({"id": [201]}, index=["only"]),
        "Handle ticket {id}.",
        config=config,
        ledger=None,
        cluster=machines.client,
    )
    run = asyncio.create_task(fleet.run())
    await until(lambda: fleet.queue.head is not None, "the row's approval")
    card = fleet.queue.head
    assert card is not None
    first_address, _ = fleet.where["only"]
    first = machines.name_of(first_address)
    other = "b" if first == "a" else "a"
    stored = store.root / project_key_for_directory(workdir)
    await until(
        lambda: any('"tool_use"' in p.read_text() for p in stored.glob("*.jsonl")) if stored.is_dir() else False,
        "the first attempt's transcript in the store",
    )
    (transcript,) = stored.glob("*.jsonl")
    sid = transcript.stem
    assert not list((machines.root / f"home-{other}").glob(f".claude/projects/*/{sid}.jsonl"))
    machines.client.run(_dismiss, workers=[first_address], nanny=True)
    pid = machines.client.run(os.getpid, workers=[first_address])[first_address]
    os.kill(pid, signal.SIGKILL)
    await until(lambda: card.approval.decision is not None, "the card closed")
    assert card.approval.decision is not None and card.approval.decision.message == WORKER_LOST
    await until(lambda: fleet.queue.head not in (None, card), "the retried row's approval", 180)
    retried = fleet.queue.head
    assert retried is not None and retried.approval.allow()
    result = await asyncio.wait_for(run, 180)
    assert list(result["status"]) == ["done"], result["error"].tolist()
    assert machines.name_of(fleet.where["only"][0]) == other
    assert fleet.outcomes["only"].resumed == sid  # the conversation went on, on the other machine
    assert list((machines.root / f"home-{other}").glob(f".claude/projects/*/{sid}.jsonl"))
    resumed = [r for r in machines.server.main_requests if "previous attempt was cut off" in json.dumps(r.messages)]
    assert resumed and json.dumps(resumed[0].messages).count("Handle ticket 201.") == 2
