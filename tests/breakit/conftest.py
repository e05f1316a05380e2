"""Fixtures for the break-it tests: a tiny fake `claude` that logs its argv and stdin."""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from kandev_nb.notebook.state import NotebookState

FAKE = textwrap.dedent("""\
    #!{python}
    import json, os, sys
    if "--version" in sys.argv:
        print("2.1.332 (Claude Code)"); sys.exit(0)
    log = open(os.environ["CLAUDE_FAKE_LOG"], "a")
    log.write("ARGV " + json.dumps(sys.argv[1:]) + "\\n"); log.flush()
    if "--resume" in sys.argv and os.environ.get("CLAUDE_FAKE_REFUSE_RESUME"):
        sys.stderr.write("No conversation found\\n"); sys.exit(1)
    SID = "11111111-2222-3333-4444-555555555555"
    def out(o):
        sys.stdout.write((o if isinstance(o, str) else json.dumps(o)) + "\\n"); sys.stdout.flush()
    for line in sys.stdin:
        log.write("IN " + line); log.flush()
        m = json.loads(line)
        if m.get("type") == "control_request":
            out({{"type": "control_response", "response": {{"subtype": "success",
                 "request_id": m["request_id"], "response": {{}}}}}})
            if m["request"]["subtype"] == "interrupt":
                out({{"type": "result", "subtype": "error_during_execution", "is_error": True, "session_id": SID}})
            continue
        if m.get("type") != "user":
            continue
        out({{"type": "system", "subtype": "init", "session_id": SID, "model": "m", "tools": [], "cwd": os.getcwd()}})
        scenario = os.environ.get("CLAUDE_FAKE_SCENARIO", "ok")
        if scenario == "approval":
            out({{"type": "control_request", "request_id": "perm-1", "request": {{"subtype": "can_use_tool",
                 "tool_name": "Write", "input": {{"file_path": "x", "content": "y"}}, "tool_use_id": "toolu_1"}}}})
            continue  # the answer (a control_response) ends the turn below
        if scenario == "infinite_tokens":
            out(
                '{{"type": "result", "subtype": "success", "session_id": "%s", '
                '"usage": {{"input_tokens": Infinity}}}}' % SID
            )
            continue
        out({{"type": "assistant", "message": {{"id": "msg_1", "role": "assistant", "model": "m",
             "content": [{{"type": "text", "text": "ok"}}]}}, "session_id": SID, "parent_tool_use_id": None}})
        out({{"type": "result", "subtype": "success", "is_error": False, "session_id": SID,
             "total_cost_usd": 0.001, "usage": {{"input_tokens": 1, "output_tokens": 1}}}})
""")


@pytest.fixture
def fake_cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fake `claude` (path returned); it appends its argv and stdin lines to CLAUDE_FAKE_LOG
    (a CLAUDE_* name: the CLI inherits those from the kernel, issue 24.2)."""
    script = tmp_path / "claude"
    script.write_text(FAKE.format(python=sys.executable))
    script.chmod(0o755)
    monkeypatch.setenv("CLAUDE_FAKE_LOG", str(tmp_path / "fake.log"))
    monkeypatch.setenv("KANDEV_NB_LEDGER", str(tmp_path / "ledger.sqlite"))
    return script


@pytest.fixture
def magic_state(fake_cli: Path, tmp_path: Path, notebook_state: NotebookState) -> Iterator[None]:
    """A fresh notebook state whose settings point at the fake CLI."""
    notebook_state.settings.cli_path = str(fake_cli)
    notebook_state.settings.cwd = str(tmp_path)
    notebook_state.settings.kernel_tools = False
    notebook_state.settings.record = False
    yield
