"""The approval broker: every question "may this tool run?" of one session, answered once.

Two kinds of question reach it:

* a `can_use_tool` control_request from the CLI (:meth:`ApprovalBroker.on_can_use_tool`):
  the policy answers if it can, else a person through the card (a PermissionRequest event
  with its :class:`~kandev_nb.agent.permissions.Approval`), else the approval timeout denies;
  the answer goes back as one `control_response`, never two, and none for a request the CLI
  withdrew (`control_cancel_request`, :meth:`ApprovalBroker.withdraw`);
* an in-process MCP `tools/call` of a state-changing tool that no allowed `can_use_tool`
  covered (:meth:`ApprovalBroker.authorize_tool_call`): it asks the same way, in every mode,
  and no answer within the timeout denies it (issue 17 point 2).

It also answers kandev-nb's PreToolUse hook, which the CLI asks before every tool call in
every mode (:meth:`ApprovalBroker.pre_tool_use`, :mod:`kandev_nb.policy.enforce`: the file
guard and the deny side of the policies in force), and marks the tools the CLI ran without
asking (:meth:`ApprovalBroker.note_unasked`), naming the session grant that allowed them.
The broker needs no process: it is given a function to send an answer with, and reports
through `emit`, so tests drive it directly (``tests/approvals/test_broker.py``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
import uuid
from collections.abc import Awaitable, Callable, Coroutine, Iterable
from typing import Any

from kandev_nb.agent import events as ev
from kandev_nb.agent.cells import acts_on_cell, bound_payload, card_cell
from kandev_nb.agent.file_lines import with_file_lines
from kandev_nb.agent.permissions import Approval, ApprovalPolicy, Decision
from kandev_nb.agent.questions import QUESTION_TOOL, AnswerPolicy
from kandev_nb.agent.questions import prepare as prepare_question
from kandev_nb.agent.revoke import remove_rules_update
from kandev_nb.agent.surface import SurfaceText, line_of, whole_of
from kandev_nb.agent.tools import NormalizedPayload
from kandev_nb.agent.unasked import NO_APPROVAL_NOTE, UnaskedCalls
from kandev_nb.errors import KandevError, TransportClosedError
from kandev_nb.policy import enforce
from kandev_nb.policy.binding import META_KEY, BoundPayload

__all__ = [
    "NO_APPROVAL_NOTE",
    "UNASKED_TOOL_TIMEOUT_S",
    "Answer",
    "ApprovalBroker",
    "PartlyShownError",
    "allow_if_shown",
]

log = logging.getLogger("kandev_nb")

UNASKED_TOOL_TIMEOUT_S = 300.0
"""Seconds a person has to answer for an in-process MCP `tools/call` that came with no
allowed can_use_tool, when the session has no `approval_timeout`; then it is denied."""

Answer = Callable[[str, dict[str, Any]], Awaitable[object]]
"""``(request_id, response) -> None``: sends one `control_response` (the CLI connection's)."""

ToolPayload = Callable[[str, dict[str, Any], str | None], NormalizedPayload]
"""``(tool_name, tool_input, tool_use_id) -> NormalizedPayload`` for the card (the adapter's)."""


class PartlyShownError(KandevError, RuntimeError):
    """An allow from a surface that showed only part of the request (a toast's or a
    ``pending()`` line's summary): nothing is decided; Show it whole, then allow."""


class ApprovalBroker(UnaskedCalls):
    """The approvals of one session.

    Args:
        emit: called with each PermissionRequest / PermissionDecided / PermissionCancelled.
        tool_payload: the card's NormalizedPayload of a tool call (``Adapter.tool_payload``).
        session_id: returns the CLI's session_id for the events (None before `system/init`).
        policy: the session's approval policy (``(tool_name, tool_input) -> "allow"|"deny"|None``).
        timeout: seconds an approval waits before it is denied (None: forever).
        allowed_tools: the session's ``allowed_tools`` rules (an ``mcp__...`` name listed
            there runs unasked).
        cwd: returns the CLI's working directory (scoped grants resolve paths against it).

    Attributes:
        approvals: the waiting approvals by request_id.
        last_decided: monotonic time of the latest decision (the session's inactivity timer
            restarts from it).
        cell: the execution count (``In [n]``) of the notebook cell running now, set by the
            magic; a session grant is reported as "given in cell [n]".
    """

    def __init__(
        self,
        emit: Callable[[ev.AgentEvent], None],
        tool_payload: ToolPayload,
        session_id: Callable[[], str | None],
        *,
        policy: ApprovalPolicy | None = None,
        timeout: float | None = None,
        allowed_tools: Iterable[str] = (),
        cwd: Callable[[], str] | None = None,
    ) -> None:
        self.emit = emit
        self.tool_payload = tool_payload
        self.on_edited: Callable[[str, str, dict[str, Any]], None] | None = None  # (tool_use_id, name, input that ran)
        self.session_id = session_id
        self.policy = policy
        self.answer: AnswerPolicy | None = None  # answers AskUserQuestion when set (agent/questions.py)
        # (tool_use_id, payload) of a card built from the tab, so the tool card shows that cell too
        self.on_card: Callable[[str, NormalizedPayload], None] | None = None
        self.timeout = timeout
        self.allowed_tools = frozenset(allowed_tools)
        self.approvals: dict[str, Approval] = {}
        self.last_decided = time.monotonic()
        self.turn_policy: ApprovalPolicy | None = None  # for the running turn only (Session.run)
        self.turn_timeout: float | None = None
        self.turn_has_timeout = False
        self._tasks: set[asyncio.Task[None]] = set()
        self._asked: set[str] = set()  # tool_use_ids the CLI sent a can_use_tool for
        # tool_use_id -> what the card of an allowed mcp__ tool showed, until its tools/call (issue 23)
        self._granted: dict[str, BoundPayload] = {}
        self._cards: dict[str, NormalizedPayload] = {}  # request_id -> the payload its card showed
        self._session_tools: set[str] = set()  # tools allowed "for the session" in this process
        self._grants: list[tuple[str, str]] = []  # (rule, "given in cell [n]") of this process
        self.revoked: set[str] = set()  # session grants revoked in this process (agent/revoke.py)
        self._inputs: dict[str, tuple[str, dict[str, Any]]] = {}  # tool_use_id -> call, from the hook
        self._cwd = cwd
        self.cell: int | None = None

    # -- per turn, per process --------------------------------------------------------------

    def begin_turn(self, policy: ApprovalPolicy | None, *, timeout: float | None = None, has_timeout: bool) -> None:
        """Use `policy` (if not None) and `timeout` (if `has_timeout`) for this turn only."""
        self.turn_policy, self.turn_timeout, self.turn_has_timeout = policy, timeout, has_timeout

    def set_turn_timeout(self, timeout: float | None) -> None:
        """This turn's approvals asked from now on wait `timeout` seconds (None: until answered);
        one already waiting keeps the timeout its request carried."""
        self.turn_timeout, self.turn_has_timeout = timeout, True

    def end_turn(self) -> None:
        """Back to the session's policy and timeout."""
        self.turn_policy, self.turn_timeout, self.turn_has_timeout = None, None, False

    def new_process(self) -> None:
        """A new CLI process: "allow for the session" answers lived in the old one."""
        self._session_tools.clear()
        self._grants.clear()
        self.revoked.clear()
        self._inputs.clear()

    @property
    def cwd(self) -> str:
        """The CLI's working directory (the current directory when not given)."""
        return self._cwd() if self._cwd is not None else os.getcwd()

    def policies_in_force(self) -> list[tuple[ApprovalPolicy, str]]:
        """``[(policy, label)]`` whose deny side holds now: the running turn's policy first (it
        also answers the allow side for its turn), then the session's, whose deny rules a
        turn's policy never lifts; [] for none."""
        found: list[tuple[ApprovalPolicy, str]] = []
        if self.turn_policy is not None:
            found.append((self.turn_policy, "this turn's policy"))
        if self.policy is not None and self.policy is not self.turn_policy:
            found.append((self.policy, "your policy"))
        return found

    @property
    def current_timeout(self) -> float | None:
        """Seconds the approvals of now wait (the turn's, else the session's; None: forever)."""
        return self.turn_timeout if self.turn_has_timeout else self.timeout

    def spawn(self, work: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        """Run `work` as a task the broker keeps until it ends (an answer must not stop the reader)."""
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    @property
    def asked(self) -> set[str]:
        """The tool_use_ids decided by a request (can_use_tool, a hook): a result for one of
        them is not reported as run "without a request" (:meth:`note_unasked`)."""
        return self._asked

    # -- can_use_tool -----------------------------------------------------------------------

    def on_can_use_tool(self, request_id: str, request: dict[str, Any], answer: Answer) -> Approval:
        """A `can_use_tool` control_request: open its approval and answer it once, in a task.

        Args:
            request_id: the control_request's `request_id`.
            request: its `request` (`tool_name`, `input`, `tool_use_id`, `description`,
                `decision_reason`, `blocked_path(s)`, `permission_suggestions`).
            answer: sends the `control_response`; a closed transport is ignored.

        Returns:
            The :class:`Approval` (already decided if the policy answered).
        """
        tool_name = str(request.get("tool_name") or "unknown")
        raw_input = request.get("input")
        tool_input: dict[str, Any] = raw_input if isinstance(raw_input, dict) else {}
        tool_use_id = request.get("tool_use_id")
        if isinstance(tool_use_id, str):
            self._asked.add(tool_use_id)
        show: dict[str, Any] = {
            "title": str(request.get("description") or request.get("display_name") or tool_name),
            "reason": request.get("decision_reason"),
            "blocked": request.get("blocked_path") or request.get("blocked_paths"),
        }
        use_id = tool_use_id if isinstance(tool_use_id, str) else None
        suggestions = request.get("permission_suggestions")
        if acts_on_cell(tool_name):
            # A notebook tool on an existing cell: its card shows the cell as the tab holds it
            # now (one bridge round trip), and the allow binds to that (issue 23).
            approval = self._approval(request_id, tool_name, tool_input, use_id, suggestions)
            self.spawn(self._show_from_tab(approval, answer, show))
            return approval
        approval = self.open(request_id, tool_name, tool_input, use_id, suggestions=suggestions, **show)
        self.spawn(self._finish(approval, answer))
        return approval

    async def _show_from_tab(self, approval: Approval, answer: Answer, show: dict[str, Any]) -> None:
        """Build the card from the tab's cell (:func:`~kandev_nb.agent.cells.card_cell`), show
        it unless the request was withdrawn meanwhile, then :meth:`_finish`."""
        payload = await card_cell(approval.tool_name, approval.tool_input)
        if payload is not None and approval.tool_use_id and self.on_card is not None:
            self.on_card(approval.tool_use_id, payload)
        if approval.decision is None:
            self._show(approval, payload, **show)
        await self._finish(approval, answer)

    def open(
        self,
        request_id: str,
        tool_name: str,
        tool_input: dict[str, Any],
        tool_use_id: str | None,
        *,
        title: str,
        reason: Any = None,
        blocked: Any = None,
        suggestions: Any = None,
        payload: NormalizedPayload | None = None,
    ) -> Approval:
        """Register an :class:`Approval`, let the policy answer if it can, and show its card
        (`payload`, else the adapter's payload of the call)."""
        approval = self._approval(request_id, tool_name, tool_input, tool_use_id, suggestions)
        self._show(approval, payload, title=title, reason=reason, blocked=blocked)
        return approval

    def _approval(
        self, request_id: str, tool_name: str, tool_input: dict[str, Any], tool_use_id: str | None, suggestions: Any
    ) -> Approval:
        approval = Approval(
            request_id,
            tool_name,
            tool_input,
            tool_use_id=tool_use_id,
            suggestions=suggestions,
            timeout_s=self.current_timeout,
            cwd=self.cwd,
        )
        self.approvals[request_id] = approval
        return approval

    def _show(
        self, approval: Approval, payload: NormalizedPayload | None, *, title: str, reason: Any, blocked: Any
    ) -> None:
        """Emit the PermissionRequest of `approval` (after the policy's answer, if it has one)."""
        request_id, tool_name, tool_input = approval.request_id, approval.tool_name, approval.tool_input
        tool_use_id = approval.tool_use_id
        if payload is None:
            payload = with_file_lines(self.tool_payload(tool_name, tool_input, tool_use_id))  # real line numbers
        self._cards[request_id] = payload
        event = ev.PermissionRequest(
            request_id=request_id,
            tool_name=tool_name,
            tool_use_id=tool_use_id,
            input=tool_input,
            title=title,
            reason=reason,
            blocked_path=str(blocked) if blocked else None,
            normalized=payload,
            approval=approval,
            session_id=self.session_id(),
        )
        policy = self.turn_policy or self.policy
        if tool_name == QUESTION_TOOL:  # a question card, answered by a person or the `answer` policy
            policy = None
            prepare_question(approval, self.answer)
        denied = enforce.check(tool_name, tool_input, guard=None, policies=self.policies_in_force(), cwd=self.cwd)
        if policy is not None and denied is not None and denied.decision == "deny":
            # every policy in force is heard on its deny side, named as the hook names it
            approval.decided_rule = (denied.who, denied.rule)
            approval.deny(denied.reason, by="policy")
        elif policy is not None:
            try:
                policy = enforce.rooted(policy, self.cwd)  # relative rules mean the CLI's folder
                verdict = policy(tool_name, tool_input)
                note_of = getattr(policy, "note", None)
                note = str(note_of(tool_name, tool_input) or "") if verdict == "allow" and callable(note_of) else ""
            except Exception as exc:  # noqa: BLE001 - a broken policy asks a person instead
                log.warning("approval policy raised %r; asking instead", exc)
                verdict, note = None, ""
            if verdict == "allow":
                approval.allow(by="policy", note=note)
        self.emit(event)

    async def decide(self, approval: Approval, timeout: float | None) -> Decision:
        """Wait for the one decision of `approval` and report it (PermissionDecided)."""
        try:
            decision: Decision = await approval.wait(timeout)
        except Exception:  # never leave the CLI waiting: a broken wait denies
            log.exception("kandev_nb approval wait failed; denying")
            approval.deny("kandev-nb could not wait for an answer; denied.", by="timeout")
            decision = await approval.wait(None)
        finally:
            self.approvals.pop(approval.request_id, None)
        self.last_decided = time.monotonic()
        if decision.decided_by != "cancelled":
            if decision.grant:  # "allow for this session": a saved suggestion is no session grant
                where = f"given in cell [{self.cell}]" if self.cell is not None else "given earlier in this session"
                self._grants.append((decision.grant, where))
                self.revoked.discard(decision.grant)
                if "(" not in decision.grant:
                    self._session_tools.add(decision.grant)
            who, rule = approval.decided_rule
            edited = edited_input(approval, decision)
            if edited is not None and approval.tool_use_id and self.on_edited is not None:
                self.on_edited(approval.tool_use_id, approval.tool_name, edited)
            self.emit(
                ev.PermissionDecided(
                    request_id=approval.request_id,
                    tool_name=approval.tool_name,
                    behavior=decision.behavior,
                    decided_by=decision.decided_by,
                    waited_ms=decision.waited_ms,
                    message=decision.message,
                    note=decision.note,
                    tool_use_id=approval.tool_use_id,
                    updated_input=edited,
                    session_id=self.session_id(),
                    rule=rule or decision.grant,
                    who=who,
                )
            )
        return decision

    async def _finish(self, approval: Approval, answer: Answer) -> None:
        """Wait for the one decision of `approval`, report it, then send it to the CLI.

        The PermissionDecided event goes out before the answer, so it always precedes what
        the CLI does next. A request the CLI withdrew (decided_by "cancelled") was already
        reported as PermissionCancelled by :meth:`withdraw` and gets no answer. An allowed
        ``mcp__*`` tool is remembered by its `tool_use_id` with what its card showed (a
        :class:`~kandev_nb.policy.binding.BoundPayload`), so its `tools/call` runs unasked and
        acts only on that (:meth:`authorize_tool_call`). The `updatedInput` sent back is the
        input the card showed (or the person's edit of it), which the CLI runs as it is.
        """
        decision = await self.decide(approval, self.current_timeout)
        shown = self._cards.pop(approval.request_id, None)
        if decision.decided_by != "cancelled":
            if decision.behavior == "allow" and approval.tool_use_id and approval.tool_name.startswith("mcp__"):
                self._granted[approval.tool_use_id] = self._bind(approval, decision, shown)
            wire = decision.to_wire(approval.tool_input)
            removal = remove_rules_update(self.revoked) if decision.behavior == "allow" else None
            if removal is not None:  # the CLI forgets the revoked grants too (agent/revoke.py)
                wire["updatedPermissions"] = [*wire.get("updatedPermissions", ()), removal]
            with contextlib.suppress(TransportClosedError):
                await answer(approval.request_id, wire)

    @staticmethod
    def _bind(approval: Approval, decision: Decision, shown: NormalizedPayload | None) -> BoundPayload:
        allowed = decision.updated_input if decision.updated_input is not None else approval.tool_input
        return bound_payload(approval.tool_use_id or "", approval.tool_name, shown, allowed)

    def card_payload(self, request_id: str) -> NormalizedPayload | None:
        """The payload the card of a waiting request showed (what an allow binds to), or None."""
        return self._cards.get(request_id)

    # -- surfaces other than the card (issue 32, point 3) ----------------------------------

    def surface_line(self, request_id: str) -> SurfaceText | None:
        """The one line a toast or a ``pending()`` row shows of a waiting request (with
        whether it is the whole payload, and its digest), or None when none is waiting."""
        approval = self.approvals.get(request_id)
        if approval is None:
            return None
        return line_of(request_id, approval.tool_name, approval.tool_input, self._cards.get(request_id))

    def surface_whole(self, request_id: str) -> SurfaceText | None:
        """The whole payload of a waiting request as a surface shows it on Show, or None."""
        approval = self.approvals.get(request_id)
        if approval is None:
            return None
        return whole_of(request_id, approval.tool_name, approval.tool_input, self._cards.get(request_id))

    def allow_shown(self, request_id: str, digest: Any) -> bool:
        """Allow once from a surface other than the card, bound to what it showed: `digest`
        is the :attr:`~kandev_nb.agent.surface.SurfaceText.digest` of its text. It allows only
        when that text was the whole payload: a complete one-line summary
        (:meth:`surface_line`) or the payload shown whole (:meth:`surface_whole`).

        Raises:
            RuntimeError: no such request is waiting, or it changed since it was shown.
            PartlyShownError: the surface showed only a summary (nothing is decided).
        """
        line, whole = self.surface_line(request_id), self.surface_whole(request_id)
        return allow_if_shown(request_id, self.approvals.get(request_id), line, whole, digest)

    # -- ending approvals -------------------------------------------------------------------

    def withdraw(self, request_id: str) -> None:
        """The request is void (control_cancel_request, or the CLI is gone): close its card
        (PermissionCancelled) and send nothing. Unknown ids are ignored."""
        approval = self.approvals.get(request_id)
        if approval is not None and approval.cancel():
            self.emit(ev.PermissionCancelled(request_id=approval.request_id, session_id=self.session_id()))

    def withdraw_all(self) -> None:
        """Withdraw every waiting approval (the process exited, the session closed)."""
        for request_id in list(self.approvals):
            self.withdraw(request_id)

    def deny_all(self, message: str) -> None:
        """Deny every waiting approval as an interrupt (the CLI is told to stop)."""
        for approval in list(self.approvals.values()):
            approval.deny(message, interrupt=True)

    # -- MCP tools/call ---------------------------------------------------------------------

    async def authorize_tool_call(self, server_name: str, server: Any, message: dict[str, Any]) -> str | None:
        """Whether an in-process MCP `tools/call` may run: None if so, else the refusal text.

        A tool the server marks as read-only (``server.needs_approval(name)`` false) or one
        in ``allowed_tools`` runs. Any other one runs only if a can_use_tool for the same
        ``mcp__<server>__<tool>`` and `tool_use_id` (``params._meta["claudecode/toolUseId"]``)
        was allowed (each allow is used once), or the tool was allowed for the session;
        otherwise a person is asked here, with the same PermissionRequest card (the policy
        answers first if it can), in every mode, and no answer within the approval timeout
        (else :data:`UNASKED_TOOL_TIMEOUT_S`) denies it. The CLI normally asks first; a
        call that arrives unasked is a peer we should not trust blindly. An answer with an
        updated input replaces ``params.arguments`` in `message`.

        A call let through after a card carries what that card showed in
        ``params._meta[META_KEY]`` (a :class:`~kandev_nb.policy.binding.BoundPayload`; the tool
        refuses to act on anything else); any such key the peer sent is removed first.
        """
        raw = message.get("params")
        params: dict[str, Any] = raw if isinstance(raw, dict) else {}
        meta = params.get("_meta")
        if isinstance(meta, dict):
            meta.pop(META_KEY, None)  # only the broker binds a call
        name = str(params.get("name") or "")
        full = f"mcp__{server_name}__{name}"
        needs = getattr(server, "needs_approval", None)
        if (callable(needs) and not needs(name)) or full in self.allowed_tools or full in self._session_tools:
            return None
        tool_use_id = meta.get("claudecode/toolUseId") if isinstance(meta, dict) else None
        tool_use_id = tool_use_id if isinstance(tool_use_id, str) else None
        granted = self._granted.pop(tool_use_id, None) if tool_use_id is not None else None
        if granted is not None and granted.tool_name == full:
            params["_meta"] = {**(meta if isinstance(meta, dict) else {}), META_KEY: granted.to_meta()}
            return None
        arguments = params.get("arguments")
        arguments = arguments if isinstance(arguments, dict) else {}
        if tool_use_id is not None:
            self._asked.add(tool_use_id)  # its result is not "ran without a request"
        approval = self.open(
            f"mcp:{uuid.uuid4().hex}",
            full,
            dict(arguments),
            tool_use_id,
            title=f"{full} (called without a permission request)",
            reason="Claude Code called this tool without asking first (no allowed can_use_tool covered it).",
            payload=await card_cell(full, arguments),
        )
        timeout = self.current_timeout
        decision = await self.decide(approval, timeout if timeout is not None else UNASKED_TOOL_TIMEOUT_S)
        shown = self._cards.pop(approval.request_id, None)
        if decision.behavior == "allow" and decision.updated_input is not None:
            params["arguments"] = decision.updated_input
        if decision.behavior == "allow":
            bound = self._bind(approval, decision, shown)
            params["_meta"] = {**(meta if isinstance(meta, dict) else {}), META_KEY: bound.to_meta()}
        return (
            None
            if decision.behavior == "allow"
            else (f"Permission to use {full} was denied: {decision.message or 'denied by the user'}")
        )


def allow_if_shown(
    request_id: str, approval: Approval | None, line: SurfaceText | None, whole: SurfaceText | None, digest: Any
) -> bool:
    """Allow `approval` once when `digest` is that of a text a surface showed whole: the complete
    one-line summary `line` or the whole payload `whole` (what :meth:`ApprovalBroker.allow_shown`
    checks, for any holder of waiting approvals: a session's broker, a fleet's queue).

    Raises:
        RuntimeError: no such request is waiting (`approval`, `line` or `whole` is None, or it
            was decided), or `digest` is of no text shown of it.
        PartlyShownError: the surface showed only a summary (nothing is decided).
    """
    if approval is None or approval.decision is not None or line is None or whole is None:
        raise RuntimeError(f"approval {request_id} is no longer waiting")
    if isinstance(digest, str) and digest in (whole.digest, line.digest if line.complete else None):
        return approval.allow()
    if isinstance(digest, str) and digest == line.digest:
        raise PartlyShownError(
            f"only a summary of this {approval.tool_name} call was shown, not all it would do: "
            "Show it whole (its card, or pending()[i].show()) to allow it, or deny it"
        )
    raise RuntimeError(f"approval {request_id} is not what was shown: look at it again (its card, or pending())")


def edited_input(approval: Approval, decision: Decision) -> dict[str, Any] | None:
    """The input a call ran with when the person changed it before allowing (an allow whose
    `updatedInput` differs from the request's `input`); None otherwise. An AskUserQuestion's
    answers travel as `updatedInput` too: they are answers, not an edit."""
    new = decision.updated_input
    if decision.behavior != "allow" or new is None or approval.tool_name == QUESTION_TOOL:
        return None
    return new if new != approval.tool_input else None
