"""What an allow binds to: the exact payload its approval card showed (issue 23, points 1 and 3).

A person who clicks Allow on a `can_use_tool` card approves what the card displayed: the
source of the cell `run_cell` will run, the cell `edit_cell` replaces and the source it puts
there, the code of `run_code`. Between the card and the `tools/call` that acts, the notebook
can change (another subagent's allowed `edit_cell`, the person typing, a collaborator, a cell
inserted above the one an ``index`` named). So the broker records a :class:`BoundPayload` with
each allowed approval, keyed by its `tool_use_id`, and the tool compares what it is about to
do with it (:func:`check`) right before acting: anything different is refused, with a text
that tells the agent why and what to do next.

For the CLI's own tools (Bash, Write, Edit...) the binding is the input sent back as the
control_response's `updatedInput`, which the CLI runs as it is: :attr:`BoundPayload.input`.

Pure: no I/O, no kandev_nb imports; the broker (``kandev_nb.agent.approvals``) builds the
records, the kernel tools (``kandev_nb.kernel_tools``) check them. The record travels with the
`tools/call` as ``params._meta[META_KEY]`` (:meth:`BoundPayload.to_meta`), which the broker
sets or removes on every call it lets through, so a peer cannot bring its own.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = ["CELL_TOOLS", "META_KEY", "BoundPayload", "Shown", "check"]

META_KEY = "kandev_nb/bound"
"""The `tools/call` ``params._meta`` key the binding travels under (broker -> kernel tools)."""

CELL_TOOLS = {"run_cell": "running", "edit_cell": "replacing", "delete_cell": "deleting"}
"""The kernel server's tools that act on one existing cell, and the verb for their messages."""

PREVIEW_CHARS = 600
"""A source quoted in a refusal is cut to this many characters (head and tail)."""


@dataclass(frozen=True)
class Shown:
    """What an approval card showed, or what a tool is about to do (the same fields, so that
    :func:`check` compares like with like). None: not shown / not part of this tool.

    Attributes:
        cell_id: the cell's nbformat `id` (run/edit/delete: resolved when the card was built,
            also when the call named an ``index``).
        index: the cell's 0-based position then (for messages only: a cell may move).
        source: run/delete: the cell's source; edit: the source it replaces.
        new_source: edit/insert: the new source (the call's input ``source``).
        code: run_code: the code (input ``code``).
    """

    cell_id: str | None = None
    index: int | None = None
    source: str | None = None
    new_source: str | None = None
    code: str | None = None


@dataclass(frozen=True)
class BoundPayload:
    """One allowed approval and the exact payload its card showed.

    Attributes:
        tool_use_id: the call's `tool_use_id` (can_use_tool ``tool_use_id``, the `tools/call`
            ``params._meta["claudecode/toolUseId"]``).
        tool_name: the full tool name (``mcp__kernel__run_cell``, ``Bash``...).
        shown: what the card displayed (see :class:`Shown`).
        input: the tool input allowed: the person's edited input if any, else the request's
            `input`; sent back to the CLI as `updatedInput`.
    """

    tool_use_id: str
    tool_name: str
    shown: Shown
    input: dict[str, Any] = field(default_factory=dict, compare=False)

    @property
    def short_name(self) -> str:
        """The tool name without its ``mcp__<server>__`` prefix (``run_cell``)."""
        return self.tool_name.rsplit("__", 1)[-1] if self.tool_name.startswith("mcp__") else self.tool_name

    @property
    def digest(self) -> str:
        """sha256 (hex) of the tool name, what was shown and the input, as canonical JSON."""
        blob = json.dumps([self.tool_name, asdict(self.shown), self.input], sort_keys=True, default=str)
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()

    def to_meta(self) -> dict[str, Any]:
        """The record as a JSON object, for ``params._meta[META_KEY]``."""
        return {
            "tool_use_id": self.tool_use_id,
            "tool_name": self.tool_name,
            "shown": asdict(self.shown),
            "input": self.input,
            "digest": self.digest,
        }

    @classmethod
    def from_meta(cls, raw: Any) -> BoundPayload:
        """The record :meth:`to_meta` made.

        Raises:
            TypeError: `raw` is not such a record.
            ValueError: its digest does not match its fields.
        """
        if not isinstance(raw, dict) or not isinstance(raw.get("shown"), dict):
            raise TypeError(f"not a bound payload: {raw!r:.200}")
        shown = raw["shown"]
        try:
            bound = cls(
                tool_use_id=str(raw["tool_use_id"]),
                tool_name=str(raw["tool_name"]),
                shown=Shown(**{k: shown.get(k) for k in Shown.__dataclass_fields__}),
                input=dict(raw.get("input") or {}),
            )
        except (KeyError, TypeError) as exc:
            raise TypeError(f"not a bound payload: {exc}") from exc
        if raw.get("digest") != bound.digest:
            raise ValueError("bound payload's digest does not match its fields")
        return bound


def _quote(text: str) -> str:
    if len(text) <= PREVIEW_CHARS:
        return text
    half = PREVIEW_CHARS // 2
    return f"{text[:half]}\n[... {len(text) - 2 * half} characters ...]\n{text[-half:]}"


def _where(shown: Shown) -> str:
    at = f"cell {shown.index}" if shown.index is not None else "the cell"
    return f"{at} (id {shown.cell_id})" if shown.cell_id else at


_AGAIN = "Nothing was done. Read the notebook again (read_notebook) and ask again."


def check(bound: BoundPayload, now: Shown) -> str | None:
    """Whether what a tool is about to do is what the person approved.

    Args:
        bound: the approval's record.
        now: what the tool is about to do: for run/edit/delete the cell it resolved in the
            tab now (`cell_id`, `index`, `source`) and for edit the call's new `source`; for
            insert the new source; for run_code the code.

    Returns:
        None when it matches; else the refusal sent to the agent as the `tool_result`
        (``run_cell refused: cell 1 (id ...) changed after you asked: ...``), which also shows
        on the tool card.
    """
    name, was = bound.short_name, bound.shown
    if name in CELL_TOOLS:
        if was.cell_id is None or was.source is None:
            return (
                f"{name} refused: the approval card could not show the cell's source (the notebook tab "
                f"did not answer and you had not read that cell), so the person did not see what they "
                f"allowed. {_AGAIN}"
            )
        if now.cell_id != was.cell_id:
            where = f"the cell at index {now.index}" if now.index is not None else "the cell the call names"
            return (
                f"{name} refused: {where} is cell {now.cell_id}, not the cell the person approved "
                f"({_where(was)}, holding:\n{_quote(was.source)}\n); the notebook changed after you asked "
                f"(a cell inserted or deleted above it?). {_AGAIN}"
            )
        if now.source != was.source:
            return (
                f"{name} refused: {_where(now)} changed after you asked: the person approved "
                f"{CELL_TOOLS[name]} this source:\n{_quote(was.source)}\nbut the cell now holds:\n"
                f"{_quote(now.source or '')}\n{_AGAIN}"
            )
    if was.new_source is not None and now.new_source != was.new_source:
        return f"{name} refused: the new source is not the one the person approved:\n{_quote(was.new_source)}\n{_AGAIN}"
    if was.code is not None and now.code != was.code:
        return f"{name} refused: the code is not the code the person approved:\n{_quote(was.code)}\nAsk again."
    return None
