"""The ledger across kernel restarts, `--resume last`, notebook budgets and `%%claude?`."""

from __future__ import annotations

from pathlib import Path

import pytest

from kandev_nb.testing import Reply, ScriptedModelServer, text
from tests.kernel.conftest import setup_code
from tests.kernel.kernel_harness import KernelHarness

pytestmark = pytest.mark.timeout(240)


def test_help_lists_the_options(kernel: KernelHarness) -> None:
    kernel.execute("%load_ext kandev_nb")
    run = kernel.execute("%%claude?\n")
    # IPython's help goes to the pager: a payload of the execute_reply, not an output.
    shown = repr(run.reply.get("payload")) + run.stdout()
    for option in ("--mode", "--resume", "--attach", "--budget", "--approval-timeout"):
        assert option in shown


def test_a_new_kernel_reads_the_ledger_and_resumes_the_conversation(
    kernel: KernelHarness, scripted_model: ScriptedModelServer, claude_env: dict[str, str], claude_workdir: Path
) -> None:
    scripted_model.push(Reply(text("The code word is OKAPI.")), Reply(text("It was OKAPI.")))
    as_notebook = (
        "import os\nos.environ['JPY_SESSION_NAME'] = '/home/user/analysis.ipynb'\n"  # as jupyter-server sets it
    )
    kernel.execute(as_notebook + setup_code(claude_env, claude_workdir))
    kernel.execute("%%claude\nRemember the code word okapi")
    before = kernel.eval("[kandev_nb.runs().shape[0], kandev_nb.last_turn().session_id]")

    kernel.km.restart_kernel(now=False)
    kernel.kc.wait_for_ready(timeout=60)
    kernel.execute(as_notebook + setup_code(claude_env, claude_workdir))
    after = kernel.eval("[kandev_nb.runs().shape[0], kandev_nb.runs().iloc[-1]['session_id']]")
    assert after == before and before[0] == 1

    kernel.execute("%%claude --resume last\nWhat was the code word?")
    assert kernel.eval("kandev_nb.last_turn().text") == "It was OKAPI."
    assert "Remember the code word okapi" in repr(scripted_model.main_requests[-1].body["messages"])
    assert kernel.eval("kandev_nb.runs().shape[0]") == 2


def test_notebook_budget_refuses_the_next_turn_and_the_footer_shows_spend(
    kernel: KernelHarness, scripted_model: ScriptedModelServer, claude_env: dict[str, str], claude_workdir: Path
) -> None:
    scripted_model.push(Reply(text("First.")), Reply(text("Never sent.")))
    kernel.execute(setup_code(claude_env, claude_workdir, budget_usd=0.0001))
    run = kernel.execute("%%claude\nfirst")
    assert "budget" in "\n".join(run.data("text/html"))
    refused = kernel.wait(kernel.start("%%claude\nsecond"))
    assert refused.status == "error" and "budget" in refused.stdout()
    assert len(scripted_model.main_requests) == 1
