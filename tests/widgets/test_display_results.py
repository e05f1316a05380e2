"""Issue 28 points 5, 7 and 11 without a browser: the markup that keeps MathJax and the table
of contents away from answers, and a finished turn's results open (tests/browser/
test_display_in_lab.py checks what JupyterLab and Notebook 7 make of it)."""

from __future__ import annotations

from kandev_nb.agent import events as ev
from kandev_nb.agent.turn import Turn
from kandev_nb.notebook.widgets import TurnView
from kandev_nb.notebook.widgets.recording import Recorder
from kandev_nb.render import card_html as ch
from kandev_nb.render import card_md as cm
from kandev_nb.render import card_view as cv
from kandev_nb.render import html as r
from kandev_nb.render.mdsafe import remote_urls, safe_markdown
from kandev_nb.render.static import card_of, mime_bundle
from tests.widgets.conftest import Clock
from tests.widgets.widget_events import call, complete, result

DOLLARS = "Revenue rose from $41.5k in July to $61k in August."
PNG = (
    "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0g"
    "AAAABJRU5ErkJggg=="
)


def _turn(*events: ev.AgentEvent) -> Turn:
    turn = Turn(prompt="p", session_name="s")
    for e in events:
        turn.add(e, 0.0)
    turn.add(complete(cost_usd=0.01), 0.0)
    return turn


def test_the_saved_and_the_live_turn_keep_mathjax_out(rec: Recorder, clock: Clock) -> None:
    """Old code: no ignore class on either root (only the budget line had one)."""
    bundle = mime_bundle(_turn(ev.MessageChunk(text=DOLLARS)))
    assert bundle["text/html"].startswith('<div class="kandev-turn kandev-static mathjax_ignore tex2jax_ignore"')
    assert "from \\$41.5k in July to \\$61k" in bundle["text/markdown"]
    v = TurnView("p", clock=clock)
    assert v.root is not None and {"mathjax_ignore", "tex2jax_ignore"} <= set(v.root._dom_classes)


def test_answer_headings_are_three_levels_down_and_out_of_the_table_of_contents() -> None:
    """Old code: ``<h1>Summary</h1>``, which JupyterLab's table of contents lists."""
    html = r.markdown_html("# Summary\n\ntext\n\n## Details\n\n#### Deep")
    assert '<h4 class="kandev-heading jp-toc-ignore tocSkip kandev-h1">Summary</h4>' in html
    assert '<h5 class="kandev-heading jp-toc-ignore tocSkip kandev-h2">Details</h5>' in html
    assert '<h6 class="kandev-heading jp-toc-ignore tocSkip kandev-h4">Deep</h6>' in html
    assert "<h1" not in html and "<h2" not in html


def test_a_finished_turns_edit_figure_and_answered_question_stay_open() -> None:
    """Old code: the saved edit card, the run_code card with its figure and the question card were folded."""
    edit = call("t1", "Edit", {"file_path": "/p/greet.py", "old_string": "a = 1\n", "new_string": "a = 2\n"})
    code = call("t2", "mcp__kernel__run_code", {"code": "import matplotlib.pyplot as plt\nplt.plot([1, 2])\n"})
    ask = call("t3", "AskUserQuestion", {"questions": [{"question": "Which?", "header": "h", "options": []}]})
    figure = result(code, "1 image shown in the notebook and attached")
    figure = figure.model_copy(update={"images": (PNG,)})
    turn = _turn(edit, result(edit, "ok"), code, figure, ask, result(ask, 'User has answered: "Which?"="A"'))
    for tool_id in ("t1", "t2", "t3"):
        assert card_of(turn.tools[tool_id]).open_by_default(live=False), tool_id
    saved = mime_bundle(turn)["text/html"]
    cards = saved.split('<details class="kandev-tool-card')[1:]
    assert len(cards) == 3 and all(" open " in c.split(">", 1)[0] for c in cards)  # each card's <details ... open>


def test_the_run_code_card_shows_its_code_as_highlighted_python_not_a_json_line() -> None:
    """Old code: the saved card had ``{"code": "import matplotlib.pyplot as plt\\nplt..."}`` in a JSON block."""
    code = call("t2", "mcp__kernel__run_code", {"code": "import math\nprint(math.pi)\n"})
    turn = _turn(code, result(code, "3.14159"))
    html = mime_bundle(turn)["text/html"]
    assert "\\nprint" not in html and '"code":' not in html
    assert '<span class="kt-k">import</span>' in html  # Pygments' keyword class: coloured Python
    md = mime_bundle(turn)["text/markdown"]
    assert "```python\nimport math\nprint(math.pi)\n```" in md


def test_dollars_in_saved_markdown_are_escaped_not_math() -> None:
    assert safe_markdown(DOLLARS) == "Revenue rose from \\$41.5k in July to \\$61k in August."
    assert safe_markdown("`$x$` and\n```\n$y$\n```") == "`$x$` and\n```\n$y$\n```"  # code stays as written


# -- issue 23.8: a Markdown cell that loads remote resources says so on its card ------------


def test_remote_urls_lists_what_a_rendered_markdown_cell_would_load() -> None:
    source = (
        "# Results\n\n![chart](http://evil.example/c.png?k=1) and [a link](http://ok.example/)\n\n"
        '<img src="https://evil.example/i.gif"> <iframe src="//frames.example/x"></iframe>\n\n'
        '<div style="background:url(http://css.example/b.png)">x</div>\n\n![local](img/a.png) `![no](http://code.example/)`'
    )
    assert remote_urls(source) == (
        "http://evil.example/c.png?k=1",
        "https://evil.example/i.gif",
        "//frames.example/x",
        "http://css.example/b.png",
    )
    assert remote_urls("plain text, [link](http://x.example/)") == ()


def test_the_insert_cell_card_lists_the_remote_resources_live_saved_and_on_approval() -> None:
    """Old code: the card showed the source only; nothing said the tab would fetch a URL the model chose."""
    tool_input = {"source": "Done!\n\n![pixel](http://tracker.example/p.png?id=42)", "cell_type": "markdown"}
    c = call("t1", "mcp__kernel__insert_cell", tool_input)
    turn = Turn(prompt="p", session_name="s")
    turn.add(c, 0.0)
    view = card_of(turn.tools["t1"])
    assert cv.Remote(("http://tracker.example/p.png?id=42",)) in view.parts
    html = ch.saved_card_html(view)
    assert "kandev-remote-warning" in html and "loads 1 remote resource" in html
    assert "<code>http://tracker.example/p.png?id=42</code>" in html
    assert "loads 1 remote resource" in cm.saved_card_markdown(view)
    proposal = cv.proposal_view(c.normalized, tool_input)
    assert cv.Remote(("http://tracker.example/p.png?id=42",)) in proposal
    code = call("t2", "mcp__kernel__insert_cell", {"source": "x = '![a](http://x.example/a.png)'"})
    assert not any(isinstance(p, cv.Remote) for p in cv.proposal_view(code.normalized, code.input))
