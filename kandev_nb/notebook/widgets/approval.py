"""The approval card: what a can_use_tool request will do, and the controls that answer it.

The controls are one anywidget, :class:`ApprovalControls` (``src/widgets/approval.ts``). Each
answer is ONE custom message from the browser that carries what the person typed with the
click: ``{"action": "deny", "reason": <text>}``, ``{"action": "allow_edited", "input":
<JSON text>}`` (built field by field in the browser, :mod:`.input_editor`; while editing,
``{"action": "preview", "input": <JSON text>}`` redraws the proposal), ``{"action": "allow"}``,
``{"action": "allow_always"}`` (the call's scoped session grant, :mod:`kandev_nb.policy.grants`),
``{"action": "allow_tool"}`` (every call of the tool for the session), ``{"action": "edit"}``,
``{"action": "allow_suggestion", "index": <i>}`` (one of the CLI's
`permission_suggestions`, a button ``kandev-allow-suggestion`` naming the rule and where it
is saved, :mod:`kandev_nb.agent.suggestions`). A synced ``Text`` value would not do: while a
cell blocks, JupyterLab holds back
later updates of a widget's value, so the kernel saw only the first letter of a typed reason
when the Deny click arrived (DESIGN.md, "Typed text while a cell blocks"). Enter in the
reason box denies.

The controls only call the request's :class:`~kandev_nb.agent.permissions.Approval` (``allow``,
``allow(always=True)``, ``allow(always="tool")``, ``allow(updated_input=...)``, ``deny(reason)``), which is thread-safe
and once-only, and set traits. The card learns the outcome from ``approval.on_decided`` and
from the ``PermissionDecided`` / ``PermissionCancelled`` events (:meth:`ApprovalCard.decided`),
so a timeout or a policy decision updates it too.

The proposed action is shown once: the card lists every input field the tool gets (the
main one highlighted: the command, the diff, the code; the rest as a table), and the
:class:`~kandev_nb.notebook.widgets.view.TurnView` shows the card in place of the tool card of the
same `tool_use_id` while the approval waits; once answered, the tool card is back with the
card's decision line under its summary.

Class names tests and Playwright look for: ``kandev-approval`` (the card),
``kandev-approval-what``, ``kandev-approval-controls`` (the anywidget; inside it the buttons
``kandev-allow`` "Allow once", ``kandev-allow-always`` the scoped grant ("Allow `touch …` for this
session", absent for a compound command), ``kandev-allow-tool`` the whole tool ("Allow all Bash
commands for this session"), ``kandev-deny``
"Deny", ``kandev-edit`` "Edit", ``kandev-allow-edited`` "Allow edited", the inputs
``kandev-deny-reason`` and ``kandev-edit-input``), ``kandev-approval-countdown``,
``kandev-decision``.

A fleet's card (issue 33, point 2) is the same card given a :class:`ForAllRows` (its row in the
fleet's queue): "Allow (this row)", Deny, Edit, then ``kandev-fleet-allow-all`` "Allow `<rule>`
for all rows" and ``kandev-fleet-deny-all`` "Deny `<rule>` for all rows" over the rule field
``kandev-fleet-rule`` (editable; what a click gives is the field's text, sent with the click as
``{"action": "allow_all" | "deny_all", "rule": <text>}``) and ``kandev-fleet-rule-count``
("answers 5 waiting rows", recounted as the rule is edited, ``{"action": "rule_preview"}``),
``kandev-fleet-rule-note`` (why, too broad, or what is wrong with the rule); the session grants
("for this row's agent") and the CLI's suggestions behind ``kandev-fleet-more``. A rule too broad
to give with one click takes a second: the first turns the button into "Really allow `<rule>` for
all rows?", and only a second click with the same rule gives it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Literal, Protocol, get_args

import anywidget
import traitlets

from kandev_nb.agent import events as ev
from kandev_nb.agent import suggestions
from kandev_nb.agent import tools as t
from kandev_nb.agent.approvals import edited_input
from kandev_nb.agent.permissions import Decision
from kandev_nb.notebook.page_code import page_text
from kandev_nb.notebook.widget_messages import ApprovalAction, ApprovalPress, read
from kandev_nb.notebook.widgets import input_editor
from kandev_nb.notebook.widgets.cards import WidgetFactory
from kandev_nb.render import card_html as ch
from kandev_nb.render import html as r
from kandev_nb.render import theme as th
from kandev_nb.render.card_view import Inputs, proposal_inputs, proposal_view, repeats_name, tool_label
from kandev_nb.render.reveal import displayable, reveal_html

__all__ = [
    "ACTIONS",
    "ApprovalCard",
    "ApprovalControls",
    "ForAllRows",
    "countdown_text",
    "fmt_left",
    "header_html",
    "inputs_html",
    "row_wording",
    "what_html",
]

ACTIONS: tuple[str, ...] = get_args(ApprovalAction)
"""The `action` values of the controls' custom messages (:class:`~kandev_nb.notebook.widget_messages.ApprovalPress`)."""

