"""One view model per tool card: :func:`card_view` maps a call to a :class:`CardView`.

A card is its title line (status, tool label, title, :class:`Badge` figures) and its body, a
tuple of frozen parts (:data:`Part`): :class:`Fields`, :class:`Text`, :class:`Code`,
:class:`Block`, :class:`Markdown`, :class:`Diff`, :class:`Todos`, :class:`Questions`,
:class:`Images`, :class:`Inputs`, :class:`Remote`, :class:`Verdict`. :func:`card_view` holds the only switch over the
NormalizedPayload kinds; two renderers turn the same CardView into the live widget's and the
saved HTML (:mod:`kandev_nb.render.card_html`) and into the saved Markdown
(:mod:`kandev_nb.render.card_md`), so the live card, the saved HTML and the saved Markdown
show the same title, figures and texts. The approval card shows the proposed action from the
same switch (:func:`proposal_view`).

A call whose approval was denied (:class:`~kandev_nb.agent.events.PermissionDecided` with
``behavior="deny"``) never ran: its view shows what was proposed (the command, the diff),
"denied by ..." and why, and no stdout/stderr/exit code (the CLI's `tool_result` for it only
repeats the reason, with `is_error` true).

Long texts are cut to a preview by the renderers; the note under a preview names the Python
expression that holds the whole text (:attr:`CardView.where`, e.g.
``kandev_nb.tool_call('toolu_01').update.output``). Importable without a kernel.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from kandev_nb.agent import events as ev
from kandev_nb.agent import tools as t
from kandev_nb.agent.cells import NotebookCell
from kandev_nb.render.card_parts import (
    Badge,
    Block,
    CardView,
    Code,
    Diff,
    DiffStat,
    Field,
    Fields,
    Images,
    Inputs,
    Markdown,
    Part,
    Questions,
    Remote,
    Text,
    Todos,
    Verdict,
)
from kandev_nb.render.html import fmt_ms, fmt_tokens, without_image_notes
from kandev_nb.render.mdsafe import remote_urls

__all__ = [
    "Badge",
    "Block",
    "CardView",
    "Code",
    "Diff",
    "DiffStat",
    "Field",
    "Fields",
    "Images",
    "Inputs",
    "Markdown",
    "Part",
    "Questions",
    "Remote",
    "Text",
    "Todos",
    "Verdict",
    "card_view",
    "decided_by_text",
    "denied",
    "proposal_inputs",
    "proposal_view",
    "read_range",
    "repeats_name",
    "tool_label",
    "where_expr",
]


def tool_label(tool_name: str) -> str:
    """A tool's name as shown: ``mcp__kernel__list_variables`` -> ``kernel · list_variables``.

    MCP tools reach the CLI as ``mcp__<server>__<tool>`` (the `tool_use.name`); other names
    are returned unchanged.
    """
    if tool_name.startswith("mcp__"):
        server, sep, tool = tool_name[5:].partition("__")
        if sep and server and tool:
            return f"{server} · {tool}"
    return tool_name


def repeats_name(title: str, tool_name: str) -> bool:
    """True when `title` only repeats the tool's name (``mcp__kernel__read_notebook``,
    ``kernel · read_notebook``, ``read_notebook``), so a card shows the name once."""
    label = tool_label(tool_name)
    return title.strip() in (tool_name, label, label.rpartition(" · ")[2])


def where_expr(tool_use_id: str, attr: str = "update.output") -> str:
    """The Python expression that holds a call's full text, runnable as written in the
    notebook: ``kandev_nb.tool_call('<tool_use_id>').update.output``."""
    return f"kandev_nb.tool_call({tool_use_id!r}).{attr}"


_BY = {
    "person": "you",
    "policy": "policy",
    "timeout": "the approval timeout",
    "hook": "a hook",
    "settings": "Claude Code's permission settings",
    "mode": "the permission mode",
    "cancelled": "Claude Code",
    "grant": "your session grant",
}


def decided_by_text(decision: ev.PermissionDecided) -> str:
    """Who decided, in words: "you", "policy", "the approval timeout", "a hook", "hook no_rm",
    or the event's own `who` ("your policy rule Bash(rm:*)")...

    From `decided_by` (:data:`kandev_nb.agent.permissions.DecidedBy`).
    """
    if decision.who:  # "your policy rule Bash(rm:*)", "your session grant Bash(touch:*), given in cell [12]"
        return decision.who
    if decision.decided_by == "hook" and decision.hook:  # a kandev-nb Python hook, by its name
        return f"hook {decision.hook}"
    return _BY.get(decision.decided_by, decision.decided_by)


STOPPED_TOOL_TEXT = "The user doesn't want to proceed with this tool use."
"""How the CLI's `tool_result` for a call whose approval was withdrawn by a Stop (the protocol's
`interrupt`) begins: its message to the model (CLI 2.1.332), shown as "stopped by you (not run)"."""


def allowed_text(decision: ev.PermissionDecided) -> str:
    """An allow in words, for what it was: "answered by you" (an AskUserQuestion: the answers
    travel as an allow), "edited and allowed by you" (`updated_input` set), else "allowed by ..."."""
    who = decided_by_text(decision)
    if decision.tool_name == "AskUserQuestion":
        return f"answered by {who}"
    return f"{'edited and allowed' if decision.updated_input is not None else 'allowed'} by {who}"


def kept_planning(decision: ev.PermissionDecided | None) -> bool:
    """True when the person answered a plan (ExitPlanMode) with "Keep planning": feedback, not a refusal."""
    return decision is not None and decision.tool_name == "ExitPlanMode" and decision.behavior == "deny"


def denied(decision: ev.PermissionDecided | None) -> bool:
    """True when `decision` denied the call (it never ran)."""
    return decision is not None and decision.behavior == "deny"


def read_range(p: t.ReadFile) -> str:
    """The lines a Read covers, in words: ``lines 3–12 of 40``, ``from line 3``, ``40 lines``, ""."""
    start = p.start_line or p.offset
    count = p.line_count or p.limit
    if start and count:
        rng = f"lines {start}–{start + count - 1}"
    elif start:
        rng = f"from line {start}"
    elif count:
        rng = f"lines 1–{count}"
    else:
        rng = ""
    if p.total_lines:
        rng = f"{rng} of {p.total_lines}" if rng else f"{p.total_lines} lines"
    return rng


def _proposed(payload: t.NormalizedPayload) -> t.NormalizedPayload:
    """`payload` without the fields a `tool_result` filled in (for a call that never ran)."""
    match payload:
        case t.ShellExec() | t.Generic():
            return payload.model_copy(update={"output": None})
        case t.CodeSearch():
            return payload.model_copy(update={"files": (), "file_count": None, "text": None})
        case t.HttpRequest():
            return payload.model_copy(update={"status": None, "response": None})
        case t.ReadFile():
            return payload.model_copy(update={"content": None})
        case t.ModifyFile() | t.ManageTodos() | t.Plan() | t.SubagentTask():
            return payload.model_copy(update={"result": None})
        case _:
            return payload


def _json(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, default=str)


def _cell_language(p: NotebookCell) -> str:
    return "markdown" if p.cell_type == "markdown" else "python"


def _body(
    payload: t.NormalizedPayload,
    output: str,
    status: str,
    where: str,
    proposal: bool,
    images: bool = False,
) -> tuple[list[Part], list[Badge | DiffStat], tuple[str, ...]]:
    """The one switch over the NormalizedPayload kinds: (body parts, title badges, the input
    fields the body shows). `proposal`: what an approval card shows before the call runs;
    `images`: the card shows the call's pictures (their stand-in lines are left out)."""
    parts: list[Part] = []
    badges: list[Badge | DiffStat] = []
    shown: tuple[str, ...] = ()
    error = status == "error"
    match payload:
        case t.ModifyFile():
            badges.append(DiffStat(sum(m.added for m in payload.mutations), sum(m.removed for m in payload.mutations)))
            base = where.removesuffix(".output") + ".normalized" if where.endswith(".output") else where
            if proposal:
                parts.append(Fields((Field(payload.file_path, tone="code"),), cls="kandev-path"))
            parts += [
                Diff(m.diff, f"{base}.mutations[{i}].diff" if base else "") for i, m in enumerate(payload.mutations)
            ]
            if error and (payload.result or output):
                parts.append(Block("error", payload.result or output, "kandev-stderr", "error"))
            shown = ("file_path", "content", "old_string", "new_string", "edits", "notebook_path", "new_source")
        case t.ShellExec():
            out = payload.output
            if out is not None and out.interrupted:
                badges.append(Badge("interrupted"))
            elif out is not None and out.exit_code is not None:
                badges.append(Badge(f"exit {out.exit_code}"))
            if payload.background:
                badges.append(Badge("background"))
            if payload.description:
                parts.append(Text(payload.description, muted=True))
            parts.append(Code(payload.command, "bash", cls="kandev-command"))
            if out is not None:
                parts += [
                    Block("stdout", out.stdout, "kandev-stdout"),
                    Block("stderr", out.stderr, "kandev-stderr", "error"),
                ]
                figs = [Field(str(out.exit_code), "exit code", "bold")] if out.exit_code is not None else []
                figs += [Field("interrupted", tone="bold")] if out.interrupted else []
                figs += [Field("background")] if payload.background else []
                if figs:
                    parts.append(Fields(tuple(figs), cls="kandev-exit"))
            elif error and output:
                parts.append(Block("error", output, "kandev-stderr", "error"))
            shown = ("command", "description")
        case t.ReadFile():
            rng = read_range(payload)
            if rng:
                badges.append(Badge(rng))
            parts.append(Fields((Field(payload.file_path, "path", "code"),) + ((Field(rng),) if rng else ())))
            body = payload.content if payload.content is not None else output
            if body:
                parts.append(Code(body, filename=payload.file_path, cut=True))
            shown = ("file_path",)
        case t.CodeSearch():
            if payload.file_count is not None:
                badges.append(Badge(f"{payload.file_count} match{'es' if payload.file_count != 1 else ''}"))
            scope = " ".join(x for x in (payload.path or "", payload.glob or "") if x)
            items = [Field(payload.pattern, "pattern", "code")] + ([Field(scope, "in", "code")] if scope else [])
            items += [Field(f"{payload.file_count} found")] if payload.file_count is not None else []
            items += [Field("(truncated)")] if payload.truncated else []
            parts.append(Fields(tuple(items)))
            listing = "\n".join(payload.files) if payload.files else (payload.text or output)
            parts.append(Block("", listing, "kandev-matches"))
            shown = ("pattern", "path", "glob")
        case t.HttpRequest():
            if payload.status is not None:
                badges.append(Badge(f"HTTP {payload.status}"))
            target = payload.url or payload.query or ""
            items = [Field(target, "url", "link") if payload.url else Field(target, "query", "code")]
            items += [Field(str(payload.status), "status")] if payload.status is not None else []
            parts += [Fields(tuple(items)), Block("", payload.response or output, "kandev-response")]
            shown = ("url", "query")
        case t.SubagentTask():
            if payload.total_tool_use_count is not None:
                badges.append(Badge(f"{payload.total_tool_use_count} tools"))
            if payload.total_tokens is not None:
                badges.append(Badge(f"{fmt_tokens(payload.total_tokens)} tokens"))
            if payload.subagent_type:
                parts.append(Fields((Field(payload.subagent_type, "agent"),)))
            if payload.prompt:
                parts.append(Markdown(payload.prompt, fold="prompt"))
            totals = [
                Field(v, k)
                for k, v in (
                    ("duration", fmt_ms(payload.total_duration_ms) if payload.total_duration_ms is not None else None),
                    ("tokens", fmt_tokens(payload.total_tokens) if payload.total_tokens is not None else None),
                    (
                        "tool uses",
                        str(payload.total_tool_use_count) if payload.total_tool_use_count is not None else None,
                    ),
                )
                if v is not None
            ]
            if totals:
                parts.append(Fields(tuple(totals), cls="kandev-totals"))
            if payload.result:
                parts.append(Markdown(payload.result, cls="kandev-result", limits=(200, 20000)))
            shown = ("prompt", "subagent_type")
        case t.ManageTodos():
            if payload.items:
                parts.append(Todos(payload.items))
            elif payload.result:
                parts.append(Block("", payload.result, "kandev-output"))
            shown = ("todos",)
        case t.CreateTask():
            parts.append(
                Fields(
                    (Field(payload.title, tone="bold"),)
                    + ((Field(f"#{payload.task_id}", tone="muted"),) if payload.task_id else ()),
                    sep=" ",
                )
            )
            if payload.description:
                parts.append(Text(payload.description))
            shown = ("subject", "title", "description")
        case t.Plan():
            parts.append(Markdown(payload.plan, cls="kandev-plan"))
            shown = ("plan",)
        case NotebookCell():
            p = payload
            head = [Field(p.operation), Field(p.where, tone="bold")]
            if p.operation == "edit" and p.diff:
                head += [Field(f"+{p.added}", tone="ok"), Field(f"-{p.removed}", tone="error")]
            parts.append(Fields(tuple(head), cls="kandev-cell-target", sep=" "))
            if p.operation == "edit":
                parts.append(Diff(p.diff, whole=True) if p.diff else Code(p.source or "", _cell_language(p)))
            elif p.operation in ("insert", "run", "delete") and p.source is not None:
                parts.append(Code(p.source, _cell_language(p)))
            elif p.operation in ("run", "delete"):
                parts.append(Text("(source not read yet)", muted=True))
            if p.cell_type == "markdown" and p.operation in ("insert", "edit") and p.source:
                urls = remote_urls(p.source)
                if urls:
                    parts.append(Remote(urls))
            answer = p.output if p.output is not None else output
            if answer and not proposal:
                parts.append(
                    Block("error" if error else "answer", answer, "kandev-output", "error_text" if error else "")
                )
            shown = ("source",)
        case t.Generic(name="AskUserQuestion"):  # issue 19: the questions and the answers given
            parts.append(Questions(payload.input, payload.output or output))
            shown = ("questions",)
        case t.Generic(wrapped=str(key)) if key in payload.input:
            # a --schema turn's StructuredOutput: the answer inside kandev-nb's {"items": ...} /
            # {"value": ...} wrapper (the CLI needs an object), as the turn's summary shows it
            answer = payload.input[key]
            if isinstance(answer, list):
                badges.append(Badge(f"{len(answer)} record{'s' if len(answer) != 1 else ''}"))
            parts.append(Block("answer", _json(answer), "kandev-input", lang="json"))
            if not proposal and error:
                parts.append(Block("error", payload.output or output, "kandev-output", "error"))
            shown = (key,)
        case t.Generic(input={"code": str(code)}):  # e.g. mcp__kernel__run_code: the code as code
            parts.append(Code(code, "python"))
            rest = {k: v for k, v in payload.input.items() if k != "code"}
            if not proposal:  # a proposal lists the other inputs as its table
                if rest:
                    parts.append(Block("input", _json(rest), "kandev-input", lang="json"))
                parts.append(Block("output", without_image_notes(payload.output or output, images), "kandev-output"))
            shown = ("code",)
        case t.Generic():
            if not proposal:  # a proposal lists the whole input as its table
                if payload.input:
                    parts.append(Block("input", _json(payload.input), "kandev-input", lang="json"))
                parts.append(Block("output", without_image_notes(payload.output or output, images), "kandev-output"))
    return parts, badges, shown


