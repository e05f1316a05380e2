"""Waiting approvals, reachable from any cell: ``kandev_nb.pending()`` (issue 27, point 2).

Every `%%claude` session of this kernel keeps its waiting approvals in its broker
(``session.broker.approvals``, one :class:`~kandev_nb.agent.permissions.Approval` per
`can_use_tool` control_request or unasked MCP `tools/call`). :func:`pending` lists them, oldest
first, as a :class:`PendingList` (a list of :class:`PendingApproval` with a table repr), and each
one answers as the card's buttons do: ``pending()[0].allow()`` / ``.deny("reason")``.

An answer is bound to what the card showed: each item carries the
:class:`~kandev_nb.policy.binding.BoundPayload` of its card (:func:`~kandev_nb.agent.cells.bound_payload`
over the payload the broker recorded for the card, the same record the broker binds an allow to),
and :meth:`PendingApproval.allow` refuses when the request waiting under that `request_id` is no
longer the one listed (a new approval, a different payload).

A line of the list shows one summary of the request: ``pending()[i].allow()`` allows only when
that line is the whole payload (:attr:`PendingApproval.complete`, see
:mod:`kandev_nb.agent.surface`); otherwise ``pending()[i].show()`` shows it whole first, and
that item may then allow it (issue 32, point 3). The broker checks it
(:meth:`~kandev_nb.agent.approvals.ApprovalBroker.allow_shown`).

A fleet's rows wait in its approval queue (:class:`~kandev_nb.fleet.queue.ApprovalQueue`), rows
on Dask workers too (the kernel holds their queue): every fleet running in this kernel
(:func:`~kandev_nb.fleet.runner.running_fleets`) is listed as well (issue 33, point 3), one
:class:`FleetPendingApproval` per waiting row, named after its row ("row 6 of 50") and answered
through the same binding checks (:class:`FleetSurface` stands in for the broker: the payload is
the one the board's card shows). ``.allow_all_rows()`` gives the queue's proposed rule for every
row (:meth:`~kandev_nb.fleet.queue.ApprovalQueue.propose`; ``.proposal`` shows it).
"""

from __future__ import annotations

import html
import sys
import time
from dataclasses import dataclass, field
from typing import Any

from kandev_nb.agent.approvals import allow_if_shown
from kandev_nb.agent.cells import bound_payload
from kandev_nb.agent.permissions import Approval
from kandev_nb.agent.questions import QUESTION_TOOL
from kandev_nb.agent.surface import SUMMARY_CHARS, SurfaceText, line_of, summary, whole_of
from kandev_nb.agent.tools import NormalizedPayload
from kandev_nb.policy.binding import BoundPayload
from kandev_nb.render.card_view import tool_label
from kandev_nb.render.reveal import reveal_text, warning_markdown

__all__ = [
    "SUMMARY_CHARS",
    "FleetPendingApproval",
    "FleetSurface",
    "PendingApproval",
    "PendingList",
    "pending",
    "summary",
    "waiting",
]


