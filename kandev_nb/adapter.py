"""Wire messages -> AgentEvents: the seed adapter's rules, sans I/O.

:class:`Adapter` holds a session's state (pending tools, UUIDs, cumulative totals, todos,
context window) and turns each parsed wire message into zero or more events with
:meth:`Adapter.handle`. It never raises on odd input and never imports widgets.

The rules, each from the seed or the real wire (DESIGN.md):

- Text exactly once per turn: from `stream_event` deltas when they come, else from
  `assistant` lines (an API message whose text was streamed is not shown again), and from
  `result.result` only when nothing was shown this turn.
- A `tool_use` becomes a `tool_call` (running); each `tool_result` for it a `tool_update`,
  the last one winning; tools still pending at the `result` are completed then.
- Assistant UUIDs stay pending until a successful `result` commits them; user UUIDs commit
  at once. `Complete.last_message_uuid` is the resume point for `--resume-session-at`.
- Context window: used = input + output + cache tokens of the latest main-thread assistant
  message; size from the result's `modelUsage[model].contextWindow` (default 200,000).
- Per-turn cost and model usage are differences of the CLI's cumulative figures.
"""

from __future__ import annotations

import re
from typing import Any

from kandev_nb import events as ev
from kandev_nb.protocol import (
    AssistantMessage,
    ControlCancelRequest,
    ControlRequest,
    ControlResponse,
    InvalidLine,
    KeepAlive,
    RateLimitEvent,
    ResultMessage,
    StreamEvent,
    SystemMessage,
    UnknownMessage,
    UserMessage,
    WireMessage,
)
from kandev_nb.tools import (
    CreateTask,
    ManageTodos,
    NormalizedPayload,
    TodoItem,
    normalize_tool_call,
    normalize_tool_result,
    tool_result_text,
    tool_title,
)

__all__ = ["DEFAULT_CONTEXT_WINDOW", "Adapter"]

DEFAULT_CONTEXT_WINDOW = 200_000

_IGNORED_SYSTEM = frozenset(
    {"status", "thinking_tokens", "hook_started", "hook_progress", "hook_response", "permission_denied",
     "informational", "local_command_output", "files_persisted", "session_state_changed"}
)
_LOCAL_OUTPUT = re.compile(r"<local-command-std(?:out|err)>(.*?)</local-command-std(?:out|err)>", re.S)


