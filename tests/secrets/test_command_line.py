"""Issue 24.1: no secret on the CLI's command line, which every local user reads.

A real CLI turn with a ``--mcp-config`` file holding a bearer token and a system prompt
holding a secret; while the turn waits on an approval, every process's command line is read
(``/proc/*/cmdline``) and ``ps`` is run as another uid (``setpriv --reuid nobody``). On the
old code the file's JSON (the token) and the system prompt were both there.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import uuid
from pathlib import Path
from typing import Any

import pytest

from kandev_nb.agent.session import Session, SessionConfig
from kandev_nb.kernel_tools import KernelTools, with_kernel_tools
from kandev_nb.testing import Reply, ScriptedModelServer, text, tool_use
from kandev_nb.wire.cli import LaunchOptions, build_argv

pytestmark = pytest.mark.timeout(180)


def every_cmdline() -> str:
    """Every process's command line, NUL separators as spaces."""
    lines = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                lines.append((entry / "cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", "replace"))
            except OSError:
                continue
    return "\n".join(lines)


def ps_as_nobody() -> str:
    """What ``ps`` shows another local user (needs root to switch uid; else "")."""
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        return ""
    done = subprocess.run(
        ["setpriv", "--reuid", "nobody", "--regid", "nogroup", "--clear-groups", "ps", "-eww", "-o", "args"],
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


@pytest.mark.parametrize("claude_cli", ["2.1.332", "2.1.197", "2.1.118"], indirect=True)
async def test_no_secret_of_a_config_file_or_a_system_prompt_is_on_any_command_line(
    claude_cli: Path,
    scripted_model: ScriptedModelServer,
    claude_env: dict[str, str],
    claude_workdir: Path,
    tmp_path: Path,
) -> None:
    token = f"mcp-token-{uuid.uuid4().hex}"
    prompt_secret = f"prompt-secret-{uuid.uuid4().hex}"
    user_file = tmp_path / "mcp.json"
    user_file.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "remote": {
                        "type": "http",
                        "url": "http://127.0.0.1:9/mcp",
                        "headers": {"Authorization": f"Bearer {token}"},
                    }
                }
            }
        )
    )
    user_file.chmod(0o600)
    seen: list[str] = []

    def policy(tool_name: str, tool_input: dict[str, Any]) -> str:
        seen.append(every_cmdline())  # while the turn waits on this approval: the CLI is alive
        seen.append(ps_as_nobody())
        return "allow"

    scripted_model.push(Reply(tool_use("Bash", {"command": "echo hi > out.txt"})), Reply(text("done")))
    tools = KernelTools(namespace={})
    config = SessionConfig(
        cwd=claude_workdir,
        cli_path=claude_cli,
        env=dict(claude_env),
        approve=policy,
        approval_timeout=60,
        mcp_config=str(user_file),
        system_prompt=f"Be brief. {prompt_secret}",
        append_system_prompt=f"Also: {prompt_secret}-appended",
    )
    session = Session(with_kernel_tools(config, server=tools))
    try:
        turn = await session.run("go")
        servers = {s["name"] for s in await session.mcp_status()}
    finally:
        await session.close()
        await tools.aclose()
    assert turn.text == "done" and seen and all(seen[::2])
    everything = "\n".join(seen)
    assert token not in everything
    assert prompt_secret not in everything
    assert f"--mcp-config {user_file}" in seen[0]  # the user's own file, as a path
    # the CLI read both configs and both prompt files
    assert {"remote", "kernel"} <= servers
    system = json.dumps(scripted_model.main_requests[0].body.get("system"))
    assert f"Be brief. {prompt_secret}" in system and f"{prompt_secret}-appended" in system
    # the kernel entry's file: 0600, in a 0700 folder of its own
    kernel_file = Path(session.launch_options.mcp_config_files[0])
    assert stat.S_IMODE(kernel_file.stat().st_mode) == 0o600
    assert stat.S_IMODE(kernel_file.parent.stat().st_mode) == 0o700
    assert json.loads(kernel_file.read_text())["mcpServers"]["kernel"]["type"] == "sdk"


def test_the_argv_names_files_and_keeps_inline_json_the_user_typed(tmp_path: Path) -> None:
    written: dict[str, str] = {}

    def text_file(body: str, suffix: str) -> str:
        path = str(tmp_path / f"{len(written)}{suffix}")
        written[path] = body
        return path

    inline = '{"mcpServers": {"a": {"command": "x"}}}'
    argv = build_argv(
        "claude",
        LaunchOptions(mcp_config=inline, mcp_config_files=("/k.json",), system_prompt="S", append_system_prompt="A"),
        text_file=text_file,
    )
    assert argv[argv.index("--mcp-config") :][:4] == ["--mcp-config", inline, "--mcp-config", "/k.json"]
    assert written[argv[argv.index("--system-prompt-file") + 1]] == "S"
    assert written[argv[argv.index("--append-system-prompt-file") + 1]] == "A"
    assert "S" not in argv and "A" not in argv and "--system-prompt" not in argv
