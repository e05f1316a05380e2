"""``%claude_permissions``: what may run unasked in a session, and a click that revokes a grant.

The equivalent of Claude Code's ``/permissions``. The panel (:class:`PermissionsPanel`, an
anywidget with dom class ``kandev-permissions``) shows, for one session of the kernel:

* the permission mode (``SessionConfig.mode``, which follows the CLI's ``system/status``);
* the session grants given by "Allow for this session" and the cell that gave each
  (``ApprovalBroker._grants``), each with a **Revoke** button (``kandev-revoke``) that sends
  ``{"action": "revoke", "rule": <rule>}``; a revoked grant is asked again at once, in the same
  CLI process (:mod:`kandev_nb.agent.revoke`: the CLI has no control_request that removes a
  session rule, so kandev-nb's PreToolUse hook answers "ask" for every call the CLI's copy
  could still cover, read as a deny rule: ``nice touch x`` and ``timeout 5 touch x`` too);
* the policies in force (``ApprovalBroker.policies_in_force``), and the session's
  ``--allowed-tools`` / ``--disallowed-tools``;
* the rules the CLI loaded from its settings files: the live CLI's ``list_permission_rules``
  control_request (``state.rules[]``: ``behavior``, ``rule``, ``source``); with no live
  process, the ``permissions`` of ``~/.claude/settings.json``, ``<cwd>/.claude/settings.json``
  and ``<cwd>/.claude/settings.local.json`` as read from disk;
* the kernel tools (the in-kernel MCP server ``kernel``): on or off for the session.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import anywidget
import traitlets

from kandev_nb.agent.revoke import revoke_grant
from kandev_nb.notebook.page_code import page_text
from kandev_nb.notebook.widget_messages import RevokePress, read
from kandev_nb.render.html import esc

__all__ = ["PermissionsPanel", "panel_of", "permissions", "settings_rules"]


_SETTINGS = ("~/.claude/settings.json", ".claude/settings.json", ".claude/settings.local.json")
_REVOKED = (
    "revoked: asked again, in this CLI process, whenever the rule could still cover a call (read as a deny rule: "
    "wrappers such as nice and timeout included); the CLI drops its own copy at the next Allow"
)

_ASKED_ANYWAY = (
    "revoked in kandev-nb: the CLI still holds this grant, but kandev-nb asks anyway for every call it "
    "covers (the CLI drops it at the next Allow)"
)


def settings_rules(cwd: str, home: str | None = None) -> list[dict[str, str]]:
    """The ``permissions.allow/ask/deny`` rules of the settings files the CLI reads, from disk.

    Args:
        cwd: the session's working directory (the project's ``.claude/`` folder is under it).
        home: the user's home (default: ``~``).

    Returns:
        ``[{"behavior": "allow"|"ask"|"deny", "rule": str, "source": <file path>}]``; a file that is
        missing is skipped, one that is not valid JSON gives one row whose ``rule`` says so.
    """
    rows: list[dict[str, str]] = []
    for name in _SETTINGS:
        path = Path(name.replace("~", home, 1)) if home and name.startswith("~") else Path(name).expanduser()
        if not path.is_absolute():
            path = Path(cwd) / path
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            continue
        except (OSError, ValueError) as exc:
            rows.append({"behavior": "?", "rule": f"unreadable: {exc}", "source": str(path)})
            continue
        perms = data.get("permissions") if isinstance(data, dict) else None
        for behavior in ("allow", "ask", "deny"):
            for rule in (perms or {}).get(behavior) or () if isinstance(perms, dict) else ():
                rows.append({"behavior": behavior, "rule": str(rule), "source": str(path)})
    return rows


async def _cli_rules(session: Any) -> tuple[list[dict[str, str]], str]:
    """The live CLI's ``list_permission_rules`` (``state.rules``), else the settings files."""
    if getattr(session, "control", None) is not None:
        try:
            answer = await session._ask("list_permission_rules")
            state = answer.get("state") or {}
            rules = [
                {"behavior": str(r.get("behavior")), "rule": str(r.get("rule")), "source": str(r.get("source"))}
                for r in state.get("rules") or ()
                if isinstance(r, dict)
            ]
            return rules, "as the live CLI reports them (list_permission_rules)"
        except Exception as exc:  # noqa: BLE001 - an older CLI: read the files instead
            note = f"the CLI did not list them ({exc}); read from the settings files"
            return settings_rules(session.cwd), note
    return settings_rules(session.cwd), "read from the settings files (no live CLI process)"


