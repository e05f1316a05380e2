"""A fleet card's "for all rows" controls (issue 33): :class:`RowsAnswer` reads the rule field's
state from the fleet's approval queue and gives the answer through it."""

from __future__ import annotations

from typing import Any, Literal

from kandev_nb.fleet import ApprovalQueue, QueuedApproval
from kandev_nb.fleet.proposal import rule_label, split_rules

__all__ = ["RowsAnswer"]


def _rows(n: int) -> str:
    return f"{n} waiting row" + ("" if n == 1 else "s")


class RowsAnswer:
    """ "For all rows" on one queued request's card (the card's
    :class:`~kandev_nb.notebook.widgets.approval.ForAllRows`): the rule field's state, read
    from the queue at each call, and the answer, given through the queue.

    Args:
        queue: the fleet's :class:`~kandev_nb.fleet.queue.ApprovalQueue`.
        item: the request the card shows.
    """

    def __init__(self, queue: ApprovalQueue, item: QueuedApproval) -> None:
        self.queue = queue
        self.item = item

    def state(self, text: str | None, armed: bool) -> dict[str, Any]:
        """The controls' JSON for the rule field's `text` (None: the rule proposed now, from the
        rows waiting now): the buttons' labels, the count of waiting rows each answers (the
        queue's own matcher), why, too broad, what is wrong."""
        proposal = self.queue.propose(self.item)
        proposed = proposal.text or "\n".join(proposal.deny_rules)
        text = proposed if text is None else text
        allow, deny = self.queue.check(self.item, text, "allow"), self.queue.check(self.item, text, "deny")
        label = rule_label(allow.rules or deny.rules or split_rules(text))
        allowed = self.queue.rows_answered(allow.rules, "allow") if not allow.error else 0
        denied = self.queue.rows_answered(deny.rules, "deny") if not deny.error else 0
        count = f"answers {_rows(allowed)}" if not allow.error else f"Deny answers {_rows(denied)}"
        if not allow.error and not deny.error and denied != allowed:
            count += f" (Deny: {denied})"
        return {
            "row": self.item.row,
            "rule": text,
            "allow_label": f"Really allow {label} for all rows?" if armed else f"Allow {label} for all rows",
            "deny_label": f"Deny {label} for all rows",
            "count": count,
            "why": proposal.why if text == proposed else "your rule",
            "too_broad": allow.too_broad,
            "error": allow.error if deny.error or not allow.error else f"Allow: {allow.error}",
            "can_allow": not allow.error,
            "can_deny": not deny.error,
            "armed": armed,
        }

    def too_broad(self, text: str) -> str:
        """Why `text`'s rules are too broad to allow with one click ("")."""
        return self.queue.check(self.item, text, "allow").too_broad

    def give(self, behavior: Literal["allow", "deny"], text: str, *, confirm: bool, reason: str) -> str:
        """Give `text`'s rules for all rows (:meth:`~kandev_nb.fleet.queue.ApprovalQueue.allow_all`,
        :meth:`~kandev_nb.fleet.queue.ApprovalQueue.deny_all`)."""
        if behavior == "allow":
            return self.queue.allow_all(self.item, text, confirm=confirm)
        return self.queue.deny_all(self.item, reason, rule=text)
