"""What the CLI saved of a conversation: its transcript file and the running totals in it.

Claude Code writes each session to ``<config>/projects/<cwd slug>/<session_id>.jsonl``
(``<config>`` is ``$CLAUDE_CONFIG_DIR`` or ``~/.claude``). When a process ends in order it
appends a ``{"type": "cost-state", "totalCostUSD": ..., "totalAPIDuration": ...,
"modelUsage": {...}}`` line; a process started with ``--resume`` restores its cumulative
`total_cost_usd`, `duration_api_ms` and `modelUsage` from the last such line (measured on
CLI 2.1.332: DESIGN.md, "Cumulative figures survive --resume"; a process killed with
SIGKILL writes none, and the next one restores the older line). :func:`last_cost_state`
reads that line, so a resumed process's first per-turn delta is taken from what it restored.
"""

from __future__ import annotations

import glob
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kandev_nb.errors import CLIProcessError, ResumeRejectedError

if TYPE_CHECKING:
    from kandev_nb.wire.cli import LaunchOptions

__all__ = ["NO_MESSAGE", "RESUME_REJECTED", "find_transcript", "last_cost_state", "resume_rejected"]

NO_MESSAGE = "No message found with message.uuid"
"""The CLI's stderr when ``--resume-session-at`` names a message its transcript lacks."""
RESUME_REJECTED = "Resume rejected by --resume-drops-turn:"
"""The start of the CLI's stderr (and of its error result's ``errors[0]``) when
``--resume-drops-turn`` refuses a resume (CLI 2.1.332)."""


def resume_rejected(exc: CLIProcessError, options: LaunchOptions) -> CLIProcessError:
    """`exc` (the CLI exited before answering ``initialize``) as a :class:`ResumeRejectedError`
    when its stderr says ``--resume-drops-turn`` refused the resume, else `exc` itself."""
    stderr = exc.stderr or str(exc)
    if RESUME_REJECTED not in stderr:
        return exc
    reason = stderr[stderr.index(RESUME_REJECTED) + len(RESUME_REJECTED) :].strip().splitlines()[0]
    detail = reason.split(f"{options.resume_drops_turn}: ", 1)[-1]  # after "... not attributable to turn <P>: "
    message = (
        f"Claude Code refused to resume session {options.resume} dropping only the turn of prompt "
        f"{options.resume_drops_turn}: more than that turn lies after the resume point ({detail}). "
        "Nothing was dropped; resume without dropping (a plain resume, or %%claude without --retry) "
        "to go on from where the conversation is."
    )
    return ResumeRejectedError(
        message,
        exc.exit_code,
        exc.stderr,
        resume_session_at=options.resume_session_at or "",
        resume_drops_turn=options.resume_drops_turn or "",
    )


def _roots(env: Mapping[str, str]) -> set[Path]:
    merged = {**os.environ, **env}
    roots = {Path(merged.get("HOME", "~")).expanduser() / ".claude"}
    if merged.get("CLAUDE_CONFIG_DIR"):
        roots.add(Path(merged["CLAUDE_CONFIG_DIR"]).expanduser())
    return roots


def find_transcript(env: Mapping[str, str], session_id: str) -> Path | None:
    """The transcript file of `session_id` (``<config>/projects/*/<session_id>.jsonl``) for a
    CLI run with the environment `env` over ``os.environ``; None if the CLI wrote none."""
    if not session_id or "/" in session_id or "\\" in session_id or session_id in (".", ".."):
        return None  # a file name, never a path
    for root in _roots(env):
        found = next(root.glob(f"projects/*/{glob.escape(session_id)}.jsonl"), None)  # literal, not a pattern
        if found is not None:
            return found
    return None


def last_cost_state(env: Mapping[str, str], session_id: str) -> dict[str, Any] | None:
    """The last ``cost-state`` line of `session_id`'s transcript, as a dict (``totalCostUSD``
    in USD, ``totalAPIDuration`` in ms, ``modelUsage`` as in `result.modelUsage`); None
    without a transcript or such a line. Unreadable lines are skipped."""
    path = find_transcript(env, session_id)
    if path is None:
        return None
    found: dict[str, Any] | None = None
    try:
        with path.open("rb") as lines:
            for line in lines:
                if b'"cost-state"' not in line:
                    continue
                try:
                    entry = json.loads(line)
                except ValueError:
                    continue
                if isinstance(entry, dict) and entry.get("type") == "cost-state":
                    found = entry
    except OSError:
        return None
    return found
