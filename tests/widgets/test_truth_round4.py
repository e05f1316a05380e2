"""Issue 34 on the rendering functions: what a card, a footer and the inserted Markdown cell say
(points 4, 6, 7 and 8). The real CLI and a real kernel check the same in
tests/approvals/test_accept_edits.py, tests/kernel/test_answer_cells.py and
tests/ledger/test_tool_time.py."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from kandev_nb.agent import events as ev
from kandev_nb.agent import tools as t
from kandev_nb.agent.structured import OutputSpec, mark_wrapped
from kandev_nb.agent.turn import Turn
from kandev_nb.notebook.answers import markdown_cell_text
from kandev_nb.notebook.widgets import mime_bundle
from kandev_nb.notebook.widgets.approval import header_html
from kandev_nb.render import card_html
from kandev_nb.render import html as render
from kandev_nb.render.mdsafe import escape_math
from tests.widgets.test_static import plain
from tests.widgets.widget_events import call, complete, result

DOLLARS = "Revenue rose from $41.5k in July to $61k in August."


def _turn(events: list[ev.AgentEvent], times: list[float] | None = None) -> Turn:
    turn = Turn(prompt="p", session_name="s")
    for i, e in enumerate(events):
        turn.add(e, times[i] if times else float(i))
    return turn


# -- point 6: "Insert as Markdown cell below" keeps dollars ------------------------------------


def test_escape_math_writes_dollars_in_prose_as_jupyterlab_shows_them_and_leaves_code_alone() -> None:
    # "\\\\$" reaches the page as "\\$", which JupyterLab's MathJax (processEscapes) shows as "$"
    assert escape_math(DOLLARS) == "Revenue rose from \\\\$41.5k in July to \\\\$61k in August."
    assert escape_math("$$x^2$$ and $y$") == "\\\\$\\\\$x^2\\\\$\\\\$ and \\\\$y\\\\$"  # no math in answers
    fenced = "```bash\necho $HOME\n```"
    assert escape_math(fenced) == fenced
    assert escape_math("run `echo $PATH` for $5") == "run `echo $PATH` for \\\\$5"
    # a Markdown escape ("\\$") is not enough in JupyterLab: made "\\\\$"; "\\\\$" is kept
    assert escape_math("already \\$5, or \\\\$6") == "already \\\\$5, or \\\\$6"
    in_list = "- item costs $3\n\n  ```python\n  x = '$'\n  ```\n"
    assert escape_math(in_list) == "- item costs \\\\$3\n\n  ```python\n  x = '$'\n  ```\n"  # the parser's reading
    assert escape_math("a $1\r\nb $2\rc") == "a \\\\$1\r\nb \\\\$2\rc"  # line endings kept
    assert escape_math("<b>&amp;</b> ![x](http://e/x.png)") == "<b>&amp;</b> ![x](http://e/x.png)"  # nothing else


def test_the_inserted_markdown_is_the_answer_with_dollars_escaped_and_nothing_without_an_answer() -> None:
    turn = _turn([ev.MessageChunk(text=DOLLARS), complete()])
    assert markdown_cell_text(turn) == escape_math(DOLLARS) and "\\\\$41.5k" in markdown_cell_text(turn)
    assert markdown_cell_text(_turn([complete()])) == ""  # a --schema turn that only called StructuredOutput
    assert markdown_cell_text(_turn([ev.MessageChunk(text="\n  \n"), complete()])) == ""


# -- point 7: the StructuredOutput card shows the answer, not the wrapper ---------------------


def _structured(items: Any, spec: OutputSpec | None) -> Turn:
    c = call("toolu_s", "StructuredOutput", {"items": items})
    r = result(c, "Structured output provided successfully")
    return _turn([mark_wrapped(c, spec), mark_wrapped(r, spec), complete()])


def test_a_structured_output_card_shows_the_records_not_the_items_wrapper() -> None:
    rows = [{"month": "2026-07", "revenue": 41.5}, {"month": "2026-08", "revenue": 38.0}]
    spec = OutputSpec.of(list[dict[str, Any]])
    assert spec.wrapped == "items"
    bundle = mime_bundle(_structured(rows, spec))
    for text in (plain(bundle["text/html"]), bundle["text/markdown"]):
        assert '"items"' not in text, text
        assert "2 records" in text and '"month": "2026-07"' in text and "41.5" in text
    # a schema of the person's own with an "items" property is shown as it is
    own = mime_bundle(_structured(rows, OutputSpec.of({"type": "object", "properties": {"items": {}}})))
    assert '"items"' in plain(own["text/html"])


# -- point 4: an allow the mode made -----------------------------------------------------------


def test_an_allow_the_mode_made_reads_allowed_by_accept_edits_mode_without_a_wait() -> None:
    c = call("toolu_w", "Bash", {"command": "rm c.txt"})
    decided = ev.PermissionDecided(
        request_id="settings:toolu_w",
        tool_name="Bash",
        behavior="allow",
        decided_by="mode",
        waited_ms=0,
        tool_use_id="toolu_w",
        who="acceptEdits mode",
    )
    bundle = mime_bundle(_turn([c, decided, result(c, ""), complete()]))
    for text in (plain(bundle["text/html"]), bundle["text/markdown"]):
        assert "allowed by acceptEdits mode" in text and "allowed by acceptEdits mode after" not in text
    assert "after 0 ms" not in plain(card_html.verdict_html(decided))


# -- point 8: small untruths -------------------------------------------------------------------


def _request(name: str, tool_input: dict[str, Any], cwd: str, **kw: Any) -> ev.PermissionRequest:
    return ev.PermissionRequest.model_construct(
        request_id="r1",
        tool_name=name,
        tool_use_id="toolu_1",
        input=tool_input,
        title=kw.pop("title", name),
        reason=kw.pop("reason", None),
        blocked_path=kw.pop("blocked_path", None),
        normalized=t.normalize_tool_call(name, tool_input),
        approval=SimpleNamespace(cwd=cwd),
    )


def test_a_blocked_path_in_the_project_is_not_called_outside(tmp_path: Any) -> None:
    project = tmp_path / "project"
    project.mkdir()
    inside = plain(
        header_html(_request("Bash", {"command": "touch x.txt"}, str(project), blocked_path=f"{project}/x.txt"))
    )
    assert "outside" not in inside and f"path in question: {project}/x.txt" in inside
    beside = f"{tmp_path}/data/y.txt"
    outside = plain(header_html(_request("Bash", {"command": f"touch {beside}"}, str(project), blocked_path=beside)))
    assert f"outside the working directory: {beside}" in outside
    assert "outside the folders Claude Code may use without asking" not in inside + outside


def test_an_mcp_tool_is_named_once_on_its_card_and_on_its_approval() -> None:
    c = call("toolu_n", "mcp__kernel__read_notebook", {})
    summary = plain(card_html.card_summary_html(c.tool_name, c.title, "running", c.normalized))
    assert summary.count("read_notebook") == 1 and "kernel · read_notebook" in summary, summary
    assert t.tool_title("mcp__kernel__read_notebook", c.normalized) == "all cells"
    generic = call("toolu_g", "mcp__other__lookup", {})
    for title in ("lookup", "other · lookup", "mcp__other__lookup"):
        shown = plain(card_html.card_summary_html(generic.tool_name, title, "running", generic.normalized))
        assert shown.count("lookup") == 1, shown
    head = plain(header_html(_request("mcp__kernel__run_code", {"code": "1"}, "/", title="run_code")))
    assert head.count("run_code") == 1, head


def test_a_footer_leaves_out_cache_figures_that_are_zero_and_its_gauge_stays_on_one_line() -> None:
    plain_stats = ev.TurnStats(cost_usd=0.01, input_tokens=1200, output_tokens=300, duration_ms=1000, num_turns=1)
    cached = plain_stats.model_copy(update={"cache_read_input_tokens": 5000, "cache_creation_input_tokens": 0})
    footer = plain(render.stats_html(plain_stats))
    assert "in 1.2k · out 300" in footer and "cache" not in footer
    assert "cache read 5.0k" in plain(render.stats_html(cached)) and "cache write" not in plain(
        render.stats_html(cached)
    )
    md = mime_bundle(_turn([ev.MessageChunk(text="hi"), ev.Complete(stats=plain_stats)]))["text/markdown"]
    assert "tokens in 1.2k / out 300" in md and "cache" not in md
    for ctx in (ev.ContextWindow(size=200_000, used=50_000), ev.ContextWindow(size=200_000, used=10, size_known=False)):
        gauge = render.context_html(ctx)
        assert gauge.startswith('<span class="kandev-context" title="context window" style="white-space:nowrap">')


def test_a_tools_time_is_its_own_and_the_persons_wait_is_apart() -> None:
    c = call("toolu_b", "Bash", {"command": "pytest -q"})
    waited = ev.PermissionDecided(
        request_id="r1",
        tool_name="Bash",
        behavior="allow",
        decided_by="person",
        waited_ms=393_000,
        tool_use_id="toolu_b",
    )
    # tool_use at 0 s, allowed after 393 s, result at 394.017 s: the tool ran 1.017 s
    turn = _turn([c, waited, result(c, "ok"), complete()], times=[0.0, 393.0, 394.017, 395.0])
    (record,) = turn.tools.values()
    assert (record.wall_ms, record.approval_wait_ms, record.duration_ms) == (394_017, 393_000, 1_017)
    shown = plain(mime_bundle(turn)["text/html"])
    assert "allowed by you after 6 min 33 s" in shown and "1.0 s" in shown and "6 min 34 s" not in shown