def _usage_total(usage: dict[str, Any] | None) -> int:
    if not usage:
        return 0
    return sum(
        int(usage.get(key) or 0)
        for key in ("input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
    )


class Adapter:
    """The per-session state machine from wire messages to AgentEvents.

    Args:
        resumed: the session was started with ``--resume`` (first `session_status` says so).

    Attributes:
        session_id: from the latest message that carried one.
        last_message_uuid: the last committed message UUID (resume point).
        todos: the current task list, in order (replace-all semantics).
        tool_calls: every tool payload of the session by `tool_use_id` (latest wins).
    """

    def __init__(self, *, resumed: bool = False) -> None:
        self.resumed = resumed
        self.session_id: str | None = None
        self.last_message_uuid: str | None = None
        self.permission_mode: str | None = None
        self.todos: dict[str, TodoItem] = {}
        self.tool_calls: dict[str, NormalizedPayload] = {}
        self.tool_names: dict[str, str] = {}
        self.main_model: str | None = None
        self.context_size = DEFAULT_CONTEXT_WINDOW
        self.context_used = 0
        self._announced = False
        self._pending_tools: dict[str, str] = {}  # tool_use_id -> name, awaiting a tool_result
        self._pending_assistant_uuid: str | None = None
        self._shown_text = False
        self._streamed: set[tuple[str | None, str]] = set()  # (parent, message id) streamed
        self._current_msg: dict[str | None, str] = {}  # parent -> message id being streamed
        self._usage_msgs: set[str] = set()
        self._prev_total_cost = 0.0
        self._prev_model_usage: dict[str, dict[str, float]] = {}

    # -- public -------------------------------------------------------------------------

    def new_process(self) -> None:
        """A new CLI process took over the session: its cumulative totals start at zero."""
        self._prev_total_cost = 0.0
        self._prev_model_usage = {}
        self._announced = False
        self.resumed = True

    def handle(self, msg: WireMessage) -> list[ev.AgentEvent]:
        """Events for one wire message (possibly none). Never raises on odd content."""
        sid = getattr(msg, "session_id", None)
        if sid:
            self.session_id = sid
        match msg:
            case StreamEvent():
                return self._stream_event(msg)
            case AssistantMessage():
                return self._assistant(msg)
            case UserMessage():
                return self._user(msg)
            case ResultMessage():
                return self._result(msg)
            case SystemMessage():
                return self._system(msg)
            case RateLimitEvent():
                raw = msg.model_dump()
                info = raw.get("rate_limit_info") or raw
                text = str(info.get("message") or info.get("status") or "rate limited")
                return [ev.RateLimit(message=text, info=info, session_id=self.session_id)]
            case KeepAlive():
                return []
            case UnknownMessage():
                return [ev.Unknown(raw=msg.raw, reason=msg.reason, session_id=self.session_id)]
            case InvalidLine():
                return [ev.Unknown(raw={"line": msg.text}, reason=f"not JSON: {msg.error}", session_id=self.session_id)]
            case ControlRequest() | ControlResponse() | ControlCancelRequest():
                return []  # the control plane owns these
        return [ev.Unknown(raw={"repr": repr(msg)[:1000]}, reason="unhandled message")]

    def tool_payload(self, tool_name: str, tool_input: dict[str, Any], tool_use_id: str | None) -> NormalizedPayload:
        """The payload of a tool the CLI asks permission for (known call, else normalised now)."""
        if tool_use_id and tool_use_id in self.tool_calls:
            return self.tool_calls[tool_use_id]
        return normalize_tool_call(tool_name, tool_input)

    # -- per message type ---------------------------------------------------------------

    def _ids(self, msg: StreamEvent | AssistantMessage | UserMessage) -> dict[str, Any]:
        return {"session_id": self.session_id, "parent_tool_use_id": msg.parent_tool_use_id}

    def _stream_event(self, msg: StreamEvent) -> list[ev.AgentEvent]:
        event = msg.event
        kind = event.get("type")
        parent = msg.parent_tool_use_id
        if kind == "content_block_delta":
            delta = event.get("delta") or {}
            dtype = delta.get("type")
            if dtype == "text_delta" and delta.get("text"):
                self._mark_streamed(parent)
                if parent is None:
                    self._shown_text = True
                return [ev.MessageChunk(text=delta["text"], **self._ids(msg))]
            if dtype == "thinking_delta" and delta.get("thinking"):
                self._mark_streamed(parent)
                return [ev.Reasoning(text=delta["thinking"], **self._ids(msg))]
            return []
        if kind == "message_start":
            message = event.get("message") or {}
            if message.get("id"):
                self._current_msg[parent] = str(message["id"])
        return []

    def _mark_streamed(self, parent: str | None) -> None:
        mid = self._current_msg.get(parent)
        if mid:
            self._streamed.add((parent, mid))

    def _assistant(self, msg: AssistantMessage) -> list[ev.AgentEvent]:
        message = msg.message
        parent = msg.parent_tool_use_id
        mid = str(message.get("id") or "")
        streamed = (parent, mid) in self._streamed
        out: list[ev.AgentEvent] = []
        if parent is None:
            if msg.uuid:
                self._pending_assistant_uuid = msg.uuid
            model = message.get("model")
            if isinstance(model, str) and model != "<synthetic>" and self.main_model is None:
                self.main_model = model
            usage = message.get("usage")
            if isinstance(usage, dict) and mid not in self._usage_msgs:
                self._usage_msgs.add(mid)
                self.context_used = _usage_total(usage)
                out.append(ev.ContextWindow(size=self.context_size, used=self.context_used, session_id=self.session_id))
        content = message.get("content")
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        for block in content if isinstance(content, list) else []:
            if not isinstance(block, dict):
                continue
            btype = block.get("type")
            if btype == "text" and block.get("text") and not streamed:
                if parent is None:
                    self._shown_text = True
                out.append(ev.MessageChunk(text=str(block["text"]), **self._ids(msg)))
            elif btype == "thinking" and block.get("thinking") and not streamed:
                out.append(ev.Reasoning(text=str(block["thinking"]), **self._ids(msg)))
            elif btype in ("tool_use", "server_tool_use", "mcp_tool_use"):
                out.extend(self._tool_use(block, msg))
        if msg.error and not out:
            out.append(ev.Unknown(raw=msg.model_dump(), reason=f"assistant error: {msg.error}", session_id=self.session_id))
        return out

    def _tool_use(self, block: dict[str, Any], msg: AssistantMessage) -> list[ev.AgentEvent]:
        tool_id = str(block.get("id") or "")
        name = str(block.get("name") or "unknown")
        tool_input = block.get("input") if isinstance(block.get("input"), dict) else {}
        if tool_id in self.tool_calls and tool_id not in self._pending_tools:
            return []  # already completed; a repeated assistant line changes nothing
        payload = normalize_tool_call(name, tool_input)
        self.tool_calls[tool_id] = payload
        self.tool_names[tool_id] = name
        self._pending_tools[tool_id] = name
        return [
            ev.ToolCall(
                tool_call_id=tool_id,
                tool_name=name,
                title=tool_title(name, payload),
                normalized=payload,
                input=tool_input,
                **self._ids(msg),
            )
        ]

    def _user(self, msg: UserMessage) -> list[ev.AgentEvent]:
        if msg.uuid and msg.parent_tool_use_id is None and not msg.isReplay:
            self.last_message_uuid = msg.uuid
        content = msg.message.get("content")
        out: list[ev.AgentEvent] = []
        if isinstance(content, str):
            for match in _LOCAL_OUTPUT.finditer(content):
                if match.group(1).strip():
                    self._shown_text = True
                    out.append(ev.MessageChunk(text=match.group(1), **self._ids(msg)))
            return out
        blocks = [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []
        results = [b for b in blocks if b.get("type") == "tool_result"]
        for block in results:
            out.extend(self._tool_result(block, msg, msg.tool_use_result if len(results) == 1 else None))
        return out

    def _tool_result(self, block: dict[str, Any], msg: UserMessage, structured: Any) -> list[ev.AgentEvent]:
        tool_id = str(block.get("tool_use_id") or "")
        is_error = bool(block.get("is_error"))
        name = self.tool_names.get(tool_id, "unknown")
        call = self.tool_calls.get(tool_id) or normalize_tool_call(name, {})
        # Enrich the original call, not a previous result: a repeated result replaces it.
        payload = normalize_tool_result(call, block.get("content"), is_error, structured)
        self._pending_tools.pop(tool_id, None)
        out: list[ev.AgentEvent] = [
            ev.ToolUpdate(
                tool_call_id=tool_id,
                tool_name=name,
                status="error" if is_error else "complete",
                normalized=payload,
                output=tool_result_text(block.get("content")),
                **self._ids(msg),
            )
        ]
        if not is_error:
            todos = self._update_todos(name, call, payload, structured)
            if todos is not None:
                out.append(ev.Todos(items=todos, session_id=self.session_id))
        return out

    def _update_todos(
        self, name: str, call: NormalizedPayload, result: NormalizedPayload, structured: Any
    ) -> tuple[TodoItem, ...] | None:
        if isinstance(call, ManageTodos) and call.operation == "replace":
            self.todos = {item.id: item for item in call.items}
        elif isinstance(result, ManageTodos) and result.operation == "list" and result.items:
            self.todos = {item.id: item for item in result.items}
        elif isinstance(call, ManageTodos) and call.operation == "update" and call.items:
            update = call.items[0]
            old = self.todos.get(update.id)
            if old is None:
                self.todos[update.id] = update
            else:
                changes: dict[str, Any] = {"status": update.status}
                if update.description:
                    changes["description"] = update.description
                self.todos[update.id] = old.model_copy(update=changes)
        elif isinstance(result, CreateTask):
            task_id = result.task_id or str(len(self.todos) + 1)
            self.todos[task_id] = TodoItem(id=task_id, description=result.title)
        else:
            return None
        return tuple(self.todos.values())

    def _system(self, msg: SystemMessage) -> list[ev.AgentEvent]:
        data = msg.model_dump()
        subtype = msg.subtype
        if subtype == "init":
            out: list[ev.AgentEvent] = []
            mode = data.get("permissionMode")
            if isinstance(mode, str):
                self.permission_mode = mode
            if not self._announced:
                self._announced = True
                out.append(
                    ev.SessionStatus(
                        status="resumed" if self.resumed else "new",
                        model=data.get("model"),
                        cwd=data.get("cwd"),
                        tools=tuple(str(t) for t in data.get("tools") or ()),
                        permission_mode=mode if isinstance(mode, str) else None,
                        cli_version=data.get("claude_code_version"),
                        session_id=self.session_id,
                    )
                )
            return out
        if subtype == "status":
            mode = data.get("permissionMode")
            if isinstance(mode, str) and mode != self.permission_mode:
                self.permission_mode = mode
                return [ev.SessionMode(mode=mode, session_id=self.session_id)]
            return []
        if subtype == "api_retry":
            return [
                ev.ApiRetry(
                    attempt=data.get("attempt"),
                    max_retries=data.get("max_retries"),
                    status=data.get("error_status"),
                    delay_ms=int(data["retry_delay_ms"]) if isinstance(data.get("retry_delay_ms"), int | float) else None,
                    error=str(data.get("error")) if data.get("error") is not None else None,
                    session_id=self.session_id,
                )
            ]
        if subtype == "compact_boundary":
            meta = data.get("compact_metadata") or {}
            return [ev.CompactBoundary(trigger=meta.get("trigger"), pre_tokens=meta.get("pre_tokens"), session_id=self.session_id)]
        if subtype in ("task_started", "task_updated", "task_progress", "task_notification"):
            phase = {"task_started": "started", "task_notification": "ended"}.get(subtype, "progress")
            return [
                ev.SubagentTask(
                    phase=phase,  # type: ignore[arg-type]
                    task_id=data.get("task_id"),
                    description=data.get("description") or data.get("summary"),
                    status=data.get("status"),
                    data=data,
                    parent_tool_use_id=data.get("tool_use_id"),
                    session_id=self.session_id,
                )
            ]
        if subtype in _IGNORED_SYSTEM:
            return []
        return [ev.Unknown(raw=data, reason=f"unknown system subtype {subtype!r}", session_id=self.session_id)]

    def _result(self, msg: ResultMessage) -> list[ev.AgentEvent]:
        out: list[ev.AgentEvent] = []
        for tool_id, name in list(self._pending_tools.items()):
            payload = self.tool_calls.get(tool_id) or normalize_tool_call(name, {})
            out.append(
                ev.ToolUpdate(
                    tool_call_id=tool_id, tool_name=name, status="complete", normalized=payload,
                    auto_completed=True, session_id=self.session_id,
                )
            )
        self._pending_tools.clear()
        model_usage = self._model_usage_delta(msg.modelUsage or {})
        if self.main_model:
            for name, usage in (msg.modelUsage or {}).items():
                if name.startswith(self.main_model) and isinstance(usage, dict) and usage.get("contextWindow"):
                    self.context_size = int(usage["contextWindow"])
        if model_usage or msg.usage:
            out.append(ev.ContextWindow(size=self.context_size, used=self.context_used, session_id=self.session_id))
        if msg.result and not self._shown_text and not msg.is_error:
            out.append(ev.MessageChunk(text=msg.result, session_id=self.session_id))
        if not msg.is_error and self._pending_assistant_uuid:
            self.last_message_uuid = self._pending_assistant_uuid
        self._pending_assistant_uuid = None
        stats = self._stats(msg, model_usage)
        if msg.is_error:
            errors = [str(e) for e in msg.errors or []]
            message = msg.result or "; ".join(errors) or f"turn failed ({msg.subtype})"
            out.append(
                ev.Error(
                    message=message, subtype=msg.subtype, api_error_status=msg.api_error_status,
                    session_id=self.session_id,
                )
            )
        out.append(ev.Complete(stats=stats, last_message_uuid=self.last_message_uuid, session_id=self.session_id))
        self._shown_text = False
        self._streamed.clear()
        self._current_msg.clear()
        self._usage_msgs.clear()
        return out

    def _model_usage_delta(self, cumulative: dict[str, Any]) -> dict[str, ev.ModelUsage]:
        fields = {
            "input_tokens": "inputTokens",
            "output_tokens": "outputTokens",
            "cache_read_input_tokens": "cacheReadInputTokens",
            "cache_creation_input_tokens": "cacheCreationInputTokens",
            "cost_usd": "costUSD",
        }
        out: dict[str, ev.ModelUsage] = {}
        for model, usage in cumulative.items():
            if not isinstance(usage, dict):
                continue
            prev = self._prev_model_usage.get(model, {})
            now = {ours: float(usage.get(theirs) or 0) for ours, theirs in fields.items()}
            delta = {k: max(v - prev.get(k, 0.0), 0.0) for k, v in now.items()}
            self._prev_model_usage[model] = now
            if any(delta.values()):
                out[model] = ev.ModelUsage(
                    input_tokens=int(delta["input_tokens"]),
                    output_tokens=int(delta["output_tokens"]),
                    cache_read_input_tokens=int(delta["cache_read_input_tokens"]),
                    cache_creation_input_tokens=int(delta["cache_creation_input_tokens"]),
                    cost_usd=delta["cost_usd"],
                    context_window=usage.get("contextWindow"),
                )
        return out

    def _stats(self, msg: ResultMessage, model_usage: dict[str, ev.ModelUsage]) -> ev.TurnStats:
        usage = msg.usage or {}
        total = float(msg.total_cost_usd or 0.0)
        cost = max(total - self._prev_total_cost, 0.0)
        self._prev_total_cost = max(total, self._prev_total_cost)
        return ev.TurnStats(
            session_id=msg.session_id or self.session_id,
            result_subtype=msg.subtype,
            is_error=msg.is_error,
            cost_usd=round(cost, 10),
            total_cost_usd=total,
            duration_ms=msg.duration_ms,
            duration_api_ms=msg.duration_api_ms,
            num_turns=msg.num_turns,
            input_tokens=int(usage.get("input_tokens") or 0),
            output_tokens=int(usage.get("output_tokens") or 0),
            cache_read_input_tokens=int(usage.get("cache_read_input_tokens") or 0),
            cache_creation_input_tokens=int(usage.get("cache_creation_input_tokens") or 0),
            model_usage=model_usage,
            permission_denials=tuple(d for d in msg.permission_denials or () if isinstance(d, dict)),
            stop_reason=msg.stop_reason,
            terminal_reason=msg.terminal_reason,
            api_error_status=msg.api_error_status,
            errors=tuple(str(e) for e in msg.errors or ()),
            result_text=msg.result,
        )
