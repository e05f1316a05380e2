"""The approval card: what a can_use_tool request will do, and the buttons that answer it.

Buttons only call the request's :class:`~kandev_nb.agent.permissions.Approval` (``allow``,
``allow(always=True)``, ``allow(updated_input=...)``, ``deny(reason)``), which is thread-safe
and once-only, and set traits. The card learns the outcome from ``approval.on_decided`` and
from the ``PermissionDecided`` / ``PermissionCancelled`` events (:meth:`ApprovalCard.decided`),
so a timeout or a policy decision updates it too.

Widgets tests and the lead's kernel/Playwright tests look for: ``kandev-approval`` (the
card), ``kandev-allow`` ("Allow"), ``kandev-allow-always`` ("Allow for session"),
``kandev-deny`` ("Deny"), ``kandev-deny-reason``, ``kandev-edit`` ("Edit"),
``kandev-edit-input``, ``kandev-allow-edited`` ("Allow edited"), ``kandev-decision``.
"""

from __future__ import annotations

import json
from typing import Any

import ipywidgets as w

from kandev_nb.agent import events as ev
from kandev_nb.agent import tools as t
from kandev_nb.agent.permissions import Decision
from kandev_nb.notebook.widgets.cards import WidgetFactory
from kandev_nb.render import html as r

__all__ = ["ApprovalCard", "what_html"]


def what_html(event: ev.PermissionRequest) -> str:
    """What will happen if allowed, per tool: the command, the diff, the path, the URL or
    query, the plan (Markdown), else the raw input as JSON."""
    p = event.normalized
    match p:
        case t.ShellExec():
            desc = f'<div style="color:#57606a">{r.esc(p.description)}</div>' if p.description else ""
            return desc + r.code_html(p.command, "bash", cls="kandev-command")
        case t.ModifyFile():
            return (f"<div><code>{r.esc(p.file_path)}</code></div>"
                    + "".join(r.diff_html(r.cut(m.diff, 300, 30000).shown) for m in p.mutations))
        case t.ReadFile():
            return f"<div>read <code>{r.esc(p.file_path)}</code></div>"
        case t.CodeSearch():
            return f"<div>search <code>{r.esc(p.pattern)}</code> in <code>{r.esc(p.path or '.')}</code></div>"
        case t.HttpRequest():
            target = p.url or p.query or ""
            return f"<div>{'fetch' if p.url else 'search the web for'} <code>{r.esc(target)}</code></div>"
        case t.Plan():
            return f'<div class="kandev-plan">{r.markdown_html(p.plan)}</div>'
        case t.NotebookCell():  # the open notebook's cells: source highlighted, or the cell's diff
            from kandev_nb.render.cells import notebook_cell_html

            return notebook_cell_html(p)
        case t.Generic(input={"code": str(code)}):  # e.g. mcp__kernel__run_code
            return r.code_html(code, "python", cls="kandev-code")
        case _:
            return r.json_html(event.input)