def card_view(
    tool_name: str,
    title: str,
    payload: t.NormalizedPayload,
    output: str = "",
    *,
    status: str = "running",
    tool_use_id: str = "",
    duration_ms: int | None = None,
    decision: ev.PermissionDecided | None = None,
    images: tuple[str, ...] = (),
) -> CardView:
    """The view of one tool card.

    Args:
        tool_name: the `tool_use.name` (MCP names shown as by :func:`tool_label`).
        title: the ToolCall's title (shown when it differs from the name).
        payload: the latest NormalizedPayload (the ToolCall's, or the ToolUpdate's enriched one).
        output: the ToolUpdate's full `output` text ("" while running).
        status: "running", "complete" or "error" (an error shows `output` as the error).
        tool_use_id: the call's `tool_use_id`, named in the "full text in ..." notes.
        duration_ms: tool_use -> tool_result wall time, ms; the badge shows it less the
            approval's `waited_ms` (the person's time is on the verdict line).
        decision: the call's approval answer; a deny shows what was proposed, "denied by ..."
            and why, and no `tool_result` figures (exit code, match count): nothing ran.
        images: the ToolUpdate's pictures (``data:`` URIs, e.g. `run_code`'s figures).

    Returns:
        A :class:`CardView`; its status is "denied" for a denied call.
    """
    where = where_expr(tool_use_id) if tool_use_id else ""
    is_denied = denied(decision)
    stopped = decision is None and status == "error" and output.startswith(STOPPED_TOOL_TEXT)
    if is_denied or stopped:
        payload, output, status, images = _proposed(payload), "", "running", ()
    parts, badges, _shown = _body(payload, output, status, where, proposal=False, images=bool(images))
    if is_denied or stopped:
        parts = [replace(p, proposed=True) if isinstance(p, Diff) else p for p in parts]
    if images:
        parts.append(Images(images))
    if stopped:  # the turn was stopped while its approval waited: nothing ran
        status = "denied"
        badges.insert(0, Badge("stopped by you", "denied"))
    elif decision is not None and is_denied:
        status = "denied"
        if kept_planning(decision) and decision.decided_by == "person":
            badges.insert(0, Badge("you asked to keep planning"))  # feedback on the plan, not a refusal
        else:
            badges.insert(0, Badge(f"denied by {decided_by_text(decision)}", "denied"))
    elif duration_ms is not None:
        # tool_use -> tool_result includes the time the approval waited for an answer: the
        # badge is the tool's own time; the verdict line says how long the approval took
        waited = decision.waited_ms if decision is not None else 0
        badges.append(Badge(fmt_ms(max(duration_ms - waited, 0))))
    if decision is not None:
        parts.append(Verdict(decision))
    shown_title = title if title and not repeats_name(title, tool_name) else ""
    return CardView(payload.kind, tool_label(tool_name), shown_title[:200], status, tuple(badges), tuple(parts), where)