def _asked_anyway(rule: dict[str, str], revoked: Any) -> str:
    """The note on a CLI rule the panel revoked: the CLI still lists its copy of the grant (it
    has no request that removes one), but kandev-nb's hook asks for every call it covers."""
    if rule.get("behavior") != "allow" or rule.get("rule") not in revoked:
        return ""
    return f'<br><span class="kandev-revoked-note">{esc(_ASKED_ANYWAY)}</span>'


def _policy_rows(policy: Any, default: str, enforce: Any) -> list[list[str]]:
    """``[label, "deny <code>rule</code>"]`` per rule of a ``Rules``-like policy (its
    ``deny`` / ``ask`` / ``allow`` lists), else one row naming the policy."""
    label = esc(enforce.policy_label(policy, default))
    target = getattr(policy, "policy", policy)  # a LabelledPolicy's own policy
    rows = [
        [label, f"{kind} <code>{esc(str(rule))}</code>"]
        for kind in ("deny", "ask", "allow")
        for rule in (getattr(target, kind, None) or ())
        if isinstance(getattr(target, kind, None), list | tuple)
    ]
    return rows or [[label, "(a function: it answers each call)"]]


def _table(head: list[str], rows: list[list[str]], empty: str) -> str:
    if not rows:
        return f'<div class="kandev-muted">{esc(empty)}</div>'
    th = "".join(f"<th>{esc(h)}</th>" for h in head)
    body = "".join("<tr>" + "".join(f"<td>{cell}</td>" for cell in row) + "</tr>" for row in rows)
    return f"<table><tr>{th}</tr>{body}</table>"


