"""Record the adapter's transcripts with the real CLI and the scripted model.

    python -m tests.transcripts.record                  # every scenario, both CLI versions
    python -m tests.transcripts.record -v 2.1.197 files # some of them
    python -m tests.transcripts.record --events-only    # only rewrite the *.events.json

Each scenario drives a real :class:`~kandev_nb.agent.session.Session` through
:func:`~kandev_nb.wire.recorder.recording_factory` and writes
``tests/transcripts/<version>/<scenario>.jsonl`` (temporary paths rewritten to
``/home/user/project`` and ``/home/user``), then the adapter's events for its "out" lines
to ``<scenario>.events.json``, which the transcript tests compare against. Review the
diff of both after re-recording: a changed event list is a changed behaviour.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import sys
import tempfile
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kandev_nb.agent import events as ev
from kandev_nb.agent.session import Session
from kandev_nb.testing import (
    Reply,
    ScriptedModelServer,
    http_error,
    pinned_cli,
    scripted_env,
    text,
    thinking,
    tool_use,
)
from kandev_nb.wire.recorder import load_transcript, recording_factory
from tests.transcripts.replay import adapter_events, events_json

HERE = Path(__file__).parent
VERSIONS = ("2.1.197", "2.1.332")
PROJECT = "/home/user/project"
HOME = "/home/user"
NO_RETRY = {"x-should-retry": "false"}


@dataclass
class Ctx:
    """What a scenario gets: the server, the directories, and a session maker."""

    version: str
    server: ScriptedModelServer
    cwd: Path
    home: Path
    out: Path

    def session(self, *, append: bool = False, env: dict[str, str] | None = None, **config: Any) -> Session:
        """A Session on the pinned CLI, recorded to `out` (appended to with `append`)."""
        rewrite = {str(self.cwd): PROJECT, str(self.home): HOME, self.server.url: "http://127.0.0.1:8000"}
        return Session(
            cwd=self.cwd,
            env=scripted_env(self.server, self.home) | (env or {}),
            cli_path=pinned_cli(self.version),
            transport_factory=recording_factory(self.out, rewrite=rewrite, append=append),
            inactivity_timeout=60,
            **config,
        )

    @property
    def new(self) -> bool:
        """The CLI is 2.1.332 or later (TodoWrite/Agent instead of the task tools/Task)."""
        return tuple(int(p) for p in self.version.split(".")) >= (2, 1, 300)


def allow_all(event: ev.AgentEvent) -> None:
    """A consumer that clicks Allow on every approval (as a person would)."""
    if isinstance(event, ev.PermissionRequest):
        event.approval.allow()


Scenario = Callable[[Ctx], Awaitable[None]]
SCENARIOS: dict[str, Scenario] = {}


def scenario(fn: Scenario) -> Scenario:
    SCENARIOS[fn.__name__.removeprefix("s_")] = fn
    return fn


@scenario
async def s_text(c: Ctx) -> None:
    c.server.push(Reply(text("Hello! Here is a **markdown** answer with a list:\n\n- one\n- two\n\nDone.")))
    s = c.session()
    await s.run("say hello")
    await s.close()


@scenario
async def s_text_no_partial(c: Ctx) -> None:
    c.server.push(Reply(thinking("The user wants a greeting."), text("Hello without partial messages.")))
    s = c.session(include_partial_messages=False)
    await s.run("say hello")
    await s.close()


@scenario
async def s_thinking(c: Ctx) -> None:
    c.server.push(Reply(thinking("Let me think about this step by step. First, ..."), text("The answer is 42.")))
    s = c.session()
    await s.run("what is the answer")
    await s.close()


@scenario
async def s_files(c: Ctx) -> None:
    src = c.cwd / "src"
    src.mkdir()
    (src / "app.py").write_text("def add(a, b):\n    return a - b\n")
    (c.cwd / "nb.ipynb").write_text(
        json.dumps(
            {
                "cells": [
                    {
                        "cell_type": "code",
                        "id": "c1",
                        "metadata": {},
                        "source": ["print(1)"],
                        "outputs": [],
                        "execution_count": None,
                    }
                ],
                "metadata": {},
                "nbformat": 4,
                "nbformat_minor": 5,
            }
        )
    )
    app = f"{c.cwd}/src/app.py"
    c.server.push(
        Reply(tool_use("Read", {"file_path": app})),
        Reply(tool_use("Edit", {"file_path": app, "old_string": "return a - b", "new_string": "return a + b"})),
        Reply(
            tool_use(
                "Write",
                {
                    "file_path": f"{c.cwd}/src/test_app.py",
                    "content": "from app import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n",
                },
            )
        ),
        Reply(tool_use("Read", {"file_path": f"{c.cwd}/nb.ipynb"})),
        Reply(
            tool_use(
                "NotebookEdit",
                {
                    "notebook_path": f"{c.cwd}/nb.ipynb",
                    "cell_id": "c1",
                    "new_source": "print(2)",
                    "edit_mode": "replace",
                },
            )
        ),
        Reply(text("Fixed `add`, added a test and updated the notebook.")),
    )
    s = c.session()
    await s.run("fix the add function", consumers=[allow_all])
    await s.close()


@scenario
async def s_shell(c: Ctx) -> None:
    c.server.push(
        Reply(tool_use("Bash", {"command": "echo out; echo err >&2", "description": "Print to both streams"})),
        Reply(tool_use("Bash", {"command": "echo failing; exit 3", "description": "Fail", "timeout": 30000})),
        Reply(
            tool_use(
                "Bash",
                {
                    "command": "sleep 0.2; echo background done",
                    "run_in_background": True,
                    "description": "Background job",
                },
            )
        ),
        Reply(text("Ran three commands.")),
    )
    s = c.session()
    await s.run("run some commands", consumers=[allow_all])
    await s.close()


@scenario
async def s_search(c: Ctx) -> None:
    (c.cwd / "a.py").write_text("import os\nTODO = 1\n")
    (c.cwd / "b.txt").write_text("nothing\n")
    c.server.push(
        Reply(tool_use("Glob", {"pattern": "**/*.py"})),
        Reply(tool_use("Grep", {"pattern": "TODO", "path": str(c.cwd), "output_mode": "files_with_matches"})),
        Reply(text("Searched.")),
    )
    s = c.session(allowed_tools=("Glob", "Grep"))  # naming them opts in to the search tools
    await s.run("find the TODOs", consumers=[allow_all])
    await s.close()


@scenario
async def s_web(c: Ctx) -> None:
    # The WebFetch preflight asks a remote service whether the domain is safe; skip it.
    (c.home / ".claude").mkdir(exist_ok=True)
    (c.home / ".claude" / "settings.json").write_text(json.dumps({"skipWebFetchPreflight": True}))
    c.server.push(
        Reply(tool_use("WebFetch", {"url": f"{c.server.url}/page", "prompt": "Summarise the page"})),
        Reply(tool_use("SomeUnknownTool", {"x": 1})),
        Reply(text("Fetched the page.")),
    )
    s = c.session()
    await s.run("fetch the page", consumers=[allow_all])
    await s.close()


@scenario
async def s_deny(c: Ctx) -> None:
    c.server.push(
        Reply(tool_use("Write", {"file_path": f"{c.cwd}/secret.txt", "content": "x\n"})),
        Reply(text("Understood, I will not write it.")),
    )

    def deny(event: ev.AgentEvent) -> None:
        if isinstance(event, ev.PermissionRequest):
            event.approval.deny("Not this file.")

    s = c.session()
    await s.run("write the secret", consumers=[deny])
    await s.close()


@scenario
async def s_interrupt(c: Ctx) -> None:
    c.server.push(
        Reply(text("This is a very slow answer that will be interrupted. " * 4, chunk_size=8, delay=0.15)),
        Reply(text("After interrupt.")),
    )
    s = c.session()
    interrupted = asyncio.Event()

    def on_chunk(event: ev.AgentEvent) -> None:
        if isinstance(event, ev.MessageChunk) and not interrupted.is_set():
            interrupted.set()
            asyncio.get_running_loop().create_task(s.interrupt())

    await s.run("tell me a long story", consumers=[on_chunk])
    await s.run("are you there")
    await s.close()


@scenario
async def s_max_turns(c: Ctx) -> None:
    c.server.push(
        Reply(tool_use("Bash", {"command": "echo one", "description": "Step one"})),
        Reply(text("Never reached.")),
    )
    s = c.session(max_turns=1)
    await s.run("do two steps", consumers=[allow_all])
    await s.close()


def bad_request(c: Ctx) -> list[Any]:
    """HTTP 400 answers that fail one turn. With x-should-retry false, 2.1.197 fails at once;
    2.1.332 silently sends the request five more times (no `api_retry`, ~1.5 s) first."""
    error = http_error(400, "Invalid request: scripted failure", headers=NO_RETRY)
    return [error] * 6 if c.new else [error]


@scenario
async def s_api_error(c: Ctx) -> None:
    c.server.push(*bad_request(c), Reply(text("Working again.")))
    s = c.session()
    await s.run("this fails")
    await s.run("and this works")
    await s.close()


@scenario
async def s_api_retry(c: Ctx) -> None:
    c.server.push(
        http_error(529, "Overloaded", headers={"retry-after": "0"}),
        http_error(500, "Internal server error", headers={"retry-after": "0"}),
        Reply(text("Recovered after retries.")),
    )
    s = c.session()
    await s.run("retry please")
    await s.close()


@scenario
async def s_auth_error(c: Ctx) -> None:
    # Without x-should-retry the CLI retries a 401 (ten times by default, over minutes);
    # CLAUDE_CODE_MAX_RETRIES=1 keeps one `system/api_retry` and fails within seconds.
    c.server.push(http_error(401, "invalid x-api-key"), http_error(401, "invalid x-api-key"))
    s = c.session(env={"CLAUDE_CODE_MAX_RETRIES": "1"})
    await s.run("hello")
    await s.close()


@scenario
async def s_multi_turn(c: Ctx) -> None:
    c.server.push(Reply(text("First answer.")), Reply(text("Second answer.")), Reply(text("Third answer.")))
    s = c.session()
    for prompt in ("one", "two", "three"):
        await s.run(prompt)
    await s.close()


@scenario
async def s_subagent(c: Ctx) -> None:
    (c.cwd / "notes.md").write_text("# Notes\nThe build uses make.\n")
    task = "Agent" if c.new else "Task"
    call = {
        "description": "Read the notes",
        "subagent_type": "general-purpose",
        "prompt": "Read notes.md and report how the project builds.",
    }
    if c.new:
        call["run_in_background"] = False  # 2.1.332 runs agents in the background by default
    c.server.push(
        Reply(text("I will delegate."), tool_use(task, call)),
        Reply(thinking("Reading notes."), tool_use("Read", {"file_path": f"{c.cwd}/notes.md"})),
        Reply(text("The project builds with make.")),
        Reply(text("The subagent says: the project builds with make.")),
    )
    s = c.session()
    await s.run("how does the project build? ask a subagent", consumers=[allow_all])
    await s.close()


@scenario
async def s_plan(c: Ctx) -> None:
    c.server.push(
        Reply(text("Here is my plan."), tool_use("ExitPlanMode", {"plan": "1. Create hello.txt\n2. Say done"})),
        Reply(tool_use("Write", {"file_path": f"{c.cwd}/hello.txt", "content": "hello\n"})),
        Reply(text("Done.")),
    )
    s = c.session(mode="plan")
    await s.run("plan and create hello.txt", consumers=[allow_all])
    await s.close()


@scenario
async def s_todos(c: Ctx) -> None:
    if c.new:
        c.server.push(
            Reply(
                tool_use(
                    "TodoWrite",
                    {
                        "todos": [
                            {"content": "Write code", "status": "in_progress", "activeForm": "Writing code"},
                            {"content": "Test code", "status": "pending", "activeForm": "Testing code"},
                        ]
                    },
                )
            ),
            Reply(
                tool_use(
                    "TodoWrite",
                    {
                        "todos": [
                            {"content": "Write code", "status": "completed", "activeForm": "Writing code"},
                            {"content": "Test code", "status": "in_progress", "activeForm": "Testing code"},
                        ]
                    },
                )
            ),
            Reply(text("Tracked.")),
        )
    else:
        c.server.push(
            Reply(
                tool_use(
                    "TaskCreate", {"subject": "Write code", "description": "the code", "activeForm": "Writing code"}
                )
            ),
            Reply(
                tool_use(
                    "TaskCreate", {"subject": "Test code", "description": "the tests", "activeForm": "Testing code"}
                )
            ),
            Reply(tool_use("TaskUpdate", {"taskId": "1", "status": "completed"})),
            Reply(tool_use("TaskUpdate", {"taskId": "2", "status": "in_progress"})),
            Reply(tool_use("TaskList", {})),
            Reply(text("Tracked.")),
        )
    s = c.session(env={"CLAUDE_CODE_ENABLE_TODO_TOOLS": "1"} if c.new else None)
    await s.run("track the work", consumers=[allow_all])
    await s.close()


@scenario
async def s_resume_retry(c: Ctx) -> None:
    c.server.push(Reply(text("First turn ok.")), *bad_request(c), Reply(text("Retried from the last good message.")))
    s = c.session()
    await s.run("first")
    failed = await s.run("second fails")
    await s.close()
    assert failed.error is not None and failed.last_message_uuid, "the second turn should fail with a resume point"
    retry = c.session(append=True, resume=failed.session_id, resume_session_at=failed.last_message_uuid)
    await retry.run("second again")
    await retry.close()


@scenario
async def s_compact(c: Ctx) -> None:
    c.server.push(Reply(text("Something to compact.")))
    s = c.session()
    await s.run("say something")
    await s.run("/compact")
    await s.close()


async def record_one(version: str, name: str) -> Path:
    out = HERE / version / f"{name}.jsonl"
    tmp = Path(tempfile.mkdtemp(prefix="kandev-rec-"))
    try:
        cwd, home = tmp / "project", tmp / "home"
        cwd.mkdir()
        home.mkdir()
        with ScriptedModelServer() as server:
            ctx = Ctx(version, server, cwd.resolve(), home.resolve(), out)
            await asyncio.wait_for(SCENARIOS[name](ctx), 240)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return out


def write_events(path: Path) -> None:
    """Write `<name>.events.json` beside a transcript: the adapter's events for its out lines."""
    events = adapter_events(load_transcript(path))
    path.with_suffix(".events.json").write_text(events_json(events))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.transcripts.record", description=__doc__.splitlines()[0])
    parser.add_argument("scenarios", nargs="*", help=f"default: all of {', '.join(SCENARIOS)}")
    parser.add_argument("-v", "--version", action="append", choices=VERSIONS, help="default: both")
    parser.add_argument("--events-only", action="store_true", help="only regenerate the *.events.json files")
    args = parser.parse_args(argv)
    names = args.scenarios or list(SCENARIOS)
    failed = 0
    for version in args.version or VERSIONS:
        for name in names:
            path = HERE / version / f"{name}.jsonl"
            if not args.events_only:
                try:
                    asyncio.run(record_one(version, name))
                except Exception as exc:  # noqa: BLE001 - report and go on with the others
                    failed += 1
                    print(f"{version} {name}: FAILED {exc!r}", file=sys.stderr)
                    continue
            if path.exists():
                write_events(path)
                print(f"{version} {name}: {sum(1 for _ in path.open())} lines")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