@dataclass(frozen=True)
class PendingApproval:
    """One waiting approval, as listed by :func:`pending`.

    Attributes:
        request_id: the control_request's `request_id` (``mcp:<hex>`` for an unasked `tools/call`).
        session: the `%%claude` session's name (``--session``; "default").
        tool: the tool name as the CLI sent it (`tool_name`, e.g. ``Bash``, ``mcp__kernel__run_cell``).
        summary: one line of what it will do (:func:`summary`).
        cell: the execution count of the cell that asked (``In [n]``), or None.
        age_s: seconds it has waited when listed.
        left_s: seconds left before the approval timeout denies it, None without a timeout.
        bound: the payload its card showed (what an allow from here binds to).
        approval: the live :class:`~kandev_nb.agent.permissions.Approval`.
        broker: its session's :class:`~kandev_nb.agent.approvals.ApprovalBroker`.
        line: the one line listed (:func:`~kandev_nb.agent.surface.line_of`: its text is
            `summary`; `complete` when it is the whole payload).
    """

    request_id: str
    session: str
    tool: str
    summary: str
    cell: int | None
    age_s: float
    left_s: float | None
    bound: BoundPayload
    approval: Approval
    broker: Any = field(repr=False, compare=False)
    line: SurfaceText | None = field(default=None, repr=False, compare=False)
    _whole: list[SurfaceText] = field(default_factory=list, repr=False, compare=False)  # set by show()

    @property
    def complete(self) -> bool:
        """The listed line is the whole payload (Allow from here needs no :meth:`show` first)."""
        return self.line is not None and self.line.complete

    def show(self) -> str:
        """Show the whole payload (every input field verbatim, hidden characters marked, and
        the cell a notebook tool acts on), after which this item may :meth:`allow` it.
        Returns the text shown (also displayed, in a notebook)."""
        whole = self.broker.surface_whole(self.request_id)
        if whole is None:
            raise RuntimeError(f"approval {self.request_id} ({self.tool}) is no longer waiting")
        self._whole[:] = [whole]
        text, found = reveal_text(whole.text)
        warning = warning_markdown(found).replace("**", "").strip()
        shown = (warning + "\n" if warning else "") + text
        print(shown)
        return shown

    @property
    def question(self) -> bool:
        """True for an AskUserQuestion card (answered on its card; :meth:`deny` skips it)."""
        return self.tool == QUESTION_TOOL

    def _check(self) -> None:
        if self.approval.decision is not None:
            raise RuntimeError(f"approval {self.request_id} ({self.tool}) was already answered")
        now = bound_payload(self.bound.tool_use_id, self.tool, self._shown(), self.approval.tool_input)
        if now.digest != self.bound.digest:
            raise RuntimeError(f"approval {self.request_id} changed since it was listed: call pending() again")

    def _shown(self) -> Any:
        return self.broker.card_payload(self.request_id)

    def allow(self) -> bool:
        """Allow once, as the card's "Allow once" does (the call's `updatedInput` is the input
        the card showed), when this item showed the whole payload: its line is all of it
        (:attr:`complete`), or :meth:`show` showed it. Returns True (the CLI is answered).

        Raises:
            RuntimeError: already answered, or the waiting request is not the one listed.
            PartlyShownError (a RuntimeError): the line is a summary and :meth:`show` was not
                called on this item (nothing is decided).
            ValueError: an AskUserQuestion (answer it on its card, or :meth:`deny` to skip it).
        """
        shown = self._whole[0] if self._whole else self.line
        return self.allow_shown(shown.digest if shown is not None else None)

    def allow_shown(self, digest: Any) -> bool:
        """Allow once from a surface that showed this item's text whose digest is `digest` (a
        toast sends the digest of its line); the broker refuses a summary that is not the
        whole payload (:meth:`~kandev_nb.agent.approvals.ApprovalBroker.allow_shown`)."""
        if self.question:
            raise ValueError("an AskUserQuestion is answered on its card (pending()[i].deny() skips it)")
        self._check()
        return bool(self.broker.allow_shown(self.request_id, digest))

    def deny(self, reason: str = "") -> bool:
        """Deny, with `reason` sent to Claude as the deny `message` (as the card's reason box).

        Raises:
            RuntimeError: already answered, or the waiting request is not the one listed.
            TypeError: `reason` is not a string.
        """
        if not isinstance(reason, str):
            raise TypeError(f"reason must be a string, not {type(reason).__name__}")
        self._check()
        return self.approval.deny(reason.strip())

    def row(self) -> dict[str, Any]:
        """The item as a table row (tool, summary, cell, age, left, session, request_id)."""
        return {
            "tool": tool_label(self.tool),
            "summary": self.summary,
            "cell": f"In [{self.cell}]" if self.cell is not None else "",
            "age": _fmt(self.age_s),
            "left": "waits" if self.left_s is None else _fmt(self.left_s),
            "session": self.session,
            "request_id": self.request_id,
        }


