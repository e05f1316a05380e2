"""Wire messages -> AgentEvents: the seed adapter's rules, sans I/O.

:class:`Adapter` holds a session's state (pending tools, UUIDs, cumulative totals, todos,
context window) and turns each parsed wire message into zero or more events with
:meth:`Adapter.handle`. It never raises, whatever it is fed, and never imports widgets.

The rules, each from the seed or the real wire (DESIGN.md, "Wire facts"):

- Text exactly once per turn: from `stream_event` deltas when they come, else from the
  `assistant` lines (a block whose deltas were streamed is not shown again), and
  `result.result` only when no main-thread text was shown this turn.
- A `tool_use` becomes a `tool_call` (running); each `tool_result` for it a `tool_update`,
  the last one winning; tools still pending when the `result` arrives are completed then.
- Assistant UUIDs stay pending until a successful `result` commits them; user UUIDs
  commit at once. `Complete.last_message_uuid` is the resume point for
  ``--resume <session> --resume-session-at <uuid>``.
- Context window: used = input + output + cache tokens of the latest main-thread API
  message (final figures from `message_delta` when streaming); size from the result's
  `modelUsage[main model].contextWindow` (default 200,000). Subagent messages
  (`parent_tool_use_id` set) never count.
- Per-turn cost and model usage are differences of the CLI's cumulative figures, which
  restart at `conversation_reset` (``/clear``).
- The todo list is replace-all from `TodoWrite` and kept item by item from the task
  tools (`TaskCreate`, `TaskUpdate`, `TaskList`), with the bridge seed's status mapping.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from typing import Any

from kandev_nb.agent import debug
from kandev_nb.agent import events as ev
from kandev_nb.agent.fastpath import trusted
from kandev_nb.agent.stream import StreamRules
from kandev_nb.agent.tools import (
    CreateTask,
    ManageTodos,
    NormalizedPayload,
    TodoItem,
    map_todo_status,
    normalize_tool_call,
    normalize_tool_result,
    tool_result_images,
    tool_result_text,
    tool_title,
)
from kandev_nb.agent.usage import UsageMeter, main_model_key, to_int, usage_total
from kandev_nb.wire.protocol import (
    AssistantMessage,
    CommandLifecycle,
    ControlCancelRequest,
    ControlRequest,
    ControlResponse,
    ConversationReset,
    InvalidLine,
    KeepAlive,
    RateLimitEvent,
    ResultMessage,
    StreamEvent,
    SystemMessage,
    TranscriptMirror,
    UnknownMessage,
    UserMessage,
    WireMessage,
)

__all__ = ["DEFAULT_CONTEXT_WINDOW", "INTERRUPTED_TEXT", "Adapter"]

log = logging.getLogger("kandev_nb.agent.adapter")

DEFAULT_CONTEXT_WINDOW = 200_000
"""Tokens assumed until a result reports the model's `contextWindow`."""

INTERRUPTED_TEXT = "[Request interrupted by user"
"""How the CLI's user line after an interrupt starts (also "... for tool use]")."""

_IGNORED_SYSTEM = frozenset(
    {
        "thinking_tokens",
        "hook_started",
        "hook_progress",
        "hook_response",
        "permission_denied",
        "informational",
        "local_command_output",
        "files_persisted",
        "session_state_changed",
        "memory_saved",
        "stop_hook_summary",
        "background_tasks_changed",  # a snapshot of running tasks; task_* messages carry each change
    }
)
_TASK_PHASES: dict[str, str] = {
    "task_started": "started",
    "task_progress": "progress",
    "task_updated": "progress",
    "task_notification": "ended",
}
"""`stream_event` types that make no event (their blocks and messages come whole later)."""
_TOOL_USE_BLOCKS = frozenset({"tool_use", "server_tool_use", "mcp_tool_use"})
_SERVER_RESULT_BLOCKS = frozenset({"web_search_tool_result", "web_fetch_tool_result", "mcp_tool_result"})
_QUIET_BLOCKS = frozenset({"redacted_thinking", "image", "document", "container_upload"})
_LOCAL_OUTPUT = re.compile(r"<local-command-std(?:out|err)>(.*?)</local-command-std(?:out|err)>", re.DOTALL)


