"""Two kernels share one ledger file; `%%claude --retry` after a failed turn (real CLI)."""

from __future__ import annotations

import os
from collections import deque
from pathlib import Path

import pytest

from kandev_nb.ledger import RunLedger
from kandev_nb.testing import (
    HttpError,
    RecordedRequest,
    Reply,
    ScriptedModelServer,
    http_error,
    text,
)
from tests.kernel.conftest import setup_code
from tests.kernel.kernel_harness import KernelHarness

pytestmark = pytest.mark.timeout(300)


def test_two_kernels_writing_at_once_lose_no_rows(
    scripted_model: ScriptedModelServer, claude_env: dict[str, str], claude_workdir: Path, ledger_path: Path
) -> None:
    scripted_model.push(*[Reply(text(f"answer {i}", delay=0.01)) for i in range(6)])
    env = {**os.environ, "KANDEV_NB_LEDGER": str(ledger_path)}
    kernels = [KernelHarness(env=env, cwd=str(claude_workdir)) for _ in range(2)]
    try:
        for k in kernels:
            k.execute(setup_code(claude_env, claude_workdir))
        for round_ in range(3):
            runs = [k.start(f"%%claude\nkernel {i} round {round_}") for i, k in enumerate(kernels)]
            for k, run in zip(kernels, runs, strict=True):
                k.wait(run)
                assert run.status == "ok", run.error
        counts = [k.eval("kandev_nb.runs().shape[0]") for k in kernels]
    finally:
        for k in kernels:
            k.close()
    assert counts == [6, 6]
    frame = RunLedger(ledger_path).runs()
    assert sorted(frame["prompt"]) == sorted(f"kernel {i} round {r}" for i in range(2) for r in range(3))
    assert frame["session_id"].nunique() == 2


def test_retry_after_a_failed_turn_resumes_at_the_last_good_message(
    kernel: KernelHarness, claude_env: dict[str, str], claude_workdir: Path
) -> None:
    replies = deque([Reply(text("Good answer.")), Reply(text("Second try worked."))])
    failing = {"on": True}

    def route(request: RecordedRequest) -> Reply | HttpError:
        if "flaky question" in request.last_user_text() and failing["on"]:
            return http_error(400, "the scripted model rejects this once")
        return replies.popleft()

    server = ScriptedModelServer([route] * 20).start()
    try:
        kernel.execute(setup_code({**claude_env, "ANTHROPIC_BASE_URL": server.url}, claude_workdir))
        kernel.execute("%%claude\nA good question")
        kernel.execute("%%claude\nA flaky question")
        assert kernel.eval("kandev_nb.last_turn().error is not None")
        failing["on"] = False
        kernel.execute("%%claude --retry\n")
        assert kernel.eval("kandev_nb.last_turn().text") == "Second try worked."
        last = server.main_requests[-1]
        history = repr(last.body["messages"])
        assert "A good question" in history and "Good answer." in history
        assert "A flaky question" in last.last_user_text()  # the failed prompt, sent again
        assert history.count("A flaky question") == 1  # ... once: the failed turn was cut off
    finally:
        server.stop()
