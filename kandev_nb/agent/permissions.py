"""Permission modes, approval handles and approval policies.

Supervised mode uses the CLI's own ``default`` permission mode with
``--permission-prompt-tool stdio``: the CLI itself decides which tools are safe (reads
inside the working directory, read-only shell commands such as ``echo`` or ``ls``, anything
the user's settings already allow) and sends a ``can_use_tool`` control_request for the
rest. This respects the user's settings and needs no hooks; the seed's PreToolUse "ask"
hooks produce the same can_use_tool requests with an extra round trip per tool, so we do
not register them. Measured on CLI 2.1.197 and 2.1.332 (tests/approvals, tests/kernel):

- ``default`` + stdio: ``rm``, ``mkdir``, ``python3 -c``, Write/Edit ask; ``echo``, Read ask
  nothing. A ``permissions.allow`` rule in ``$HOME/.claude/settings.json`` (or a trusted
  project's ``.claude/settings.json``) is honoured without a request; an untrusted
  project's rules are ignored (the CLI says so on stderr).
- ``acceptEdits``: Write/Edit and file commands inside the working directory (``touch``,
  ``rm``, ``printf > f``) run without asking; other commands (``python3``, ``git``,
  ``curl``) ask.
- ``plan``: ExitPlanMode arrives as can_use_tool (on 2.1.332 with an empty ``input``: the
  plan is only in the assistant's tool_use block); allowing it makes the CLI leave plan mode for the
  mode it was in before (``default``, or ``acceptEdits``...) and report ``system/status``
  with ``permissionMode``.
- ``bypassPermissions`` as root exits at once ("cannot be used with root/sudo privileges")
  unless ``IS_SANDBOX=1`` is in its environment.
- ``set_permission_mode`` (control request) changes the mode of the running process; the
  CLI answers ``{"mode": ...}`` and reports ``system/status``.
- An ``updatedPermissions`` entry ``{"type":"addRules","rules":[{"toolName":"Bash"}],
  "behavior":"allow","destination":"session"}`` stops the CLI asking for that tool in the
  same process, across turns. The CLI's own ``permission_suggestions`` are not used for
  "allow for the session": they write ``.claude/settings.local.json`` in the project
  (destination ``localSettings``) or switch the whole session to ``acceptEdits``.
- Interrupting while a can_use_tool waits makes the CLI send ``control_cancel_request``
  for it; an answer after that is ignored by the CLI.

Every can_use_tool becomes an :class:`Approval`: a once-only answer that a button, a policy
or a timeout can give, from any thread.
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
from collections.abc import Callable
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from kandev_nb.agent.suggestions import describe
from kandev_nb.errors import RootBypassError
from kandev_nb.policy import ApprovalPolicy, PolicyAnswer, Rules, Verdict, rule_matches
from kandev_nb.policy.grants import Grant, session_grant, tool_grant

__all__ = [
    "MODES",
    "Approval",
    "ApprovalPolicy",
    "DecidedBy",
    "Decision",
    "PermissionMode",
    "PolicyAnswer",
    "RootBypassError",
    "Rules",
    "Verdict",
    "cli_permission_mode",
    "mode_from_cli",
    "rule_matches",
    "session_rule",
]

PermissionMode = Literal["supervised", "plan", "acceptEdits", "autonomous"]
MODES: tuple[PermissionMode, ...] = ("supervised", "plan", "acceptEdits", "autonomous")
DecidedBy = Literal["person", "policy", "timeout", "cancelled", "settings", "mode", "hook", "grant"]
"""Who answered: a person (a button, or the interrupt), a policy, the approval timeout, the
CLI itself withdrawing the request ("cancelled"), the CLI's own permission settings
("settings": the tool ran or was refused without any request, see
:func:`kandev_nb.agent.session.Session`), the permission mode ("mode": an edit or a file
command acceptEdits ran unasked, :func:`kandev_nb.agent.unasked.allowed_by_mode`), a
PreToolUse hook of the user's settings ("hook"), or a person's earlier "Allow for this
session" grant that the CLI applied unasked ("grant")."""

