"""Static renderings of a finished (or running) :class:`~kandev_nb.agent.turn.Turn`.

:func:`render_html` and :func:`render_markdown` turn a Turn into self-contained HTML and
Markdown: the answer (Markdown rendered, code coloured), thinking folded in ``<details>``,
each tool call as a ``<details>`` card (nested under its subagent when the events'
`parent_tool_use_id` says so), API retries and errors, and the footer (cost in USD, tokens,
durations, API turns, context gauge). :func:`mime_bundle` packs both with ``text/plain``
for ``update_display``: this is what a saved notebook keeps, and what JupyterLab after a
reload, nbconvert and kernel-less renderers show.

A long turn is folded to a screenful with "Show all" (:mod:`~kandev_nb.render.fold`): its
body, between the header and the footer, which stay in view. Only the HTML is folded: the
``text/markdown`` copy (nbconvert's Markdown, viewers that prefer it, tools that read the
notebook) keeps the whole answer as plain Markdown, where a fold would be raw HTML around
it that many Markdown renderers do not read inside.

Long outputs are cut to a preview (:func:`~kandev_nb.render.html.cut`); the note under
each preview names the Python expression that holds the full text
(``kandev_nb.tool_call('toolu_...').update.output``), so nothing is lost, and a 5 MB shell
output does not end up in the notebook file.

Importable without a kernel: no ipywidgets here.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from kandev_nb.agent import events as ev
from kandev_nb.agent import tools as t
from kandev_nb.agent.turn import ToolRecord, Turn
from kandev_nb.render import card_html as ch
from kandev_nb.render import card_md as cm
from kandev_nb.render import fold as fd
from kandev_nb.render import html as r
from kandev_nb.render import mdsafe as ms
from kandev_nb.render import theme as th
from kandev_nb.render.card_parts import Badge
from kandev_nb.render.card_view import CardView, card_view
from kandev_nb.render.reveal import displayable, reveal_code_blocks

__all__ = ["card_of", "mime_bundle", "render_html", "render_markdown", "run_info_html"]


# -- the outline: events -> ordered, nested items ---------------------------------------


@dataclass
class _Item:
    kind: str  # "text" | "thinking" | "tool" | "note" | "todos"
    text: str = ""
    tool_id: str = ""
    children: list[_Item] = field(default_factory=list)
    todos: tuple[t.TodoItem, ...] = ()
    parts: list[str] = field(default_factory=list, repr=False)  # text pieces, joined once at the end


def _outline(events: Iterable[ev.AgentEvent], tools: dict[str, ToolRecord]) -> list[_Item]:
    main: list[_Item] = []
    by_tool: dict[str, _Item] = {}
    failed = False  # an Error that is not the answer to a stop was seen

    def where(e: ev.AgentEvent) -> list[_Item]:
        parent = e.parent_tool_use_id
        return by_tool[parent].children if parent and parent in by_tool else main

    for e in events:
        match e:
            case ev.MessageChunk() | ev.Reasoning():
                kind = "text" if isinstance(e, ev.MessageChunk) else "thinking"
                items = where(e)
                if items and items[-1].kind == kind:
                    items[-1].parts.append(e.text)  # O(1); `text +=` here was quadratic-ish and slow
                else:
                    items.append(_Item(kind, parts=[e.text]))
            case ev.ToolCall():
                item = _Item("tool", tool_id=e.tool_call_id)
                where(e).append(item)
                by_tool[e.tool_call_id] = item
            case ev.Todos():
                items = where(e)
                existing = next((i for i in items if i.kind == "todos"), None)
                if existing is not None:
                    existing.todos = e.items
                else:
                    items.append(_Item("todos", todos=e.items))
            case ev.ApiRetry():
                where(e).append(
                    _Item(
                        "note",
                        f"API retry {e.attempt or '?'}/{e.max_retries or '?'}"
                        + (f" after HTTP {e.status}" if e.status else "")
                        + (f": {e.error}" if e.error else ""),
                    )
                )
            case ev.RateLimit():
                where(e).append(_Item("note", f"rate limit: {e.message or e.info}"))
            case ev.CompactBoundary():
                where(e).append(
                    _Item(
                        "note",
                        "conversation compacted" + (f" ({e.pre_tokens:,} tokens before)" if e.pre_tokens else ""),
                    )
                )
            case ev.Error(interrupted=True) if not failed:
                pass  # the answer to the user's stop: the footer says "stopped by you"
            case ev.Error():
                failed = True
                where(e).append(_Item("note", f"error: {e.message}"))
            case _:
                pass
    _join(main)
    return [i for i in main if i.kind != "tool" or i.tool_id in tools]


def _join(items: list[_Item]) -> None:
    for item in items:
        if item.parts:
            item.text = "".join(item.parts)
            item.parts = []
        if item.children:
            _join(item.children)


def card_of(rec: ToolRecord) -> CardView:
    """The :class:`~kandev_nb.render.card_view.CardView` of one recorded tool call: its latest
    payload and `output` (the ToolUpdate's, else the ToolCall's), status, duration (ms),
    approval decision and pictures. The live ToolCard builds the same view from the same events."""
    return card_view(
        rec.call.tool_name,
        rec.call.title,
        rec.update.normalized if rec.update else rec.call.normalized,
        rec.update.output if rec.update else "",
        status=rec.status,
        tool_use_id=rec.call.tool_call_id,
        duration_ms=rec.wall_ms,  # card_view takes off the approval's wait, as the live card does
        decision=rec.decision,
        images=rec.update.images if rec.update else (),
    )


# -- HTML -------------------------------------------------------------------------------

_WRAP = (
    f'<div class="kandev-turn kandev-static {th.NO_MATH}" style="font-family:var(--jp-content-font-family,'
    'system-ui,sans-serif);line-height:1.45">'
)
"""The saved output's root: :data:`~kandev_nb.render.theme.NO_MATH` keeps MathJax out (a ``$`` is a dollar)."""


