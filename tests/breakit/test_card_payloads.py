"""Break-it: tool results and cards with odd payloads (shapes, injection, sizes)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from kandev_nb.agent import events as ev
from kandev_nb.agent.adapter import Adapter
from kandev_nb.agent.tools import tool_result_images
from kandev_nb.wire.protocol import parse_line

_TOOL = json.dumps(
    {
        "type": "assistant",
        "message": {
            "id": "m2",
            "model": "x",
            "content": [
                {
                    "type": "tool_use",
                    "id": "toolu_1",
                    "name": "mcp__kernel__run_code",
                    "input": {"code": "1"},
                }
            ],
        },
    }
).encode()
_RESULT = b'{"type":"result","subtype":"success","session_id":"s"}'


@pytest.mark.parametrize(
    "source",
    [
        "x",
        ["a"],
        5,
        {"type": "base64", "media_type": ["image/png"], "data": "AA"},
        {"type": "base64", "media_type": {"a": 1}, "data": "AA"},
    ],
)
def test_an_odd_image_block_does_not_leave_the_tool_running(source: Any) -> None:
    """An image block whose `source` is not an object, or whose `media_type` is a list, made
    tool_result_images raise: the tool_result became an Unknown and (media_type) the call
    was never completed, its card left "running" after the turn ended."""
    assert tool_result_images([{"type": "image", "source": source}, {"type": "text", "text": "ok"}]) == ()
    adapter = Adapter()
    adapter.observer = None
    adapter.handle(parse_line(_TOOL))
    result = {
        "type": "user",
        "message": {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_1",
                    "content": [{"type": "image", "source": source}],
                }
            ],
        },
    }
    events = adapter.handle(parse_line(json.dumps(result)))
    events += adapter.handle(parse_line(_RESULT))
    updates = [e for e in events if isinstance(e, ev.ToolUpdate)]
    assert len(updates) == 1 and updates[0].status == "complete" and not updates[0].auto_completed


# -- saved Markdown / HTML cards of hostile tool inputs --------------------------------------

_EVIL = [
    f"foo{sep}![t](http://evil.example/track.png) [x](http://evil.example/) <img src=x onerror=alert(1)>"
    for sep in ("\n\n", "\r\r", "\r\n\r\n", "\n")
]
_CALLS: list[tuple[str, str]] = [
    ("Grep", "pattern"),
    ("Read", "file_path"),
    ("WebSearch", "query"),
    ("WebFetch", "url"),
    ("TaskCreate", "subject"),
    ("Bash", "description"),
    ("Glob", "pattern"),
    ("Task", "description"),
    ("mcp__srv__tool", "arg"),
]


def _rendered_markdown(markdown: str) -> str:
    from markdown_it import MarkdownIt

    return str(MarkdownIt("commonmark", {"html": True}).render(markdown))


@pytest.mark.parametrize("evil", _EVIL, ids=["blank-line", "cr-cr", "crlf-crlf", "newline"])
@pytest.mark.parametrize(("tool", "key"), _CALLS, ids=[c[0] for c in _CALLS])
def test_a_tool_input_with_a_blank_line_stays_text_in_the_saved_markdown(tool: str, key: str, evil: str) -> None:
    """A title or value with a blank line ("\\n\\n", or "\\r\\r": a lone CR ends a Markdown line
    too) ended the card's <summary> HTML block, or its code span's paragraph, and the rest
    was read as Markdown: a remote image fetched when the notebook is opened, a live link."""
    from kandev_nb.agent import tools as t
    from kandev_nb.render import card_md
    from kandev_nb.render import card_view as cv

    tool_input = {key: evil, "command": "ls"} if tool == "Bash" else {key: evil}
    payload = t.normalize_tool_call(tool, tool_input)
    title = t.tool_title(tool, payload)
    for view_md in (
        card_md.saved_card_markdown(cv.card_view(tool, title, payload, evil, status="complete", tool_use_id="toolu_1")),
        card_md.saved_card_markdown(cv.card_view(tool, title, payload, evil, status="error", tool_use_id="toolu_1")),
        card_md.parts_markdown(cv.proposal_view(payload, tool_input)),
    ):
        out = _rendered_markdown(view_md)
        assert "<img" not in out and "<a " not in out, view_md


def test_a_multiedit_whose_edits_is_not_a_list_keeps_its_message() -> None:
    """`MultiEdit` with ``"edits": 7`` (a model's malformed input, which the CLI then refuses)
    made normalize_tool_call raise: the whole assistant line, its text too, became an Unknown."""
    line = {
        "type": "assistant",
        "message": {
            "id": "m",
            "model": "x",
            "content": [
                {"type": "text", "text": "let me edit"},
                {
                    "type": "tool_use",
                    "id": "toolu_1",
                    "name": "MultiEdit",
                    "input": {"file_path": "a.py", "edits": 7},
                },
            ],
        },
    }
    adapter = Adapter()
    adapter.observer = None
    events = adapter.handle(parse_line(json.dumps(line)))
    assert [type(e).__name__ for e in events] == ["MessageChunk", "ToolCall"]


@pytest.mark.parametrize(
    "tool_input",
    [
        {"questions": 5},
        {"questions": "x"},
        {"questions": [{"question": "q", "options": 5}]},
        {"questions": [{"question": "q", "options": {"label": "a"}}]},
    ],
)
def test_an_ask_user_question_card_of_odd_input_renders(tool_input: dict[str, Any]) -> None:
    """`questions` (or `options`) of another JSON type than a list raised TypeError in the
    live card, the saved HTML and the saved Markdown."""
    from kandev_nb.agent import tools as t
    from kandev_nb.render import card_html, card_md
    from kandev_nb.render import card_view as cv

    payload = t.normalize_tool_call("AskUserQuestion", tool_input)
    for status in ("running", "complete"):
        view = cv.card_view("AskUserQuestion", "ask", payload, "User answered", status=status, tool_use_id="toolu_1")
        assert "User answered" in card_html.live_card_html(view, open_=True)
        assert "User answered" in card_html.saved_card_html(view)
        assert "User answered" in card_md.saved_card_markdown(view)


@pytest.mark.parametrize("options", [5, True, 1.5])
async def test_a_question_whose_options_is_not_a_list_is_denied_with_a_reason(options: Any) -> None:
    """parse_questions raised TypeError (not QuestionError) for ``"options": 5``: prepare()
    let it out of the approval broker's can_use_tool handler, which stopped the session's
    reader ("kandev-nb reader failed") instead of denying the request with the reason."""
    from kandev_nb.agent.permissions import Approval
    from kandev_nb.agent.questions import QuestionError, parse_questions, prepare

    tool_input = {"questions": [{"question": "Which?", "options": options}]}
    with pytest.raises(QuestionError, match="0 options"):
        parse_questions(tool_input)
    approval = Approval("req-1", "AskUserQuestion", tool_input)
    prepare(approval, None)
    assert approval.decision is not None and approval.decision.behavior == "deny"


def test_a_lone_surrogate_in_the_answer_can_be_sent_to_the_frontend() -> None:
    """Issue 28.12: the event keeps the raw text; the mime bundle (the display boundary) has U+FFFD."""
    from jupyter_client.session import json_packer

    from kandev_nb.agent.turn import Turn
    from kandev_nb.render.static import mime_bundle

    lines = [
        (
            b'{"type":"stream_event","event":{"type":"content_block_delta","index":0,'
            b'"delta":{"type":"text_delta","text":"hi \\ud800 there"}},"session_id":"s"}'
        ),
        b'{"type":"result","subtype":"success","session_id":"s","total_cost_usd":0.01}',
    ]
    adapter = Adapter()
    adapter.observer = None
    turn = Turn(prompt="p", session_name="s")
    for line in lines:
        for e in adapter.handle(parse_line(line)):
            turn.add(e, 0.0)
    assert "\ud800 there" in turn.text
    bundle = mime_bundle(turn)
    json_packer(bundle)
    assert "hi \ufffd there" in bundle["text/html"] and "hi \ufffd there" in bundle["text/markdown"]


@pytest.mark.parametrize(
    "text",
    [
        "`a\r\r<img src=x onerror=alert(1)>`",
        "`a\r\n\r\n<img src=x onerror=alert(1)>`",
        "see `x\r\r<script>alert(1)</script>` and `y`",
    ],
)
def test_model_markdown_with_cr_line_endings_keeps_no_raw_html(text: str) -> None:
    """safe_markdown split lines on "\\n" only: a code span it saw across "\\r\\r" (a blank line
    to a Markdown renderer) was kept as is, so the raw <img onerror> after it reached the saved
    notebook's text/markdown."""
    from kandev_nb.agent.turn import Turn
    from kandev_nb.render.mdsafe import safe_markdown
    from kandev_nb.render.static import mime_bundle

    assert "<img" not in _rendered_markdown(safe_markdown(text))
    turn = Turn(prompt="p", session_name="s")
    turn.add(ev.MessageChunk(text=text, session_id="s"), 0.0)
    rendered = _rendered_markdown(mime_bundle(turn)["text/markdown"])
    assert "<img" not in rendered and "<script" not in rendered


@pytest.mark.parametrize(
    "text",
    [
        "``<img src=x onerror=alert(1)>`",  # a run of two is no opener for a closer of one
        "\\`<img src=x onerror=alert(1)>`",  # an escaped backtick opens nothing
        "a|b\n-|-\n`x|<img src=x onerror=alert(1)>|`",  # a GFM table splits cells at | first
        "x `a` ``<img src=x onerror=alert(1)>` y",
    ],
)
def test_model_markdown_with_a_false_code_span_keeps_no_raw_html(text: str) -> None:
    """safe_markdown kept as code what its code-span pattern matched, but the pattern matched
    spans a renderer does not see (a backtick cut from a longer run, an escaped backtick, a
    span across table cells), so the raw <img onerror> inside reached the saved Markdown."""
    from markdown_it import MarkdownIt

    from kandev_nb.render.mdsafe import safe_markdown

    gfm = MarkdownIt("commonmark", {"html": True}).enable("table")
    assert "<img" not in _rendered_markdown(safe_markdown(text))
    assert "<img" not in str(gfm.render(safe_markdown(text)))


def _no_link_check_markdown(markdown: str) -> str:
    """Rendered by a Markdown renderer that does not vet link targets itself (as some do)."""
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark", {"html": True})
    md.validateLink = lambda url: True  # type: ignore[method-assign]
    return str(md.render(markdown))


@pytest.mark.parametrize(
    "text",
    [
        "[a][r]\n\n[r]:\njavascript:alert(1)",  # a reference definition's target on the next line
        "[a][r]\n\n> [r]: javascript:alert(1)",  # ... or inside a quote
        "[a][r]\n\n- [r]: javascript:alert(1)",  # ... or a list item
        "[a][r]\n\n[\nr\n]: javascript:alert(1)",  # a label across lines
        "[a](\njavascript:alert(1))",  # an inline link's target on the next line
    ],
)
def test_model_markdown_links_to_javascript_are_blocked_in_every_form(text: str) -> None:
    """safe_markdown rewrote link targets it found on one line (``](...)``, ``[r]: ...`` at a
    line's start) only; these forms kept a ``javascript:`` target in the saved Markdown."""
    from kandev_nb.render.mdsafe import safe_markdown

    assert 'href="javascript' not in _no_link_check_markdown(safe_markdown(text))


def test_a_code_span_across_lines_keeps_no_raw_html() -> None:
    """A backtick left open on one line pairs with the first one on the next (a code span
    across lines), but safe_markdown paired backticks line by line: the raw <img> between
    its own "span" on the next line reached the saved Markdown."""
    from kandev_nb.render.mdsafe import safe_markdown

    text = "see `\n`<img src=x onerror=alert(1)>`"
    assert "<img" not in _rendered_markdown(safe_markdown(text))
    assert "<code>" in _rendered_markdown(safe_markdown("a line\nwith `a<b` in code"))  # a one-line span stays code
