"""`%%claude` in a real kernel: --model on a later cell is set_model (same pid), the launch
flags of issue 19 reach the CLI's argv and are documented in %%claude?."""

from __future__ import annotations

from pathlib import Path

import pytest

from kandev_nb.testing import Reply, ScriptedModelServer, text
from tests.kernel.conftest import setup_code
from tests.kernel.kernel_harness import KernelHarness

pytestmark = pytest.mark.timeout(240)


def test_model_and_thinking_change_live_and_the_footer_names_the_model(
    kernel: KernelHarness, scripted_model: ScriptedModelServer, claude_env: dict[str, str], claude_workdir: Path
) -> None:
    scripted_model.push(Reply(text("one")), Reply(text("two")), Reply(text("three")))
    kernel.execute(setup_code(claude_env, claude_workdir))
    kernel.execute("%%claude\nhello")
    pid = kernel.eval("kandev_nb.sessions['default'].pid")
    kernel.execute("%%claude --model claude-other-1 --max-thinking-tokens 3000\nagain")
    assert kernel.eval("kandev_nb.sessions['default'].pid") == pid
    assert scripted_model.main_requests[-1].body["model"] == "claude-other-1"
    assert "hello" in repr(scripted_model.main_requests[-1].body["messages"])  # the conversation intact
    footer = kernel.eval("kandev_nb.last_turn()._repr_html_()")
    assert "claude-other-1" in footer
    kernel.execute("%%claude --model claude-other-1\nthird")  # the same model again: nothing to change
    assert kernel.eval("kandev_nb.sessions['default'].pid") == pid


def test_launch_flags_reach_the_argv_and_are_documented(
    kernel: KernelHarness,
    scripted_model: ScriptedModelServer,
    claude_env: dict[str, str],
    claude_workdir: Path,
    tmp_path: Path,
) -> None:
    extra, plugin = tmp_path / "extra", tmp_path / "plugin"
    extra.mkdir()
    plugin.mkdir()
    scripted_model.push(Reply(text("one")), Reply(text("two")))
    kernel.execute(setup_code(claude_env, claude_workdir))
    kernel.execute("crew = {'reviewer': {'description': 'Reviews code', 'prompt': 'You review code.'}}")
    kernel.execute(
        f"%%claude --add-dir {extra} --disallowed-tools WebFetch,WebSearch --agents crew "
        f"--setting-sources user,project --plugin-dir {plugin} --fallback-model claude-fallback-1 "
        "--effort low\nhello"
    )
    argv = kernel.eval("kandev_nb.sessions['default'].transport.argv")
    joined = " ".join(argv)
    for part in (
        f"--add-dir {extra}",
        "--disallowedTools WebFetch,WebSearch",
        "--setting-sources user,project",
        f"--plugin-dir {plugin}",
        "--fallback-model claude-fallback-1",
        "--effort low",
    ):
        assert part in joined, joined
    # Agent definitions go in `initialize`, never on the command line (issue 34.2).
    assert "--agents" not in argv and "You review code." not in joined
    agents = kernel.eval("kandev_nb.sessions['default'].launch_options.agents")
    assert agents == {"reviewer": {"description": "Reviews code", "prompt": "You review code."}}
    listed = kernel.eval("[a['name'] for a in kandev_nb.sessions['default'].connection.initialize_response['agents']]")
    assert "reviewer" in listed
    pid = kernel.eval("kandev_nb.sessions['default'].pid")
    kernel.execute("%%claude --effort high\nagain")  # effort has no control request: a new process resumes
    argv2 = kernel.eval("kandev_nb.sessions['default'].transport.argv")
    assert kernel.eval("kandev_nb.sessions['default'].pid") != pid
    assert "--effort high" in " ".join(argv2) and f"--add-dir {extra}" in " ".join(argv2) and "--resume" in argv2
    assert "hello" in repr(scripted_model.main_requests[-1].body["messages"])
    help_text = kernel.eval("kandev_nb.notebook.magic.claude_cell.__doc__")
    for flag in (
        "--add-dir",
        "--disallowed-tools",
        "--agents",
        "--setting-sources",
        "--plugin-dir",
        "--fallback-model",
        "--effort",
        "--max-thinking-tokens",
    ):
        assert flag in help_text
    for cell, message in (
        ("%%claude --add-dir /no/such/dir\nhi", "no such directory"),
        ("%%claude --agents not_json_nor_var\nhi", "--agents 'not_json_nor_var'"),
        ("%%claude --setting-sources user,galaxy\nhi", "--setting-sources 'galaxy'"),
    ):
        run = kernel.wait(kernel.start(cell))
        assert run.status == "error" and message in repr(run.error) + run.stdout(), repr(run.error)
