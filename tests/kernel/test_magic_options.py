"""`%%claude` options in a real kernel: interpolation, attachments, errors, named sessions,
the WebSocket transport."""

from __future__ import annotations

from pathlib import Path

import pytest

from kandev_nb.testing import Reply, ScriptedModelServer, pinned_cli, text, tool_use
from tests.kernel.conftest import setup_code
from tests.kernel.kernel_harness import KernelHarness

pytestmark = pytest.mark.timeout(240)


def test_variables_and_attachments_reach_the_cli(
    kernel: KernelHarness, scripted_model: ScriptedModelServer, claude_env: dict[str, str], claude_workdir: Path
) -> None:
    scripted_model.push(Reply(text("Noted.")))
    kernel.execute(setup_code(claude_env, claude_workdir))
    kernel.execute(
        "table = 'sales_2026'\nimport pandas as pd\ndf = pd.DataFrame({'a': range(7)})\n"
        "png = b'\\x89PNG\\r\\n\\x1a\\n' + bytes(16)"
    )
    kernel.execute('%%claude --attach png\nSummarise {table} ({df.shape}); keep {{braces}} and {"json": 1}')
    sent = scripted_model.main_requests[-1].last_user_text()
    assert 'Summarise sales_2026 ((7, 1)); keep {braces} and {"json": 1}' in sent
    assert ".kandev/temp/images/png-" in sent
    attached = list((claude_workdir / ".kandev" / "temp" / "images").glob("png-*.png"))
    assert len(attached) == 1 and attached[0].read_bytes().startswith(b"\x89PNG")


def test_bad_options_and_unknown_variables_fail_before_anything_is_sent(
    kernel: KernelHarness, scripted_model: ScriptedModelServer, claude_env: dict[str, str], claude_workdir: Path
) -> None:
    kernel.execute(setup_code(claude_env, claude_workdir))
    for cell, message in [
        ("%%claude --mode yolo\nhi", "invalid choice"),
        ("%%claude\nLook at {nothing_here}", "nothing_here"),
        ("%%claude --attach no_such_file.txt\nhi", "no such file"),
    ]:
        run = kernel.wait(kernel.start(cell))
        assert run.status == "error"
        assert message in repr(run.error) + run.stdout()
    assert scripted_model.requests == [] or not scripted_model.main_requests


def test_named_sessions_run_side_by_side(
    kernel: KernelHarness, scripted_model: ScriptedModelServer, claude_env: dict[str, str], claude_workdir: Path
) -> None:
    scripted_model.push(Reply(text("A1")), Reply(text("B1")), Reply(text("A2")))
    kernel.execute(setup_code(claude_env, claude_workdir))
    kernel.execute("%%claude --session a\nfirst in a")
    kernel.execute("%%claude --session b\nfirst in b")
    kernel.execute("%%claude --session a\nsecond in a")
    ids = kernel.eval("{k: s.session_id for k, s in kandev_nb.sessions.items()}")
    assert set(ids) == {"a", "b"} and ids["a"] != ids["b"]
    history = repr(scripted_model.main_requests[-1].body["messages"])
    assert "first in a" in history and "first in b" not in history


def test_websocket_transport_cell_runs_a_turn_with_an_approval(
    kernel: KernelHarness, scripted_model: ScriptedModelServer, claude_env: dict[str, str], claude_workdir: Path
) -> None:
    target = claude_workdir / "ws.txt"
    scripted_model.push(
        Reply(tool_use("Write", {"file_path": str(target), "content": "over the socket\n"})),
        Reply(text("Done over WebSocket.")),
    )
    kernel.execute(setup_code(claude_env, claude_workdir, cli_path=str(pinned_cli("2.1.118"))))
    run = kernel.start("%%claude --transport websocket\nwrite ws.txt")
    kernel.answer(kernel.wait_for_approval(), "allow")
    kernel.wait(run)
    assert run.status == "ok", run.error
    assert target.read_text() == "over the socket\n"
    row = kernel.eval("kandev_nb.runs().iloc[-1][['result_subtype', 'cli_version', 'tool_call_count']].tolist()")
    assert row == ["success", "2.1.118", 1]


def test_websocket_transport_refuses_new_cli_versions_clearly(
    kernel: KernelHarness, scripted_model: ScriptedModelServer, claude_env: dict[str, str], claude_workdir: Path
) -> None:
    kernel.execute(setup_code(claude_env, claude_workdir))  # the newest pinned CLI
    run = kernel.wait(kernel.start("%%claude --transport websocket\nhello"))
    assert run.status == "error"
    shown = repr(run.error) + run.stdout()  # a UsageError is printed, not raised with a traceback
    assert "stdio" in shown and "sdk-url" in shown.lower()
    assert not scripted_model.main_requests


def test_quiet_cell_shows_only_the_static_rendering(
    kernel: KernelHarness, scripted_model: ScriptedModelServer, claude_env: dict[str, str], claude_workdir: Path
) -> None:
    scripted_model.push(Reply(text("Quietly **done**.")))
    kernel.execute(setup_code(claude_env, claude_workdir))
    before = len(kernel.widgets)
    run = kernel.execute("%%claude --quiet\nhello")
    assert "Quietly <strong>done</strong>." in "\n".join(run.data("text/html"))
    turn_views = [w for w in list(kernel.widgets.values())[before:] if "kandev-turn" in w.state.get("_dom_classes", ())]
    assert turn_views == []