PLAN_CHOICES = {"approve_accept_edits": "acceptEdits", "approve_keep_asking": "default"}
"""An ExitPlanMode card's approvals, as the CLI offers them: "Approve and auto-accept edits",
"Approve, keep asking" -> the CLI mode the session switches to (``setMode``)."""

_WARN = "var(--jp-error-color1, #cf222e)"
_MUTED = "var(--jp-ui-font-color2, #57606a)"


def fmt_left(seconds: float) -> str:
    """Seconds left, rounded up: ``"4:05"`` from a minute on, else ``"45 s"``."""
    s = int(seconds + 0.999)  # 0.2 s left still reads "1 s"
    return f"{s // 60}:{s % 60:02d}" if s >= 60 else f"{s} s"


def countdown_text(remaining_s: float | None, timeout_s: float | None) -> str:
    """The card's line about the approval timeout, as plain text.

    Args:
        remaining_s: seconds left (:meth:`Approval.remaining_s`), None without a timeout.
        timeout_s: the session's `approval_timeout` in seconds, None for none.
    """
    if remaining_s is None or timeout_s is None:
        return "No approval timeout: the cell waits until you answer."
    return (
        f"⏳ {fmt_left(remaining_s)} left to answer; then the approval timeout "
        f"({fmt_left(timeout_s)}) denies it for you."
    )


def inputs_html(tool_input: dict[str, Any], skip: tuple[str, ...] = ()) -> str:
    """Every field of `tool_input` except `skip`, as a two-column table ("" if none is left).

    Flags that widen what a Bash command may do (``dangerouslyDisableSandbox``,
    ``run_in_background``) are shown in red when set.
    """
    rows = [f for f in proposal_inputs(tool_input, skip) if f.key not in skip]
    return ch.inputs_html(Inputs(tuple(rows), "other inputs" if skip else "inputs")) if rows else ""


def what_html(event: ev.PermissionRequest, *, skip_text: str = "", full: bool = False) -> str:
    """What will happen if allowed: the main parts of the tool card of the same kind
    (:func:`~kandev_nb.render.card_view.proposal_view`: the command, the diff, the path, the
    URL or query, the plan as Markdown, an MCP tool's `code`), then every other input field.

    Args:
        event: the request (its `normalized` payload and raw `input`).
        skip_text: a text already shown next to the card (the tool card's title): a
            description or path equal to it is not repeated.
        full: an edit's whole diff (after "Show the whole diff"), not its preview.
    """
    parts = proposal_view(event.normalized, event.input, skip_text=skip_text)
    return ch.parts_html(parts, full=full, wrap=True)  # long lines broken with a mark, hidden characters shown


def header_html(event: ev.PermissionRequest) -> str:
    """The card's first lines: the tool, the CLI's description, its reason and blocked path."""
    shown = [v for v in event.input.values() if isinstance(v, str)]
    title = event.title
    if not title or repeats_name(title, event.tool_name) or any(title in s for s in shown if s):
        title = ""  # the CLI's description repeats the tool's name, the input's (or the path's name)
    head = (
        f'<div><b title="{r.esc(event.tool_name)}">🔐 Claude wants to use {r.esc(tool_label(event.tool_name))}</b>'
        + (f" — {r.esc(title)}" if title else "")
        + "</div>"
    )
    reason = f'<div style="color:{_MUTED}">{r.esc(event.reason)}</div>' if event.reason else ""
    path = ""
    if event.blocked_path:
        # can_use_tool's blocked_path: the path that made the CLI ask. CLI 2.1.332 sends it for
        # `touch x.txt` in the project too (measured): "outside" only when it is (issue 34, point 8).
        outside = event.reason is None and not inside(event.blocked_path, getattr(event.approval, "cwd", None))
        label = "outside the working directory" if outside else "path in question"
        path = (
            f'<div class="kandev-blocked-path" style="color:{_WARN}">{label}: '
            f"<code>{r.esc(event.blocked_path)}</code></div>"
        )
    return reveal_html(head + reason + path)[0]  # a bidi control in a title or path shown as <U+…>


