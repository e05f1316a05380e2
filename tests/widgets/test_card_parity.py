"""One view model per tool card (issue 12.6): on every tool call of every recorded transcript,
the live ToolCard, the saved HTML card and the saved Markdown card show the same thing.

The transcripts (tests/transcripts/<version>/*.jsonl) are replayed through the adapter as in
tests/adapter; each turn's events go to a live :class:`TurnView` and to a :class:`Turn`
(rendered by :func:`mime_bundle`) on one clock, so durations agree. Each call is checked as
recorded, and again with an approval decision added (allowed with a note; denied with a
reason), since the recorded transcripts carry none (decisions come from the session).
"""

from __future__ import annotations

import html as htmllib
import re
from pathlib import Path

import pytest

from kandev_nb.agent import events as ev
from kandev_nb.agent import tools as t
from kandev_nb.agent.turn import Turn
from kandev_nb.notebook.widgets import TurnView, mime_bundle
from kandev_nb.notebook.widgets.recording import Recorder
from kandev_nb.render import card_html, card_md
from kandev_nb.render import card_view as cv
from kandev_nb.render import html as r
from kandev_nb.render.static import card_of
from kandev_nb.wire.recorder import load_transcript
from tests.transcripts.replay import adapter_events
from tests.widgets.conftest import Clock

ROOT = Path(__file__).parents[1] / "transcripts"
TRANSCRIPTS = sorted(ROOT.glob("2.1.*/*.jsonl"))
IDS = [f"{p.parent.name}/{p.stem}" for p in TRANSCRIPTS]
DECISIONS = ["as_recorded", "allowed", "denied"]


def _turns(path: Path) -> list[list[ev.AgentEvent]]:
    """The transcript's events, one list per turn (each ends with its Complete)."""
    turns: list[list[ev.AgentEvent]] = [[]]
    for e in adapter_events(load_transcript(path)):
        turns[-1].append(e)
        if isinstance(e, ev.Complete):
            turns.append([])
    return [t for t in turns if t]


def _with_decisions(events: list[ev.AgentEvent], how: str) -> list[ev.AgentEvent]:
    if how == "as_recorded":
        return events
    out: list[ev.AgentEvent] = []
    for e in events:
        out.append(e)
        if isinstance(e, ev.ToolCall):
            out.append(
                ev.PermissionDecided(
                    request_id=f"r-{e.tool_call_id}",
                    tool_name=e.tool_name,
                    tool_use_id=e.tool_call_id,
                    behavior="allow" if how == "allowed" else "deny",
                    decided_by="person",
                    waited_ms=1500,
                    message="" if how == "allowed" else "not on my data, please",
                    note="the rule lets an interpreter through" if how == "allowed" else "a note on the deny",
                )
            )
    return out


def _replay(events: list[ev.AgentEvent]) -> tuple[TurnView, Turn]:
    clock = Clock()
    view, turn = TurnView("p", clock=clock), Turn(prompt="p", session_name="s")
    for i, e in enumerate(events):
        clock.now = float(i)
        view.handle(e)
        turn.add(e, float(i))
    return view, turn


def _cases(rec: Recorder, path: Path, how: str) -> list[tuple[TurnView, Turn]]:
    return [_replay(_with_decisions(events, how)) for events in _turns(path)]


_OPEN_TAG = re.compile(r'^<details class="[^"]*"( open)? ')
_LIVE_STYLE = re.compile(r'^<style class="kandev-style">.*?</style>', re.DOTALL)
_WHOLE_DIFF = re.compile(r'<details class="kandev-whole-diff">.*?</details>', re.DOTALL)


def _without_live_only(card: str) -> str:
    """The card HTML without what only one of the two has, by design:

    - the ``<details>`` tag's class and ``open``: live ``kandev-tool-details`` (the widget box
      carries ``kandev-tool-card``) and opened for edits, commands and subagents; saved
      ``kandev-tool-card kandev-status-<s>``, folded but for errors, denials, tasks, plans;
    - the saved copy's ``<details class="kandev-whole-diff">`` under a cut diff, which the live
      card offers as its "Show the whole diff" button instead;
    - the live card's leading ``<style class="kandev-style">``: the rules its code and table
      classes need (the saved turn has one such element, for all its cards, at its top).
    """
    return _WHOLE_DIFF.sub("", _OPEN_TAG.sub("<details ", _LIVE_STYLE.sub("", card)))


@pytest.mark.parametrize("how", DECISIONS)
@pytest.mark.parametrize("path", TRANSCRIPTS, ids=IDS)
def test_the_live_card_is_the_saved_html_card(rec: Recorder, path: Path, how: str) -> None:
    for view, turn in _cases(rec, path, how):
        saved_html = mime_bundle(turn)["text/html"]
        for tool_id, record in turn.tools.items():
            saved = card_html.saved_card_html(card_of(record))
            # the saved turn holds exactly this card (a subagent's nested cards just before its end)
            assert saved.removesuffix("</div></details>") in saved_html
            assert _without_live_only(view.cards[tool_id].html.value) == _without_live_only(saved)
            assert view.cards[tool_id].view == card_of(record)


