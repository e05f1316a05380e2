"""Python hooks against the real CLI (2.1.332) and the scripted model: registration in
`initialize`, answers to `hook_callback`, failures that deny instead of hanging."""

from __future__ import annotations

import asyncio
import time
import warnings
from pathlib import Path
from typing import Any

import pytest

from kandev_nb import HookError, HookMatcher, HookWarning
from kandev_nb.agent import events as ev
from kandev_nb.agent.session import Session
from kandev_nb.render.card_html import card_summary_html
from kandev_nb.testing import Reply, ScriptedModelServer, text, tool_use

pytestmark = pytest.mark.timeout(240)


def _session(claude_env: dict[str, str], cwd: Path, hooks: dict[str, Any], mode: str = "autonomous") -> Session:
    return Session(cwd=cwd, env=claude_env, mode=mode, allow_root_bypass=True, hooks=hooks)


def _last_tool_result(server: ScriptedModelServer) -> str:
    return repr(server.main_requests[-1].body["messages"][-1]["content"])


async def test_pre_tool_use_deny_holds_in_autonomous_mode(
    claude_env: dict[str, str], claude_workdir: Path, scripted_model: ScriptedModelServer
) -> None:
    def no_touch(input_data: dict[str, Any], tool_use_id: str | None, context: Any) -> dict[str, Any]:
        if "touch" in input_data["tool_input"].get("command", ""):
            return {
                "hookSpecificOutput": {
                    "hookEventName": "PreToolUse",
                    "permissionDecision": "deny",
                    "permissionDecisionReason": "no new files in this folder",
                }
            }
        return {}

    scripted_model.push(Reply(tool_use("Bash", {"command": "touch made.txt"})), Reply(text("The hook said no.")))
    session = _session(claude_env, claude_workdir, {"PreToolUse": [HookMatcher(matcher="Bash", hooks=[no_touch])]})
    try:
        turn = await session.run("make a file")
    finally:
        await session.close()
    assert not (claude_workdir / "made.txt").exists()  # the command did not run
    assert "no new files in this folder" in _last_tool_result(scripted_model)  # the model read the reason
    (record,) = turn.tools.values()
    assert record.decision is not None and record.decision.decided_by == "hook"
    assert record.decision.behavior == "deny" and record.decision.hook == "no_touch"
    assert record.decision.message == "no new files in this folder"
    summary = card_summary_html(
        "Bash",
        "touch made.txt",
        record.status,
        record.update.normalized,  # type: ignore[union-attr]
        decision=record.decision,
    )
    assert "denied by hook no_touch" in summary


async def test_async_post_tool_use_hook_records_tools(
    claude_env: dict[str, str], claude_workdir: Path, scripted_model: ScriptedModelServer
) -> None:
    (claude_workdir / "a.txt").write_text("alpha\n")
    seen: list[tuple[str, str | None, str]] = []

    async def record(input_data: dict[str, Any], tool_use_id: str | None, context: Any) -> dict[str, Any]:
        await asyncio.sleep(0.05)  # a real await on the kernel's loop
        seen.append((input_data["hook_event_name"], tool_use_id, input_data["tool_name"]))
        return {"hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": "recorded by the notebook"}}

    scripted_model.push(
        Reply(tool_use("Read", {"file_path": str(claude_workdir / "a.txt")}, id="toolu_read1")), Reply(text("Read it."))
    )
    session = _session(claude_env, claude_workdir, {"PostToolUse": [HookMatcher(hooks=[record])]}, mode="supervised")
    try:
        turn = await session.run("read a.txt")
    finally:
        await session.close()
    assert seen == [("PostToolUse", "toolu_read1", "Read")]
    assert turn.text == "Read it."
    assert "recorded by the notebook" in repr(scripted_model.main_requests[-1].body["messages"])


@pytest.mark.parametrize("kind", ["raises", "malformed"])
async def test_a_failing_hook_denies_with_its_error_and_warns(
    kind: str, claude_env: dict[str, str], claude_workdir: Path, scripted_model: ScriptedModelServer
) -> None:
    def broken(input_data: dict[str, Any], tool_use_id: str | None, context: Any) -> Any:
        if kind == "raises":
            raise RuntimeError("policy file missing")
        return "yes please"  # not a hook output

    scripted_model.push(Reply(tool_use("Bash", {"command": "touch made.txt"})), Reply(text("Denied.")))
    session = _session(claude_env, claude_workdir, {"PreToolUse": [HookMatcher(hooks=[broken])]})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            turn = await session.run("make a file")
        finally:
            await session.close()
    assert not (claude_workdir / "made.txt").exists()
    expected = "policy file missing" if kind == "raises" else "a hook must return a dict"
    hook_warnings = [str(w.message) for w in caught if issubclass(w.category, HookWarning)]
    assert len(hook_warnings) == 1 and expected in hook_warnings[0] and "hook broken" in hook_warnings[0]
    assert expected in _last_tool_result(scripted_model)
    (record,) = turn.tools.values()
    assert record.decision is not None and record.decision.behavior == "deny" and expected in record.decision.message