def inside(path: str, folder: str | None) -> bool:
    """True when `path` is `folder` or below it (both resolved as far as they exist); False
    without a folder or for a path that cannot be read."""
    if not folder:
        return False
    try:
        target, base = Path(os.path.realpath(path)), Path(os.path.realpath(folder))
    except (OSError, ValueError):
        return False
    return target == base or target.is_relative_to(base)


class ForAllRows(Protocol):
    """What a fleet's card answers for all rows with (the board's, over its queue): the rule
    field's state and the answer itself. Every rule text is read again at each call."""

    def state(self, text: str | None, armed: bool) -> dict[str, Any]:
        """The controls' `fleet` JSON for the rule field's `text` (None: the proposed rule):
        ``rule``, ``allow_label``, ``deny_label``, ``count``, ``why``, ``too_broad``, ``error``,
        ``can_allow``, ``can_deny``, ``armed`` (the Allow button asks "Really ...?")."""
        ...

    def too_broad(self, text: str) -> str:
        """Why `text`'s rules are too broad to allow with one click ("" if they are not)."""
        ...

    def give(self, behavior: Literal["allow", "deny"], text: str, *, confirm: bool, reason: str) -> str:
        """Give `text`'s rules for all rows (raises ValueError, RuntimeError: nothing given)."""
        ...


def row_wording(label: str) -> str:
    """A session grant's label worded for a fleet row: "... for this row's agent"."""
    return label.replace("for this session", "for this row's agent")


class ApprovalControls(anywidget.AnyWidget):
    """The buttons and text boxes of one approval card, rendered in the browser.

    The browser sends one custom message per answer (see the module docstring); the kernel
    side is :meth:`ApprovalCard.press`. Traits: `pending` (False disables every control),
    `plan` (ExitPlanMode labels: "Approve plan" / "Keep planning", no Edit), `placeholder`
    (the reason box's), `input_json` (the tool input as JSON for the editor, sent on the
    first "edit"), `error` (a message under the controls, e.g. invalid JSON).
    """

    _esm = input_editor.controls_esm()  # the field editors (issue 27 point 6), then the controls
    _css = page_text("approval.css") + "\n" + th.stylesheet() + "\n"  # its code is coloured by class
    pending = traitlets.Bool(True).tag(sync=True)
    plan = traitlets.Bool(False).tag(sync=True)
    placeholder = traitlets.Unicode("reason (optional, sent to Claude; Enter denies)").tag(sync=True)
    input_json = traitlets.Unicode("").tag(sync=True)
    error = traitlets.Unicode("").tag(sync=True)
    grant_label = traitlets.Unicode("").tag(sync=True)
    """The scoped grant's button ("Allow `touch …` for this session"); "" offers none."""
    tool_label = traitlets.Unicode("").tag(sync=True)
    """The whole-tool button ("Allow all Bash commands for this session"); "" offers none."""
    request_id = traitlets.Unicode("").tag(sync=True)
    """The control_request's `request_id` (``data-request-id`` on the controls: a toast's Show finds the card)."""
    fleet = traitlets.Unicode("").tag(sync=True)
    """A fleet's card: JSON of the rule for all rows (:meth:`ForAllRows.state`); "" otherwise."""
    suggestions = traitlets.Unicode("[]").tag(sync=True)
    """JSON ``[{"index": i, "label": "Always allow Bash(npm test *) in this project (...)"}]``:
    one button per CLI `permission_suggestions` entry (:func:`kandev_nb.agent.suggestions.offered`)."""


