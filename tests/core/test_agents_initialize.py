"""Issue 34.2: agent definitions go in `initialize`, for any size, never on the command line.

On argv, 262 KB of ``--agents`` JSON is one argument over Linux's 128 KiB limit for one
argument ("Argument list too long"): the CLI never started. The Agent SDK sends them in the
`initialize` control request (``{"subtype": "initialize", "hooks": ..., "agents": {name:
{"description", "prompt", ...}}}``); every pinned CLI (2.1.332, 2.1.197, 2.1.118) accepts
that and lists them in its answer's ``agents`` (measured).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import psutil
import pytest

from kandev_nb.agent import events as ev
from kandev_nb.agent.config import SessionConfig
from kandev_nb.agent.session import Session
from kandev_nb.testing import Reply, ScriptedModelServer, text, tool_use
from kandev_nb.wire.cli import LaunchOptions, build_argv

pytestmark = pytest.mark.timeout(300)

PROMPT_SIZE = 13_000  # characters of each prompt: 20 agents make about 262 KB of JSON


def _agents() -> dict[str, dict[str, str]]:
    return {
        f"crew-{i:02d}": {
            "description": f"Crew member {i}: answers questions about topic {i}",
            "prompt": f"You are crew member {i}. Marker CREW-PROMPT-{i:02d}. " + f"Rule {i}. " * (PROMPT_SIZE // 8),
        }
        for i in range(20)
    }


def _allow_all(event: ev.AgentEvent) -> None:
    if isinstance(event, ev.PermissionRequest):
        event.approval.allow()


@pytest.mark.parametrize("claude_cli", ["2.1.332", "2.1.197", "2.1.118"], indirect=True)
async def test_262_kb_of_agents_start_the_cli_and_a_subagent_runs(
    claude_cli: Path, claude_env: dict[str, str], claude_workdir: Path, scripted_model: ScriptedModelServer
) -> None:
    agents = _agents()
    assert len(json.dumps(agents)) > 260_000
    session = Session(
        cwd=claude_workdir, cli_path=claude_cli, env=dict(claude_env), agents=agents, inactivity_timeout=120
    )
    new = "2.1.332" in str(claude_cli) or "_bundled" in str(claude_cli)
    call = {"description": "Ask crew 7", "subagent_type": "crew-07", "prompt": "What is your marker?"}
    if new:
        call["run_in_background"] = False  # 2.1.332 runs agents in the background by default
    scripted_model.push(
        Reply(tool_use("Agent" if new else "Task", call)),
        Reply(text("My marker is CREW-PROMPT-07.")),  # the subagent's own request
        Reply(text("Crew 7 says CREW-PROMPT-07.")),
    )
    try:
        await session.start()
        assert session.pid is not None and session.connection is not None
        cmdline = psutil.Process(session.pid).cmdline()
        assert not any("CREW-PROMPT" in arg or "crew-" in arg for arg in cmdline), cmdline
        assert "--agents" not in cmdline
        listed = {a.get("name") for a in session.connection.initialize_response.get("agents", [])}
        assert set(agents) <= listed
        turn = await session.run("ask crew 7 for its marker", consumers=[_allow_all])
        assert not turn.failed, turn.error
    finally:
        await session.close()
    systems = [json.dumps(r.body.get("system", "")) for r in scripted_model.main_requests]
    assert any("CREW-PROMPT-07" in s for s in systems), "the subagent's request did not carry its prompt"
    assert turn.text.endswith("Crew 7 says CREW-PROMPT-07.")


def test_agents_are_never_on_argv_and_argv_agents_are_refused() -> None:
    agents = {"reviewer": {"description": "Reviews", "prompt": "SECRET-ISH PROMPT"}}
    options = LaunchOptions(agents=agents)
    assert options.agents == agents
    assert not any("SECRET-ISH" in a or "reviewer" in a for a in build_argv("/bin/claude", options))
    assert SessionConfig(agents=json.dumps(agents)).launch_options().agents == agents  # JSON text is read
    with pytest.raises(ValueError, match="initialize"):
        LaunchOptions(extra_args=("--agents", json.dumps(agents)))
    with pytest.raises(TypeError, match="agent definitions"):
        LaunchOptions(agents={"reviewer": "not a definition"})  # type: ignore[dict-item]


def test_the_old_way_could_not_start_a_process() -> None:
    # Why: one argument of 262 KB is over Linux's limit for one argument (MAX_ARG_STRLEN).
    with pytest.raises(OSError, match="Argument list too long"):
        subprocess.run(["true", "--agents", json.dumps(_agents())], check=False)