class FleetSurface:
    """A fleet row's waiting request seen as a broker sees its own (what :class:`PendingApproval`
    reads): the payload its card on the board shows, its one line, its whole payload, and an allow
    bound to what was shown (:func:`~kandev_nb.agent.approvals.allow_if_shown`, the broker's check).

    Args:
        queue: the fleet's :class:`~kandev_nb.fleet.queue.ApprovalQueue`.
        item: the row's :class:`~kandev_nb.fleet.queue.QueuedApproval`.
    """

    cell: int | None = None

    def __init__(self, queue: Any, item: Any) -> None:
        self.queue = queue
        self.item = item

    def _approval(self, request_id: str) -> Approval | None:
        """The row's approval while it waits in the queue under `request_id`, else None."""
        item = self.item
        waiting = item in self.queue.waiting()
        return item.approval if waiting and item.approval.request_id == request_id else None

    def card_payload(self, request_id: str) -> NormalizedPayload | None:
        """The payload the board's card shows, while the request waits."""
        return self.item.payload if self._approval(request_id) is not None else None

    def surface_line(self, request_id: str) -> SurfaceText | None:
        """The one line listed, while the request waits."""
        approval = self._approval(request_id)
        if approval is None:
            return None
        return line_of(request_id, approval.tool_name, approval.tool_input, self.item.payload)

    def surface_whole(self, request_id: str) -> SurfaceText | None:
        """The whole payload (``pending()[i].show()``), while the request waits."""
        approval = self._approval(request_id)
        if approval is None:
            return None
        return whole_of(request_id, approval.tool_name, approval.tool_input, self.item.payload)

    def allow_shown(self, request_id: str, digest: Any) -> bool:
        """Allow once, bound to what was shown (as :meth:`ApprovalBroker.allow_shown`)."""
        line, whole = self.surface_line(request_id), self.surface_whole(request_id)
        return allow_if_shown(request_id, self._approval(request_id), line, whole, digest)


@dataclass(frozen=True)
class FleetPendingApproval(PendingApproval):
    """A fleet row's waiting approval, as listed by :func:`pending`: ``.allow()``, ``.deny()``,
    ``.show()`` as for a cell's, plus ``.allow_all_rows()`` / ``.deny_all_rows()``.

    Attributes:
        fleet: the fleet's name ("" for an unnamed one).
        fleet_row: ``row 6 of 50`` (the table's `cell` column shows it).
        item: the queue's :class:`~kandev_nb.fleet.queue.QueuedApproval`.
        queue: the fleet's :class:`~kandev_nb.fleet.queue.ApprovalQueue`.
    """

    fleet: str = ""
    fleet_row: str = ""
    item: Any = field(default=None, repr=False, compare=False)
    queue: Any = field(default=None, repr=False, compare=False)

    @property
    def row_label(self) -> str:
        """The row, as surfaces name it (``row 6 of 50``; the Lab channel reads this name)."""
        return self.fleet_row

    @property
    def proposal(self) -> Any:
        """What "Allow for all rows" gives here (:class:`~kandev_nb.fleet.proposal.Proposal`: its
        ``rules``, ``why``, ``too_broad``), computed now from the rows waiting now."""
        return self.queue.propose(self.item)

    def allow_all_rows(self, rule: str | list[str] | None = None, *, confirm: bool = False) -> str:
        """Allow this row's request and every row's request the rule covers, now and later.

        Args:
            rule: the rule(s) in Claude Code's syntax (``"Bash(python3 tools/profile.py:*)"``, or
                several, one a line); None: the proposed one (:attr:`proposal`).
            confirm: give a rule too broad to give with one click (``Bash(python3:*)``).

        Returns:
            The rules given, one a line.

        Raises:
            RuntimeError: already answered, or the waiting request is not the one listed.
            TooBroadError (a ValueError): the rule is too broad and `confirm` is False.
            ValueError: no rule can allow the call, a rule does not parse or does not allow this
                row's own request, or an AskUserQuestion (answered row by row). Nothing is decided.
        """
        if self.question:
            raise ValueError("an AskUserQuestion is answered row by row, on its card")
        self._check()
        return str(self.queue.allow_all(self.item, rule, confirm=confirm))

    def deny_all_rows(self, rule: str | list[str] | None = None, reason: str = "") -> str:
        """Deny this row's request and every row's request the rule covers, now and later (None:
        the proposed rule, else the exact command). Returns the rules given, one a line.

        Raises:
            RuntimeError: already answered, or the waiting request is not the one listed.
            ValueError: a rule does not parse or does not deny this row's own request.
        """
        if not isinstance(reason, str):
            raise TypeError(f"reason must be a string, not {type(reason).__name__}")
        self._check()
        return str(self.queue.deny_all(self.item, reason, rule=rule))

    def row(self) -> dict[str, Any]:
        """The item as a table row: the `cell` column names the row (``row 6 of 50``), the
        `session` column the fleet."""
        out = super().row()
        out["cell"] = self.fleet_row
        out["session"] = f"fleet {self.fleet}" if self.fleet else "fleet"
        return out