class ApprovalCard:
    """The live card of one PermissionRequest.

    Attributes:
        box: root ``VBox`` with _dom_classes ``kandev-approval`` (``kandev-decided`` added
            once answered).
        what: the ``HTML`` of the proposed action (``kandev-approval-what``).
        controls: the :class:`ApprovalControls` anywidget (``kandev-approval-controls``).
        countdown: the ``HTML`` line with the time left before the approval timeout.
        status: the ``HTML`` line showing the decision (``kandev-decision``).
        outcome: the decision once known: ``(behavior, decided_by, waited_ms, message)``.
        attached: True when the card stands in for its tool card while it waits.
    """

    def __init__(
        self,
        event: ev.PermissionRequest,
        factory: WidgetFactory,
        *,
        attached: bool = False,
        rows: ForAllRows | None = None,
    ) -> None:
        self.event = event
        self.approval = event.approval
        self.attached = attached
        self.rule_text: str | None = None
        """A fleet's card: the rule field's text as last sent (None: the proposed rule)."""
        self.armed = ""
        """A fleet's card: the too-broad rule whose first click asked "Really ...?" ("" for none)."""
        self.outcome: tuple[str, str, int, str] | None = None
        self.what = factory.html(displayable(header_html(event) + what_html(event)), "kandev-approval-what")
        self.plan = isinstance(event.normalized, t.Plan)
        self.rows = rows if not self.plan else None  # a plan is approved row by row
        self.controls = factory.track(
            ApprovalControls(
                plan=self.plan, request_id=self.approval.request_id, _dom_classes=("kandev-approval-controls",)
            )
        )
        if self.plan:
            self.controls.placeholder = "what to change in the plan (optional; Enter sends it)"
        offered, problems = suggestions.offered(self.approval.suggestions)  # issue 19: saved rules as buttons
        self.controls.suggestions = json.dumps([{"index": i, "label": label} for i, label in offered])
        grant, whole = self.approval.grant, self.approval.whole_tool
        self.controls.grant_label = grant.label if grant is not None else ""
        self.controls.tool_label = whole.label if grant is None or grant.rule != whole.rule else ""
        if self.rows is not None:  # a fleet's row: its grants are its agent's, not a session's
            self.controls.grant_label = row_wording(self.controls.grant_label)
            self.controls.tool_label = row_wording(self.controls.tool_label)
            offered = [(i, row_wording(label)) for i, label in offered]
            self.controls.suggestions = json.dumps([{"index": i, "label": label} for i, label in offered])
            self.refresh_rows()
        if problems:
            self.what.value += f'<div style="color:{_MUTED};font-size:85%">{r.esc("; ".join(problems))}</div>'
        self.countdown = factory.html("", "kandev-approval-countdown")
        self.status = factory.html("", "kandev-decision")
        parts: tuple[Any, ...] = (self.what, self.controls, self.countdown, self.status)
        if not attached and ch.diff_is_cut(event.normalized):  # review the whole edit before answering
            more = factory.button(
                "Show the whole diff", "kandev-show-all", tooltip="Send the whole diff to the browser"
            )

            def show_all(_button: Any) -> None:
                self.show_full()
                self.box.children = tuple(c for c in self.box.children if c is not more)

            more.on_click(show_all)
            parts = (self.what, more, *parts[1:])
        self.box = factory.vbox(parts, "kandev-approval")
        self.controls.on_msg(self._on_view_msg)
        self.tick()
        self.approval.on_decided(self._on_decided)

    def show_full(self) -> None:
        """Show the whole proposed edit (its tool card's "Show the whole diff" when attached)."""
        self.what.value = displayable(header_html(self.event) + what_html(self.event, full=True))

    # -- the browser's messages -------------------------------------------------------------

    def _on_view_msg(self, _widget: Any, content: Any, _buffers: Any) -> None:
        if not isinstance(content, dict):
            return
        pressed = read(ApprovalPress, content)
        if pressed is None:  # an unknown action: the card says so
            self.press(str(content.get("action", "")))
            return
        reason, text = pressed.reason or "", pressed.input
        self.press(pressed.action, reason=reason, input_text=text, index=pressed.index, rule=pressed.rule)

    def refresh_rows(self) -> None:
        """A fleet's card: redraw the rule field's labels and count (the queue changed, or the
        rule did). Nothing on a card that is not a fleet's, or once answered."""
        if self.rows is None or self.outcome is not None:
            return
        value = json.dumps(self.rows.state(self.rule_text, bool(self.armed) and self.armed == self.rule_text))
        if self.controls.fleet != value:
            self.controls.fleet = value

    def _for_all(self, behavior: Literal["allow", "deny"], rule: str | None, reason: str) -> bool:
        """ "Allow/Deny for all rows" with the rule field's `rule` (None: the text last shown)."""
        if self.rows is None or self.plan:
            self.controls.error = "not a fleet's card"
            return False
        text = rule if rule is not None else self.rule_text
        if text is None:
            text = str(self.rows.state(None, False).get("rule", ""))
        self.rule_text = text
        confirm = False
        if behavior == "allow" and self.rows.too_broad(text):
            if self.armed != text:  # the first click on a too-broad rule only asks again
                self.armed = text
                self.refresh_rows()
                return False
            confirm = True
        try:
            self.rows.give(behavior, text, confirm=confirm, reason=reason)
        except (ValueError, RuntimeError) as exc:
            self.controls.error = str(exc)
            self.armed = ""
            self.refresh_rows()
            return False
        self.controls.error = ""
        return True

    def press(
        self,
        action: str,
        *,
        reason: str = "",
        input_text: str | None = None,
        index: int | None = None,
        rule: str | None = None,
    ) -> bool:
        """Answer as the controls' message would: `action` is one of :data:`ACTIONS`.

        Args:
            action: "allow", "allow_always", "deny" (with `reason`, sent to Claude as the
                deny `message`), "edit" (sends the input as JSON to the editor) or
                "allow_edited" (with `input_text`, the edited input as a JSON object).
            reason: the reason box's text at the click.
            input_text: the editor's text at the click.
            index: with "allow_suggestion", which of the CLI's `permission_suggestions` to
                accept (sent as ``updatedPermissions`` = exactly that entry).
            rule: with "allow_all", "deny_all" and "rule_preview" (a fleet's card), the rule
                field's text at the click (None: the text last shown).

        Returns:
            True if this call decided the request. An unknown action, invalid JSON or an
            input that is not an object decides nothing (the card says why); so does an
            answer after the request was decided ("already answered").
        """
        if action == "edit":
            if not self.controls.input_json:
                self.controls.input_json = json.dumps(self.event.input, indent=2, ensure_ascii=False, default=str)
            return False
        if action == "preview" and not self.plan and self.outcome is None and input_text is not None:
            shown = input_editor.preview_html(self.event, input_text)  # the diff follows the editor
            if shown is not None:
                self.what.value = shown
            return False
        if action == "rule_preview":
            if self.rows is not None and rule is not None and rule != self.rule_text:
                self.rule_text, self.armed = rule, ""
                self.refresh_rows()
            return False
        if action in ("allow_all", "deny_all"):
            return self._for_all("allow" if action == "allow_all" else "deny", rule, reason)
        if action == "allow":
            return self._answer(self.approval.allow())
        if self.plan and action in PLAN_CHOICES:  # the CLI's own plan choices (issue 27 point 9)
            return self._answer(self.approval.allow(set_mode=PLAN_CHOICES[action]))
        if action == "allow_always" and not self.plan and self.approval.grant is not None:
            return self._answer(self.approval.allow(always=True))
        if action == "allow_tool" and not self.plan:
            return self._answer(self.approval.allow(always="tool"))
        if action == "deny":
            return self._answer(self.approval.deny(self._deny_message(reason)))
        if action == "allow_suggestion" and index is not None:
            try:
                return self._answer(self.approval.allow(suggestion=index))
            except (IndexError, ValueError) as exc:
                self.controls.error = str(exc)
                return False
        if action == "allow_edited" and not self.plan:
            return self._allow_edited(input_text if input_text is not None else self.controls.input_json)
        self.controls.error = f"unknown action {action!r}"
        return False

    def _deny_message(self, typed: str) -> str:
        typed = typed.strip()
        if self.plan:
            return "The user wants you to keep planning" + (f": {typed}" if typed else ".")
        return typed

    def _answer(self, decided: bool) -> bool:
        if not decided and self.outcome is None:
            self.status.value = '<span style="color:#888">already answered</span>'
        return decided

    def _allow_edited(self, text: str) -> bool:
        try:
            value: Any = json.loads(text)
        except ValueError as exc:
            self.controls.error = f"not valid JSON: {exc}"
            return False
        if not isinstance(value, dict):
            self.controls.error = "the input must be a JSON object"
            return False
        self.controls.error = ""
        return self._answer(self.approval.allow(updated_input=value))

    # -- time left ------------------------------------------------------------------------

    def tick(self, now: float | None = None) -> None:
        """Refresh the time left before the approval timeout (`now`: monotonic seconds)."""
        if self.outcome is not None:
            return
        left = self.approval.remaining_s(now)
        text = countdown_text(left, self.approval.timeout_s)
        color = _WARN if left is not None and left < 30 else _MUTED
        value = f'<span style="color:{color};font-size:90%">{r.esc(text)}</span>'
        if self.countdown.value != value:
            self.countdown.value = value

    # -- the outcome ----------------------------------------------------------------------

    def _on_decided(self, decision: Decision) -> None:
        self.decided(
            decision.behavior,
            decision.decided_by,
            decision.waited_ms,
            decision.message,
            edited=edited_input(self.approval, decision) is not None,
            always=decision.grant,
        )
        if decision.suggestion is not None:
            self.status.value += f'<div class="kandev-saved-rule">{r.esc(decision.note)}</div>'
        elif self.rows is not None and decision.note:  # "allowed for all rows: Bash(python3 tools/profile.py:*)"
            self.status.value += f'<div class="kandev-fleet-given">{r.esc(decision.note)}</div>'

    def decided(
        self,
        behavior: str,
        decided_by: str,
        waited_ms: int,
        message: str = "",
        *,
        edited: bool = False,
        always: str = "",
    ) -> None:
        """Show the outcome and disable the controls (idempotent: the first outcome stays).

        `always` is the session grant the allow gave (``Bash(touch:*)``), shown with it.
        An attached card then keeps only this line (its tool card, back in place above it,
        shows the action and the result); a standalone card keeps the action too.
        """
        if self.outcome is not None:
            return
        self.outcome = (behavior, decided_by, waited_ms, message)
        self.controls.pending = False
        if behavior == "allow":
            verb = ("Edited and allowed" if edited else "Allowed") + (f" for the session ({always})" if always else "")
            color = "#57606a"  # neutral: the call may still fail (its tool card says so)
        elif decided_by == "cancelled":
            verb, color = "Withdrawn by Claude Code", "#888"
        elif self.plan and decided_by == "person":
            feedback = message.removeprefix("The user wants you to keep planning").lstrip(":. ")
            self.status.value = '<span style="color:#57606a"><b>You asked to keep planning</b>' + (
                f": {r.esc(feedback)}</span>" if feedback else "</span>"
            )
            self.box.children = (self.status,) if self.attached else (self.what, self.status)
            self.box._dom_classes = (*self.box._dom_classes, "kandev-decided")
            return
        else:
            verb, color = "Denied", "#cf222e"
        who = {
            "person": "you",
            "policy": "policy",
            "timeout": "timeout",
            "cancelled": "the CLI",
            "settings": "settings",
            "grant": "your session grant",
        }.get(decided_by, decided_by)
        why = f" — {r.esc(message)}" if message and behavior == "deny" and decided_by != "cancelled" else ""
        self.status.value = (
            f'<span style="color:{color}"><b>{verb}</b> by {r.esc(who)} after {r.fmt_ms(waited_ms)}{why}</span>'
        )
        # an attached card keeps its decision line under the tool card's summary (seen even
        # when that card is folded); the tool card shows the action again
        self.box.children = (self.status,) if self.attached else (self.what, self.status)
        self.box._dom_classes = (*self.box._dom_classes, "kandev-decided")

    def handle(self, event: ev.PermissionDecided | ev.PermissionCancelled) -> None:
        """Apply a PermissionDecided / PermissionCancelled event for this request."""
        if isinstance(event, ev.PermissionDecided):
            if event.who and self.outcome is None:  # "your policy rule Bash(rm:*)"
                self.decided(event.behavior, event.who, event.waited_ms, event.message)
                return
            self.decided(event.behavior, event.decided_by, event.waited_ms, event.message)
        else:
            waited = self.approval.decision.waited_ms if self.approval.decision else 0
            self.decided("deny", "cancelled", waited)