_RISKY_FIELDS = frozenset({"dangerouslyDisableSandbox", "run_in_background"})


def proposal_view(
    payload: t.NormalizedPayload, tool_input: Mapping[str, Any], *, skip_text: str = ""
) -> tuple[Part, ...]:
    """What an approval card shows before the call runs: the main parts of `payload`'s kind
    (the command, the diff, the path, the plan, an MCP tool's `code`), then every other field
    of the can_use_tool `input` (:class:`Inputs`; ``dangerouslyDisableSandbox`` and
    ``run_in_background`` flagged when set).

    Args:
        payload: the can_use_tool request's `normalized` input.
        tool_input: its raw `input`.
        skip_text: a text already shown next to the card (its title): a description or path
            equal to it is not repeated.
    """
    parts, _badges, shown = _body(_proposed(payload), "", "running", "", proposal=True)
    if skip_text:
        parts = [p for p in parts if not _repeats(p, skip_text)]
    rows = proposal_inputs(tool_input, shown)
    if rows:
        parts.append(Inputs(rows, "other inputs" if shown else "inputs"))
    return tuple(parts)


def proposal_inputs(tool_input: Mapping[str, Any], skip: tuple[str, ...] = ()) -> tuple[Field, ...]:
    """The fields of a can_use_tool `input` except `skip`, as :class:`Field` rows: a short
    one-line string as code, anything else as a ``pre`` block (JSON for non-strings);
    ``dangerouslyDisableSandbox`` / ``run_in_background`` flagged `dangerous` when set."""
    return tuple(
        Field(
            v if isinstance(v, str) else _json(v),
            k,
            "code" if isinstance(v, str) and "\n" not in v and len(v) <= 200 else "pre",
            dangerous=k in _RISKY_FIELDS and bool(v),
        )
        for k, v in tool_input.items()
        if k not in skip
    )


def _repeats(part: Part, text: str) -> bool:
    """True for a description or an edit's path equal to `text` (the card's title)."""
    if isinstance(part, Text):
        return part.text == text
    return isinstance(part, Fields) and part.cls == "kandev-path" and part.items[0].value == text