_CLI_MODE: dict[str, str] = {
    "supervised": "default",
    "plan": "plan",
    "acceptEdits": "acceptEdits",
    "autonomous": "bypassPermissions",
}


def cli_permission_mode(mode: str, *, allow_root_bypass: bool = False) -> str:
    """The CLI's ``--permission-mode`` value for one of our modes.

    Raises:
        ValueError: `mode` is not one of :data:`MODES`.
        RootBypassError: `mode` is "autonomous", the process runs as root, and the user did
            not opt in with ``allow_root_bypass=True`` (``--i-am-sandboxed`` on the magic).
    """
    if mode not in _CLI_MODE:
        raise ValueError(f"unknown permission mode {mode!r}; expected one of {', '.join(MODES)}")
    if mode == "autonomous" and hasattr(os, "geteuid") and os.geteuid() == 0 and not allow_root_bypass:
        raise RootBypassError(
            "Autonomous mode runs every tool without asking, and Claude Code refuses that as root "
            "unless IS_SANDBOX=1 is set. If this machine is a disposable sandbox, opt in with "
            "`%%claude --mode autonomous --i-am-sandboxed` (or Session(allow_root_bypass=True)); "
            "otherwise use --mode acceptEdits or run the kernel as a normal user."
        )
    return _CLI_MODE[mode]


def mode_from_cli(cli_mode: str) -> PermissionMode | None:
    """Our mode for the CLI's ``permissionMode`` (from `system/init` or `system/status`).

    ``"default"`` (``"manual"`` in newer CLIs) is "supervised", ``"bypassPermissions"`` is
    "autonomous"; "plan" and "acceptEdits" keep their names. Returns None for a mode we do
    not offer (e.g. "dontAsk").
    """
    if cli_mode in ("default", "manual"):
        return "supervised"
    for ours, theirs in _CLI_MODE.items():
        if theirs == cli_mode:
            return ours  # type: ignore[return-value]
    return None


def session_rule(tool_name: str) -> dict[str, Any]:
    """The ``updatedPermissions`` entry that allows every call of `tool_name` for the rest of
    the CLI process (the whole-tool grant, :func:`kandev_nb.policy.grants.tool_grant`; a
    scoped one is :func:`kandev_nb.policy.grants.session_grant`).

    Destination "session" lives in the CLI's memory only; nothing is written to the user's
    or the project's settings files.
    """
    return {"type": "addRules", "rules": [{"toolName": tool_name}], "behavior": "allow", "destination": "session"}


class Decision(BaseModel):
    """The answer to one can_use_tool request.

    Serialised to the CLI as ``{"behavior":"allow","updatedInput":...}`` or
    ``{"behavior":"deny","message":...,"interrupt":...}`` by :meth:`to_wire`.
    """

    model_config = ConfigDict(frozen=True)

    behavior: Literal["allow", "deny"]
    decided_by: DecidedBy
    updated_input: dict[str, Any] | None = None
    updated_permissions: list[dict[str, Any]] | None = None
    message: str = ""
    interrupt: bool = False
    waited_ms: int = 0
    note: str = ""
    """What the person should know about an allow (e.g. a policy let an interpreter through,
    see :meth:`kandev_nb.policy.Rules.note`); shown on the card, never sent to the CLI."""
    suggestion: dict[str, Any] | None = None
    """The CLI's `permission_suggestions` entry this allow accepted (sent as the whole of
    `updatedPermissions`), or None."""
    grant: str = ""
    """The session grant this allow gave, in the CLI's rule syntax (``Bash(touch:*)``, or a
    tool name for a whole-tool grant); "" for none."""

    def to_wire(self, original_input: dict[str, Any]) -> dict[str, Any]:
        """The inner control_response payload the CLI accepts (DESIGN.md, wire facts)."""
        if self.behavior == "allow":
            out: dict[str, Any] = {
                "behavior": "allow",
                "updatedInput": self.updated_input if self.updated_input is not None else original_input,
            }
            if self.updated_permissions:
                out["updatedPermissions"] = self.updated_permissions
            return out
        return {"behavior": "deny", "message": self.message or "Denied by the user", "interrupt": self.interrupt}


