"""TurnView driven with AgentEvents: the widget tree and values for each card kind."""

from __future__ import annotations

from typing import Any

import ipywidgets as w
import pytest

from kandev_nb.agent import events as ev
from kandev_nb.agent import tools as t
from kandev_nb.notebook.answers import TURN_MIME
from kandev_nb.notebook.widgets import TurnView
from kandev_nb.notebook.widgets.recording import Recorder
from kandev_nb.notebook.widgets.stream import StreamText
from tests.widgets.conftest import Clock
from tests.widgets.test_static import plain
from tests.widgets.widget_events import call, complete, result


def find(root: w.Widget, cls: str) -> list[w.Widget]:
    """All widgets under `root` (depth first) having `cls` in their _dom_classes."""
    out: list[w.Widget] = []
    stack = [root]
    while stack:
        node = stack.pop(0)
        if cls in getattr(node, "_dom_classes", ()):
            out.append(node)
        stack[0:0] = list(getattr(node, "children", ()))
    return out


def view(clock: Clock, **kw: Any) -> TurnView:
    return TurnView("do it", clock=clock, **kw)


def test_tree_has_the_classes_the_browser_tests_look_for(rec: Recorder, clock: Clock) -> None:
    v = view(clock)
    v.handle(ev.MessageChunk(text="Hello"))
    v.handle(complete(cost_usd=0.0123, input_tokens=10, output_tokens=5, num_turns=1, duration_ms=1500))
    assert v.root is not None
    for cls in ("kandev-turn", "kandev-activity", "kandev-stop", "kandev-body", "kandev-text", "kandev-footer"):
        assert find(v.root, cls), cls
    footer = find(v.root, "kandev-footer")[0]
    assert "$0.0123" in footer.value and "1.5 s" in footer.value and "API turns" in footer.value


def test_streamed_text_is_exactly_the_text_and_coalesced(rec: Recorder, clock: Clock) -> None:
    v = view(clock)
    start = len(rec.messages)
    pieces = [f"word{i} " + ("\n\n" if i % 50 == 0 else "") for i in range(2000)]
    for piece in pieces:
        clock.now += 0.001  # 1,000 deltas per second
        v.handle(ev.MessageChunk(text=piece))
    v.handle(complete())
    seg = v.segments[0]
    assert seg.text == "".join(pieces) == v.turn.text
    appends = [m.data["content"] for m in rec.messages[start:] if m.method == "custom"]
    assert "".join(a["text"] for a in appends) == seg.text
    assert [a["at"] for a in appends] == [sum(len(x["text"]) for x in appends[:i]) for i in range(len(appends))]
    # 2 s of deltas at 1 kHz: <= 20 updates per second, first one at once
    assert appends[0]["text"] == pieces[0]
    assert v.text_updates <= 2 * 20 + 2
    assert v.text_updates / v.deltas < 0.03


def test_first_token_is_sent_at_once(rec: Recorder, clock: Clock) -> None:
    v = view(clock)
    v.handle(ev.SessionStatus(model="m"))
    v.handle(ev.MessageChunk(text="H"))
    assert v.segments[0].pending == 0 and v.text_updates == 1


def test_text_before_a_tool_card_is_flushed_first(rec: Recorder, clock: Clock) -> None:
    v = view(clock)
    v.handle(ev.MessageChunk(text="a"))
    v.handle(ev.MessageChunk(text="b"))  # same instant: buffered
    assert v.segments[0].pending == 1
    v.handle(call("t1", "Read", {"file_path": "/x.py"}))
    assert v.segments[0].pending == 0
    v.handle(ev.MessageChunk(text="after"))
    assert len(v.segments) == 2 and v.segments[1].text == "after"
    body = v.body.children
    assert isinstance(body[0], StreamText) and "kandev-tool-card" in body[1]._dom_classes and body[2] is v.segments[1]


def test_thinking_is_a_collapsed_accordion(rec: Recorder, clock: Clock) -> None:
    v = view(clock)
    v.handle(ev.Reasoning(text="hmm"))
    v.handle(ev.MessageChunk(text="answer"))
    acc = v.body.children[0]
    assert isinstance(acc, w.Accordion) and acc.selected_index is None and acc.titles == ("Thinking",)
    assert acc.children[0].text == "hmm" and v.segments[1].text == "answer"


def test_shell_card(rec: Recorder, clock: Clock) -> None:
    v = view(clock)
    c = call("t1", "Bash", {"command": "make test", "description": "run tests"})
    v.handle(c)
    card = v.cards["t1"]
    assert card.kind == "shell_exec" and card.status == "running"
    assert "kandev-status-running" in card.box._dom_classes and "⏳" in card.html.value
    assert "Running Bash" in v.activity.value
    clock.now += 2.5
    v.handle(result(c, "ok\n", is_error=True, structured={"stdout": "ok\n", "stderr": "boom\n", "interrupted": False}))
    html = card.html.value
    assert card.status == "error" and "kandev-status-error" in card.box._dom_classes
    assert "make test" in html and "run tests" in html and "boom" in html and "kandev-stderr" in html
    assert "exit code" in html and "2.5 s" in html