class PermissionsPanel(anywidget.AnyWidget):
    """The ``%claude_permissions`` panel of one session.

    Traits: `body` (the panel's HTML, redrawn after each revoke). The browser sends
    ``{"action": "revoke", "rule": <rule>}`` from a ``kandev-revoke`` button.

    Attributes:
        session: the :class:`~kandev_nb.agent.session.Session` shown.
        cli_rules: the rows of the CLI's rules (see :func:`settings_rules`), and `cli_note` where they came from.
        revoked: the rules revoked from this panel.
    """

    _esm = page_text("permissions_panel.js")  # src/widgets/permissions_panel.ts
    _css = page_text("permissions_panel.css")  # style/widgets/permissions_panel.css
    body = traitlets.Unicode("").tag(sync=True)

    def __init__(self, session: Any, cli_rules: list[dict[str, str]], cli_note: str) -> None:
        super().__init__()
        self.add_class("kandev-permissions")
        self.session = session
        self.cli_rules = cli_rules
        self.cli_note = cli_note
        self.revoked: list[str] = []
        self.on_msg(self._on_view_msg)
        self.refresh()

    def _on_view_msg(self, _widget: Any, content: Any, _buffers: Any) -> None:
        pressed = read(RevokePress, content) if isinstance(content, dict) else None
        if pressed is not None:
            self.revoke(pressed.rule)

    def revoke(self, rule: str) -> bool:
        """Revoke the session grant `rule` (:func:`kandev_nb.agent.revoke.revoke_grant`) and redraw.

        Returns:
            True when it was a grant of the live process; False (nothing changed) otherwise.
        """
        done = revoke_grant(self.session.broker, rule)
        if done:
            self.revoked.append(rule)
        self.refresh()
        return done

    def refresh(self) -> None:
        """Redraw `body` from the session as it is now."""
        self.body = self.html()

    def html(self) -> str:
        """The panel's HTML: mode, grants (with Revoke buttons), policies, CLI rules, kernel tools."""
        from kandev_nb import kernel_tools
        from kandev_nb.policy import enforce

        session, broker = self.session, self.session.broker
        config = session.config
        grants = [
            [
                f"<code>{esc(rule)}</code>",
                esc(where),
                f'<button class="kandev-revoke jupyter-button" data-rule="{esc(rule)}">Revoke</button>',
            ]
            for rule, where in list(broker._grants)
        ]
        grants += [[f"<code>{esc(rule)}</code>", _REVOKED, ""] for rule in sorted(broker.revoked)]
        policies = [row for p, label in broker.policies_in_force() for row in _policy_rows(p, label, enforce)]
        policies += [[esc("--allowed-tools"), f"<code>{esc(r)}</code>"] for r in config.allowed_tools]
        policies += [[esc("--disallowed-tools"), f"<code>{esc(r)}</code>"] for r in config.disallowed_tools]
        rules = [
            [esc(r["behavior"]), f"<code>{esc(r['rule'])}</code>", esc(r["source"]) + _asked_anyway(r, broker.revoked)]
            for r in self.cli_rules
        ]
        on = kernel_tools.SERVER_NAME in config.mcp_servers
        tools = "on: Claude can read and run code in this kernel" if on else "off (--no-kernel-tools)"
        return (
            f"<h4>Permissions of session {esc(session.name)}</h4>"
            f"<div>Mode: <b>{esc(str(config.mode))}</b> · kernel tools: {esc(tools)}</div>"
            "<h4>Session grants (Allow for this session)</h4>"
            + _table(["rule", "given", ""], grants, "none in this CLI process")
            + "<h4>Policies in force</h4>"
            + _table(["policy", "rule"], policies, "none: a person answers every card")
            + "<h4>Rules the CLI holds (settings files, flags, session)</h4>"
            + f"<div class='kandev-muted'>{esc(self.cli_note)}</div>"
            + _table(["behavior", "rule", "source"], rules, "none")
        )

    def __repr__(self) -> str:
        broker = self.session.broker
        lines = [f"mode: {self.session.config.mode}"]
        lines += [f"grant {rule} ({where})" for rule, where in broker._grants]
        lines += [f"revoked {rule}" for rule in sorted(broker.revoked)]
        lines += [
            f"{r['behavior']} {r['rule']} ({r['source']})"
            + (" - revoked: asked anyway" if _asked_anyway(r, broker.revoked) else "")
            for r in self.cli_rules
        ]
        return "\n".join(lines)


async def panel_of(session: Any) -> PermissionsPanel:
    """The :class:`PermissionsPanel` of `session`, with the CLI's rules asked now."""
    rules, note = await _cli_rules(session)
    return PermissionsPanel(session, rules, note)


async def permissions(line: str) -> PermissionsPanel:
    """``%claude_permissions [--session NAME] [--revoke RULE]``: the permissions panel of a session.

    Returns:
        A :class:`PermissionsPanel` (after revoking `RULE` when ``--revoke`` is given).

    Raises:
        UsageError: bad arguments, no such session, ``--revoke`` of a rule that is no grant.
    """
    from IPython.core.error import UsageError

    from kandev_nb.notebook.commands import _parse, _parser, _session

    parser = _parser("%claude_permissions")
    parser.add_argument("--revoke", metavar="RULE")
    args: argparse.Namespace = _parse(parser, line)
    session = _session(args.session, "%claude_permissions")
    panel = await panel_of(session)
    if args.revoke and not panel.revoke(args.revoke):
        grants = ", ".join(r for r, _ in session.broker._grants) or "none"
        raise UsageError(f"%claude_permissions: {args.revoke} is no session grant (grants: {grants})")
    return panel
