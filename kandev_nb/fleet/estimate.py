"""A fleet's dry run: what it would send and what it would cost, before it spends (issue 33, point 8).

>>> plan = await kandev_nb.fleet(tickets, "Classify ticket {id}.", dry_run=True)  # doctest: +SKIP
>>> plan                                                                              # doctest: +SKIP
claude fleet (dry run) · unnamed · 50 rows: 50 to run, at most 4 at once; nothing was sent
estimate: $0.1750 for 50 rows ($0.0035 per row, the mean of 12 done rows of earlier fleets
with this template and options: triage-nov; median $0.0034)
prompt 1 (row 'a'): Classify ticket 1.
...

The estimate comes from the ledger's earlier turns of fleet rows with the same fleet
fingerprint (the template and the options that change an answer: schema, mode, model,
max_turns, cwd, tool rules, system prompts, kernel tools; ``fleet_result.fingerprint``,
:meth:`kandev_nb.ledger.RunLedger.fleet_rows`): the cost of each such turn that finished
its row ("done"), their mean times the rows a run would start. Retries and failed or stopped
attempts are not in a row's cost there, so a fleet that retries costs more than the estimate.
"""

from __future__ import annotations

import asyncio
import html
import math
import statistics
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

import pandas as pd

from kandev_nb.errors import LedgerError

if TYPE_CHECKING:
    from kandev_nb.fleet.runner import Fleet

__all__ = ["NO_MATH", "SHOWN_PROMPTS", "FleetEstimate", "estimate", "usd"]

SHOWN_PROMPTS: Final = 3
"""How many of the prompts a run would send a dry run shows (the first ones, in frame order)."""

NO_MATH: Final = "mathjax_ignore tex2jax_ignore"
"""The MathJax-ignore classes (:data:`kandev_nb.render.theme.NO_MATH`, which the fleet layer
does not import): "$0.0120 for 5 rows ($0.0024 per row" is money, not LaTeX."""

_MUTED: Final = "var(--jp-content-font-color2,#57606a)"


def usd(amount: float) -> str:
    """An amount in USD as the turn outputs show it (:func:`kandev_nb.render.html.fmt_usd`):
    ``$0.0123`` below a dollar, ``$1.23`` above, never ``$0.0000`` for a small amount."""
    if 0 < amount < 0.0001:
        return f"${amount:.{1 - math.floor(math.log10(amount))}f}"
    return f"${amount:.4f}" if amount < 1 else f"${amount:,.2f}"


@dataclass(frozen=True)
class FleetEstimate:
    """What a fleet would do, sent nowhere: ``kandev_nb.fleet(..., dry_run=True)`` and
    ``%%claude --over FRAME --dry-run``. Money in USD (floats), counts as ints.

    Attributes:
        name: the fleet's name (None: unnamed).
        rows: rows in the frame.
        to_run: rows a run would start now (``rows - done``).
        done: rows a run would read back instead (a named fleet's rows the ledger has
            finished with the same template, options and row prompt; 0 with ``redo``).
        prompts: the first :data:`SHOWN_PROMPTS` prompts a run would send, ``(row key,
            prompt)`` in frame order, each exactly as sent (template filled, secrets redacted).
        fingerprint: the fleet fingerprint (16 hex digits) the estimate looked up.
        based_on: how many earlier rows the estimate is made from (done turns of this
            fingerprint with a cost; 0: there are none, no estimate).
        fleets: the names of the fleets those rows come from ("(unnamed)" for unnamed ones).
        per_row_usd: the mean cost (USD) of one of those rows, or None.
        median_usd: their median cost (USD), or None.
        estimate_usd: ``per_row_usd * to_run`` (USD; 0.0 when nothing would run), or None
            without earlier rows.
        budget_usd: the fleet's budget (USD; with the notebook's budget, what is left of it),
            or None.
        concurrency: at most this many agents at once.
        notes: anything else a run would meet (the notebook's budget spent...).
    """

    name: str | None
    rows: int
    to_run: int
    done: int
    prompts: tuple[tuple[Any, str], ...]
    fingerprint: str
    based_on: int = 0
    fleets: tuple[str, ...] = ()
    per_row_usd: float | None = None
    median_usd: float | None = None
    estimate_usd: float | None = None
    budget_usd: float | None = None
    concurrency: int = 4
    notes: tuple[str, ...] = field(default=())

    # -- text -------------------------------------------------------------------------------

    def headline(self) -> str:
        """``claude fleet (dry run) · dec · 4 rows: 3 to run, 1 done already (...), at most 4 at
        once; nothing was sent``."""
        done = f", {self.done} done already (read back from the ledger)" if self.done else ""
        return (
            f"claude fleet (dry run) · {self.name or 'unnamed'} · {_n(self.rows, 'row')}: "
            f"{self.to_run} to run{done}, at most {self.concurrency} at once; nothing was sent"
        )

    def cost_text(self) -> str:
        """The estimate in one sentence, saying what it is based on (or that nothing is)."""
        if self.to_run == 0:
            return "estimate: $0 (every row is done already: a run sends nothing)"
        if self.per_row_usd is None or self.estimate_usd is None:
            return (
                "estimate: none (the ledger has no done row of this template and these options "
                "from an earlier fleet to estimate from)"
            )
        fleets = ", ".join(self.fleets[:5]) + (f" and {len(self.fleets) - 5} more" if len(self.fleets) > 5 else "")
        text = (
            f"estimate: {usd(self.estimate_usd)} for {_n(self.to_run, 'row')} "
            f"({usd(self.per_row_usd)} per row, the mean of {_n(self.based_on, 'done row')} "
            f"of earlier fleets with this template and options: {fleets}; median {usd(self.median_usd or 0.0)})"
        )
        if self.budget_usd is not None and self.estimate_usd > self.budget_usd:
            text += f"; the budget of {usd(self.budget_usd)} stops it before then"
        return text

    def prompt_lines(self) -> list[tuple[str, str]]:
        """``(label, prompt)`` for each shown prompt: ``("prompt 1 (row 'a')", "...")``."""
        return [(f"prompt {i} (row {key!r})", prompt) for i, (key, prompt) in enumerate(self.prompts, start=1)]

    def __repr__(self) -> str:
        lines = [self.headline(), self.cost_text(), *self.notes]
        for label, prompt in self.prompt_lines():
            lines.append(f"{label}:")
            lines.extend("    " + line for line in prompt.splitlines() or [""])
        if self.to_run > len(self.prompts):
            lines.append(f"… and {_n(self.to_run - len(self.prompts), 'more prompt')}")
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        esc = html.escape
        prompts = "".join(
            f'<div><b>{esc(label)}</b><pre style="white-space:pre-wrap;margin:2px 0 6px">{esc(prompt)}</pre></div>'
            for label, prompt in self.prompt_lines()
        )
        more = self.to_run - len(self.prompts)
        if more > 0:
            prompts += f'<div style="color:{_MUTED}">… and {esc(_n(more, "more prompt"))}</div>'
        notes = "".join(f"<div>{esc(n)}</div>" for n in self.notes)
        return (
            f'<div class="kandev-fleet-dry-run {NO_MATH}">'
            f"<b>{esc(self.headline())}</b>"
            f'<div class="kandev-fleet-estimate">{esc(self.cost_text())}</div>{notes}{prompts}</div>'
        )