class Approval:
    """A can_use_tool request that gets exactly one answer.

    `allow`, `deny` and `cancel` may be called from any thread (button callbacks can run on
    a kernel subshell thread); the first call wins and later calls return False and change
    nothing. :meth:`wait` resolves on the event loop the approval was created on.

    Attributes:
        request_id: the control_request's `request_id`.
        tool_name, tool_input, tool_use_id: from the request's `request` object.
        suggestions: the CLI's `permission_suggestions`; ``allow(suggestion=i)`` accepts one
            (the card's suggestion buttons). "Allow for the session" sends :attr:`grant`
            (``allow(always=True)``) or :attr:`whole_tool` (``allow(always="tool")``).
        grant: the scoped session grant of this call (:func:`kandev_nb.policy.grants.session_grant`:
            ``Bash(touch:*)``, a folder, a domain), or None when there is none to offer (a
            compound or dynamic command); relative paths resolve against `cwd` (default: the
            current directory; the broker gives the CLI's working directory).
        whole_tool: the whole-tool grant (:func:`kandev_nb.policy.grants.tool_grant`).
        timeout_s: seconds after `created` at which the approval timeout denies the request
            (the session's `approval_timeout`), or None when nobody will answer for the user;
            shown on the card as the time left. :meth:`wait` takes its own timeout.
        created: :func:`time.monotonic` seconds when the request arrived.
    """

    def __init__(
        self,
        request_id: str,
        tool_name: str,
        tool_input: dict[str, Any],
        *,
        tool_use_id: str | None = None,
        suggestions: list[dict[str, Any]] | None = None,
        timeout_s: float | None = None,
        loop: asyncio.AbstractEventLoop | None = None,
        cwd: str | None = None,
    ) -> None:
        self.request_id = request_id
        self.tool_name = tool_name
        self.tool_input = tool_input
        self.tool_use_id = tool_use_id
        self.suggestions = suggestions or []
        self.timeout_s = timeout_s
        self.cwd = cwd or os.getcwd()
        """The CLI's working directory (a blocked path is said to be outside it only when it is)."""
        self.grant: Grant | None = session_grant(tool_name, tool_input, self.cwd)
        self.whole_tool: Grant = tool_grant(tool_name)
        self.decided_rule: tuple[str, str] = ("", "")
        """``(who, rule)`` when a policy rule decided: "your policy rule Bash(rm:*)", "Bash(rm:*)"."""
        self.timeout_message: str | None = None
        """The deny `message` of the approval timeout (``{timeout}`` is replaced by its
        seconds); None: "No answer within ... s; denied by timeout." (questions set their own)."""
        self.created = time.monotonic()
        self._loop = loop or asyncio.get_running_loop()
        self._future: asyncio.Future[Decision] = self._loop.create_future()
        self._lock = threading.Lock()
        self._decision: Decision | None = None
        self._callbacks: list[Callable[[Decision], None]] = []

    @property
    def decision(self) -> Decision | None:
        """The decision once made, else None."""
        return self._decision

    def remaining_s(self, now: float | None = None) -> float | None:
        """Seconds left before the approval timeout denies the request (>= 0), or None if
        there is no timeout. `now` is :func:`time.monotonic` seconds (default: now)."""
        if self.timeout_s is None:
            return None
        now = time.monotonic() if now is None else now
        return max(0.0, self.created + self.timeout_s - now)

    def on_decided(self, callback: Callable[[Decision], None]) -> None:
        """Call `callback(decision)` once decided (at once if already decided)."""
        with self._lock:
            if self._decision is None:
                self._callbacks.append(callback)
                return
            decision = self._decision
        callback(decision)

    def allow(
        self,
        updated_input: dict[str, Any] | None = None,
        *,
        always: bool | Literal["tool"] = False,
        by: DecidedBy = "person",
        note: str = "",
        suggestion: int | None = None,
        set_mode: str | None = None,
    ) -> bool:
        """Allow the tool, optionally with edited input and for the rest of the session.

        Args:
            updated_input: the input to run instead of the requested one (sent as
                `updatedInput`); None runs the request's own input.
            always: True also allows the calls :attr:`grant` covers for the rest of this CLI
                process (``Bash(touch:*)``...); "tool" allows every call of the tool
                (:attr:`whole_tool`). Sent as `updatedPermissions` = [the grant's entry].
            by: who decided (shown on the card and in the ledger).
            note: kept as ``Decision.note`` (e.g. :meth:`Rules.note`).
            suggestion: the index of one of the CLI's `permission_suggestions` to accept:
                sent as ``updatedPermissions`` = exactly that entry (the CLI saves the
                rule where its `destination` says; :mod:`kandev_nb.agent.suggestions`).
            set_mode: a CLI permission mode (``acceptEdits``, ``default``) the session switches
                to with this allow, as the CLI's own plan approval does ("Yes, and auto-accept
                edits"): sent as ``updatedPermissions`` = ``[{"type": "setMode", "mode": ...,
                "destination": "session"}]`` and kept as the decision's `suggestion`.

        Raises:
            ValueError: ``always=True`` for a call with no scoped grant (a compound or
                dynamic command): allow it once, or with ``always="tool"`` (nothing is decided).
            IndexError: `suggestion` is not an index of :attr:`suggestions` (nothing is decided).
            ValueError: that suggestion is of a type kandev-nb does not know (nothing is decided).

        Returns:
            True if this call decided; False if the request was already answered (the call
            then changes nothing and sends nothing).
        """
        given = self.whole_tool if always == "tool" else self.grant if always else None
        if always and given is None:
            raise ValueError(
                f"no scoped session grant for this {self.tool_name} call (a compound or dynamic command): "
                'allow it once, or every call of the tool with always="tool"'
            )
        permissions = [given.update] if given is not None else None
        saved = None
        if suggestion is not None:
            if isinstance(suggestion, bool) or not 0 <= suggestion < len(self.suggestions):
                raise IndexError(f"no permission suggestion {suggestion!r}; this request has {len(self.suggestions)}")
            saved = self.suggestions[suggestion]
            permissions = [saved]
            note = note or f"Saved by the CLI: {describe(saved)}."  # describe: ValueError for an unknown type
        elif set_mode is not None:
            saved = {"type": "setMode", "mode": set_mode, "destination": "session"}
            permissions = [saved]
            note = note or f"The session switches to {set_mode} mode."
        return self._decide(
            Decision(
                behavior="allow",
                decided_by=by,
                updated_input=updated_input,
                updated_permissions=permissions,
                note=note,
                suggestion=saved,
                grant=given.rule if given is not None and saved is None else "",
            )
        )

    def deny(self, message: str = "", *, interrupt: bool = False, by: DecidedBy = "person") -> bool:
        """Deny the tool; `message` reaches the agent as the reason. Returns True if it decided."""
        return self._decide(Decision(behavior="deny", decided_by=by, message=message, interrupt=interrupt))

    def cancel(self) -> bool:
        """The CLI withdrew the request (control_cancel_request); nothing is sent back."""
        return self._decide(Decision(behavior="deny", decided_by="cancelled", message="cancelled by the CLI"))

    def _decide(self, decision: Decision) -> bool:
        waited = int((time.monotonic() - self.created) * 1000)
        decision = decision.model_copy(update={"waited_ms": waited})
        with self._lock:
            if self._decision is not None:
                return False
            self._decision = decision
            callbacks, self._callbacks = self._callbacks, []
        self._loop.call_soon_threadsafe(self._resolve, decision)
        for callback in callbacks:
            callback(decision)
        return True

    def _resolve(self, decision: Decision) -> None:
        if not self._future.done():
            self._future.set_result(decision)

    async def wait(self, timeout: float | None = None) -> Decision:
        """Wait for the decision; after `timeout` seconds deny it with ``decided_by="timeout"``."""
        try:
            return await asyncio.wait_for(asyncio.shield(self._future), timeout)
        except TimeoutError:
            message = (self.timeout_message or "No answer within {timeout:g} s; denied by timeout.").format(
                timeout=timeout
            )
            self.deny(message, by="timeout")
            return await self._future


# -- policies: kandev_nb.policy (Rules, Verdict, rule_matches), re-exported here -----------
