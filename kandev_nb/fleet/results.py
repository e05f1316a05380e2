"""One row's outcome (:class:`RowResult`) and the fleet's result frame.

The result frame has the input's index; first the schema's fields as typed columns (as
``--frame`` types them, :func:`kandev_nb.ledger.typed_frame.to_frame`) or ``answer`` (the
final text) without a schema; then :data:`STAT_COLUMNS`.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from typing import Any, Final, Literal

import pandas as pd

from kandev_nb.agent.structured import OutputSpec
from kandev_nb.agent.turn import Turn
from kandev_nb.ledger.typed_frame import to_frame

__all__ = ["EXTRA_DTYPES", "STAT_COLUMNS", "RowResult", "RowStatus", "result_frame"]

RowStatus = Literal["pending", "running", "done", "error", "stopped", "skipped"]
"""A row's state; the result frame has only the four final ones (done, error, stopped, skipped)."""

STAT_COLUMNS: Final = (
    "status",
    "error",
    "cost_usd",
    "attempts",
    "input_tokens",
    "output_tokens",
    "duration_ms",
    "num_turns",
    "tool_call_count",
    "session_id",
)
"""The columns after the answer's, in this order."""

EXTRA_DTYPES: Final = {
    "branch": "string",
    "worktree": "string",
    "files_changed": "Int64",
    "insertions": "Int64",
    "deletions": "Int64",
}
"""The columns a row may add after :data:`STAT_COLUMNS` (``worktree=True``), with their dtypes."""

_DTYPES: Final = {
    "status": "category",
    "error": "string",
    "cost_usd": "Float64",
    "attempts": "Int64",
    "input_tokens": "Int64",
    "output_tokens": "Int64",
    "duration_ms": "Int64",
    "num_turns": "Int64",
    "tool_call_count": "Int64",
    "session_id": "string",
}


@dataclass
class RowResult:
    """What one row's agent came back with.

    Attributes:
        key: the row's index value.
        status: "done", "error" (the turn failed, the CLI could not start, the answer did
            not validate), "stopped" (Stop, the kernel's interrupt, the fleet's budget) or
            "skipped" (never started: the budget was spent, the fleet was stopped).
        error: why, for every status but "done" (one line).
        answer: the final text (`result.result` / the streamed text).
        output: the validated structured answer (None without a schema or on error).
        output_raw: `result.structured_output` as JSON (kept in the ledger).
        cost_usd: USD of every attempt of the row: this run's (a retry, a stop, a failure:
            each turn's share of the CLI's `result.total_cost_usd`, a stopped request as the
            CLI reported it) and, for a named fleet, the earlier runs' recorded in the ledger;
            so the frame's sum is the ledger's sum for the fleet (over the frame's keys).
        attempts: how many times the row's agent was started: this run's tries (retries
            included) plus the ledger's earlier turns of the row (named fleets).
        input_tokens, output_tokens, duration_ms, num_turns: from the last attempt's
            `result` message (tokens, ms, API round trips).
        tool_call_count: tool_use blocks of the turn.
        session_id: the CLI's session_id.
        turn: the :class:`Turn` (None for a skipped row or one read back from the ledger).
        from_ledger: True when read back from an earlier run (nothing was sent).
        extra: more columns (see :data:`EXTRA_DTYPES`).
    """

    key: Any
    status: RowStatus = "pending"
    error: str | None = None
    answer: str = ""
    output: Any = None
    output_raw: Any = None
    cost_usd: float | None = None
    attempts: int = 0
    input_tokens: int | None = None
    output_tokens: int | None = None
    duration_ms: int | None = None
    num_turns: int | None = None
    tool_call_count: int | None = None
    session_id: str | None = None
    turn: Turn | None = None
    from_ledger: bool = False
    extra: dict[str, Any] = dataclasses.field(default_factory=dict)
    """More columns of this row (``worktree=True``: branch, worktree, files_changed, insertions, deletions)."""
    earlier_cost_usd: float = 0.0
    """The part of `cost_usd` spent by earlier runs (the ledger's), not by this run."""

    def add_earlier(self, cost_usd: float | None, attempts: int) -> None:
        """Count the row's earlier attempts (the ledger's turns of it) in `cost_usd` and `attempts`."""
        if attempts <= 0:
            return
        self.attempts += attempts
        if cost_usd is not None:
            self.cost_usd = (self.cost_usd or 0.0) + cost_usd
            self.earlier_cost_usd += cost_usd

    @property
    def run_cost_usd(self) -> float:
        """USD this run spent on the row (0 for a row read back from the ledger)."""
        if self.from_ledger:
            return 0.0
        return (self.cost_usd or 0.0) - self.earlier_cost_usd

    @classmethod
    def of_turn(cls, key: Any, turn: Turn, status: RowStatus, error: str | None) -> RowResult:
        """The result of a finished turn (`turn.stats` from its `result` message)."""
        stats = turn.stats
        return cls(
            key=key,
            status=status,
            error=error,
            answer=turn.text,
            output=turn.output,
            output_raw=turn.output_raw,
            cost_usd=stats.cost_usd if stats else None,
            attempts=1,
            input_tokens=stats.input_tokens if stats else None,
            output_tokens=stats.output_tokens if stats else None,
            duration_ms=stats.duration_ms if stats else None,
            num_turns=stats.num_turns if stats else None,
            tool_call_count=len(turn.tools),
            session_id=turn.session_id or (stats.session_id if stats else None),
            turn=turn,
        )

    def ledger_json(self) -> dict[str, Any]:
        """What ``turns.fleet_result`` keeps: status, error, answer, structured output (JSON)."""
        return {
            "status": self.status,
            "error": self.error,
            "answer": self.answer,
            "output": _jsonable(self.output_raw),
            "extra": _jsonable(self.extra),
        }

    @classmethod
    def of_ledger(cls, key: Any, row: dict[str, Any], output: OutputSpec | None) -> RowResult:
        """A finished row read back from the ledger (a ``turns`` row of this fleet)."""
        saved = row.get("fleet_result") or {}
        raw = saved.get("output")
        value = None
        if output is not None and raw is not None:
            try:
                value = output.validate(raw)
            except Exception:  # noqa: BLE001 - a row the schema no longer takes is left without output
                value = None
        return cls(
            key=key,
            status=saved.get("status", "done"),
            error=saved.get("error"),
            answer=saved.get("answer") or "",
            output=value,
            output_raw=raw,
            cost_usd=_num(row.get("cost_usd")),
            attempts=1,
            input_tokens=_int(row.get("input_tokens")),
            output_tokens=_int(row.get("output_tokens")),
            duration_ms=_int(row.get("duration_ms")),
            num_turns=_int(row.get("num_turns")),
            tool_call_count=_int(row.get("tool_call_count")),
            session_id=row.get("session_id") if isinstance(row.get("session_id"), str) else None,
            from_ledger=True,
            extra=dict(saved.get("extra") or {}),
        )


