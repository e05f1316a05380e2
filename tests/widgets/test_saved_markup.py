"""Issue 16: the saved HTML styles code and tables by class, with one ``<style>`` per output.

JupyterLab's sanitizer (its table of contents sanitises every new HTML output) parses each
inline ``style=`` attribute; the saved rendering of a long answer had thousands (one per
code token and table cell). Now: token and alignment classes, the rules they need once per
output, and a long answer in parts that the browser lays out only near the screen.
"""

from __future__ import annotations

import re

from benchmarks._browser_page import answer
from kandev_nb.agent import events as ev
from kandev_nb.agent.turn import Turn
from kandev_nb.notebook.widgets import mime_bundle
from kandev_nb.notebook.widgets.cards import ToolCard, WidgetFactory
from kandev_nb.render import html as render
from kandev_nb.render import theme
from tests.widgets.widget_events import call, result


def _saved(text: str) -> str:
    turn = Turn(prompt="go", session_name="default")
    turn.add(ev.MessageChunk(text=text), 0.0)
    return str(mime_bundle(turn)["text/html"])


def test_a_long_answer_has_no_inline_style_per_token_or_cell() -> None:
    page = _saved(answer("mix"))  # 112 KB: 1,500 code lines, a 200-row table, 300 paragraphs
    assert page.count('class="kt-') > 3500  # the code is coloured ...
    assert page.count("style=") < 30  # ... without a style per token (6,607 inline styles before)
    styles = re.findall(r"<style[^>]*>(.*?)</style>", page, re.DOTALL)
    assert len(styles) == 1
    for cls in set(re.findall(r'class="(kt-[a-z]+|kandev-al-[a-z]+)"', page)):
        assert f".{cls}" in styles[0], cls  # every class the markup uses has its rule
    assert ".kt-k{color:var(--jp-mirror-editor-keyword-color," in styles[0]
    assert '<td class="kandev-al-right">' in page and "text-align:right" not in page.replace(styles[0], "")
    assert ".kandev-part{content-visibility:auto}" in styles[0]


def test_the_saved_code_colours_what_the_live_view_colours() -> None:
    """highlight.js (the live view) leaves symbolic operators uncoloured; so does the saved
    rendering (they were purple spans: 2,100 of the mix's 6,000, each one more tag for
    JupyterLab's table of contents to sanitize, and a colour change at the swap)."""
    page = _saved("```python\nif x and not y:\n    total = total * 2 + 1\n```")
    assert '<span class="kt-m">2</span>' in page and '<span class="kt-m">1</span>' in page
    assert '<span class="kt-k">and</span>' in page and '<span class="kt-k">not</span>' in page  # words: keywords
    assert "total = total * 2 + 1" in re.sub(r"<[^>]+>", "", page)
    for op in ("=", "*", "+"):
        assert f">{op}</span>" not in page, op


def test_a_short_answer_in_prose_has_no_style_element() -> None:
    page = _saved("Just **words**, no code.")
    assert "<style" not in page and 'class="kandev-part"' not in page


def test_a_long_text_comes_in_parts_with_the_same_html_as_the_whole() -> None:
    for shape in ("mix", "prose"):
        text = answer(shape)
        got = render.markdown_html(text)
        whole = str(render._markdown().render(text))
        parts = re.findall(r'<div class="kandev-part" style="contain-intrinsic-size:auto (\d+)em">', got)
        assert len(parts) > 3
        assert re.sub(r'<div class="kandev-part" style="[^"]*">|</div>', "", got) == whole
        assert all(int(em) > 10 for em in parts)
    short = "Some *text*.\n\n```python\nx = 1\n```\n"
    assert render.markdown_html(short) == str(render._markdown().render(short))


def test_a_live_tool_card_carries_the_rules_of_its_code() -> None:
    c = call("t1", "Read", {"file_path": "/p/calc.py"})
    card = ToolCard(c, WidgetFactory())
    card.update(result(c, "def f(x):\n    return 'a'\n"))
    value = card.html.value
    assert '<span class="kt-k">def</span>' in value
    assert value.startswith('<style class="kandev-style">') and ".kt-k{" in value
    assert ".kt-k{" in theme.stylesheet()