def _norm(text: str) -> str:
    """Visible words: tags dropped, entities decoded, Markdown marks and escapes dropped."""
    text = re.sub(r"</?(?:div|pre|li|tr|td|summary|details|table|caption|ul|ol|p|h\d|br)\b[^>]*>", " ", text)
    text = htmllib.unescape(re.sub(r"<[^>]+>", "", text))
    return " ".join(re.sub(r"[\\*`]", "", text).split())


def _lines(text: str, limits: tuple[int, int] | None = None) -> list[str]:
    shown = r.cut(text, *limits).shown if limits else r.cut(text).shown
    return [x for x in shown.split("\n") if x.strip()][:8]


def _texts(view: cv.CardView) -> list[str]:
    """What a person must read in both copies: title line and every part's texts."""
    out = [view.tool, view.title, *(b.text if isinstance(b, cv.Badge) else f"+{b.added}" for b in view.badges)]
    for p in view.parts:
        match p:
            case cv.Fields() | cv.Inputs():
                out += [x for f in p.items for x in (f.key, f.value)]
            case cv.Text():
                out.append(p.text)
            case cv.Code():
                out += _lines(p.text) if p.cut else p.text.split("\n")
            case cv.Block() if r.strip_ansi(p.text):
                out += [p.label, *_lines(r.strip_ansi(p.text))]
            case cv.Markdown():
                out += [w for w in re.findall(r"[A-Za-z0-9]{3,}", " ".join(_lines(p.text, p.limits)))]
            case cv.Diff():
                out += [x[1:] for x in p.diff.split("\n")[:20] if x[:1] in "+-" and x[:3] not in ("+++", "---")]
            case cv.Todos():
                out += [
                    i.active_form if i.status == "in_progress" and i.active_form else i.description for i in p.items
                ]
            case cv.Questions():
                out += [str(q.get("question", "")) for q in p.input.get("questions") or [] if isinstance(q, dict)]
            case cv.Verdict():
                d = p.decision
                if cv.kept_planning(d) and d.decided_by == "person":  # feedback on a plan (issue 28.8)
                    out += ["You asked to keep planning", d.message.split(":", 1)[-1], d.note]
                else:
                    out += [f"by {cv.decided_by_text(d)}", r.fmt_ms(d.waited_ms), d.message, d.note]
            case _:
                pass  # an empty Block; Images (alt texts only)
    return [x for x in (_norm(t) for t in out) if x]


@pytest.mark.parametrize("how", DECISIONS)
@pytest.mark.parametrize("path", TRANSCRIPTS, ids=IDS)
def test_saved_html_and_markdown_cards_carry_the_same_title_badges_and_texts(
    rec: Recorder, path: Path, how: str
) -> None:
    for _view, turn in _cases(rec, path, how):
        bundle = mime_bundle(turn)
        for record in turn.tools.values():
            view = card_of(record)
            html_card = _norm(card_html.saved_card_html(view))
            md_card = _norm(card_md.saved_card_markdown(view))
            # the same title line, word for word (Markdown puts a colon before the title)
            md_summary = _norm(card_md.summary_markdown(view)).replace(f"{view.tool}: ", f"{view.tool} ")
            assert md_summary == _norm(card_html.summary_html(view))
            for text in _texts(view):
                assert text in html_card and text in md_card, (record.call.tool_name, text)
            # the saved Markdown holds exactly this card (a subagent's nested items at its end)
            assert card_md.saved_card_markdown(view).split("\n</details>\n")[0] in bundle["text/markdown"]


def test_the_transcripts_cover_every_kind_the_cli_sends() -> None:
    kinds = {
        card_of(record).kind
        for path in TRANSCRIPTS
        for events in _turns(path)
        for record in _replay(events)[1].tools.values()
    }
    assert {
        "shell_exec",
        "read_file",
        "modify_file",
        "code_search",
        "http_request",
        "subagent_task",
        "manage_todos",
        "plan",
    } <= kinds


def test_a_read_file_is_fenced_in_its_language_in_the_markdown() -> None:
    view = cv.card_view("Read", "/p/a.py", t.ReadFile(file_path="/p/a.py", content="x = 1\n"), status="complete")
    assert "```python\nx = 1\n```" in card_md.body_markdown(view)
    odd = cv.card_view("Read", "/p/a.zzz", t.ReadFile(file_path="/p/a.zzz", content="x\n"), status="complete")
    assert "```\nx\n```" in card_md.body_markdown(odd)