def test_modify_file_card_shows_a_coloured_diff_with_counts(rec: Recorder, clock: Clock) -> None:
    v = view(clock)
    c = call("t1", "Edit", {"file_path": "/p/a.py", "old_string": "return 1\n", "new_string": "return 2\nx = 3\n"})
    v.handle(c)
    v.handle(result(c, "The file /p/a.py has been updated."))
    html = v.cards["t1"].html.value
    assert "kandev-diff" in html and "+2" in html and "−1" in html
    assert "kandev-diff-add" in html and "return 2" in plain(html)  # added rows, theme colours


def test_read_search_http_generic_cards(rec: Recorder, clock: Clock) -> None:
    v = view(clock)
    r1 = call("r", "Read", {"file_path": "/p/a.py", "offset": 10, "limit": 5})
    v.handle(r1)
    v.handle(
        result(
            r1,
            "x",
            structured={"file": {"content": "def f():\n    pass\n", "numLines": 5, "startLine": 10, "totalLines": 80}},
        )
    )
    assert "lines 10–14 of 80" in v.cards["r"].html.value and "/p/a.py" in v.cards["r"].html.value
    g = call("g", "Grep", {"pattern": "TODO", "path": "src"})
    v.handle(g)
    v.handle(result(g, "src/a.py\nsrc/b.py", structured={"filenames": ["src/a.py", "src/b.py"], "numFiles": 2}))
    assert "2 matches" in v.cards["g"].html.value and "src/b.py" in v.cards["g"].html.value
    h = call("h", "WebFetch", {"url": "https://example.org/x", "prompt": "summarise"})
    v.handle(h)
    v.handle(result(h, "page text", structured={"code": 200}))
    assert "HTTP 200" in v.cards["h"].html.value and "https://example.org/x" in v.cards["h"].html.value
    m = call("m", "mcp__srv__tool", {"q": 1})
    v.handle(m)
    v.handle(result(m, "the output"))
    assert (
        v.cards["m"].kind == "generic"
        and "the output" in v.cards["m"].html.value
        and "&quot;q&quot;" in v.cards["m"].html.value
    )


def test_subagent_card_nests_its_events(rec: Recorder, clock: Clock) -> None:
    v = view(clock)
    task = call("task1", "Task", {"description": "explore", "prompt": "look around", "subagent_type": "Explore"})
    v.handle(task)
    inner = call("in1", "Bash", {"command": "ls"}, parent="task1")
    v.handle(ev.MessageChunk(text="sub says", parent_tool_use_id="task1"))
    v.handle(inner)
    v.handle(result(inner, "a\nb", structured={"stdout": "a\nb", "stderr": ""}))
    v.handle(
        result(task, "found it", structured={"totalDurationMs": 3000, "totalTokens": 1234, "totalToolUseCount": 1})
    )
    card = v.cards["task1"]
    assert card.nested is not None
    nested = card.nested.children
    assert isinstance(nested[0], StreamText) and nested[0].text == "sub says"
    assert nested[1] is v.cards["in1"].box
    assert v.turn.text == ""  # subagent text is not the main answer
    assert "1.2k tokens" in card.html.value and "found it" in card.html.value
    assert v.body.children == (card.box,)


def test_todos_checklist_updates_in_place(rec: Recorder, clock: Clock) -> None:
    v = view(clock)
    items = (
        t.TodoItem(id="1", description="write", status="in_progress", active_form="Writing"),
        t.TodoItem(id="2", description="test"),
    )
    v.handle(ev.Todos(items=items))
    todo = v.todo_card
    assert todo is not None and "Writing" in todo.html.value and "☐" in todo.html.value
    v.handle(ev.Todos(items=(items[0].model_copy(update={"status": "completed"}), items[1])))
    assert v.todo_card is todo and "☑" in todo.html.value and "1/2 done" in todo.html.value
    assert find(v.root, "kandev-todo-card") == [todo.html]


def test_long_output_is_cut_until_show_all(rec: Recorder, clock: Clock) -> None:
    v = view(clock)
    big = "".join(f"line {i}\n" for i in range(100_000))
    c = call("t1", "Bash", {"command": "seq"})
    v.handle(c)
    before = rec.total_bytes()
    v.handle(result(c, big, structured={"stdout": big, "stderr": ""}))
    card = v.cards["t1"]
    sent_preview = rec.total_bytes() - before
    assert card.more is not None and card.more.description == "Show all"
    assert sent_preview < 40_000 and "line 99999" not in card.html.value
    assert card.output == big and v.turn.tools["t1"].update is not None and v.turn.tools["t1"].update.output == big
    mark = rec.total_bytes()
    card.more.click()
    assert "line 99999" in card.html.value and rec.total_bytes() - mark > len(big)
    assert card.more not in card.box.children


def test_context_gauge_and_retry_in_header(rec: Recorder, clock: Clock) -> None:
    v = view(clock)
    v.handle(ev.ContextWindow(size=200_000, used=50_000))
    assert "50.0k / 200.0k" in v.gauge.value and "25%" in v.gauge.value
    v.handle(ev.ApiRetry(attempt=2, max_retries=10, status=529))
    assert "API retry 2/10" in v.activity.value and "529" in v.activity.value