@pytest.mark.slow
async def test_a_slow_hook_past_its_timeout_denies_and_the_turn_goes_on(
    claude_env: dict[str, str], claude_workdir: Path, scripted_model: ScriptedModelServer
) -> None:
    def slow(input_data: dict[str, Any], tool_use_id: str | None, context: Any) -> dict[str, Any]:
        time.sleep(30)  # a sync hook stuck in a worker thread
        return {}

    scripted_model.push(Reply(tool_use("Bash", {"command": "touch made.txt"})), Reply(text("It timed out.")))
    session = _session(claude_env, claude_workdir, {"PreToolUse": [HookMatcher(hooks=[slow], timeout=1)]})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            turn = await session.run("make a file")
        finally:
            await session.close()
    assert turn.text == "It timed out." and not turn.failed
    assert not (claude_workdir / "made.txt").exists()
    assert any("did not return within its timeout of 1 s" in str(w.message) for w in caught)
    assert "did not return within its timeout" in _last_tool_result(scripted_model)


async def test_hooks_for_every_event_register_and_user_prompt_submit_fires(
    claude_env: dict[str, str], claude_workdir: Path, scripted_model: ScriptedModelServer
) -> None:
    from kandev_nb.agent.hooks import HOOK_EVENTS

    fired: list[str] = []

    def note(input_data: dict[str, Any], tool_use_id: str | None, context: Any) -> None:
        fired.append(input_data["hook_event_name"])  # returns None: no opinion

    scripted_model.push(Reply(text("Hello.")))
    session = _session(claude_env, claude_workdir, {e: [HookMatcher(hooks=[note])] for e in HOOK_EVENTS})
    try:
        turn = await session.run("hi")
    finally:
        await session.close()
    assert turn.text == "Hello." and not turn.failed
    assert fired[0] == "UserPromptSubmit" and "Stop" in fired
    assert not [e for e in turn.events if isinstance(e, ev.Unknown)]


def test_bad_hook_configurations_fail_before_the_cli_starts() -> None:
    with pytest.raises(HookError, match="unknown hook event 'PreTool'"):
        Session(hooks={"PreTool": [HookMatcher(hooks=[print])]})
    with pytest.raises(HookError, match="not callable"):
        Session(hooks={"Stop": [HookMatcher(hooks=["print"])]})  # type: ignore[list-item]
    with pytest.raises(HookError, match="positive number"):
        Session(hooks={"Stop": [HookMatcher(hooks=[print], timeout=0)]})


async def test_a_permission_request_hook_answers_instead_of_a_person(
    claude_env: dict[str, str], claude_workdir: Path, scripted_model: ScriptedModelServer
) -> None:
    def allow_notes(input_data: dict[str, Any], tool_use_id: str | None, context: Any) -> dict[str, Any]:
        ok = input_data["tool_input"].get("file_path", "").endswith("NOTES.md")
        decision = {"behavior": "allow"} if ok else {"behavior": "deny", "message": "only NOTES.md"}
        return {"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": decision}}

    scripted_model.push(
        Reply(tool_use("Write", {"file_path": str(claude_workdir / "NOTES.md"), "content": "hi\n"})),
        Reply(tool_use("Write", {"file_path": str(claude_workdir / "other.md"), "content": "no\n"})),
        Reply(text("One written, one refused.")),
    )
    session = _session(
        claude_env, claude_workdir, {"PermissionRequest": [HookMatcher(hooks=[allow_notes])]}, mode="supervised"
    )
    try:
        turn = await session.run("write two files", approve=lambda name, data: None)  # a person would be asked
    finally:
        await session.close()
    assert (claude_workdir / "NOTES.md").read_text() == "hi\n" and not (claude_workdir / "other.md").exists()
    # Measured (2.1.332): the CLI sends can_use_tool and runs the hook side by side; the hook's
    # answer wins and the CLI withdraws the request (control_cancel_request), closing its card.
    kinds = [e.type for e in turn.events if e.type.startswith("permission_")]
    assert kinds == ["permission_request", "permission_decided", "permission_cancelled"] * 2
    decided = [e for e in turn.events if isinstance(e, ev.PermissionDecided)]
    assert [(d.behavior, d.decided_by, d.hook) for d in decided] == [
        ("allow", "hook", "allow_notes"),
        ("deny", "hook", "allow_notes"),
    ]
    assert "only NOTES.md" in repr(scripted_model.main_requests[-1].body["messages"][-1])


async def test_an_interrupt_cancels_a_waiting_hook_and_the_session_goes_on(
    claude_env: dict[str, str], claude_workdir: Path, scripted_model: ScriptedModelServer
) -> None:
    started, cancelled = asyncio.Event(), asyncio.Event()

    async def waits(input_data: dict[str, Any], tool_use_id: str | None, context: Any) -> dict[str, Any]:
        started.set()
        try:
            await asyncio.Event().wait()  # never returns by itself
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return {}

    scripted_model.push(Reply(tool_use("Bash", {"command": "touch made.txt"})), Reply(text("Next turn.")))
    session = _session(claude_env, claude_workdir, {"PreToolUse": [HookMatcher(hooks=[waits], timeout=120)]})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            running = asyncio.get_running_loop().create_task(session.run("make a file"))
            await asyncio.wait_for(started.wait(), 60)
            await session.interrupt()
            turn = await running
            # The CLI withdraws the hook_callback (control_cancel_request): the hook's await is cancelled.
            await asyncio.wait_for(cancelled.wait(), 60)
            after = await session.run("go on")
        finally:
            await session.close()
    assert turn.stopped and not (claude_workdir / "made.txt").exists()
    assert after.text == "Next turn."
    assert not [w for w in caught if issubclass(w.category, HookWarning)]  # no late "timed out" warning
