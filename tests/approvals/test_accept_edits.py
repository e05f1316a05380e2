"""What acceptEdits runs without asking, on the real CLI (issue 34, point 4), and the one-line
policy of the README that makes the destructive ones ask."""

from __future__ import annotations

import re
from html import unescape
from pathlib import Path
from typing import Any

import pytest

import kandev_nb
from kandev_nb.agent import events as ev
from kandev_nb.agent.unasked import ACCEPT_EDITS_COMMANDS
from kandev_nb.render.static import render_html, render_markdown
from kandev_nb.testing import Reply, ScriptedModelServer, text, tool_use
from tests.approvals.conftest import SessionMaker

pytestmark = pytest.mark.timeout(180)
README = Path(__file__).parents[2] / "README.md"
ALL = pytest.mark.parametrize("claude_cli", ["2.1.332", "2.1.197", "2.1.118"], indirect=True)

UNASKED = [
    "touch t.txt",
    "mkdir d",
    "cp a.txt a2.txt",
    "mv b.txt b2.txt",
    "rm c.txt",
    "sed -i s/a/z/ a.txt",
    "rmdir d",
    "rm -rf e",
]
"""Commands on paths in the working directory that acceptEdits runs unasked (each a word of
ACCEPT_EDITS_COMMANDS)."""


def _project(workdir: Path) -> None:
    for name in ("a.txt", "b.txt", "c.txt"):
        (workdir / name).write_text(f"{name[0]}\n")
    (workdir / "e").mkdir()
    (workdir / "e" / "f.txt").write_text("f\n")


def _bash(command: str) -> Reply:
    return Reply(tool_use("Bash", {"command": command, "description": command.split()[0]}))


def one_line_policy() -> Any:
    """The README's one-line policy for acceptEdits, evaluated as written there."""
    found = re.search(r"`(kandev_nb\.configure\(approve=kandev_nb\.Rules\(ask=\[[^`]*\]\)\))`", README.read_text())
    assert found, "the README shows no one-line ask policy for acceptEdits"
    line = found.group(1)
    return eval(line.removeprefix("kandev_nb.configure(approve=").removesuffix(")"), {"kandev_nb": kandev_nb})


@ALL
async def test_accept_edits_runs_file_commands_in_the_project_unasked_and_says_the_mode_allowed_them(
    make_session: SessionMaker,
    scripted_model: ScriptedModelServer,
    claude_workdir: Path,
    tmp_path: Path,
    request: pytest.FixtureRequest,
) -> None:
    _project(claude_workdir)
    outside = tmp_path / "outside.txt"
    asked_for = ["chmod +x a.txt", "ln -s a.txt l", "python3 -c 'print(1)'", f"touch {outside}"]
    # `sed -n 1p` runs unasked in supervised on every CLI (its read-only check); 2.1.118 asks
    # for it in acceptEdits all the same (measured)
    quirk = request.node.callspec.params["claude_cli"] == "2.1.118"
    scripted_model.push(
        Reply(tool_use("Write", {"file_path": str(claude_workdir / "w.txt"), "content": "w\n"})),
        *(_bash(c) for c in UNASKED + asked_for),
        _bash("ls"),
        _bash("sed -n 1p a.txt"),
        _bash("sed s/z/y/ a.txt"),
        Reply(text("done")),
    )
    asked: list[str] = []

    def deny(event: ev.AgentEvent) -> None:
        if isinstance(event, ev.PermissionRequest):
            asked.append(str(event.input.get("command")))
            event.approval.deny("not now")

    turn = await make_session(mode="acceptEdits").run("go", consumers=[deny])
    assert asked == asked_for + ["sed -n 1p a.txt"] * quirk  # everything else ran without a question
    assert not (claude_workdir / "c.txt").exists() and (claude_workdir / "b2.txt").exists()
    assert (claude_workdir / "a.txt").read_text() == "z\n" and (claude_workdir / "a2.txt").exists()
    assert not (claude_workdir / "e").exists() and not (claude_workdir / "d").exists()
    assert (claude_workdir / "t.txt").exists() and (claude_workdir / "w.txt").exists()
    assert {c.split()[0] for c in UNASKED} <= ACCEPT_EDITS_COMMANDS
    by = {
        r.call.input.get("command", r.call.tool_name): (r.decision.decided_by if r.decision else None)
        for r in turn.tools.values()
    }
    assert by == {
        "Write": "mode",
        **dict.fromkeys(UNASKED, "mode"),
        **dict.fromkeys(asked_for, "person"),
        "ls": "settings",
        "sed -n 1p a.txt": "person" if quirk else "settings",  # read-only: the CLI's check, not the mode
        "sed s/z/y/ a.txt": "mode",  # prints only, but asks in supervised: the mode ran it
    }
    # The card says so, live (the same HTML) and saved.
    html, md = render_html(turn), render_markdown(turn)
    assert html.count("allowed by acceptEdits mode") == len(UNASKED) + 2
    assert md.count("allowed by acceptEdits mode") == len(UNASKED) + 2
    assert "allowed by Claude Code's permission settings" in unescape(html)  # ls, sed -n: the CLI's read-only check
    assert "allowed by acceptEdits mode after" not in html  # nobody waited


async def test_the_readme_one_line_policy_makes_destructive_commands_ask_in_accept_edits(
    make_session: SessionMaker, scripted_model: ScriptedModelServer, claude_workdir: Path
) -> None:
    _project(claude_workdir)
    policy = one_line_policy()
    scripted_model.push(
        *(_bash(c) for c in UNASKED),
        Reply(tool_use("Edit", {"file_path": str(claude_workdir / "b.txt"), "old_string": "b", "new_string": "B"})),
        Reply(text("done")),
    )
    asked: list[str] = []

    def deny(event: ev.AgentEvent) -> None:
        if isinstance(event, ev.PermissionRequest):
            asked.append(str(event.input.get("command", event.tool_name)))
            event.approval.deny("no deleting")

    turn = await make_session(mode="acceptEdits").run("go", consumers=[deny], approve=policy)
    destructive = ["cp a.txt a2.txt", "mv b.txt b2.txt", "rm c.txt", "sed -i s/a/z/ a.txt", "rmdir d", "rm -rf e"]
    assert asked == destructive  # touch, mkdir and the Edit still run unasked
    assert (claude_workdir / "c.txt").exists() and (claude_workdir / "e" / "f.txt").exists()
    assert (claude_workdir / "a.txt").read_text() == "a\n" and (claude_workdir / "b.txt").read_text() == "B\n"
    assert (claude_workdir / "t.txt").exists() and (claude_workdir / "d").is_dir()
    assert turn.mode == "acceptEdits"
