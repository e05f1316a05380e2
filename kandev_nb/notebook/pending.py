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
"""

from __future__ import annotations

import html
import time
from dataclasses import dataclass, field
from typing import Any

from kandev_nb.agent.cells import bound_payload
from kandev_nb.agent.permissions import Approval
from kandev_nb.agent.questions import QUESTION_TOOL
from kandev_nb.agent.surface import SUMMARY_CHARS, SurfaceText, summary
from kandev_nb.policy.binding import BoundPayload
from kandev_nb.render.card_view import tool_label
from kandev_nb.render.reveal import reveal_text, warning_markdown

__all__ = ["SUMMARY_CHARS", "PendingApproval", "PendingList", "pending", "summary", "waiting"]


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


def _note(items: list[PendingApproval]) -> list[str]:
    if all(p.complete or p.question for p in items):
        return []
    return ["* only a summary is listed: pending()[i].show() shows all of it, then that item's .allow() allows it"]


_COLUMNS = ("tool", "summary", "cell", "age", "left", "session", "request_id")


def waiting(sessions: dict[str, Any], now: float | None = None) -> PendingList:
    """The undecided approvals of `sessions` (``{name: Session}``), oldest first."""
    now = time.monotonic() if now is None else now
    found: list[PendingApproval] = []
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