def _html_items(items: list[_Item], turn: Turn) -> str:
    return "".join(_html_item(item, turn) for item in items)


def _html_item(item: _Item, turn: Turn) -> str:
    match item.kind:
        case "text":
            return f'<div class="kandev-text">{reveal_code_blocks(r.markdown_html(item.text))}</div>'
        case "thinking":
            return r.details_html(
                '<i style="color:var(--jp-content-font-color2,#57606a)">Thinking</i>',
                r.markdown_html(item.text),
                cls="kandev-thinking",
                inner_style="color:var(--jp-content-font-color2,#57606a)",
            )
        case "todos":
            return f'<div class="kandev-todo-card">{ch.todos_html(item.todos)}</div>'
        case "note":
            return (
                f'<div class="kandev-note" style="color:var(--jp-warn-color1,#9a6700);font-size:90%">'
                f"⚠ {r.esc(item.text)}</div>"
            )
        case "tool":
            rec = turn.tools.get(item.tool_id)
            return _html_tool(rec, item, turn) if rec is not None else ""
    return ""


def _html_tool(rec: ToolRecord, item: _Item, turn: Turn) -> str:
    nested = (
        (
            f'<div class="kandev-nested" style="margin-left:0.8em;'
            f"border-left:2px solid var(--jp-border-color2,#d0d7de);"
            f'padding-left:0.5em">{_html_items(item.children, turn)}</div>'
        )
        if item.children
        else ""
    )
    card = card_of(rec)
    if rec.call.tool_call_id in turn.meta.get("undone_tools", ()):  # %claude_undo restored its file
        card = replace(card, badges=(*card.badges, Badge("undone")))
    return ch.saved_card_html(card, nested)


def run_info_html(session_name: str, mode: str | None, model: str | None, number: int | None = None) -> str:
    """The turn header's run line: ``claude · <session> · turn <n> · <mode> · <model>`` (mode as in
    :data:`kandev_nb.agent.permissions.MODES`, model from `system/init.model`, `number` the turn's
    1-based number in its session, as ``%claude_undo --turn`` takes it; unknown ones left out)."""
    # mode and model in their own spans: a live tab makes them chips (src/widgets/answer_actions.ts)
    bits = [r.esc("claude"), r.esc(session_name), *([f"turn {number}"] if number else [])] + [
        f'<span class="kandev-run-{kind}">{r.esc(value)}</span>'
        for kind, value in (("mode", mode), ("model", model))
        if value
    ]
    style = "color:var(--jp-content-font-color2,#57606a);font-size:85%"
    return (
        f'<span class="kandev-run-info" data-kandev-session="{r.esc(session_name)}" style="{style}">'
        f"{' · '.join(bits)}</span>"
    )


def _header_html(turn: Turn) -> str:
    prompt = turn.prompt.strip().splitlines()[0] if turn.prompt.strip() else ""
    more = " …" if len(turn.prompt.strip()) > len(prompt) or len(prompt) > 160 else ""
    info = run_info_html(turn.session_name, turn.mode, turn.model, turn.meta.get("number"))
    return (
        f'<div class="kandev-header" style="color:var(--jp-content-font-color2,#57606a);font-size:85%">{info} · '
        f"<i>{r.esc(prompt[:160])}{more}</i></div>"
    )


def render_html(turn: Turn) -> str:
    """The whole turn as one self-contained HTML fragment (no scripts; the few rules that
    colour code and align table cells in one ``<style>`` element, :func:`theme.style_block`).

    Args:
        turn: a :class:`~kandev_nb.agent.turn.Turn`, finished or not (a running turn has no footer).

    Returns:
        ``<div class="kandev-turn kandev-static">...</div>``.
    """
    return _render_html(turn, _outline(turn.events, turn.tools))


_OPEN_CARD_EM = 12.0
"""The estimated height of a saved card shown open (an edit's diff, an error, a plan: see
:meth:`~kandev_nb.render.card_parts.CardView.open_by_default`); a closed card is one line."""


