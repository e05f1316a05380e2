"""Issue 27 point 3: ``%claude_permissions`` in a real kernel with the real CLI; the test is the frontend."""

from __future__ import annotations

import html
import time
from pathlib import Path

import pytest

from kandev_nb.testing import Reply, ScriptedModelServer, text, tool_use
from tests.kernel.conftest import setup_code
from tests.kernel.kernel_harness import KernelHarness, WidgetModel
from tests.kernel.test_approvals import answer, wait_for_card, wait_until_decided, with_class

pytestmark = pytest.mark.timeout(300)


def panel_body(kernel: KernelHarness, panel: WidgetModel, contains: str, timeout: float = 30) -> str:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        body = str(panel.state.get("body", ""))
        if contains in body:
            return body
        kernel.pump_for(0.1)
    raise AssertionError(f"the panel never showed {contains!r}: {panel.state.get('body')!r}")


def test_revoking_a_session_grant_from_the_panel_makes_the_next_same_call_ask_again(
    kernel: KernelHarness, scripted_model: ScriptedModelServer, claude_env: dict[str, str], claude_workdir: Path
) -> None:
    claude = claude_workdir / ".claude"
    claude.mkdir()
    (claude / "settings.json").write_text('{"permissions": {"deny": ["Read(./.env)"]}}')
    scripted_model.push(
        Reply(tool_use("Bash", {"command": "touch a1.txt", "description": "t"})),
        Reply(text("one")),
        Reply(tool_use("Bash", {"command": "touch a2.txt", "description": "t"})),
        Reply(text("two")),
        Reply(tool_use("Bash", {"command": "touch a3.txt", "description": "t"})),
        Reply(text("three")),
    )
    kernel.execute(setup_code(claude_env, claude_workdir))
    kernel.execute("kandev_nb.configure(approve=kandev_nb.Rules(deny=['Bash(rm:*)']))")
    run = kernel.start("%%claude\nTouch one")
    card = wait_for_card(kernel, 1)
    answer(kernel, card, "allow_always")
    assert "for the session" in wait_until_decided(kernel, card)
    kernel.wait(run)
    given_in = run.reply.get("execution_count")

    shown = kernel.execute("%claude_permissions")
    assert shown.error is None, shown.error
    panel = with_class(kernel, "kandev-permissions")[-1]
    body = panel_body(kernel, panel, "Bash(touch:*)")
    assert f"given in cell [{given_in}]" in body and "Mode: <b>supervised" in body
    assert "Read(./.env)" in body and "projectSettings" in body  # the CLI's list_permission_rules
    assert "kernel tools: on" in body
    assert "the notebook's policy" in html.unescape(body) and "deny <code>Bash(rm:*)</code>" in body
    kernel.send_custom(panel, {"action": "revoke", "rule": "Bash(touch:*)"})
    body = panel_body(kernel, panel, "revoked: asked again")
    # The CLI still lists its copy of the grant (list_permission_rules); the panel says kandev-nb asks anyway.
    held = body.split("Rules the CLI holds", 1)[1]
    assert "<code>Bash(touch:*)</code>" in held, held
    assert "kandev-nb asks anyway" in held.split("<code>Bash(touch:*)</code>", 1)[1].split("</tr>", 1)[0], held

    run = kernel.start("%%claude\nTouch two")
    second = wait_for_card(kernel, 2)  # old main: no panel; a kept grant runs `touch a2.txt` unasked
    answer(kernel, second, "allow")
    kernel.wait(run)
    assert run.error is None and (claude_workdir / "a2.txt").exists()
    assert kernel.eval("[r.decision.decided_by for r in kandev_nb.last_turn().tools.values()]") == ["person"]

    run = kernel.start("%%claude\nTouch three")
    third = wait_for_card(kernel, 3)  # still asked: the grant stays revoked (and the CLI dropped its rule)
    answer(kernel, third, "deny", reason="enough")
    kernel.wait(run)
    assert not (claude_workdir / "a3.txt").exists()


def test_line_magics_print_their_help_with_a_question_mark(
    kernel: KernelHarness, claude_env: dict[str, str], claude_workdir: Path
) -> None:
    kernel.execute(setup_code(claude_env, claude_workdir))
    for name, words in (
        ("claude_undo", "--turn"),
        ("claude_mcp", "--reconnect"),
        ("claude_permissions", "--revoke"),
        ("claude_stats", "--team"),
    ):
        run = kernel.execute(f"%{name}?")
        assert run.error is None, (name, run.error)  # old main: "unknown arguments ?"
        assert words in str(run.reply.get("payload")), (name, run.reply)  # IPython pages the docstring