def _fleet_items(fleets: Any, now: float) -> list[PendingApproval]:
    """The waiting rows of `fleets` (each a :class:`~kandev_nb.fleet.runner.Fleet`)."""
    found: list[PendingApproval] = []
    for fleet in fleets:
        queue = fleet.queue
        for item in queue.waiting():
            approval = item.approval
            surface = FleetSurface(queue, item)
            line = surface.surface_line(approval.request_id)
            bound = bound_payload(approval.tool_use_id or "", approval.tool_name, item.payload, approval.tool_input)
            found.append(
                FleetPendingApproval(
                    request_id=approval.request_id,
                    session=f"{fleet.name or 'fleet'}[{item.key}]",
                    tool=approval.tool_name,
                    summary=line.text if line is not None else summary(approval.tool_name, approval.tool_input),
                    cell=getattr(fleet, "cell", None),  # the board's cell
                    age_s=max(0.0, now - approval.created),
                    left_s=approval.remaining_s(now),
                    bound=bound,
                    approval=approval,
                    broker=surface,
                    line=line,
                    fleet=fleet.name or "",
                    fleet_row=item.row,
                    item=item,
                    queue=queue,
                )
            )
    return found


def _fmt(seconds: float) -> str:
    s = int(seconds + 0.999)
    return f"{s // 60}:{s % 60:02d}" if s >= 60 else f"{s} s"


class PendingList(list[PendingApproval]):
    """The waiting approvals (a list), shown as a table: tool, summary, cell, age, time left."""

    def frame(self) -> Any:
        """The list as a pandas DataFrame (one row per approval, :meth:`PendingApproval.row`)."""
        import pandas as pd

        return pd.DataFrame([p.row() for p in self], columns=list(_COLUMNS))

    def __repr__(self) -> str:
        if not self:
            return "No approval is waiting."
        rows = [[str(v) for v in p.row().values()][:5] for p in self]
        head = ["#", *_COLUMNS[:5]]
        table = [head, *[[_index(i, p), *r] for i, (p, r) in enumerate(zip(self, rows, strict=True))]]
        widths = [max(len(row[c]) for row in table) for c in range(len(head))]
        lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() for row in table]
        head_line = f"{len(self)} approval(s) waiting; answer with pending()[i].allow() or .deny('why')"
        return "\n".join([head_line, *lines, *_note(self)])

    def _repr_html_(self) -> str:
        if not self:
            return "<i>No approval is waiting.</i>"
        head = "".join(f"<th>{c}</th>" for c in ("#", *_COLUMNS[:5]))
        body = "".join(
            "<tr>"
            + f"<td>{_index(i, p)}</td>"
            + "".join(f"<td>{html.escape(str(v))}</td>" for v in list(p.row().values())[:5])
            + "</tr>"
            for i, p in enumerate(self)
        )
        return (
            f'<div class="kandev-pending"><b>{len(self)} approval(s) waiting</b> — answer with '
            f"<code>pending()[i].allow()</code> or <code>.deny('why')</code>"
            f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
            + "".join(f"<div>{html.escape(n)}</div>" for n in _note(self))
            + "</div>"
        )