def _item_em(item: _Item, html: str) -> float:
    """A rough rendered height (em) of one outline item and its `html`, as the saved output
    shows it: thinking and most tool cards are closed ``<details>`` (children inside them)."""
    match item.kind:
        case "text":
            return fd.text_em(item.text)
        case "todos":
            return 1.5 * (len(item.todos) + 1)
        case "note":
            return 1.5
        case "tool" if html.startswith("<details") and " open " in html[: html.find(">")]:
            return _OPEN_CARD_EM
        case _:  # thinking, a closed tool card
            return 2.2


def _folded(pieces: list[tuple[_Item, str]], body: str, turn: Turn) -> str | None:
    """`body` (the items' HTML) folded to a screenful (:mod:`kandev_nb.render.fold`) when its
    estimated height is over :data:`~kandev_nb.render.fold.FOLD_MIN_EM`; else None."""
    if sum(_item_em(item, html) for item, html in pieces) <= fd.FOLD_MIN_EM:
        return None
    texts = [item.text for item, _ in pieces if item.kind == "text"]
    lines = sum(len(t.rstrip("\n").splitlines()) for t in texts)
    size = sum(len(t.encode("utf-8", "surrogatepass")) for t in texts)
    return fd.fold_html(body, fd.fold_sizes(lines, size, len(turn.tools)))


def _render_html(turn: Turn, outline: list[_Item]) -> str:
    pieces = [(item, _html_item(item, turn)) for item in outline]
    items = "".join(html for _, html in pieces)
    folded = _folded(pieces, items, turn)
    parts = [_header_html(turn), folded or items]
    if turn.stats is not None:
        parts.append(r.stats_html(turn.stats, turn.context, interrupted=turn.stopped))
        if turn.meta.get("budget_usd"):
            parts.append(
                r.budget_html(
                    float(turn.meta["spent_usd"]), float(turn.meta["budget_usd"]), turn.meta.get("budget_scope")
                )
            )
    elif turn.context is not None:
        parts.append(f'<div class="kandev-footer">{r.context_html(turn.context)}</div>')
    parts.append("</div>")
    body = "".join(parts)
    return _WRAP + th.style_block(body, fd.FOLD_RULES if folded else "") + body


# -- Markdown ---------------------------------------------------------------------------


def _md_items(items: list[_Item], turn: Turn) -> list[str]:
    out: list[str] = []
    for item in items:
        match item.kind:
            case "text":
                out.append(ms.safe_markdown(item.text.rstrip("\n")) + "\n")
            case "thinking":
                out.append(
                    f"<details><summary>Thinking</summary>\n\n{ms.safe_markdown(item.text.strip())}\n\n</details>\n"
                )
            case "todos":
                out.append(cm.todos_markdown(item.todos))
            case "note":
                out.append(f"> ⚠ {ms.plain(item.text)}\n")
            case "tool":
                rec = turn.tools.get(item.tool_id)
                if rec is None:
                    continue
                nested = "\n".join(_md_items(item.children, turn)) if item.children else ""
                out.append(cm.saved_card_markdown(card_of(rec), nested))
    return out


def _md_footer(turn: Turn) -> str:
    s = turn.stats
    if s is None:
        return ""
    bits = [
        f"**{r.fmt_usd(s.cost_usd)}**",
        "tokens " + " / ".join(r.token_parts(s)),
        f"{r.fmt_ms(s.duration_ms)} (API {r.fmt_ms(s.duration_api_ms)})",
        f"{s.num_turns} API turns",
    ]
    if turn.context is not None and turn.context.size:
        c = turn.context
        bits.append(f"context {r.fmt_tokens(c.used)} / {r.fmt_tokens(c.size)} ({c.used / c.size:.0%})")
    state = "**stopped by you** · " if turn.stopped else ""
    if not turn.stopped and turn.failed:
        head, said, advice = r.failure_parts(s)
        state = f"**✗ {head}**" + (f": {ms.plain(said)}" if said else "") + f" · {ms.plain(advice)} · "
    return "---\n" + state + " · ".join(bits) + "\n"


def render_markdown(turn: Turn) -> str:
    """The whole turn as Markdown (tool cards and thinking as ``<details>`` blocks)."""
    return _render_markdown(turn, _outline(turn.events, turn.tools))


def _render_markdown(turn: Turn, outline: list[_Item]) -> str:
    parts = _md_items(outline, turn)
    footer = _md_footer(turn)
    if footer:
        parts.append(footer)
    return "\n".join(parts)


def render_text(turn: Turn) -> str:
    """A plain-text summary: the Turn's repr and the answer text."""
    return f"{turn!r}\n\n{turn.text}"


def mime_bundle(turn: Turn) -> dict[str, Any]:
    """``{"text/html", "text/markdown", "text/plain"}`` for ``display``/``update_display``.

    The display boundary for lone surrogates: a ``\\ud800`` the CLI sent in a delta or a tool
    output stays on the events (and in ``turn.text``), and is U+FFFD here, where jupyter_client
    must encode the bundle as UTF-8 (:func:`~kandev_nb.render.reveal.displayable`).
    """
    outline = _outline(turn.events, turn.tools)  # once for both renderings
    return {
        "text/html": displayable(_render_html(turn, outline)),
        "text/markdown": displayable(_render_markdown(turn, outline)),
        "text/plain": displayable(render_text(turn)),
    }
