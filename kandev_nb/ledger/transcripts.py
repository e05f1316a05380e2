"""The CLI's saved conversations as a DataFrame: what ``--resume`` picks from.

Claude Code writes each conversation to ``<config>/projects/<project>/<session_id>.jsonl``
(``<config>`` is ``$CLAUDE_CONFIG_DIR``, else ``~/.claude``; ``<project>`` is the cwd with
every character outside ``[A-Za-z0-9]`` replaced by ``-``). Each line is one JSON record
with a `type` ("user", "assistant", "summary", "queue-operation", ...), a `timestamp` and
the `cwd`. :func:`claude_sessions` reads those files; a file that cannot be read or holds no
conversation is skipped and counted (``frame.attrs["skipped"]``).
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["COLUMNS", "claude_sessions", "config_dir", "project_dir", "read_transcript"]

COLUMNS = (
    "session_id",
    "title",
    "first_prompt",
    "started",
    "last_active",
    "turns",
    "cwd",
    "path",
    "cost_usd",
    "input_tokens",
    "output_tokens",
    "ledger_turns",
)
"""The columns of :func:`claude_sessions`, in order."""

_TITLE_KEYS = {"custom-title": "customTitle", "summary": "summary", "ai-title": "aiTitle"}


def config_dir(env: Mapping[str, str] | None = None) -> Path:
    """The CLI's config directory: ``CLAUDE_CONFIG_DIR`` of `env` (default: ours), else ``$HOME/.claude``."""
    env = {**os.environ, **(env or {})}
    if env.get("CLAUDE_CONFIG_DIR"):
        return Path(env["CLAUDE_CONFIG_DIR"]).expanduser()
    return Path(env.get("HOME") or "~").expanduser() / ".claude"


def project_dir(cwd: str | os.PathLike[str], config: Path) -> Path:
    """Where the CLI keeps the transcripts of project `cwd` (the cwd, resolved, with
    ``[^A-Za-z0-9]`` replaced by ``-``)."""
    return config / "projects" / re.sub(r"[^A-Za-z0-9]", "-", str(Path(cwd).expanduser().resolve()))


def _prompt_text(message: Any) -> str | None:
    """The text of a user prompt (None for tool results and other non-prompts)."""
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        if any(isinstance(b, dict) and b.get("type") == "tool_result" for b in content):
            return None
        texts = [str(b.get("text", "")) for b in content if isinstance(b, dict) and b.get("type") == "text"]
        return "\n".join(texts) if texts else None
    return None


def _when(value: Any) -> dt.datetime | None:
    if not isinstance(value, str):
        return None
    try:
        return dt.datetime.fromisoformat(value)  # 3.11 reads the trailing "Z"
    except ValueError:
        return None


def read_transcript(path: Path) -> dict[str, Any] | None:
    """One transcript's row (without the ledger columns), or None if it holds no prompt.

    Raises:
        OSError, UnicodeDecodeError: the file cannot be read. Lines that are not JSON
            objects are ignored.
    """
    title: str | None = None
    first: str | None = None
    turns = 0
    started = last = None
    cwd = None
    session_id = path.stem
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if not isinstance(record, dict):
                continue
            kind = record.get("type")
            if kind in _TITLE_KEYS and isinstance(record.get(_TITLE_KEYS[kind]), str):
                title = record[_TITLE_KEYS[kind]] if kind == "custom-title" or title is None else title
            if kind not in ("user", "assistant"):
                continue
            when = _when(record.get("timestamp"))
            if when is not None:
                started = when if started is None or when < started else started
                last = when if last is None or when > last else last
            cwd = cwd or record.get("cwd")
            session_id = str(record.get("sessionId") or session_id)
            if kind == "user" and not record.get("isMeta") and not record.get("isSidechain"):
                text = _prompt_text(record.get("message"))
                if text is not None:
                    turns += 1
                    first = first if first is not None else text
    if turns == 0:
        return None
    lines = (first or "").strip().splitlines()
    return {
        "session_id": session_id,
        "title": title or (lines[0][:120] if lines else None),
        "first_prompt": first,
        "started": started,
        "last_active": last,
        "turns": turns,
        "cwd": cwd,
        "path": str(path),
    }


def claude_sessions(
    cwd: str | os.PathLike[str] | None = None, *, config: Path | None = None, ledger: Any = None
) -> pd.DataFrame:
    """The CLI's saved conversations of project `cwd` (default: the current directory),
    newest activity first.

    Args:
        cwd: the project directory whose transcripts to list.
        config: the CLI's config directory (default :func:`config_dir`).
        ledger: a :class:`~kandev_nb.ledger.RunLedger` to join cost and tokens from
            (default: the default ledger; None found or failing: those columns are NaN).

    Returns:
        A DataFrame with :data:`COLUMNS`: `session_id`; `title` (the transcript's custom
        title or summary, else the first prompt's first line); `first_prompt`; `started`,
        `last_active` (UTC datetimes from the records' `timestamp`); `turns` (prompts sent,
        tool results and meta lines not counted); `cwd`; `path` (the .jsonl file);
        `cost_usd` (USD), `input_tokens`, `output_tokens` and `ledger_turns` summed over the
        ledger's rows with that `session_id`. ``frame.attrs["skipped"]`` counts the files
        that could not be read or held no prompt.
    """
    import pandas as pd

    folder = project_dir(cwd or os.getcwd(), config or config_dir())
    rows: list[dict[str, Any]] = []
    skipped = 0
    for path in sorted(folder.glob("*.jsonl")) if folder.is_dir() else []:
        try:
            row = read_transcript(path)
        except (OSError, UnicodeDecodeError):
            row = None
        if row is None:
            skipped += 1
        else:
            rows.append(row)
    frame = pd.DataFrame(rows, columns=list(COLUMNS[:8]))
    frame["started"] = pd.to_datetime(frame["started"], utc=True)
    frame["last_active"] = pd.to_datetime(frame["last_active"], utc=True)
    frame["turns"] = frame["turns"].astype("Int64")
    frame = frame.join(_ledger_totals(ledger, list(frame["session_id"])), on="session_id")
    frame = frame.sort_values("last_active", ascending=False, ignore_index=True)
    frame.attrs["skipped"] = skipped
    return frame[list(COLUMNS)]


def _ledger_totals(ledger: Any, session_ids: list[str]) -> pd.DataFrame:
    """Cost and tokens per session_id from the ledger's turns (empty on any failure)."""
    import pandas as pd

    empty = pd.DataFrame(
        columns=["cost_usd", "input_tokens", "output_tokens", "ledger_turns"], index=pd.Index([], name="session_id")
    )
    if not session_ids:
        return empty
    try:
        if ledger is None:
            from kandev_nb.ledger import default_ledger

            ledger = default_ledger()
        runs = ledger.runs()
    except Exception:  # noqa: BLE001 - no ledger: the transcripts alone
        return empty
    if runs.empty:
        return empty
    runs = runs[runs["session_id"].isin(session_ids)]
    grouped = runs.groupby("session_id")
    out = grouped[["cost_usd", "input_tokens", "output_tokens"]].sum()
    out["ledger_turns"] = grouped.size()
    return out