def _index(i: int, p: PendingApproval) -> str:
    """The row's number, starred when its line is only a summary (Allow needs show() first)."""
    return str(i) if p.complete or p.question else f"{i}*"


_PARTLY = "* only a summary is listed: pending()[i].show() shows all of it, then that item's .allow() allows it"


def _note(items: list[PendingApproval]) -> list[str]:
    notes = []
    if not all(p.complete or p.question for p in items):
        notes.append(
            "* only a summary is listed: pending()[i].show() shows all of it, then that item's .allow() allows it"
        )
    first = next(((i, p) for i, p in enumerate(items) if isinstance(p, FleetPendingApproval) and not p.question), None)
    if first is not None:
        i, item = first
        proposal = item.proposal
        if proposal.rules:
            rules = ", ".join(proposal.rules)
            count = item.queue.rows_answered(proposal.rules, "allow")
            broad = f" (too broad: {proposal.too_broad}; add confirm=True)" if proposal.too_broad else ""
            notes.append(
                f"{item.fleet_row}: pending()[{i}].allow_all_rows() allows {rules} for every row of the fleet, "
                f"answering {count} waiting row(s) now{broad}; .proposal says why"
            )
        else:
            notes.append(f"{item.fleet_row}: no rule for all rows ({proposal.why})")
    return notes


_COLUMNS = ("tool", "summary", "cell", "age", "left", "session", "request_id")


def waiting(sessions: dict[str, Any], now: float | None = None, fleets: Any = None) -> PendingList:
    """The undecided approvals of `sessions` (``{name: Session}``) and of the rows of `fleets`
    (None: every fleet running in this process, :func:`~kandev_nb.fleet.runner.running_fleets`;
    their items are :class:`FleetPendingApproval`), oldest first."""
    now = time.monotonic() if now is None else now
    if fleets is None:  # no fleet ever ran in this process unless its module was imported
        runner = sys.modules.get("kandev_nb.fleet.runner")
        fleets = runner.running_fleets() if runner is not None else []
    found: list[PendingApproval] = _fleet_items(fleets, now)
    for name, session in sessions.items():
        broker = getattr(session, "broker", None)
        if broker is None:
            continue
        for approval in list(broker.approvals.values()):
            if approval.decision is not None:
                continue
            shown = broker.card_payload(approval.request_id)
            line = broker.surface_line(approval.request_id)
            found.append(
                PendingApproval(
                    request_id=approval.request_id,
                    session=name,
                    tool=approval.tool_name,
                    summary=line.text if line is not None else summary(approval.tool_name, approval.tool_input),
                    cell=broker.cell,
                    age_s=max(0.0, now - approval.created),
                    left_s=approval.remaining_s(now),
                    bound=bound_payload(approval.tool_use_id or "", approval.tool_name, shown, approval.tool_input),
                    approval=approval,
                    broker=broker,
                    line=line,
                )
            )
    found.sort(key=lambda p: -p.age_s)
    return PendingList(found)


def pending() -> PendingList:
    """The approvals waiting now in every `%%claude` session of this kernel, oldest first.

    ``pending()`` shows a table (tool, summary, cell, age, time left); ``pending()[0].allow()``
    or ``.deny("reason")`` answers one, as its card's buttons would; ``pending().frame()`` is a
    DataFrame.
    """
    from kandev_nb.notebook.state import current

    return waiting(current().sessions)
