"""Reading a session's subagent transcripts (the Agent SDK's ``list_subagents`` /
``get_subagent_messages``).

Each subagent a session starts (an Agent or Task call) has its own transcript beside the
session's: ``<config>/projects/<project key>/<session_id>/subagents/agent-<agent_id>.jsonl``
(nested folders such as ``subagents/workflows/<run>/`` are possible), with an
``agent-<agent_id>.meta.json`` sidecar: ``{"agentType", "description", "toolUseId",
"spawnDepth", "model", "finished", ...}``, whose ``toolUseId`` is the Agent call that started
it (measured on CLI 2.1.332). The same `agent_id` is on the subagent's wire messages
(`agent_id` beside `parent_tool_use_id`). Each function reads the local files of a CLI run with
`env` (``$CLAUDE_CONFIG_DIR`` or ``$HOME/.claude``), or, given `store`, a
:class:`~kandev_nb.agent.session_store.SessionStore`'s copy.

>>> list_subagents(turn.session_id)                          # doctest: +SKIP
['a4807631852980910']
>>> [m.type for m in get_subagent_messages(turn.session_id, 'a4807631852980910')]  # doctest: +SKIP
['user', 'assistant', 'user', 'assistant']
"""

from __future__ import annotations

import glob
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from kandev_nb.agent.session_store import SessionKey, SessionStore, config_dir, project_key_for_directory

__all__ = ["SessionMessage", "SubagentInfo", "get_subagent_messages", "list_subagents", "subagent_info"]


@dataclass(frozen=True)
class SessionMessage:
    """One user or assistant message of a transcript.

    Attributes:
        type: "user" (a prompt or tool results) or "assistant".
        uuid: the transcript entry's `uuid`.
        session_id: the session's id (the parent session's, for a subagent).
        message: the API message, ``{"role", "content": str | [blocks]}`` (assistant ones
            also ``"id"``, ``"model"``, ``"usage"``...), as the CLI saved it.
        parent_tool_use_id: for a subagent's message, the Agent call that started it (from
            the sidecar's ``toolUseId``); None if unknown.
        parent_agent_id: for a nested subagent, the subagent that started it.
    """

    type: Literal["user", "assistant"]
    uuid: str
    session_id: str
    message: dict[str, Any]
    parent_tool_use_id: str | None = None
    parent_agent_id: str | None = None


@dataclass(frozen=True)
class SubagentInfo:
    """What a subagent's sidecar says about it.

    Attributes:
        agent_id: its id (the wire's `agent_id`).
        tool_use_id: the Agent call that started it (``toolUseId``).
        agent_type: ``agentType`` ("general-purpose", a name of ``agents={...}``).
        description: the call's description.
        meta: the whole sidecar as the CLI wrote it.
    """

    agent_id: str
    tool_use_id: str | None
    agent_type: str | None
    description: str | None
    meta: dict[str, Any]


def _session_folders(session_id: str, env: Mapping[str, str] | None) -> list[Path]:
    if not session_id or "/" in session_id or session_id in (".", ".."):
        return []
    # a literal name, never a pattern: "*" must not list every session's subagents
    return sorted(p for p in (config_dir(env) / "projects").glob(f"*/{glob.escape(session_id)}") if p.is_dir())


def _local_files(session_id: str, env: Mapping[str, str] | None) -> dict[str, Path]:
    """agent_id -> transcript file, over every project folder holding the session."""
    found: dict[str, Path] = {}
    for folder in _session_folders(session_id, env):
        for path in sorted((folder / "subagents").rglob("agent-*.jsonl")):
            found.setdefault(path.name[len("agent-") : -len(".jsonl")], path)
    return found


def _store_keys(
    store: SessionStore, session_id: str, project_key: str | None, cwd: str | None
) -> dict[str, SessionKey]:
    keys = [project_key] if project_key else []
    if cwd is not None:
        keys.append(project_key_for_directory(cwd))
    finder = getattr(store, "find", None)
    if callable(finder):
        keys += list(finder(session_id))
    found: dict[str, SessionKey] = {}
    for key in dict.fromkeys(keys):
        for subpath in store.list_subkeys(SessionKey(key, session_id)):
            name = subpath.rsplit("/", 1)[-1]
            if subpath.startswith("subagents/") and name.startswith("agent-"):
                found.setdefault(name[len("agent-") :], SessionKey(key, session_id, subpath))
    return found


