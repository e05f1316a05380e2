"""Where a turn's prompt came from: a notebook cell, a fleet's row, or Python code.

Every prompt :meth:`Session.run <kandev_nb.agent.session.Session.run>` sends carries a new
`uuid` and the `origin` ``{"kind": "human"}`` (:func:`~kandev_nb.wire.protocol.user_message`).
The CLI keeps that uuid as the prompt's entry in its transcript and names it again on the
turn's `result` (`user_message_uuid`, `user_message_uuids`), with the origin (`origin`).
What kandev-nb knows beyond "human" (which cell, which fleet row) cannot ride along: the CLI
drops any other key of `origin` and any other kind (measured on 2.1.332). So the session keeps
it, as an :class:`Origin` on the :class:`~kandev_nb.agent.turn.Turn`, tied to the prompt by
that uuid (``Turn.prompt_uuid``), and :attr:`Turn.origin_echoed
<kandev_nb.agent.turn.Turn.origin_echoed>` says whether the result named it. The ledger keeps
all three (``turns.prompt_uuid``, ``origin_kind``, ``origin``).

>>> Origin.cell(notebook="analysis.ipynb", cell_id="4f1c", execution_count=7).as_dict()
{'kind': 'cell', 'notebook': 'analysis.ipynb', 'cell_id': '4f1c', 'execution_count': 7}
>>> Origin.fleet_row("reviews", row=3, position=4).as_dict()
{'kind': 'fleet_row', 'fleet': 'reviews', 'row': 3, 'position': 4}
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Final, Literal

__all__ = ["ORIGIN_KINDS", "Origin", "OriginKind"]

OriginKind = Literal["cell", "fleet_row", "python"]
ORIGIN_KINDS: Final = ("cell", "fleet_row", "python")
"""What sent a prompt: a ``%%claude`` cell, a fleet's row, or a call of ``Session.run`` from Python."""


@dataclass(frozen=True)
class Origin:
    """Which cell, fleet row or Python call sent a turn's prompt.

    Attributes:
        kind: "cell", "fleet_row" or "python" (:data:`ORIGIN_KINDS`).
        notebook: the notebook's path as the kernel knows it (cells and fleets run from one).
        cell_id: the cell's nbformat id (JupyterLab sends it with each execution as the
            request's ``metadata.cellId``); None where the frontend sends none (nbclient).
        execution_count: the ``In [n]`` number of the cell.
        fleet: the fleet's name (None for an unnamed fleet).
        row: the row's index value (JSON-able: a str, int, float, bool, or a list of them;
            other values are kept as their ``repr``).
        position: the row's 1-based position in the fleet's frame.

    Raises:
        ValueError: an unknown `kind`.
    """

    kind: OriginKind = "python"
    notebook: str | None = None
    cell_id: str | None = None
    execution_count: int | None = None
    fleet: str | None = None
    row: Any = None
    position: int | None = None

    def __post_init__(self) -> None:
        if self.kind not in ORIGIN_KINDS:
            raise ValueError(f"origin kind must be one of {', '.join(ORIGIN_KINDS)}, not {self.kind!r}")
        if self.row is not None:
            object.__setattr__(self, "row", _json_able(self.row))

    @classmethod
    def cell(
        cls, *, notebook: str | None = None, cell_id: str | None = None, execution_count: int | None = None
    ) -> Origin:
        """The origin of a ``%%claude`` cell's prompt."""
        return cls("cell", notebook=notebook, cell_id=cell_id, execution_count=execution_count)

    @classmethod
    def fleet_row(
        cls, fleet: str | None, *, row: Any, position: int | None = None, notebook: str | None = None
    ) -> Origin:
        """The origin of one fleet row's prompt (`row`: its index value)."""
        return cls("fleet_row", notebook=notebook, fleet=fleet, row=row, position=position)

    def as_dict(self) -> dict[str, Any]:
        """The fields that are set (`kind` always), as JSON-able values: the ledger's ``origin``."""
        return {k: v for k, v in vars(self).items() if v is not None}


def _json_able(value: Any) -> Any:
    """`value` if JSON carries it as it is (numpy scalars turned into Python ones), else its repr."""
    item = getattr(value, "item", None)
    if callable(item) and not isinstance(value, str | bytes):
        try:
            value = item()
        except (TypeError, ValueError):
            pass
    if isinstance(value, tuple):
        value = list(value)
    try:
        return json.loads(json.dumps(value, allow_nan=False))
    except (TypeError, ValueError):
        return repr(value)