def _n(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def _from_ledger(ledger: Any, fingerprint: str) -> tuple[list[float], tuple[str, ...]]:
    """The costs (USD) of the done rows of `fingerprint` in `ledger`, and their fleets' names."""
    rows = ledger.fleet_rows(fingerprint)
    done = rows[(rows["status"] == "done") & rows["cost_usd"].notna()] if not rows.empty else rows
    costs = [float(c) for c in done["cost_usd"]] if not done.empty else []
    names = tuple(dict.fromkeys("(unnamed)" if pd.isna(n) else str(n) for n in done["fleet"])) if costs else ()
    return costs, names


async def estimate(fleet: Fleet, notes: tuple[str, ...] = ()) -> FleetEstimate:
    """`fleet`'s dry run: which rows a run would start (the ledger's finished rows read back,
    as :meth:`~kandev_nb.fleet.runner.Fleet.run` reads them), their first prompts, and the
    cost estimate (:class:`FleetEstimate`). Sends nothing, starts no CLI; a ledger that cannot
    be read gives no estimate and a note saying why."""
    extra = list(notes)
    try:
        finished = await fleet._finished_rows()  # the rows run() would read back
    except LedgerError as exc:
        finished = {}
        extra.append(f"the ledger cannot be read ({exc}): every row counted as to run")
    keys = [k for k in fleet.rows if k not in finished]
    prompts = tuple((k, fleet.rows[k].prompt) for k in keys[:SHOWN_PROMPTS])
    costs: list[float] = []
    names: tuple[str, ...] = ()
    if fleet.ledger is not None:
        try:
            costs, names = await asyncio.to_thread(_from_ledger, fleet.ledger, fleet.fingerprint)
        except LedgerError as exc:
            extra.append(f"no estimate: the ledger cannot be read ({exc})")
    else:
        extra.append("no ledger (configure(record=False) or ledger=None): nothing to estimate from")
    mean = statistics.fmean(costs) if costs else None
    return FleetEstimate(
        name=fleet.name,
        rows=fleet.total,
        to_run=len(keys),
        done=len(finished),
        prompts=prompts,
        fingerprint=fleet.fingerprint,
        based_on=len(costs),
        fleets=names,
        per_row_usd=mean,
        median_usd=statistics.median(costs) if costs else None,
        estimate_usd=0.0 if not keys else None if mean is None else mean * len(keys),
        budget_usd=fleet.budget_usd,
        concurrency=fleet.concurrency,
        notes=tuple(extra),
    )