def test_activity_line_ticks_while_a_tool_runs(rec: Recorder, clock: Clock) -> None:
    v = view(clock)
    v.handle(call("t1", "Bash", {"command": "sleep 100"}))
    clock.now += 65
    v._render_activity()  # what the ticker task does every tick_s
    assert "1 min 05 s" in v.activity.value and "Running Bash" in v.activity.value


async def test_ticker_runs_on_the_loop_and_stops_at_finish(rec: Recorder) -> None:
    import asyncio

    v = TurnView("x", tick_s=0.01)
    v.handle(ev.MessageChunk(text="x"))
    assert v._ticker is not None
    before = rec.count()
    await asyncio.sleep(0.1)
    assert rec.count() > before  # activity updates sent by the ticker
    task = v._ticker
    v.finish()
    await asyncio.sleep(0)
    assert task.cancelled() or task.done()


async def test_throttle_timer_flushes_buffered_text_on_the_loop(rec: Recorder) -> None:
    import asyncio

    v = TurnView("x", interval_s=0.02, max_wait_s=0.05, tick_s=0)
    v.handle(ev.MessageChunk(text="a"))
    v.handle(ev.MessageChunk(text="b"))
    assert v.segments[0].pending == 1
    await asyncio.sleep(0.15)
    assert v.segments[0].pending == 0 and v.text_updates == 2


def test_small_updates_wait_longer_than_big_ones(rec: Recorder, clock: Clock) -> None:
    v = view(clock, interval_s=0.05, min_chars=100, max_wait_s=0.25)
    v.handle(ev.MessageChunk(text="first"))  # at once
    clock.now += 0.1
    v.handle(ev.MessageChunk(text="small"))  # 5 chars: waits up to 0.25 s
    assert v.text_updates == 1
    clock.now += 0.2
    v.handle(ev.MessageChunk(text="x"))
    assert v.text_updates == 2
    clock.now += 0.06
    v.handle(ev.MessageChunk(text="y" * 100))  # a full chunk after the 0.05 s interval: sent
    assert v.text_updates == 3


def test_stop_button_calls_on_stop(rec: Recorder, clock: Clock) -> None:
    calls: list[int] = []
    v = view(clock, on_stop=lambda: calls.append(1))
    v.stop.click()
    assert calls == [1] and v.stop.disabled


def test_error_and_interrupted_footer(rec: Recorder, clock: Clock) -> None:
    v = view(clock)
    v.handle(ev.Error(message="HTTP 500 boom", subtype="success", api_error_status=500))
    v.handle(complete(is_error=True, result_subtype="success"))
    assert any("HTTP 500 boom" in n.value for n in find(v.root, "kandev-note"))
    assert "Failed" in v.activity.value


def test_finish_closes_every_widget_and_returns_the_static_bundle(rec: Recorder, clock: Clock) -> None:
    v = view(clock)
    v.handle(ev.MessageChunk(text="# Title\n\nbody"))
    c = call("t1", "Bash", {"command": "ls"})
    v.handle(c)
    v.handle(result(c, "out", structured={"stdout": "out", "stderr": ""}))
    v.handle(complete(cost_usd=0.5))
    opened = {m.comm_id for m in rec.messages if m.kind == "open"}
    bundle = v.finish()
    closed = {m.comm_id for m in rec.messages if m.kind == "close"}
    from kandev_nb.notebook.widgets.stream import kandev_lib

    lib = kandev_lib()  # only the per-kernel library stays, and its layout (made with it, in
    assert opened - closed <= {lib.model_id, lib.layout.model_id}  # this test when it runs first)
    assert v.root is None and not v.cards
    assert set(bundle) == {"text/html", "text/markdown", "text/plain", TURN_MIME}  # src/mime.ts draws it in Lab
    assert '<h4 class="kandev-heading jp-toc-ignore tocSkip kandev-h1">Title</h4>' in bundle["text/html"]
    assert "# Title" in bundle["text/markdown"]
    v.handle(ev.MessageChunk(text="late"))  # ignored after finish


def test_frontend_sync_gets_a_reset(rec: Recorder, clock: Clock) -> None:
    v = view(clock)
    v.handle(ev.MessageChunk(text="hello"))
    seg = v.segments[0]
    rec.comm_of(seg).receive({"method": "custom", "content": {"type": "sync", "have": 0}})
    last = rec.messages[-1].data
    assert last["content"] == {"type": "reset", "text": "hello"}
    n = rec.count()
    rec.comm_of(seg).receive({"method": "custom", "content": {"type": "sync", "have": 5}})
    assert rec.count() == n  # up to date: nothing sent


@pytest.mark.parametrize("kind", ["text", "tool"])
def test_events_after_complete_do_not_break(rec: Recorder, clock: Clock, kind: str) -> None:
    v = view(clock)
    v.handle(complete())
    v.handle(ev.MessageChunk(text="x") if kind == "text" else result(call("z", "Bash", {"command": "x"}), "y"))
    assert v.footer.value
