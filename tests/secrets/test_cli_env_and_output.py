"""Issue 24.2 and 24.3 on the real CLI: the kernel's secrets stay out of the CLI's
environment, and a known secret a tool prints is masked in what the model reads, the saved
HTML and Markdown, the ledger's bytes and a recording.

On the old code: ``env`` in an allowed Bash tool printed ``JUPYTERHUB_API_TOKEN`` and the
others to the model and into the saved output; a file holding a kernel secret went to the
model, the card and the ledger as it was.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest

from kandev_nb.agent.session import Session, SessionConfig
from kandev_nb.ledger import RunLedger
from kandev_nb.render.static import render_html, render_markdown
from kandev_nb.testing import Reply, ScriptedModelServer, text, tool_use
from kandev_nb.wire.cli import child_env, cli_version
from kandev_nb.wire.recorder import recording_factory
from tests.kernel_tools.conftest import result_text, tool_results

pytestmark = pytest.mark.timeout(180)

KERNEL_SECRETS = (
    "JUPYTERHUB_API_TOKEN",
    "JPY_API_TOKEN",
    "PGPASSWORD",
    "AWS_SECRET_ACCESS_KEY",
    "GITHUB_TOKEN",
    "KANDEV_NB_LEDGER",
)


def _secret(tag: str) -> str:
    return f"{tag}-{uuid.uuid4().hex}"


def _bytes_of(folder: Path, prefix: str) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(folder.glob(prefix + "*")))


@pytest.mark.parametrize("claude_cli", ["2.1.332", "2.1.197", "2.1.118"], indirect=True)
async def test_the_kernels_secrets_do_not_reach_the_cli_and_printed_secrets_are_masked(
    claude_cli: Path,
    scripted_model: ScriptedModelServer,
    claude_env: dict[str, str],
    claude_workdir: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    kernel_values = {name: _secret(name.lower()) for name in KERNEL_SECRETS}
    ledger_password = _secret("ledgerpw")
    kernel_values["KANDEV_NB_LEDGER"] = f"postgresql://team:{ledger_password}@db.internal/ledger"
    for name, value in kernel_values.items():
        monkeypatch.setenv(name, value)
    service_token = _secret("svc")  # in the kernel only; a project file holds it too
    monkeypatch.setenv("SERVICE_TOKEN", service_token)
    configured = _secret("cfg")  # given to the CLI on purpose: configure(env=...) / Session(env=...)
    (claude_workdir / "creds.txt").write_text(
        f"token in a file: {service_token}\nledger pw: {ledger_password}\nDSN=postgres://me:dsnpw12345@h/x\n"
    )
    scripted_model.push(
        Reply(tool_use("Bash", {"command": "env; cat creds.txt"})),
        Reply(text("done")),
    )
    recording = tmp_path / "run.jsonl"
    session = Session(
        SessionConfig(
            cwd=claude_workdir,
            cli_path=claude_cli,
            env={**claude_env, "MY_DB_PASSWORD": configured},
            approve=lambda tool_name, tool_input: "allow",
            approval_timeout=60,
        ),
        transport_factory=recording_factory(recording),
    )
    try:
        turn = await session.run("print the environment")
    finally:
        await session.close()
    call = next(e for e in turn.events if e.type == "tool_update")
    output = str(call.output)  # type: ignore[attr-defined]
    assert "PATH=" in output and "HOME=" in output  # the tool ran and printed its environment
    assert "MY_DB_PASSWORD=<redacted>" in output  # passed on purpose, and still masked
    assert "DSN=postgres://me:<redacted>@h/x" in output  # a credential by its shape
    for name in KERNEL_SECRETS:  # 24.2: not in the child's environment at all
        assert f"{name}=" not in output, name
    model_saw = result_text(tool_results(scripted_model.main_requests[-1])[-1])
    ledger = RunLedger(tmp_path / "ledger.sqlite")
    ledger.record(turn)
    ledger.close()
    places = {
        "card": output,
        "saved html": render_html(turn),
        "saved markdown": render_markdown(turn),
        "ledger bytes": _bytes_of(tmp_path, "ledger.sqlite").decode("utf-8", "replace"),
        "recording": recording.read_text(),
    }
    version = cli_version(claude_cli)
    if version != "2.1.118":  # updatedToolOutput of our PostToolUse hook (2.1.118 ignores it)
        places["model"] = model_saw + json.dumps(scripted_model.main_requests[-1].body)
    secrets: dict[str, Any] = {**kernel_values, "SERVICE_TOKEN": service_token, "ledger": ledger_password}
    secrets.update({"configured": configured, "dsn": "dsnpw12345"})
    for place, body in places.items():
        for label, secret in secrets.items():
            assert secret not in body, f"{label} in the {place}"
    assert ("token in a file: <redacted>" in model_saw) == (version != "2.1.118")


def test_the_allow_list_and_the_provider_switches() -> None:
    base = {
        "PATH": "/bin",
        "HOME": "/h",
        "LC_ALL": "C",
        "HTTPS_PROXY": "http://proxy:3128",
        "ANTHROPIC_BASE_URL": "http://x",
        "CLAUDE_CONFIG_DIR": "/h/.c",
        "GITHUB_TOKEN": "g",
        "JUPYTERHUB_API_TOKEN": "j",
        "AWS_SECRET_ACCESS_KEY": "a",
        "GOOGLE_APPLICATION_CREDENTIALS": "/g.json",
        "CLAUDECODE": "1",
        "KANDEV_NB_LEDGER": "postgresql://u:p@h/d",
        "IS_SANDBOX": "1",
    }
    env = child_env(base=base)
    assert {"PATH", "HOME", "LC_ALL", "HTTPS_PROXY", "ANTHROPIC_BASE_URL", "CLAUDE_CONFIG_DIR"} <= env.keys()
    for name in ("GITHUB_TOKEN", "JUPYTERHUB_API_TOKEN", "AWS_SECRET_ACCESS_KEY", "CLAUDECODE", "KANDEV_NB_LEDGER"):
        assert name not in env
    assert "IS_SANDBOX" not in env and "GOOGLE_APPLICATION_CREDENTIALS" not in env
    bedrock = child_env(base={**base, "CLAUDE_CODE_USE_BEDROCK": "1"})
    assert bedrock["AWS_SECRET_ACCESS_KEY"] == "a" and "GOOGLE_APPLICATION_CREDENTIALS" not in bedrock
    vertex = child_env({"CLAUDE_CODE_USE_VERTEX": "1"}, base=base)  # the switch given as extra counts
    assert vertex["GOOGLE_APPLICATION_CREDENTIALS"] == "/g.json" and "AWS_SECRET_ACCESS_KEY" not in vertex
    assert child_env({"GITHUB_TOKEN": "mine"}, base=base)["GITHUB_TOKEN"] == "mine"  # passed on purpose