class Adapter(StreamRules):
    """The per-session state machine from wire messages to AgentEvents.

    Args:
        resumed: the session was started with ``--resume`` (its `session_status` says so).
        observer: ``(msg, events) -> None`` called after each message; its exceptions are
            logged and ignored. Default: the debug logs and spans of :mod:`kandev_nb.agent.debug`
            when ``KANDEV_DEBUG_AGENT_MESSAGES=true``, else none.

    Attributes:
        session_id: from the latest message that carried one.
        last_message_uuid: the last committed message UUID (the resume point).
        permission_mode: the CLI's permission mode, from `system/init` and `system/status`.
        todos: the current task list by id, in order (replace-all semantics).
        tool_calls: every tool payload of the session by `tool_use_id` (latest wins).
        tool_names, tool_inputs, tool_parents: name, input and `parent_tool_use_id` of
            each call by `tool_use_id`.
        main_model: the main thread's model (first non-synthetic assistant model).
        context_size, context_used: the latest context window figures, in tokens.
    """

    def __init__(self, *, resumed: bool = False, observer: debug.Observer | None = None) -> None:
        self.resumed = resumed
        self.observer = observer if observer is not None else debug.from_env()
        self.session_id: str | None = None
        self.last_message_uuid: str | None = None
        self.permission_mode: str | None = None
        self.todos: dict[str, TodoItem] = {}
        self.tool_calls: dict[str, NormalizedPayload] = {}
        self.tool_names: dict[str, str] = {}
        self.tool_parents: dict[str, str | None] = {}
        self.tool_inputs: dict[str, dict[str, Any]] = {}
        self.main_model: str | None = None
        self.context_size = DEFAULT_CONTEXT_WINDOW
        self.context_used = 0
        self._announced = False
        self._last_context: tuple[int, int, bool] = (DEFAULT_CONTEXT_WINDOW, 0, False)
        self._pending_tools: dict[str, str] = {}  # tool_use_id -> name, awaiting a tool_result
        self._pending_assistant_uuid: str | None = None
        self._shown_text = False  # main-thread text shown this turn
        self._interrupted = False  # the CLI said "[Request interrupted by user]" this turn
        self._error_text: str | None = None  # a synthetic assistant error message this turn
        self._streamed: set[tuple[str | None, str, str]] = set()  # (parent, message id, "text"|"thinking") blocks
        self._current_msg: dict[str | None, str] = {}  # parent -> API message id being streamed
        self._msg_usage: dict[str, dict[str, Any]] = {}  # main-thread message id -> usage so far
        self.usage = UsageMeter()  # cumulative figures of the current process
        self._main_key: str | None = None  # the main model's `modelUsage` key, once seen

    # -- public -------------------------------------------------------------------------

    def new_process(self) -> None:
        """A new CLI process took over the session: its cumulative totals start at zero."""
        self.usage = UsageMeter()
        self._announced = False
        self.resumed = True

    def handle(self, msg: WireMessage) -> list[ev.AgentEvent]:
        """The events for one wire message, in order (possibly none).

        Never raises: a message that makes the adapter fail becomes one
        :class:`~kandev_nb.agent.events.Unknown` event (reason "adapter error: ...") and the
        state stays as it was before the failing step.
        """
        if type(msg) is StreamEvent:  # the hot path: most lines are deltas
            try:
                events = self._fast_stream_event(msg.raw)
                if events is None:  # anything unusual
                    events = self._stream_event(msg.raw, msg.parent_tool_use_id)
            except Exception as exc:  # noqa: BLE001 - never stop the session
                events = [self._failed(msg, exc)]
        else:
            sid = getattr(msg, "session_id", None)
            if sid:
                self.session_id = sid
            try:
                events = self._dispatch(msg)
            except Exception as exc:  # noqa: BLE001 - never stop the session
                events = [self._failed(msg, exc)]
        if self.observer is not None:
            self._observe(msg, events)
        return events

    def _observe(self, msg: WireMessage, events: list[ev.AgentEvent]) -> None:
        try:
            self.observer(msg, events)  # type: ignore[misc]  # checked by the caller
        except Exception:
            log.exception("kandev_nb adapter observer failed")

    def tool_payload(self, tool_name: str, tool_input: dict[str, Any], tool_use_id: str | None) -> NormalizedPayload:
        """The payload of a tool the CLI asks permission for (known call, else normalised now)."""
        if tool_use_id and tool_use_id in self.tool_calls:
            return self.tool_calls[tool_use_id]
        return normalize_tool_call(tool_name, tool_input)

    # -- dispatch -----------------------------------------------------------------------

    def _failed(self, msg: WireMessage, exc: Exception) -> ev.AgentEvent:
        log.exception("kandev_nb adapter failed on a %s message", getattr(msg, "type", "?"))
        raw = msg.raw if hasattr(msg, "raw") else {"line": getattr(msg, "text", repr(msg))}
        return ev.Unknown(raw=raw, reason=f"adapter error: {exc!r}"[:500], session_id=self.session_id)

    def _dispatch(self, msg: WireMessage) -> list[ev.AgentEvent]:
        rule = _RULES.get(type(msg))
        if rule is not None:
            return rule(self, msg)
        if isinstance(msg, _CONTROL):
            return []  # the control plane owns these
        if isinstance(msg, UnknownMessage):
            return [ev.Unknown(raw=msg.raw, reason=msg.reason, session_id=self.session_id)]
        if isinstance(msg, InvalidLine):
            return [ev.Unknown(raw={"line": msg.text}, reason=f"not JSON: {msg.error}", session_id=self.session_id)]
        return [ev.Unknown(raw={"repr": repr(msg)[:1000]}, reason="unhandled message", session_id=self.session_id)]

    def _context_event(self) -> list[ev.AgentEvent]:
        """A `context_window` event if the figures changed since the last one."""
        known = self._main_key is not None or self.context_size != DEFAULT_CONTEXT_WINDOW  # a result said, or [1m]
        if (now := (self.context_size, self.context_used, known)) == self._last_context:
            return []
        self._last_context = now
        return [trusted(ev.ContextWindow)(size=now[0], used=now[1], size_known=known, session_id=self.session_id)]

    # -- assistant ----------------------------------------------------------------------

    def _assistant(self, msg: AssistantMessage) -> list[ev.AgentEvent]:
        message = msg.message
        parent = msg.parent_tool_use_id
        mid: str = message["id"] if isinstance(message.get("id"), str) else ""
        model: str | None = message["model"] if isinstance(message.get("model"), str) else None
        sid = self.session_id
        out: list[ev.AgentEvent] = []
        synthetic = model == "<synthetic>" or msg.error is not None
        if parent is None and not synthetic:
            if msg.uuid:
                self._pending_assistant_uuid = msg.uuid
            if model and self.main_model is None:
                self.main_model = model
            usage = message.get("usage")
            if isinstance(usage, dict) and mid not in self._msg_usage:
                self._msg_usage[mid] = dict(usage)
                self.context_used = usage_total(usage)
                out += self._context_event()
        content = message.get("content")
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        for block in content if isinstance(content, list) else []:
            if not isinstance(block, dict):
                continue
            btype = block.get("type")
            if btype == "text":
                text = block.get("text")
                if not isinstance(text, str) or not text:
                    continue
                if synthetic and parent is None:
                    self._error_text = text  # "API Error: ...", "Invalid API key ...": the error event says it
                elif not self._was_streamed(parent, mid, "text"):
                    if parent is None:
                        self._shown_text = True
                    out.append(trusted(ev.MessageChunk)(text=text, session_id=sid, parent_tool_use_id=parent))
            elif btype == "thinking":
                text = block.get("thinking")
                if isinstance(text, str) and text and not self._was_streamed(parent, mid, "thinking"):
                    out.append(trusted(ev.Reasoning)(text=text, session_id=sid, parent_tool_use_id=parent))
            elif btype in _TOOL_USE_BLOCKS:
                out += self._tool_use(block, parent)
            elif btype in _SERVER_RESULT_BLOCKS:
                out += self._tool_result(block, parent, None)
            elif btype not in _QUIET_BLOCKS:
                out.append(
                    ev.Unknown(
                        raw=msg.raw,
                        reason=f"unknown content block type {btype!r}",
                        session_id=sid,
                        parent_tool_use_id=parent,
                    )
                )
        return out

    def _tool_use(self, block: dict[str, Any], parent: str | None) -> list[ev.AgentEvent]:
        tool_id = str(block.get("id") or "")
        name = str(block.get("name") or "unknown")
        tool_input: dict[str, Any] = block["input"] if isinstance(block.get("input"), dict) else {}
        if tool_id in self.tool_calls:
            return []  # a repeated assistant line (or a resumed transcript) changes nothing
        payload = normalize_tool_call(name, tool_input)
        self.tool_calls[tool_id] = payload
        self.tool_names[tool_id] = name
        self.tool_parents[tool_id] = parent
        self.tool_inputs[tool_id] = tool_input
        self._pending_tools[tool_id] = name
        return [
            trusted(ev.ToolCall)(
                tool_call_id=tool_id,
                tool_name=name,
                title=tool_title(name, payload),
                normalized=payload,
                input=tool_input,
                session_id=self.session_id,
                parent_tool_use_id=parent,
            )
        ]

    # -- user ---------------------------------------------------------------------------

    def _user(self, msg: UserMessage) -> list[ev.AgentEvent]:
        parent = msg.parent_tool_use_id
        if msg.uuid and parent is None and not msg.is_replay:
            self.last_message_uuid = msg.uuid  # user UUIDs commit at once ...
            self._pending_assistant_uuid = None  # ... and come after any pending assistant one
        content = msg.message.get("content")
        out: list[ev.AgentEvent] = []
        if isinstance(content, str):
            if content.startswith(INTERRUPTED_TEXT):
                self._interrupted = parent is None or self._interrupted
            for match in _LOCAL_OUTPUT.finditer(content):
                if match.group(1).strip():
                    self._shown_text = True
                    out.append(ev.MessageChunk(text=match.group(1), session_id=self.session_id))
            return out
        blocks = [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []
        results = [b for b in blocks if b.get("type") == "tool_result"]
        structured = msg.tool_use_result if len(results) == 1 else None
        for block in blocks:
            btype = block.get("type")
            if btype == "tool_result":
                out += self._tool_result(block, parent, structured)
            elif btype == "text" and str(block.get("text", "")).startswith(INTERRUPTED_TEXT):
                self._interrupted = parent is None or self._interrupted
        return out

    def _tool_result(self, block: dict[str, Any], parent: str | None, structured: Any) -> list[ev.AgentEvent]:
        tool_id = str(block.get("tool_use_id") or "")
        is_error = block.get("is_error") is True
        name = self.tool_names.get(tool_id, "unknown")
        call = self.tool_calls.get(tool_id) or normalize_tool_call(name, {})
        # Enrich the original call, not a previous result: a repeated result replaces it.
        payload = normalize_tool_result(call, block.get("content"), is_error, structured)
        self._pending_tools.pop(tool_id, None)
        out: list[ev.AgentEvent] = [
            trusted(ev.ToolUpdate)(
                tool_call_id=tool_id,
                tool_name=name,
                status="error" if is_error else "complete",
                normalized=payload,
                output=tool_result_text(block.get("content")),
                images=tool_result_images(block.get("content")),
                session_id=self.session_id,
                parent_tool_use_id=self.tool_parents.get(tool_id, parent),
            )
        ]
        if not is_error:
            todos = self._update_todos(tool_id, call, payload)
            if todos is not None:
                out.append(ev.Todos(items=todos, session_id=self.session_id))
        return out

    def _update_todos(
        self, tool_id: str, call: NormalizedPayload, result: NormalizedPayload
    ) -> tuple[TodoItem, ...] | None:
        """Apply a todo tool's successful result to the list; None if `call` is not one."""
        if isinstance(call, ManageTodos) and call.operation == "replace":
            prefix = f"sdk-{self.session_id or 'session'}-"
            self.todos = {
                f"{prefix}{index}": item.model_copy(update={"id": f"{prefix}{index}"})
                for index, item in enumerate(call.items)
            }
        elif isinstance(result, ManageTodos) and result.operation == "list":
            # TaskList is the whole list, but without each task's active form: keep ours.
            self.todos = {
                item.id: item.model_copy(update={"active_form": self.todos[item.id].active_form})
                if item.id in self.todos and item.active_form is None
                else item
                for item in result.items
            }
        elif isinstance(call, ManageTodos) and call.operation in ("update", "delete"):
            self._apply_task_update(self.tool_inputs.get(tool_id, {}))
        elif isinstance(result, CreateTask):
            task_id = result.task_id or str(len(self.todos) + 1)
            self.todos[task_id] = TodoItem(id=task_id, description=result.title, active_form=result.active_form)
        else:
            return None
        return tuple(self.todos.values())

    def _apply_task_update(self, tool_input: dict[str, Any]) -> None:
        """`TaskUpdate` input: change the fields it names; status "deleted" removes the task."""
        task_id = str(tool_input.get("taskId") or tool_input.get("id") or "")
        status = tool_input.get("status")
        if status == "deleted":
            self.todos.pop(task_id, None)
            return
        old = self.todos.get(task_id) or TodoItem(id=task_id, description="")
        changes: dict[str, Any] = {}
        if isinstance(status, str):
            changes["status"] = map_todo_status(status)
        if isinstance(tool_input.get("subject"), str):
            changes["description"] = tool_input["subject"]
        if isinstance(tool_input.get("activeForm"), str):
            changes["active_form"] = tool_input["activeForm"]
        self.todos[task_id] = old.model_copy(update=changes)

    # -- system -------------------------------------------------------------------------

    def _system(self, msg: SystemMessage) -> list[ev.AgentEvent]:
        data = msg.raw
        subtype = msg.subtype
        if subtype == "init":
            return self._init(data)
        if subtype == "status":
            mode = data.get("permissionMode")
            if isinstance(mode, str) and mode != self.permission_mode:
                self.permission_mode = mode
                return [ev.SessionMode(mode=mode, session_id=self.session_id)]
            return []
        if subtype == "api_retry":
            delay = data.get("retry_delay_ms")
            status = data.get("error_status")
            return [
                ev.ApiRetry(
                    attempt=to_int(data.get("attempt")) or None,
                    max_retries=to_int(data.get("max_retries")) or None,
                    status=status if isinstance(status, int) else None,
                    delay_ms=int(delay) if isinstance(delay, int | float) else None,
                    error=str(data["error"]) if data.get("error") is not None else None,
                    session_id=self.session_id,
                )
            ]
        if subtype == "compact_boundary":
            meta: dict[str, Any] = data["compact_metadata"] if isinstance(data.get("compact_metadata"), dict) else {}
            pre = meta.get("pre_tokens")
            trigger = meta.get("trigger")
            return [
                ev.CompactBoundary(
                    trigger=trigger if isinstance(trigger, str) else None,
                    pre_tokens=pre if isinstance(pre, int) else None,
                    session_id=self.session_id,
                )
            ]
        if subtype in _TASK_PHASES:
            return [self._task_event(subtype, data)]
        if subtype in _IGNORED_SYSTEM:
            return []
        return [ev.Unknown(raw=data, reason=f"unknown system subtype {subtype!r}", session_id=self.session_id)]

    def _init(self, data: dict[str, Any]) -> list[ev.AgentEvent]:
        out: list[ev.AgentEvent] = []
        mode = data.get("permissionMode") if isinstance(data.get("permissionMode"), str) else None
        if self._announced and mode is not None and mode != self.permission_mode:
            out.append(ev.SessionMode(mode=mode, session_id=self.session_id))
        if mode is not None:
            self.permission_mode = mode
        if not self._announced:
            self._announced = True
            tools = data.get("tools")
            model = data.get("model")
            version = data.get("claude_code_version")
            if isinstance(model, str) and model.endswith("[1m]") and self._main_key is None:
                self.context_size = 1_000_000  # the 1M-token variant; the result confirms it
            cwd = data.get("cwd")
            out.append(
                trusted(ev.SessionStatus)(
                    status="resumed" if self.resumed else "new",
                    model=model if isinstance(model, str) else None,
                    cwd=cwd if isinstance(cwd, str) else None,
                    tools=tuple(str(t) for t in tools) if isinstance(tools, list) else (),
                    permission_mode=mode,
                    cli_version=version if isinstance(version, str) else None,
                    session_id=self.session_id,
                )
            )
        return out

    def _task_event(self, subtype: str, data: dict[str, Any]) -> ev.AgentEvent:
        """`system/task_*`: a subagent's or background task's life (start, progress, end)."""

        def text(*keys: str) -> str | None:
            for key in keys:
                if isinstance(data.get(key), str):
                    return str(data[key])
            return None

        usage: dict[str, Any] = data["usage"] if isinstance(data.get("usage"), dict) else {}
        return ev.SubagentTask(
            phase=_TASK_PHASES[subtype],  # type: ignore[arg-type]
            task_id=text("task_id"),
            description=text("description", "summary"),
            status=text("status"),
            task_type=text("task_type"),
            summary=text("summary"),
            total_tokens=to_int(usage.get("total_tokens")) or None,
            tool_uses=to_int(usage.get("tool_uses")) or None,
            duration_ms=to_int(usage.get("duration_ms")) or None,
            data=data,
            parent_tool_use_id=text("tool_use_id"),
            session_id=self.session_id,
        )

    def _rate_limit(self, msg: RateLimitEvent) -> list[ev.AgentEvent]:
        info = msg.info
        status = info.get("status")
        if status == "allowed":
            return []  # the CLI reports every allowed request in some versions: nothing to say
        text = info.get("message") or (f"rate limit: {status}" if status else "rate limited")
        return [ev.RateLimit(message=str(text), info=info, session_id=self.session_id)]

    # -- result -------------------------------------------------------------------------

    def _result(self, msg: ResultMessage) -> list[ev.AgentEvent]:
        out: list[ev.AgentEvent] = []
        for tool_id, name in list(self._pending_tools.items()):
            out.append(
                trusted(ev.ToolUpdate)(
                    tool_call_id=tool_id,
                    tool_name=name,
                    status="complete",
                    normalized=self.tool_calls.get(tool_id) or normalize_tool_call(name, {}),
                    auto_completed=True,
                    session_id=self.session_id,
                    parent_tool_use_id=self.tool_parents.get(tool_id),
                )
            )
        self._pending_tools.clear()
        cumulative = msg.model_usage
        model_usage = self.usage.delta(cumulative, msg.total_cost_usd)
        main = main_model_key(cumulative, self.main_model)
        if main is not None:
            self._main_key = main
            window = cumulative[main].get("contextWindow") if isinstance(cumulative[main], dict) else None
            if type(window) is int and window > 0:  # not a bool
                self.context_size = window
        out += self._context_event()
        result_text = msg.result  # a --json-schema turn's `result` is its structured_output as JSON: no answer
        if result_text and not self._shown_text and not msg.is_error and msg.raw.get("structured_output") is None:
            out.append(ev.MessageChunk(text=result_text, session_id=self.session_id))
        if not msg.is_error and self._pending_assistant_uuid:
            self.last_message_uuid = self._pending_assistant_uuid
        self._pending_assistant_uuid = None
        if msg.is_error:
            out.append(
                ev.Error(
                    message=self._error_message(msg),
                    subtype=msg.subtype,
                    api_error_status=msg.api_error_status,
                    session_id=self.session_id,
                    interrupted=self._interrupted or msg.terminal_reason == "aborted_streaming",
                )
            )
        stats = self.usage.stats(msg, model_usage, main or self._main_key or self.main_model, self.session_id)
        if msg.raw.get("structured_output") is not None:  # --json-schema (agent/structured.py)
            stats = stats.model_copy(update={"structured_output": msg.raw["structured_output"]})
        out.append(
            trusted(ev.Complete)(stats=stats, last_message_uuid=self.last_message_uuid, session_id=self.session_id)
        )
        self._shown_text = False
        self._interrupted = False
        self._error_text = None
        self._streamed.clear()
        self._current_msg.clear()
        self._msg_usage.clear()
        return out

    def _reset(self, msg: ConversationReset) -> list[ev.AgentEvent]:
        """`conversation_reset` (``/clear``): the CLI's cumulative figures and the context restart."""
        self.usage.restart()
        self.context_used = 0
        return self._context_event()

    def _error_message(self, msg: ResultMessage) -> str:
        """The CLI's own words for a failed turn."""
        if msg.result:
            return msg.result
        if self._error_text:
            return self._error_text
        if self._interrupted or msg.terminal_reason == "aborted_streaming":
            return "Request interrupted by user"
        errors = [e for e in msg.errors if not e.startswith("[ede_diagnostic]")] or msg.errors
        if errors:
            return "; ".join(errors)
        if msg.subtype == "error_max_turns":
            return f"Reached the maximum number of turns ({msg.num_turns})"
        return f"turn failed ({msg.subtype})"


_RULES: dict[type, Callable[[Adapter, Any], list[ev.AgentEvent]]] = {
    AssistantMessage: Adapter._assistant,
    UserMessage: Adapter._user,
    ResultMessage: Adapter._result,
    SystemMessage: Adapter._system,
    RateLimitEvent: Adapter._rate_limit,
    ConversationReset: Adapter._reset,
}
"""The rule for each wire message class that makes events (one dict lookup per message)."""
_CONTROL = (KeepAlive, ControlRequest, ControlResponse, ControlCancelRequest, TranscriptMirror, CommandLifecycle)
