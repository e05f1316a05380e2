"""Issue 24.9: the saved ``text/markdown`` part, parsed as a CommonMark renderer parses it.

A fence opened inside a list item or a quote ends with its container; safe_markdown's line
scan kept "in a fence" past that point, so the raw ``<img onerror>`` after it came back
(markdown-it and marked both rendered it). Each case is rendered by markdown-it-py with raw
HTML allowed (as JupyterLab renders Markdown before its sanitizer) and must keep no element
or attribute the model chose.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kandev_nb.agent import events as ev
from kandev_nb.agent.turn import Turn
from kandev_nb.render.mdsafe import safe_markdown
from kandev_nb.render.static import mime_bundle
from tests.widgets.md_check import raw_html_problems
from tests.widgets.widget_events import complete

XSS = "<img src=x onerror=alert(1)>"

REVIEWER = [
    f"- a\n  ```\n  code\n- b\n{XSS}\n",
    f"- item\n  ```\n{XSS}\n",
    f"> ```\n> x\n{XSS}\n```\n",
    f"1. one\n   ~~~\n   two\n\n{XSS}\n~~~\n",
    f"- a\n\n  ```python\n  x = 1\n\n- b\n\n{XSS}\n\n```\n",
    f"> - q\n>   ```\n> - r\n{XSS}\n",
    f"* ```\n{XSS}\n  ```\n",
    f"[r]: /x\n    code {XSS}\n- x\n  ```\n",
    f"<div>\n- a\n  ```\n</div>\n\n    {XSS}\n",
]


@pytest.mark.parametrize("text", REVIEWER)
def test_a_fence_ended_by_its_container_lets_no_raw_html_through(text: str) -> None:
    """Old code: the <img onerror> came back for cases 1, 2, 4 and 5 (and the generator found more)."""
    assert raw_html_problems(safe_markdown(text)) == []


def test_the_saved_turn_markdown_of_the_reviewer_case_is_safe() -> None:
    turn = Turn(prompt="p", session_name="s")
    turn.add(ev.MessageChunk(text=REVIEWER[0]), 0.0)
    turn.add(complete(cost_usd=0.01), 0.0)
    assert raw_html_problems(mime_bundle(turn)["text/markdown"]) == []


def test_code_inside_a_list_item_is_kept_as_code() -> None:
    text = "1. run:\n\n   ```python\n   if a < b and c & d:\n       pass\n   ```\n2. done"
    out = safe_markdown(text)
    assert "   if a < b and c & d:" in out  # not &lt; inside the code block


# -- generated shapes: nested lists, quotes and fences, with raw HTML in every place ------

_PREFIX = st.sampled_from(
    ["", "", " ", "  ", "   ", "    ", "- ", "* ", "1. ", "10) ", "> ", ">", "> - ", "- > ", "\t"]
)
_BODY = st.sampled_from(
    [
        "```",
        "````",
        "~~~",
        "```python",
        "``` x`y",
        "text",
        "",
        XSS,
        "<script>alert(1)</script>",
        "`<img src=x onerror=alert(2)>`",
        "``",
        "<div>",
        "</div>",
        "<!-- c -->",
        "[a]: javascript:alert(1)",
        "[r]: /x",
        "[x](javascript:alert(1))",
        "![i](http://remote.example/p.png)",
        "| a | b |",
        "|---|---|",
        "<details open ontoggle=alert(1)>",
    ]
)
_LINE = st.tuples(_PREFIX, _PREFIX, _BODY).map(lambda t: t[0] + t[1] + t[2])
_EOLS = st.sampled_from(["\n", "\n", "\n", "\r\n", "\r"])


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(_LINE, _EOLS), min_size=1, max_size=14))
def test_generated_nested_lists_quotes_and_fences_keep_no_raw_html(lines: list[tuple[str, str]]) -> None:
    text = "".join(line + eol for line, eol in lines)
    problems = raw_html_problems(safe_markdown(text))
    assert problems == [], (text, safe_markdown(text), problems)
