"""The static rendering alone: Turn -> HTML/Markdown -> a notebook output -> nbconvert HTML,
with no kernel and no widget state."""

from __future__ import annotations

import html as htmllib
import re

import nbformat
from nbconvert import HTMLExporter, MarkdownExporter

from kandev_nb.agent import events as ev
from kandev_nb.agent import tools as t
from kandev_nb.agent.turn import Turn
from kandev_nb.notebook.widgets import mime_bundle, render_html, render_markdown
from tests.widgets.widget_events import call, complete, result


def plain(html: str) -> str:
    """Visible text of an HTML fragment (tags dropped, entities decoded)."""
    return htmllib.unescape(re.sub(r"<[^>]+>", "", html))


def sample_turn() -> Turn:
    turn = Turn(prompt="Fix the bug in a.py", session_name="default")
    events: list[ev.AgentEvent] = [
        ev.Reasoning(text="I should read the file."),
        ev.MessageChunk(text="Let me look.\n\n```python\nx = 1\n"),
        ev.MessageChunk(text="```\n\n| a | b |\n|---|---|\n| 1 | 2 |\n"),
    ]
    read = call("t1", "Read", {"file_path": "/p/a.py"})
    edit = call("t2", "Edit", {"file_path": "/p/a.py", "old_string": "return 1", "new_string": "return 2"})
    bash = call("t3", "Bash", {"command": "seq 100000"})
    task = call("t4", "Task", {"description": "check", "prompt": "check it"})
    inner = call("t5", "Grep", {"pattern": "def"}, parent="t4")
    big = "".join(f"{i}\n" for i in range(1, 100001))
    events += [
        read,
        result(
            read,
            "x",
            structured={
                "file": {"content": "def f():\n    return 1\n", "numLines": 2, "startLine": 1, "totalLines": 2}
            },
        ),
        edit,
        ev.PermissionDecided(request_id="r1", tool_name="Edit", behavior="allow", decided_by="person", waited_ms=2300),
        result(edit, "updated"),
        bash,
        result(bash, big, structured={"stdout": big, "stderr": "warning: x\n"}),
        task,
        inner,
        result(inner, "a.py", structured={"filenames": ["a.py"], "numFiles": 1}),
        result(task, "all good", structured={"totalTokens": 500, "totalToolUseCount": 1}),
        ev.Todos(items=(t.TodoItem(id="1", description="fix", status="completed"),)),
        ev.ApiRetry(attempt=1, max_retries=10, status=529),
        ev.MessageChunk(text="Fixed <script>alert(1)</script> it."),
        ev.ContextWindow(size=200_000, used=30_000),
        complete(
            cost_usd=0.0421,
            input_tokens=1200,
            output_tokens=300,
            cache_read_input_tokens=5000,
            cache_creation_input_tokens=100,
            duration_ms=12_000,
            duration_api_ms=9_000,
            num_turns=5,
        ),
    ]
    for i, e in enumerate(events):
        turn.add(e, float(i))
    return turn


def test_render_html_holds_the_whole_turn() -> None:
    turn = sample_turn()
    h = render_html(turn)
    text = plain(h)
    assert h.startswith('<div class="kandev-turn kandev-static mathjax_ignore tex2jax_ignore"')
    assert "Let me look." in text and "<table>" in h and "x = 1" in text
    assert h.count("<details") >= 6  # thinking + 5 tool cards
    assert "I should read the file." in text and "Thinking" in text
    assert "kandev-kind-modify_file" in h and "kandev-diff" in h and "allowed by you after 2.3 s" in text
    assert "kandev-kind-subagent_task" in h and "kandev-nested" in h
    # nested card inside the subagent card
    sub = h[h.index("kandev-kind-subagent_task") :]
    assert "kandev-kind-code_search" in sub
    assert "☑" in text and "API retry 1/10" in text
    assert "$0.0421" in text and "cache read 5.0k" in text and "12.0 s" in text and "API turns" in text
    assert "context 30.0k / 200.0k" in text
    # long output: a preview and where the full text is
    assert "99999" not in text and "kandev_nb.tool_call('t3').update.output" in text and "warning: x" in text
    # raw HTML from the agent is shown, not run
    assert "<script>" not in h and "&lt;script&gt;" in h


def test_render_markdown() -> None:
    md = render_markdown(sample_turn())
    assert "Let me look." in md and "| a | b |" in md
    assert "<details><summary>Thinking</summary>" in md
    assert "```diff" in md and "```bash\nseq 100000\n```" in md and "- [x] fix" in md
    assert "**$0.0421**" in md and "99999" not in md


def test_static_output_survives_nbconvert_without_a_kernel() -> None:
    turn = sample_turn()
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("%%claude\nFix the bug in a.py")
    cell.outputs = [nbformat.v4.new_output("display_data", data=mime_bundle(turn))]
    nb.cells.append(cell)
    nbformat.validate(nb)
    reread = nbformat.reads(nbformat.writes(nb), as_version=4)  # a saved and reopened notebook
    body, _ = HTMLExporter().from_notebook_node(reread)
    assert "kandev-turn" in body and "kandev-tool-card" in body and "$0.0421" in body
    assert "Let me look." in plain(body) and "<script>alert" not in body
    md, _ = MarkdownExporter().from_notebook_node(reread)
    assert "Let me look." in md and "$0.0421" in md


def test_turn_reprs_use_the_static_rendering() -> None:
    turn = sample_turn()
    assert turn._repr_html_() == render_html(turn)
    assert turn._repr_markdown_() == render_markdown(turn)


def test_running_turn_renders_without_footer() -> None:
    turn = Turn(prompt="x")
    turn.add(ev.MessageChunk(text="partial"))
    turn.add(call("t1", "Bash", {"command": "sleep 9"}))
    h = render_html(turn)
    assert "partial" in h and "⏳" in h and "kandev-footer" not in h


def test_terminal_colours_are_stripped_for_display_but_kept_in_the_data() -> None:
    turn = Turn(prompt="run the tests")
    bash = call("t1", "Bash", {"command": "pytest"})
    coloured = "\x1b[32m1 passed\x1b[0m in 0.01s\n"
    for e in (
        bash,
        result(bash, coloured, structured={"stdout": coloured, "stderr": "\x1b[1mwarn\x1b[0m\n"}),
        complete(),
    ):
        turn.add(e)
    html, md = render_html(turn), render_markdown(turn)
    assert "1 passed in 0.01s" in plain(html) and "\x1b" not in html
    assert "1 passed in 0.01s" in md and "\x1b" not in md
    update = turn.tools["t1"].update
    assert update is not None and "\x1b[32m" in update.output  # nothing the agent produced is lost