def _jsonable(value: Any) -> Any:
    try:
        return json.loads(json.dumps(value, default=str))
    except (TypeError, ValueError):
        return None


def _num(value: Any) -> float | None:
    return None if value is None or pd.isna(value) else float(value)


def _int(value: Any) -> int | None:
    return None if value is None or pd.isna(value) else int(value)


def _record(value: Any) -> dict[str, Any]:
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return dict(dump())
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    return dict(value) if isinstance(value, dict) else {"value": value}


def over_attempts(tries: list[RowResult]) -> RowResult:
    """The row's result after `tries` (its attempts of this run, oldest first): the last
    one, with `cost_usd` the sum of every attempt's (None when none reported a cost) and
    `attempts` their number."""
    last = tries[-1]
    costs = [t.cost_usd for t in tries if t.cost_usd is not None]
    last.cost_usd = sum(costs) if costs else None
    last.attempts = len(tries)
    return last


_JSON_DTYPES: Final = {
    frozenset({int}): "Int64",
    frozenset({int, float}): "Float64",
    frozenset({float}): "Float64",
    frozenset({bool}): "boolean",
    frozenset({str}): "string",
}


def _json_columns(records: list[dict[str, Any]]) -> pd.DataFrame:
    """Records of JSON values (no record type to read the dtypes from) as a frame with the
    nullable dtypes ``--frame`` gives a typed record: a column of ints ``Int64``, of numbers
    ``Float64``, of booleans ``boolean``, of text ``string`` (missing values <NA>); any other
    column (lists, objects, a mix) stays object."""
    frame = pd.DataFrame(records)
    for column in frame.columns:
        values = [r.get(column) for r in records]
        kinds = frozenset(type(v) for v in values if v is not None)
        dtype = _JSON_DTYPES.get(kinds)
        if dtype is not None:
            frame[column] = pd.Series(values, index=frame.index, dtype=object).astype(dtype)
    return frame


def result_frame(keys: list[Any], index: pd.Index, results: dict[Any, RowResult], schema: Any) -> pd.DataFrame:
    """The fleet's result: one row per key in `keys` (the input's `index`, same order).

    With a `schema`, its fields as typed columns (NA for a row without a valid answer; a
    JSON-schema dict, or ``{}`` for JSON records read back without a schema: nullable dtypes
    from the values, :func:`_json_columns`); without one, ``answer`` (string). Then
    :data:`STAT_COLUMNS` (status category, costs Float64 USD, attempts, tokens/ms/counts
    Int64, error and session_id string), and the :data:`EXTRA_DTYPES` columns some row has.
    """
    rows = [results.get(k) or RowResult(k, "skipped", "not run") for k in keys]
    if schema is not None:
        item = None if isinstance(schema, dict) else schema
        records = [_record(r.output) if r.output is not None else {} for r in rows]
        answers = to_frame(records, item) if item is not None else _json_columns(records)
    else:
        answers = pd.DataFrame({"answer": pd.Series([r.answer for r in rows], dtype="string")})
    answers.index = index
    stats = pd.DataFrame({c: [getattr(r, c) for r in rows] for c in STAT_COLUMNS}, index=index)
    for column, dtype in _DTYPES.items():
        stats[column] = stats[column].astype(dtype)
    stats["status"] = stats["status"].cat.set_categories(["done", "error", "stopped", "skipped"])
    extra = [c for c in EXTRA_DTYPES if any(c in r.extra for r in rows)]
    for column in extra:
        stats[column] = pd.Series([r.extra.get(column) for r in rows], index=index).astype(EXTRA_DTYPES[column])
    clash = [c for c in stats.columns if c in answers.columns]
    if clash:
        answers = answers.rename(columns={c: f"answer_{c}" for c in clash})
    return pd.concat([answers, stats], axis=1)
