"""Issue 34.10: a resume that drops a turn only if the dropped range is the turn you meant (the
Agent SDK's ``resume_drops_turn``), refused otherwise.

Measured on CLI 2.1.332: ``--resume-session-at=<last entry kept> --resume-drops-turn=<prompt
uuid>`` resumes when everything after the resume point belongs to that prompt's turn (an
``attachment`` entry between the kept answer and the prompt is fine); otherwise the CLI prints
an error result ``Resume rejected by --resume-drops-turn: ... range contains a user entry not
attributable to the declared turn ...`` and exits with code 1 before answering initialize.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kandev_nb.agent.session import Session
from kandev_nb.agent.state import SessionState
from kandev_nb.errors import ResumeRejectedError
from kandev_nb.testing import RecordedRequest, Reply, ScriptedModelServer, http_error, text
from kandev_nb.wire.cli import LaunchOptions, build_argv

pytestmark = pytest.mark.timeout(300)


def _route(failing: str, replies: list[Reply]):  # type: ignore[no-untyped-def]
    queue = list(replies)

    def route(request: RecordedRequest) -> object:
        if request.last_user_text().strip().endswith(failing):  # every attempt of the failing turn
            return http_error(400, "prompt rejected by the scripted model", headers={"x-should-retry": "false"})
        return queue.pop(0)

    return route


def _texts(request: RecordedRequest) -> str:
    return json.dumps(request.messages)


def test_argv_carries_the_turn_to_drop_only_with_a_resume_point() -> None:
    options = LaunchOptions(resume="s-1", resume_session_at="u-9", resume_drops_turn="p-3")
    argv = build_argv("claude", options, text_file=lambda text, suffix: "f")
    assert argv[argv.index("--resume") : argv.index("--resume") + 5] == [
        "--resume",
        "s-1",
        "--resume-session-at",
        "u-9",
        "--resume-drops-turn=p-3",
    ]
    assert not any("drops" in a for a in build_argv("claude", LaunchOptions(resume="s-1", resume_drops_turn="p-3")))
    assert LaunchOptions(resume="s", resume_session_at="u", resume_drops_turn="p").same_process(LaunchOptions())


@pytest.mark.parametrize("claude_cli", ["2.1.332", "2.1.197"], indirect=True)
async def test_a_retry_drops_exactly_the_failed_turn(
    claude_cli: Path, claude_env: dict[str, str], claude_workdir: Path
) -> None:
    """On 2.1.332 the CLI checks that only the failed turn is dropped; 2.1.197 stops at the
    flag ("unknown option"), so there the resume goes without it and says so (old code: the
    retry failed on 2.1.197 and 2.1.118)."""
    route = _route("PROMPT-B", [Reply(text("ANSWER-A")), Reply(text("ANSWER-B-AGAIN"))])
    with ScriptedModelServer([route] * 20) as server:
        env = {**claude_env, "ANTHROPIC_BASE_URL": server.url}
        first = Session(cwd=claude_workdir, cli_path=claude_cli, env=env, inactivity_timeout=120)
        try:
            a = await first.run("PROMPT-A")
            b = await first.run("PROMPT-B")
        finally:
            await first.close()
        assert not a.failed and b.failed and b.prompt_uuid and a.session_id
        retry = Session(
            cwd=claude_workdir,
            cli_path=claude_cli,
            env=env,
            resume=a.session_id,
            resume_session_at=b.meta["retry_at"],
            resume_drops_turn=b.prompt_uuid,
            inactivity_timeout=120,
        )
        try:
            again = await retry.run("PROMPT-B, second try")
            if retry.cli_version == "2.1.332":
                assert retry.launch_options.resume_drops_turn == b.prompt_uuid and retry.launch_note is None
            else:
                assert retry.launch_options.resume_drops_turn is None
                assert (
                    retry.launch_note and "cannot check that the resume drops only the failed turn" in retry.launch_note
                )
        finally:
            await retry.close()
        assert not again.failed and again.text == "ANSWER-B-AGAIN"
        sent = _texts(server.requests[-1])
        assert "PROMPT-A" in sent and "ANSWER-A" in sent and "PROMPT-B, second try" in sent
        assert '"PROMPT-B"' not in sent and "PROMPT-B\\n" not in sent  # the failed prompt was dropped


async def test_a_resume_that_would_drop_more_than_that_turn_is_refused(
    claude_cli: Path, claude_env: dict[str, str], claude_workdir: Path, scripted_model: ScriptedModelServer
) -> None:
    scripted_model.push(Reply(text("ANSWER-A")), Reply(text("ANSWER-B")), Reply(text("ANSWER-C")))
    first = Session(cwd=claude_workdir, cli_path=claude_cli, env=dict(claude_env), inactivity_timeout=120)
    try:
        a = await first.run("PROMPT-A")
        b = await first.run("PROMPT-B")
        await first.run("PROMPT-C")
    finally:
        await first.close()
    assert a.last_message_uuid and b.prompt_uuid and a.session_id
    asked = len(scripted_model.requests)
    # Back to the end of A, "dropping B": but C comes after B, and would be dropped too.
    wrong = Session(
        cwd=claude_workdir,
        cli_path=claude_cli,
        env=dict(claude_env),
        resume=a.session_id,
        resume_session_at=a.last_message_uuid,
        resume_drops_turn=b.prompt_uuid,
    )
    with pytest.raises(ResumeRejectedError) as caught:
        await wrong.start()
    assert caught.value.resume_drops_turn == b.prompt_uuid and caught.value.resume_session_at == a.last_message_uuid
    assert caught.value.exit_code == 1 and "Resume rejected by --resume-drops-turn" in caught.value.stderr
    assert "range contains a user entry not attributable" in str(caught.value)
    assert "more than that turn" in str(caught.value) and "Nothing was dropped" in str(caught.value)
    assert wrong.state is SessionState.NEW and wrong.connection is None
    assert len(scripted_model.requests) == asked  # the model was never asked
    await wrong.close()
