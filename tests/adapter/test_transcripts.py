"""The adapter on recorded transcripts of both CLI versions: the expected events, whatever the reads."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from kandev_nb.agent import events as ev
from kandev_nb.wire.recorder import load_transcript
from tests.transcripts.replay import adapter_events, dump, stream_of

ROOT = Path(__file__).parents[1] / "transcripts"
TRANSCRIPTS = sorted(ROOT.glob("2.1.*/*.jsonl"))
IDS = [f"{p.parent.name}/{p.stem}" for p in TRANSCRIPTS]


def _load(version: str, name: str) -> list[ev.AgentEvent]:
    return adapter_events(load_transcript(ROOT / version / f"{name}.jsonl"))


@pytest.mark.parametrize("path", TRANSCRIPTS, ids=IDS)
def test_events_match_the_recorded_expectation(path: Path) -> None:
    expected = json.loads(path.with_suffix(".events.json").read_text())
    assert dump(adapter_events(load_transcript(path))) == expected


@pytest.mark.parametrize("path", TRANSCRIPTS, ids=IDS)
def test_any_split_of_the_stream_gives_the_same_events(path: Path) -> None:
    entries = load_transcript(path)
    whole = dump(adapter_events(entries))
    size = len(stream_of(entries))
    rng = random.Random(path.name)
    assert dump(adapter_events(entries, cuts=rng.sample(range(1, size), min(size - 1, 200)))) == whole
    assert dump(adapter_events(entries, cuts=range(1, size, 7))) == whole


@pytest.mark.parametrize("version", ["2.1.197", "2.1.332"])
def test_text_appears_exactly_once_with_and_without_partial_messages(version: str) -> None:
    for name in ("text", "thinking", "text_no_partial", "multi_turn", "subagent"):
        events = _load(version, name)
        entries = load_transcript(ROOT / version / f"{name}.jsonl")
        expected: list[str] = [""]  # per turn: the text blocks of the main thread's assistant lines
        for entry in entries:
            msg = entry["msg"]
            if entry["dir"] != "out" or not isinstance(msg, dict):
                continue
            if msg.get("type") == "assistant" and msg.get("parent_tool_use_id") is None:
                expected[-1] += "".join(b["text"] for b in msg["message"]["content"] if b["type"] == "text")
            elif msg.get("type") == "result":
                expected.append("")
        turns: list[str] = [""]
        for event in events:
            if isinstance(event, ev.MessageChunk) and event.parent_tool_use_id is None:
                turns[-1] += event.text
            elif isinstance(event, ev.Complete):
                turns.append("")
        assert turns == expected, name


@pytest.mark.parametrize("version", ["2.1.197", "2.1.332"])
def test_reasoning_once(version: str) -> None:
    events = _load(version, "thinking")
    assert (
        "".join(e.text for e in events if isinstance(e, ev.Reasoning))
        == "Let me think about this step by step. First, ..."
    )
    nopartial = _load(version, "text_no_partial")
    assert [e.text for e in nopartial if isinstance(e, ev.Reasoning)] == ["The user wants a greeting."]


@pytest.mark.parametrize("version", ["2.1.197", "2.1.332"])
def test_tool_kinds_and_results(version: str) -> None:
    updates = {
        e.tool_name + ":" + e.tool_call_id: e
        for name in ("files", "shell", "search", "web", "plan")
        for e in _load(version, name)
        if isinstance(e, ev.ToolUpdate)
    }
    by_name: dict[str, list[ev.ToolUpdate]] = {}
    for key, update in updates.items():
        by_name.setdefault(key.split(":")[0], []).append(update)
    read = by_name["Read"][0].normalized
    assert read.kind == "read_file" and read.content == "def add(a, b):\n    return a - b\n" and read.total_lines == 3
    edit = by_name["Edit"][0].normalized
    assert edit.kind == "modify_file" and "-    return a - b\n+    return a + b\n" in edit.mutations[0].diff
    write = by_name["Write"][0].normalized
    assert write.kind == "modify_file" and write.mutations[0].type == "create" and write.mutations[0].added == 5
    assert by_name["NotebookEdit"][0].normalized.kind == "modify_file"
    shells = [u.normalized for u in by_name["Bash"]]
    assert shells[0].output.stdout.startswith("out") and shells[0].output.exit_code == 0
    assert shells[1].output.exit_code == 3 and by_name["Bash"][1].status == "error"
    assert shells[2].background
    assert by_name["Glob"][0].normalized.kind == "code_search"
    assert by_name["WebFetch"][0].normalized.kind == "http_request"
    assert by_name["SomeUnknownTool"][0].normalized.kind == "generic"
    plan = by_name["ExitPlanMode"][0].normalized
    assert plan.kind == "plan" and plan.plan.startswith("1. Create hello.txt")


@pytest.mark.parametrize("version", ["2.1.197", "2.1.332"])
def test_search_tools_find_files(version: str) -> None:
    updates = [e for e in _load(version, "search") if isinstance(e, ev.ToolUpdate)]
    glob, grep = updates[0].normalized, updates[1].normalized
    assert updates[0].status == "complete" and any(f.endswith("a.py") for f in glob.files)
    assert updates[1].status == "complete" and any(f.endswith("a.py") for f in grep.files)


@pytest.mark.parametrize("version", ["2.1.197", "2.1.332"])
def test_denied_tool_is_an_error_update_with_the_message(version: str) -> None:
    events = _load(version, "deny")
    update = next(e for e in events if isinstance(e, ev.ToolUpdate))
    assert update.status == "error" and "Not this file." in update.output
    complete = events[-1]
    assert isinstance(complete, ev.Complete) and complete.stats.permission_denials


@pytest.mark.parametrize("version", ["2.1.197", "2.1.332"])
def test_error_results(version: str) -> None:
    def errors(name: str) -> list[ev.Error]:
        return [e for e in _load(version, name) if isinstance(e, ev.Error)]

    (max_turns,) = errors("max_turns")
    assert max_turns.subtype == "error_max_turns" and "maximum number of turns" in max_turns.message
    (interrupted,) = errors("interrupt")
    assert interrupted.subtype == "error_during_execution" and interrupted.message == "Request interrupted by user"
    (api,) = errors("api_error")
    assert api.api_error_status == 400 and "Invalid request: scripted failure" in api.message
    (auth,) = errors("auth_error")
    assert auth.api_error_status == 401 and "API key" in auth.message
    for name in ("max_turns", "interrupt", "api_error", "auth_error"):
        events = _load(version, name)
        completes = [e for e in events if isinstance(e, ev.Complete)]
        assert completes and completes[0].stats.is_error, name
        index = events.index(completes[0])
        assert isinstance(events[index - 1], ev.Error), "the error comes right before its complete"


@pytest.mark.parametrize("version", ["2.1.197", "2.1.332"])
def test_api_retry_and_auth_retry(version: str) -> None:
    retries = [e for e in _load(version, "api_retry") if isinstance(e, ev.ApiRetry)]
    assert [(r.attempt, r.status) for r in retries] == [(1, 529), (2, 500)]
    assert all(r.max_retries == 10 and r.delay_ms is not None for r in retries)
    auth = [e for e in _load(version, "auth_error") if isinstance(e, ev.ApiRetry)]
    assert [(r.attempt, r.max_retries, r.status) for r in auth] == [(1, 1, 401)]


@pytest.mark.parametrize("version", ["2.1.197", "2.1.332"])
def test_per_turn_cost_from_cumulative_totals(version: str) -> None:
    entries = load_transcript(ROOT / version / "multi_turn.jsonl")
    totals = [
        e["msg"]["total_cost_usd"] for e in entries if isinstance(e["msg"], dict) and e["msg"].get("type") == "result"
    ]
    stats = [e.stats for e in _load(version, "multi_turn") if isinstance(e, ev.Complete)]
    assert [s.total_cost_usd for s in stats] == totals
    assert sum(s.cost_usd for s in stats) == pytest.approx(totals[-1])
    assert all(s.cost_usd == pytest.approx(totals[0]) for s in stats)
    assert all(s.model_usage[s.main_model].output_tokens == s.output_tokens for s in stats if s.main_model)


@pytest.mark.parametrize("version", ["2.1.197", "2.1.332"])
def test_uuids_commit_at_result_and_resume_point(version: str) -> None:
    entries = load_transcript(ROOT / version / "resume_retry.jsonl")
    outs = [e["msg"] for e in entries if e["dir"] == "out" and isinstance(e["msg"], dict)]
    completes = [e for e in _load(version, "resume_retry") if isinstance(e, ev.Complete)]
    first_ok, failed, retried = completes
    last_assistant = next(m["uuid"] for m in outs if m.get("type") == "assistant")
    assert first_ok.last_message_uuid == last_assistant
    assert failed.stats.is_error and failed.last_message_uuid == first_ok.last_message_uuid
    metas = [e["msg"] for e in entries if e["dir"] == "meta"]
    argv = metas[-1]["argv"]
    assert argv[argv.index("--resume-session-at") + 1] == failed.last_message_uuid
    assert not retried.stats.is_error
    statuses = [e for e in _load(version, "resume_retry") if isinstance(e, ev.SessionStatus)]
    assert [s.status for s in statuses] == ["new", "resumed"]


@pytest.mark.parametrize("version", ["2.1.197", "2.1.332"])
def test_subagent_nesting_and_usage(version: str) -> None:
    events = _load(version, "subagent")
    call = next(e for e in events if isinstance(e, ev.ToolCall) and e.normalized.kind == "subagent_task")
    nested = [e for e in events if isinstance(e, ev.ToolCall) and e.parent_tool_use_id == call.tool_call_id]
    assert [e.tool_name for e in nested] == ["Read"]
    phases = [e.phase for e in events if isinstance(e, ev.SubagentTask) and e.task_type == "local_agent"]
    assert phases[0] == "started"
    ended = [e for e in events if isinstance(e, ev.SubagentTask) and e.phase == "ended"]
    assert ended and ended[-1].parent_tool_use_id == call.tool_call_id
    contexts = [e.used for e in events if isinstance(e, ev.ContextWindow)]
    assert contexts and all(used == 120 for used in contexts)  # the subagent's messages never count
    update = next(e for e in events if isinstance(e, ev.ToolUpdate) and e.tool_call_id == call.tool_call_id)
    assert update.normalized.kind == "subagent_task" and update.normalized.result


@pytest.mark.parametrize("version", ["2.1.197", "2.1.332"])
def test_plan_mode_and_session_mode(version: str) -> None:
    events = _load(version, "plan")
    status = next(e for e in events if isinstance(e, ev.SessionStatus))
    assert status.permission_mode == "plan"
    assert [e.mode for e in events if isinstance(e, ev.SessionMode)] == ["default"]


def test_task_tools_todo_list() -> None:
    events = _load("2.1.197", "todos")
    lists = [[(i.id, i.description, i.status) for i in e.items] for e in events if isinstance(e, ev.Todos)]
    assert lists[0] == [("1", "Write code", "pending")]
    assert lists[-1] == [("1", "Write code", "completed"), ("2", "Test code", "in_progress")]
    final = [e for e in events if isinstance(e, ev.Todos)][-1]
    assert [i.active_form for i in final.items] == ["Writing code", "Testing code"]


def test_compact_boundary() -> None:
    events = _load("2.1.332", "compact")
    assert [e.trigger for e in events if isinstance(e, ev.CompactBoundary)] == ["manual"]
    # 2.1.197 refuses to compact one exchange; its answer (a synthetic message) is shown once.
    old = _load("2.1.197", "compact")
    assert [e.text for e in old if isinstance(e, ev.MessageChunk)][-1] == "Not enough messages to compact."


def test_pending_tools_are_completed_at_the_result() -> None:
    events = _load("2.1.197", "max_turns") + _load("2.1.332", "max_turns")
    assert not [e for e in events if isinstance(e, ev.ToolUpdate) and e.auto_completed]  # all got results