class ApprovalCard:
    """The live card of one PermissionRequest.

    Attributes:
        box: root ``VBox`` with _dom_classes ``kandev-approval``.
        allow, allow_always, deny, edit, allow_edited: the buttons.
        reason: the deny reason ``Text``; editor: the JSON ``Textarea`` (hidden until Edit).
        status: the ``HTML`` line showing the decision (``kandev-decision``).
        outcome: the decision once known: ``(behavior, decided_by, waited_ms, message)``.
    """

    def __init__(self, event: ev.PermissionRequest, factory: WidgetFactory) -> None:
        self.event = event
        self.approval = event.approval
        self.outcome: tuple[str, str, int, str] | None = None
        reason = f'<div style="color:#57606a">{r.esc(event.reason)}</div>' if event.reason else ""
        blocked = (f'<div style="color:#cf222e">blocked path: <code>{r.esc(event.blocked_path)}</code></div>'
                   if event.blocked_path else "")
        title = event.title if event.title and event.title != event.tool_name else ""
        head = (f'<div><b>🔐 Claude wants to use {r.esc(event.tool_name)}</b>'
                + (f" — {r.esc(title)}" if title else "") + "</div>")
        self.what = factory.html(head + reason + blocked + what_html(event), "kandev-approval-what")
        self.allow = factory.button("Allow", "kandev-allow", button_style="success", tooltip="Allow once")
        self.allow_always = factory.button("Allow for session", "kandev-allow-always",
                                           tooltip="Allow this tool for the rest of the session")
        self.deny = factory.button("Deny", "kandev-deny", button_style="danger")
        self.reason = factory.track(w.Text(placeholder="reason (optional, sent to Claude)",
                                           _dom_classes=("kandev-deny-reason",)))
        self.edit = factory.button("Edit", "kandev-edit", tooltip="Edit the tool input, then allow")
        self.editor = factory.track(w.Textarea(value="", rows=8, _dom_classes=("kandev-edit-input",),
                                               layout=factory.track(w.Layout(width="100%", display="none"))))
        self.allow_edited = factory.button("Allow edited", "kandev-allow-edited", button_style="warning")
        self.allow_edited.layout = factory.track(w.Layout(width="auto", display="none"))
        self.error = factory.html("", "kandev-approval-error")
        self.status = factory.html("", "kandev-decision")
        shown: tuple[w.DOMWidget, ...] = (self.allow, self.allow_always, self.deny, self.reason, self.edit)
        if isinstance(event.normalized, t.Plan):
            # ExitPlanMode: approving the plan ends plan mode (the CLI reports the new mode);
            # keeping on planning is a deny whose message tells the agent why.
            self.allow.description, self.allow.tooltip = "Approve plan", "Approve the plan and leave plan mode"
            self.deny.description, self.deny.button_style = "Keep planning", "warning"
            self.reason.placeholder = "what to change in the plan (optional)"
            shown = (self.allow, self.deny, self.reason)
        self.buttons = factory.hbox(shown, "kandev-approval-buttons")
        self.box = factory.vbox((self.what, self.buttons, self.editor, self.allow_edited, self.error, self.status),
                                "kandev-approval")
        self.allow.on_click(lambda _b: self._answer(self.approval.allow()))
        self.allow_always.on_click(lambda _b: self._answer(self.approval.allow(always=True)))
        self.deny.on_click(lambda _b: self._answer(self.approval.deny(self._deny_message())))
        self.edit.on_click(lambda _b: self._open_editor())
        self.allow_edited.on_click(lambda _b: self._allow_edited())
        self.approval.on_decided(self._on_decided)

    @property
    def controls(self) -> tuple[w.DOMWidget, ...]:
        """Every input of the card (all disabled once decided)."""
        return (self.allow, self.allow_always, self.deny, self.reason, self.edit, self.editor, self.allow_edited)

    def _deny_message(self) -> str:
        typed = str(self.reason.value).strip()
        if isinstance(self.event.normalized, t.Plan):
            return "The user wants you to keep planning" + (f": {typed}" if typed else ".")
        return typed

    def _answer(self, decided: bool) -> None:
        if not decided and self.outcome is None:
            self.status.value = '<span style="color:#888">already answered</span>'

    def _open_editor(self) -> None:
        self.editor.value = json.dumps(self.event.input, indent=2, ensure_ascii=False, default=str)
        self.editor.layout.display = None
        self.allow_edited.layout.display = None

    def _allow_edited(self) -> None:
        try:
            value: Any = json.loads(self.editor.value)
        except ValueError as exc:
            self.error.value = f'<span style="color:#cf222e">not valid JSON: {r.esc(exc)}</span>'
            return
        if not isinstance(value, dict):
            self.error.value = '<span style="color:#cf222e">the input must be a JSON object</span>'
            return
        self.error.value = ""
        self._answer(self.approval.allow(updated_input=value))

    def _on_decided(self, decision: Decision) -> None:
        self.decided(decision.behavior, decision.decided_by, decision.waited_ms, decision.message,
                     edited=decision.updated_input is not None, always=bool(decision.updated_permissions))

    def decided(self, behavior: str, decided_by: str, waited_ms: int, message: str = "", *,
                edited: bool = False, always: bool = False) -> None:
        """Show the outcome and disable the inputs (idempotent: the first outcome stays)."""
        if self.outcome is not None:
            return
        self.outcome = (behavior, decided_by, waited_ms, message)
        for control in self.controls:
            control.disabled = True
        if behavior == "allow":
            verb = "Allowed" + (" for the session" if always else "") + (" with edited input" if edited else "")
            color = "#1a7f37"
        elif decided_by == "cancelled":
            verb, color = "Withdrawn by Claude Code", "#888"
        else:
            verb, color = "Denied", "#cf222e"
        who = {"person": "you", "policy": "policy", "timeout": "timeout", "cancelled": "the CLI",
               "settings": "settings"}.get(decided_by, decided_by)
        why = f" — {r.esc(message)}" if message and behavior == "deny" and decided_by != "cancelled" else ""
        self.status.value = (f'<span style="color:{color}"><b>{verb}</b> by {r.esc(who)} after '
                             f"{r.fmt_ms(waited_ms)}{why}</span>")
        self.box._dom_classes = (*self.box._dom_classes, "kandev-decided")

    def handle(self, event: ev.PermissionDecided | ev.PermissionCancelled) -> None:
        """Apply a PermissionDecided / PermissionCancelled event for this request."""
        if isinstance(event, ev.PermissionDecided):
            self.decided(event.behavior, event.decided_by, event.waited_ms, event.message)
        else:
            waited = self.approval.decision.waited_ms if self.approval.decision else 0
            self.decided("deny", "cancelled", waited)
