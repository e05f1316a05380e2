"""One approval queue for every row of a fleet, and its fleet-wide rules.

Each row's session asks through its own :class:`~kandev_nb.agent.approvals.ApprovalBroker`
as a single cell does (the row's policy answers first; the approval timeout denies). A
PermissionRequest that no policy answered comes here (:meth:`ApprovalQueue.offer`), in FIFO
order, named after its row ("row 17 of 200 · Bash · pytest -x"). A person answers it on the
usual card (its :class:`~kandev_nb.agent.permissions.Approval`), or with
:meth:`ApprovalQueue.allow_all` / :meth:`ApprovalQueue.deny_all`: fleet-wide rules in the
CLI's rule syntax, kept as a :class:`kandev_nb.policy.Rules`, that answer the same request from
every other row, now (the queue is swept) and later (each new request is checked before it is
queued).

The rule "for all rows" is proposed by :func:`kandev_nb.fleet.proposal.propose`
(:meth:`ApprovalQueue.propose`): what differs between the rows and nothing more
(``Bash(python3 tools/profile.py:*)`` when each row names its own file), from the row's
prompt values (:attr:`ApprovalQueue.row_values`) and the other waiting requests. A person may
give another rule; either way it must answer the request it is given on, and one too broad
to give with one click (:func:`~kandev_nb.fleet.proposal.too_broad`) needs ``confirm=True``.
How many waiting rows a rule answers (:meth:`ApprovalQueue.answered_by`) is decided by the
same :class:`~kandev_nb.policy.Rules` matcher that answers them.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from kandev_nb.agent import events as ev
from kandev_nb.agent.permissions import Approval
from kandev_nb.agent.questions import QUESTION_TOOL
from kandev_nb.agent.tools import NormalizedPayload
from kandev_nb.fleet.proposal import Call, Proposal, RuleCheck, TooBroadError, check_rules, join_rules, propose
from kandev_nb.policy import Rules

__all__ = [
    "MAX_COMPARED",
    "ApprovalQueue",
    "DenyRules",
    "FleetRule",
    "QueuedApproval",
    "TooBroadError",
    "activity_of",
    "deny_texts",
    "fleet_denies",
]


MAX_COMPARED: Final = 64
"""At most this many other waiting requests are compared with one when a rule is proposed."""


def activity_of(tool_name: str, tool_input: dict[str, Any]) -> str:
    """A one-line "what the agent does": ``Bash · pytest -x``, ``Edit · src/a.py``, ``WebFetch · url``."""
    detail = (
        tool_input.get("command")
        or tool_input.get("file_path")
        or tool_input.get("notebook_path")
        or tool_input.get("url")
        or tool_input.get("pattern")
        or tool_input.get("description")
        or ""
    )
    text = " ".join(str(detail).split())
    if len(text) > 60:
        text = text[:59] + "…"
    name = tool_name.replace("mcp__", "").replace("__", " · ") if tool_name.startswith("mcp__") else tool_name
    return f"{name} · {text}" if text else name


@dataclass
class QueuedApproval:
    """One waiting request of one row.

    Attributes:
        key: the row's key (the frame's index value).
        position: the row's 1-based position in the frame; `total` the number of rows.
        event: the row's PermissionRequest (its ``approval`` is answered).
        cwd: the row's working directory (rules with paths resolve against it).
        where: the Dask worker the row runs on (``tcp://10.0.0.5:40211 (node-3)``), "" in the kernel.
    """

    key: Any
    position: int
    total: int
    event: ev.PermissionRequest
    cwd: str
    where: str = ""

    @property
    def approval(self) -> Approval:
        """The request's once-only :class:`Approval`."""
        assert self.event.approval is not None
        return self.event.approval

    @property
    def label(self) -> str:
        """``row 17 of 200 · Bash · pytest -x`` (on a cluster: ``... · on tcp://10.0.0.5:40211 (node-3)``)."""
        label = f"row {self.position} of {self.total} · {activity_of(self.event.tool_name, self.event.input)}"
        return f"{label} · on {self.where}" if self.where else label

    @property
    def payload(self) -> NormalizedPayload:
        """What the card shows."""
        return self.event.normalized

    @property
    def row(self) -> str:
        """``row 17 of 200``."""
        return f"row {self.position} of {self.total}"

    @property
    def call(self) -> Call:
        """The request as a :class:`~kandev_nb.fleet.proposal.Call` (tool, input, the row's cwd)."""
        return Call(self.event.tool_name, self.event.input, self.cwd)


@dataclass(frozen=True)
class FleetRule:
    """A fleet-wide answer: `behavior` for every call `rule` (the CLI's syntax) matches."""

    behavior: Literal["allow", "deny"]
    rule: str
    given_for: str = ""
    """The request it was given on ("row 3 of 12 · Bash · pytest -x")."""


@dataclass
class ApprovalQueue:
    """The fleet's FIFO of waiting approvals and its fleet-wide rules.

    Attributes:
        pending: the waiting requests, oldest first.
        rules: the fleet-wide rules, in the order given.
        on_change: called (no arguments) whenever `pending` or `rules` change.
        row_values: by row key, the row's prompt values that differ between rows, as text
            (``("f00",)``): where a proposed rule stops (:meth:`propose`). The fleet fills it.
    """

    pending: list[QueuedApproval] = field(default_factory=list)
    rules: list[FleetRule] = field(default_factory=list)
    on_change: list[Callable[[], None]] = field(default_factory=list)
    row_values: dict[Any, tuple[str, ...]] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def _changed(self) -> None:
        for callback in list(self.on_change):
            callback()

    def policy(self, cwd: str, extra: Sequence[str] = (), behavior: Literal["allow", "deny"] = "allow") -> Rules:
        """The fleet-wide rules as a :class:`~kandev_nb.policy.Rules` rooted at `cwd` (with
        `extra` rules of `behavior` added: what the queue would hold once they are given)."""
        allow = [r.rule for r in self.rules if r.behavior == "allow"]
        deny = [r.rule for r in self.rules if r.behavior == "deny"]
        (allow if behavior == "allow" else deny).extend(extra)
        return Rules(allow=allow, deny=deny, root=cwd)

    def _answer_by_rule(self, item: QueuedApproval) -> bool:
        """Answer `item` with a fleet-wide rule if one matches; True if it did."""
        if not self.rules or item.event.tool_name == QUESTION_TOOL:
            return False
        verdict = self.policy(item.cwd).verdict(item.event.tool_name, item.event.input)
        if verdict.answer not in ("allow", "deny"):
            return False
        approval = item.approval
        approval.decided_rule = (f"the fleet's rule {verdict.rule}", verdict.rule or "")
        if verdict.answer == "allow":
            return approval.allow(by="policy", note=f"allowed for all rows by the fleet's rule {verdict.rule}")
        return approval.deny(f"Denied for all rows of this fleet (rule {verdict.rule}).", by="policy")

    def offer(
        self, key: Any, position: int, total: int, event: ev.PermissionRequest, cwd: str, where: str = ""
    ) -> QueuedApproval | None:
        """A row's PermissionRequest: answered by a fleet-wide rule, else queued (FIFO) until
        decided. `where` names the Dask worker of a row on a cluster. Returns the queued
        item, or None (no approval, already decided, or a rule answered)."""
        approval = event.approval
        if approval is None or approval.decision is not None:
            return None
        item = QueuedApproval(key, position, total, event, cwd, where)
        if self._answer_by_rule(item):
            return None
        with self._lock:
            self.pending.append(item)
        approval.on_decided(lambda _d: self._remove(item))
        self._changed()
        return item

    def _remove(self, item: QueuedApproval) -> None:
        with self._lock:
            if item not in self.pending:
                return
            self.pending.remove(item)
        self._changed()

    @property
    def head(self) -> QueuedApproval | None:
        """The oldest waiting request (the card on top of the board), or None."""
        with self._lock:
            return self.pending[0] if self.pending else None

    def waiting(self) -> list[QueuedApproval]:
        """The requests still waiting (undecided), oldest first."""
        with self._lock:
            return [i for i in self.pending if i.approval.decision is None]

    # -- rules for all rows -------------------------------------------------------------------

    def propose(self, item: QueuedApproval) -> Proposal:
        """The rule "for all rows" proposed on `item` (:func:`~kandev_nb.fleet.proposal.propose`):
        from the row's values (:attr:`row_values`) and the other rows' waiting requests."""
        others = [o.call for o in self.waiting() if o is not item and o.key != item.key][:MAX_COMPARED]
        values = self.row_values.get(item.key, ())
        return propose(item.event.tool_name, item.event.input, cwd=item.cwd, values=values, others=others)

    def rule_for(self, item: QueuedApproval) -> str | None:
        """The proposed rule(s) "for all rows" on `item`, one a line, or None when no rule can
        allow the call (:meth:`propose`)."""
        proposal = self.propose(item)
        return proposal.text or None

    def check(self, item: QueuedApproval, rule: str | Sequence[str], behavior: Literal["allow", "deny"]) -> RuleCheck:
        """Rules a person gives on `item` for all rows, read (:func:`~kandev_nb.fleet.proposal.check_rules`)."""
        if item.event.tool_name == QUESTION_TOOL:
            return RuleCheck((), "a question is answered row by row")
        return check_rules(rule, behavior, item.call)

    def answered_by(self, rules: Sequence[str], behavior: Literal["allow", "deny"]) -> list[QueuedApproval]:
        """The waiting requests that `rules`, given now as fleet-wide `behavior` rules, would
        answer so: read by the same :class:`~kandev_nb.policy.Rules` the queue answers with
        (deny beats allow, as there). Raises RuleError for a rule that does not parse."""
        found = []
        policies: dict[str, Rules] = {}
        for item in self.waiting():
            if item.event.tool_name == QUESTION_TOOL:
                continue
            if item.cwd not in policies:
                policies[item.cwd] = self.policy(item.cwd, rules, behavior)
            verdict = policies[item.cwd].verdict(item.event.tool_name, item.event.input)
            if verdict.answer == behavior:
                found.append(item)
        return found

    def rows_answered(self, rules: Sequence[str], behavior: Literal["allow", "deny"]) -> int:
        """How many waiting rows (distinct keys) `rules` would answer (:meth:`answered_by`)."""
        return len({item.key for item in self.answered_by(rules, behavior)})

    def allow_all(self, item: QueuedApproval, rule: str | Sequence[str] | None = None, *, confirm: bool = False) -> str:
        """Allow `item` and every other row's request the rule covers, now and later.

        Args:
            item: the request the person answers (its card).
            rule: the rule(s) to give (a text with one a line, or a list); None: the proposed
                ones (:meth:`propose`).
            confirm: give a rule :func:`~kandev_nb.fleet.proposal.too_broad` flags (the card's
                second click).

        Returns:
            The rules given, one a line.

        Raises:
            ValueError: no rule can allow the call, a rule does not parse, or the rules do not
                allow `item` itself; nothing is decided.
            TooBroadError (a ValueError): the rules are too broad and `confirm` is False;
                nothing is decided.
            RuntimeError: `item` was already answered; nothing is given.
        """
        return self._for_all(item, "allow", rule, confirm=confirm)

    def deny_all(self, item: QueuedApproval, reason: str = "", *, rule: str | Sequence[str] | None = None) -> str:
        """Deny `item` and every other row's request the rule covers, now and later (None: the
        proposed rule, else the exact command). Returns the rules given, one a line.

        Raises:
            ValueError: a rule does not parse, or does not deny `item` itself; nothing is decided.
            RuntimeError: `item` was already answered; nothing is given.
        """
        return self._for_all(item, "deny", rule, reason=reason)

    def _for_all(
        self,
        item: QueuedApproval,
        behavior: Literal["allow", "deny"],
        rule: str | Sequence[str] | None,
        *,
        reason: str = "",
        confirm: bool = False,
    ) -> str:
        if item.approval.decision is not None:
            raise RuntimeError(f"{item.label} was already answered")
        if rule is None:
            proposal = self.propose(item)
            rule = proposal.rules if behavior == "allow" else proposal.deny_rules
            if not rule:
                raise ValueError(f"no rule for all rows on this {item.event.tool_name} call: {proposal.why}")
        check = self.check(item, rule, behavior)
        if check.error:
            raise ValueError(check.error)
        if check.too_broad and not confirm:
            raise TooBroadError(f"too broad to allow for all rows at once ({check.too_broad}): confirm to give it")
        given = join_rules(check.rules)
        with self._lock:
            self.rules.extend(FleetRule(behavior, r, item.label) for r in check.rules)
        approval = item.approval
        approval.decided_rule = ("", ", ".join(check.rules))
        if behavior == "allow":
            approval.allow(note=f"allowed for all rows: {', '.join(check.rules)}")
        else:
            approval.deny(reason.strip() or f"Denied for all rows of this fleet (rule {', '.join(check.rules)}).")
        for other in self.waiting():
            if other is not item:
                self._answer_by_rule(other)
        self._changed()
        return given


@dataclass(frozen=True)
class DenyRules:
    """Deny rules given as texts in Claude Code's syntax, as an approval policy
    (``(tool_name, tool_input) -> "deny" | None``) that reads `rules` at each call: a row on a
    Dask worker holds one over the list the kernel updates ("Deny for all rows" given later).

    Attributes:
        rules: the deny rules (a list the owner may change in place), or a function giving them.
        root: the folder relative rules resolve against (the row's cwd), or None.
    """

    rules: Sequence[str] | Callable[[], Sequence[str]]
    root: str | None = None

    def _rules(self) -> Rules:
        texts = self.rules() if callable(self.rules) else self.rules
        return Rules(deny=list(texts), root=self.root)

    def __call__(self, tool_name: str, tool_input: dict[str, Any]) -> str | None:
        """ "deny" when a deny rule matches the call, else None (no opinion)."""
        return "deny" if self._rules().verdict(tool_name, tool_input).answer == "deny" else None

    def denied_by(self, tool_name: str, tool_input: dict[str, Any]) -> str:
        """The rule that denies the call ("" for none)."""
        verdict = self._rules().verdict(tool_name, tool_input)
        return (verdict.rule or "") if verdict.answer == "deny" else ""

    def with_root(self, cwd: str) -> DenyRules:
        """The same rules, relative ones resolved against `cwd`."""
        return DenyRules(self.rules, cwd)


def deny_texts(policy: Any) -> list[str]:
    """The deny rules of `policy` as texts, when it is a :class:`~kandev_nb.policy.Rules`
    (or one wrapped in a LabelledPolicy); a Python callable's deny side has no text ([])."""
    inner = getattr(policy, "policy", policy)
    return [str(rule) for rule in inner.deny] if isinstance(inner, Rules) else []


def fleet_denies(queue: ApprovalQueue) -> DenyRules:
    """The deny side of a fleet's "Deny for all rows" rules as an approval policy, read from
    `queue` at each call, so a rule given later holds too. Each row's session holds it as its
    policy, so the enforcement hook (:mod:`kandev_nb.policy.enforce`) asks it before every
    tool call in every mode: acceptEdits runs ``rm data.csv`` in the folder without a
    can_use_tool, which the queue alone would never see."""
    return DenyRules(lambda: [r.rule for r in queue.rules if r.behavior == "deny"])