def list_subagents(
    session_id: str,
    *,
    env: Mapping[str, str] | None = None,
    store: SessionStore | None = None,
    project_key: str | None = None,
    cwd: str | None = None,
) -> list[str]:
    """The ids of the subagents session `session_id` started, sorted.

    Args:
        session_id: the parent session's id (``turn.session_id``).
        env: the environment the CLI ran with, over ``os.environ`` (``HOME``,
            ``CLAUDE_CONFIG_DIR``); the session's ``config.env``.
        store: read a :class:`~kandev_nb.agent.session_store.SessionStore` instead of the
            local files; the session is looked up under `project_key`, the key of `cwd`, and
            any key the store's ``find`` names.
        project_key, cwd: where the store keeps the session (see `store`).

    Returns:
        [] when the session or its subagents are not found.
    """
    if store is not None:
        return sorted(_store_keys(store, session_id, project_key, cwd))
    return sorted(_local_files(session_id, env))


def _split(entries: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
    meta = [e for e in entries if e.get("type") == "agent_metadata"]
    sidecar = {k: v for k, v in meta[-1].items() if k != "type"} if meta else None
    return [e for e in entries if e.get("type") != "agent_metadata"], sidecar


def _load(
    session_id: str, agent_id: str, env: Mapping[str, str] | None, store: SessionStore | None, **where: Any
) -> tuple[list[dict[str, Any]], dict[str, Any] | None] | None:
    if store is not None:
        key = _store_keys(store, session_id, where.get("project_key"), where.get("cwd")).get(agent_id)
        return _split(store.load(key) or []) if key is not None else None
    path = _local_files(session_id, env).get(agent_id)
    if path is None:
        return None
    entries = [e for e in (_json(line) for line in path.read_text(encoding="utf-8").splitlines()) if e is not None]
    sidecar = path.with_name(path.name[: -len(".jsonl")] + ".meta.json")
    meta = _json(sidecar.read_text(encoding="utf-8")) if sidecar.is_file() else None
    return entries, meta


def _json(text: str) -> dict[str, Any] | None:
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def subagent_info(
    session_id: str,
    agent_id: str,
    *,
    env: Mapping[str, str] | None = None,
    store: SessionStore | None = None,
    project_key: str | None = None,
    cwd: str | None = None,
) -> SubagentInfo | None:
    """What subagent `agent_id` of session `session_id` is (its sidecar); None if not found.
    Arguments as :func:`list_subagents`."""
    loaded = _load(session_id, agent_id, env, store, project_key=project_key, cwd=cwd)
    if loaded is None:
        return None
    meta = loaded[1] or {}

    def text(name: str) -> str | None:
        value = meta.get(name)
        return value if isinstance(value, str) else None

    return SubagentInfo(agent_id, text("toolUseId"), text("agentType"), text("description"), meta)


def get_subagent_messages(
    session_id: str,
    agent_id: str,
    *,
    env: Mapping[str, str] | None = None,
    store: SessionStore | None = None,
    project_key: str | None = None,
    cwd: str | None = None,
    limit: int | None = None,
    offset: int = 0,
) -> list[SessionMessage]:
    """The user and assistant messages of subagent `agent_id`, in order: its prompt, each
    answer and tool results, its final report.

    The chain is the transcript's: from its last user/assistant entry back along
    ``parentUuid`` (entries off that chain, and ``attachment``/bookkeeping entries, are
    left out). Each message's `parent_tool_use_id` is the sidecar's ``toolUseId``.

    Args:
        session_id, agent_id: the parent session and the subagent (:func:`list_subagents`).
        env, store, project_key, cwd: where to read, as :func:`list_subagents`.
        limit: at most this many messages (None: all); offset: skip this many first.

    Returns:
        [] when the subagent is not found or its transcript has no messages.
    """
    loaded = _load(session_id, agent_id, env, store, project_key=project_key, cwd=cwd)
    if loaded is None:
        return []
    entries, meta = loaded
    meta = meta or {}
    tool_use_id, parent_agent = meta.get("toolUseId"), meta.get("parentAgentId")
    by_uuid = {e["uuid"]: e for e in entries if isinstance(e.get("uuid"), str)}
    leaf = next((e for e in reversed(entries) if e.get("type") in ("user", "assistant")), None)
    chain: list[dict[str, Any]] = []
    seen: set[str] = set()
    while leaf is not None and isinstance(leaf.get("uuid"), str) and leaf["uuid"] not in seen:
        seen.add(leaf["uuid"])
        chain.append(leaf)
        parent = leaf.get("parentUuid")
        leaf = by_uuid.get(parent) if isinstance(parent, str) else None
    messages = [
        SessionMessage(
            type=e["type"],
            uuid=e["uuid"],
            session_id=str(e.get("sessionId") or session_id),
            message=e["message"] if isinstance(e.get("message"), dict) else {},
            parent_tool_use_id=tool_use_id if isinstance(tool_use_id, str) else None,
            parent_agent_id=parent_agent if isinstance(parent_agent, str) else None,
        )
        for e in reversed(chain)
        if e.get("type") in ("user", "assistant")
    ]
    return messages[offset : offset + limit] if limit is not None else messages[offset:]
