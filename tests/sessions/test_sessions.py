"""Sessions across cells and processes: resume, fork, retry, attachments (real CLI)."""

from __future__ import annotations

from collections import deque
from pathlib import Path

import pytest

from kandev_nb.agent.session import Session
from kandev_nb.notebook.attachments import AttachmentError, attach, prompt_with_attachments
from kandev_nb.testing import (
    HttpError,
    RecordedRequest,
    Reply,
    ScriptedModelServer,
    http_error,
    text,
)

pytestmark = pytest.mark.timeout(180)

FAIL = "this one fails"


def _history(request: RecordedRequest) -> str:
    return repr(request.body.get("messages"))


def _router(replies: list[Reply]) -> list[object]:
    """A script that fails every request whose last user text is FAIL, else replies in order."""
    queue = deque(replies)

    def route(request: RecordedRequest) -> Reply | HttpError:
        if request.last_user_text().strip() == FAIL:
            return http_error(400, "the scripted model rejects this prompt")
        return queue.popleft() if queue else Reply(text("(no more replies)"))

    return [route] * 40


async def test_resume_and_fork_continue_the_right_conversation(
    claude_env: dict[str, str], claude_workdir: Path, scripted_model: ScriptedModelServer
) -> None:
    scripted_model.push(
        Reply(text("The secret word is PAPAYA.")),
        Reply(text("You told me PAPAYA.")),  # resumed in a new process
        Reply(text("Forked: PAPAYA.")),  # forked
    )
    first = Session(cwd=claude_workdir, env=claude_env)
    await first.run("Remember the secret word papaya")
    original_id = first.session_id
    await first.close()

    resumed = Session(cwd=claude_workdir, env=claude_env, resume=original_id)
    turn = await resumed.run("What was the secret word?")
    await resumed.close()
    assert turn.text == "You told me PAPAYA."
    assert "Remember the secret word papaya" in _history(scripted_model.main_requests[1])
    assert turn.session_id == original_id

    forked = Session(cwd=claude_workdir, env=claude_env, resume=original_id, fork=True)
    fork_turn = await forked.run("Fork: what was it?")
    await forked.close()
    assert "The secret word is PAPAYA." in _history(scripted_model.main_requests[2])
    assert fork_turn.session_id and fork_turn.session_id != original_id  # the original is left alone


async def test_retry_resumes_at_the_last_good_message(claude_env: dict[str, str], claude_workdir: Path) -> None:
    server = ScriptedModelServer(_router([Reply(text("First answer.")), Reply(text("Retried fine."))])).start()
    env = {**claude_env, "ANTHROPIC_BASE_URL": server.url}
    try:
        session = Session(cwd=claude_workdir, env=env)
        good = await session.run("A good question")
        failed = await session.run(FAIL)
        assert failed.error is not None and failed.stats is not None and failed.stats.is_error
        assert good.last_message_uuid is not None
        await session.close()

        retry = Session(cwd=claude_workdir, env=env, resume=good.session_id, resume_session_at=failed.last_message_uuid)
        turn = await retry.run("A good question, again")
        await retry.close()
        assert turn.text == "Retried fine."
        history = _history(server.main_requests[-1])
        assert "First answer." in history and "A good question" in history
        assert FAIL not in history  # the failed turn was cut off by --resume-session-at
        assert failed.last_message_uuid == good.last_message_uuid
    finally:
        server.stop()


async def test_attachments_reach_the_cli_as_file_references(
    claude_env: dict[str, str], claude_workdir: Path, scripted_model: ScriptedModelServer
) -> None:
    png = b"\x89PNG\r\n\x1a\n" + b"\x00" * 32
    (claude_workdir / "data.csv").write_text("a,b\n1,2\n")
    namespace = {"plot_png": png, "n": 3}
    paths = [attach("data.csv", namespace, claude_workdir), attach("plot_png", namespace, claude_workdir)]
    assert paths[1].read_bytes() == png and ".kandev/temp/images" in str(paths[1])
    with pytest.raises(AttachmentError, match="expected a matplotlib figure"):
        attach("n", namespace, claude_workdir)
    with pytest.raises(AttachmentError, match="no such file"):
        attach("missing.csv", namespace, claude_workdir)

    scripted_model.push(Reply(text("Got them.")))
    session = Session(cwd=claude_workdir, env=claude_env)
    await session.run(prompt_with_attachments("Describe these", paths))
    await session.close()
    sent = scripted_model.main_requests[-1].last_user_text()
    assert str(paths[0]) in sent and str(paths[1]) in sent and sent.rstrip().endswith("Describe these")


async def test_per_turn_figures_from_cumulative_totals(
    claude_env: dict[str, str], claude_workdir: Path, scripted_model: ScriptedModelServer
) -> None:
    """The CLI reports total_cost_usd and duration_api_ms per process; turns get differences."""
    scripted_model.push(Reply(text("one", delay=0.05)), Reply(text("two " * 20, delay=0.02)), Reply(text("three")))
    session = Session(cwd=claude_workdir, env=claude_env)
    turns = [await session.run(p) for p in ("first", "second", "third")]
    await session.close()
    stats = [t.stats for t in turns]
    assert all(s is not None for s in stats)
    for s in stats:
        assert s is not None and 0 < s.duration_api_ms <= s.duration_ms
    assert sum(s.cost_usd for s in stats if s) == pytest.approx(stats[-1].total_cost_usd if stats[-1] else 0)
