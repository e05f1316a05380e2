"""AgentEvents: what the adapter makes of the CLI's messages.

Events are frozen pydantic models with a ``type`` discriminator, one per row of the seed's
AgentEvent table plus what the real wire needs. Consumers (widgets, the ledger, tests)
switch on the class. The last event of every turn is :class:`Complete`; a failed turn sends
:class:`Error` first, then :class:`Complete` with whatever stats the CLI reported.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from kandev_nb.agent.permissions import Approval
from kandev_nb.agent.tools import NormalizedPayload, TodoItem

__all__ = [
    "AgentEvent",
    "ApiRetry",
    "AvailableCommands",
    "CompactBoundary",
    "Complete",
    "ContextWindow",
    "Error",
    "MessageChunk",
    "ModelUsage",
    "PermissionCancelled",
    "PermissionDecided",
    "PermissionRequest",
    "RateLimit",
    "Reasoning",
    "SessionMode",
    "SessionStatus",
    "SlashCommand",
    "Stderr",
    "SubagentTask",
    "Todos",
    "ToolCall",
    "ToolUpdate",
    "TurnStats",
    "Unknown",
]


class _Event(BaseModel):
    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    session_id: str | None = None
    parent_tool_use_id: str | None = None
    """Set on events from a subagent: the `tool_use_id` of the Task call that spawned it."""


class SessionStatus(_Event):
    """The CLI's `system/init`: the session exists. `status` is "new" or "resumed"."""

    type: Literal["session_status"] = "session_status"
    status: Literal["new", "resumed"] = "new"
    model: str | None = None
    cwd: str | None = None
    tools: tuple[str, ...] = ()
    permission_mode: str | None = None
    cli_version: str | None = None
    mcp_failed: tuple[str, ...] = Field(default=(), exclude_if=lambda v: not v)
    """Names of the MCP servers `system/init`'s ``mcp_servers`` lists with status "failed"."""


class SlashCommand(BaseModel):
    """One slash command: `name` (without "/"), `description`, `argument_hint`."""

    model_config = ConfigDict(frozen=True)
    name: str
    description: str = ""
    argument_hint: str = ""


class AvailableCommands(_Event):
    """The slash commands, from the initialize control_response (`commands`)."""

    type: Literal["available_commands"] = "available_commands"
    commands: tuple[SlashCommand, ...] = ()


class MessageChunk(_Event):
    """Assistant text, in order; the turn's answer is the concatenation of all chunks."""

    type: Literal["message_chunk"] = "message_chunk"
    text: str


class Reasoning(_Event):
    """Thinking text (a `thinking` block or `thinking_delta`)."""

    type: Literal["reasoning"] = "reasoning"
    text: str


class ToolCall(_Event):
    """A `tool_use` block: the tool starts, with status "running"."""

    type: Literal["tool_call"] = "tool_call"
    tool_call_id: str
    tool_name: str
    title: str
    status: Literal["running"] = "running"
    normalized: NormalizedPayload
    input: dict[str, Any] = Field(default_factory=dict)


class ToolUpdate(_Event):
    """A `tool_result` for `tool_call_id`; the last one for an id wins.

    `output` is the full result text (never cut); `normalized` is the enriched payload.
    `auto_completed` is True when the turn ended before any tool_result arrived.
    """

    type: Literal["tool_update"] = "tool_update"
    tool_call_id: str
    tool_name: str
    status: Literal["complete", "error"]
    normalized: NormalizedPayload
    output: str = ""
    auto_completed: bool = False
    images: tuple[str, ...] = Field(default=(), exclude=True, repr=False)
    """The result's pictures as ``data:`` URIs (:func:`kandev_nb.agent.tools.tool_result_images`),
    e.g. `run_code`'s figures, shown on the tool card. Left out of ``model_dump()`` (and so of
    the ledger and transcripts): they can be megabytes."""


class ContextWindow(_Event):
    """Context usage of the main model, in tokens.

    `used` = input + output + cache creation + cache read tokens of the latest main-thread
    assistant message (`message.usage`); `size` from the result's
    `modelUsage[model].contextWindow`, default 200,000.
    """

    type: Literal["context_window"] = "context_window"
    size: int
    used: int
    size_known: bool = True
    """False while no `result` has said the window's size (`size` is then the 200,000 default,
    a guess: a 1M-token model reports 1,000,000 only in its first result)."""

    @property
    def remaining(self) -> int:
        """Tokens left (`size - used`, never negative)."""
        return max(self.size - self.used, 0)


class PermissionRequest(_Event):
    """A can_use_tool control_request waiting for an answer through `approval`.

    `reason` is the CLI's `decision_reason`; `blocked_path` its `blocked_path(s)`;
    `title` is the CLI's short `description` of the call (or our own title).
    """

    type: Literal["permission_request"] = "permission_request"
    request_id: str
    tool_name: str
    tool_use_id: str | None = None
    input: dict[str, Any] = Field(default_factory=dict)
    title: str = ""
    reason: str | None = None
    blocked_path: str | None = None
    normalized: NormalizedPayload
    approval: Approval = Field(exclude=True, repr=False)


class PermissionDecided(_Event):
    """An approval was answered: `behavior`, by whom, after `waited_ms` milliseconds."""

    type: Literal["permission_decided"] = "permission_decided"
    request_id: str
    tool_name: str
    behavior: Literal["allow", "deny"]
    decided_by: str
    waited_ms: int
    message: str = ""
    tool_use_id: str | None = None
    """The `tool_use_id` of the call decided (from the can_use_tool request), when known."""
    hook: str = ""
    """The Python hook that decided (its function name), when `decided_by` is "hook" and
    the decision came from a kandev-nb hook (:mod:`kandev_nb.agent.hooks`)."""
    note: str = ""
    """What the person should know about an allow, e.g. that a policy let an interpreter
    through (``Decision.note``, from :meth:`kandev_nb.agent.permissions.Rules.note`)."""
    rule: str = ""
    """The rule that decided, in Claude Code's syntax: the policy's deny rule
    (``Bash(rm:*)``) or the session grant (``Bash(touch:*)``); "" when none is named."""
    who: str = ""
    """Who decided, in words, when more precise than `decided_by`: "your policy rule
    Bash(rm:*)", "your session grant Bash(touch:*), given in cell [12]"."""
    updated_input: dict[str, Any] | None = None
    """The input the tool ran with when the person edited it before allowing (the
    can_use_tool answer's `updatedInput`); None when it ran as proposed."""


class PermissionCancelled(_Event):
    """The CLI withdrew a can_use_tool request (`control_cancel_request`)."""

    type: Literal["permission_cancelled"] = "permission_cancelled"
    request_id: str


class SessionMode(_Event):
    """The permission mode changed (`system/status.permissionMode`), in the CLI's terms."""

    type: Literal["session_mode"] = "session_mode"
    mode: str


class ApiRetry(_Event):
    """`system/api_retry`: attempt `attempt` of `max_retries`, after HTTP `status`."""

    type: Literal["api_retry"] = "api_retry"
    attempt: int | None = None
    max_retries: int | None = None
    status: int | None = None
    delay_ms: int | None = None
    error: str | None = None


class RateLimit(_Event):
    """A `rate_limit_event` (or seed `rate_limit`) message; `info` is its raw payload."""

    type: Literal["rate_limit"] = "rate_limit"
    message: str = ""
    info: dict[str, Any] = Field(default_factory=dict)


class Todos(_Event):
    """The session's current task list (replace-all, from TodoWrite or the task tools)."""

    type: Literal["todos"] = "todos"
    items: tuple[TodoItem, ...] = ()


class CompactBoundary(_Event):
    """`system/compact_boundary`: the conversation was compacted."""

    type: Literal["compact_boundary"] = "compact_boundary"
    trigger: str | None = None
    pre_tokens: int | None = None


class SubagentTask(_Event):
    """`system/task_started|task_updated|task_notification`: a background/sub task's life."""

    type: Literal["subagent_task"] = "subagent_task"
    phase: Literal["started", "progress", "ended"]
    task_id: str | None = None
    description: str | None = None
    status: str | None = None
    data: dict[str, Any] = Field(default_factory=dict)
    task_type: str | None = None
    """`task_type`: "local_agent" for a subagent, "local_bash" for a background command."""
    summary: str | None = None
    """`summary` of a progress or end notification."""
    total_tokens: int | None = None
    """`usage.total_tokens` the task used so far (tokens; subagent usage, not the main model's)."""
    tool_uses: int | None = None
    """`usage.tool_uses` so far."""
    duration_ms: int | None = None
    """`usage.duration_ms` so far, in ms."""


class Stderr(_Event):
    """A line the CLI wrote to stderr."""

    type: Literal["stderr"] = "stderr"
    text: str


class ModelUsage(BaseModel):
    """One model's usage in one turn (deltas of the CLI's cumulative `modelUsage`)."""

    model_config = ConfigDict(frozen=True)
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_input_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cost_usd: float = 0.0
    context_window: int | None = None


class TurnStats(BaseModel):
    """A turn's numbers, from its `result` message.

    `cost_usd` is this turn's cost in USD: the difference of `result.total_cost_usd`,
    which is cumulative per CLI process. `model_usage` is per turn too (differences of the
    cumulative `result.modelUsage`), and the four token counts are its sums over models, so
    tokens and cost come from the same deltas (an interrupted turn's `result.usage` is all
    zeros though it was paid for; subagents' tokens are counted as their cost is). Only a
    result without `modelUsage` gives its `result.usage` instead. Durations in ms:
    `duration_ms` is the turn's wall time; `duration_api_ms` the turn's time in API calls,
    the difference of `result.duration_api_ms`, which the CLI also reports per process.
    """

    model_config = ConfigDict(frozen=True)

    session_id: str | None = None
    result_subtype: str = "unknown"
    is_error: bool = False
    cost_usd: float = 0.0
    total_cost_usd: float = 0.0
    duration_ms: int = 0
    duration_api_ms: int = 0
    num_turns: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_input_tokens: int = 0
    cache_creation_input_tokens: int = 0
    model_usage: dict[str, ModelUsage] = Field(default_factory=dict)
    permission_denials: tuple[dict[str, Any], ...] = ()
    stop_reason: str | None = None
    terminal_reason: str | None = None
    api_error_status: int | None = None
    errors: tuple[str, ...] = ()
    result_text: str | None = None
    structured_output: Any = Field(default=None, exclude=True)
    """`result.structured_output`: the StructuredOutput tool's answer (JSON values) of a
    turn run with ``--json-schema``; None otherwise (:mod:`kandev_nb.agent.structured`).
    Left out of ``model_dump`` (the answer is kept as ``Turn.output_raw``)."""
    main_model: str | None = None
    """The main thread's model (its `modelUsage` key); other keys of `model_usage` are
    subagents' or side requests' models and never count as the main model's usage."""
    user_message_uuids: tuple[str, ...] = ()
    """The `uuid` of every prompt this turn took in (`result.user_message_uuids`, else
    `user_message_uuid`): the prompt :meth:`Session.run <kandev_nb.agent.session.Session.run>`
    sent (``Turn.prompt_uuid``), and any sent while it ran. () on CLIs that name none."""
    result_origin: dict[str, Any] | None = None
    """`result.origin`: what started the turn, as the CLI says (``{"kind": "human"}`` for a
    prompt kandev-nb sent, ``{"kind": "task-notification"}`` for a background task's follow-up)."""

    @property
    def model(self) -> str | None:
        """The model with the most output tokens this turn, or None."""
        if not self.model_usage:
            return None
        return max(self.model_usage.items(), key=lambda kv: kv[1].output_tokens)[0]


class Complete(_Event):
    """The turn ended (a `result` message, or the CLI's death). Always the last event."""

    type: Literal["complete"] = "complete"
    stats: TurnStats
    last_message_uuid: str | None = None


class Error(_Event):
    """The turn failed: the CLI's own message, its result subtype and HTTP status if any.

    `interrupted` is True when the failed `result` is the CLI's answer to an interrupt
    (the user line "[Request interrupted by user]" came first, or
    ``terminal_reason == "aborted_streaming"``): the turn was stopped, nothing broke.
    """

    type: Literal["error"] = "error"
    message: str
    subtype: str | None = None
    api_error_status: int | None = None
    exit_code: int | None = None
    stderr: str | None = None
    interrupted: bool = False


class Unknown(_Event):
    """A message the adapter does not understand, kept unchanged in `raw`."""

    type: Literal["unknown"] = "unknown"
    raw: dict[str, Any] = Field(default_factory=dict)
    reason: str = ""


AgentEvent = Annotated[
    SessionStatus
    | AvailableCommands
    | MessageChunk
    | Reasoning
    | ToolCall
    | ToolUpdate
    | ContextWindow
    | PermissionRequest
    | PermissionDecided
    | PermissionCancelled
    | SessionMode
    | ApiRetry
    | RateLimit
    | Todos
    | CompactBoundary
    | SubagentTask
    | Stderr
    | Complete
    | Error
    | Unknown,
    Field(discriminator="type"),
]


def failed_turn(
    message: str,
    subtype: str,
    *,
    session_id: str | None,
    last_message_uuid: str | None,
    result_subtype: str | None = None,
    **error_fields: Any,
) -> tuple[Error, Complete]:
    """The two events that end a turn the CLI did not end itself: an :class:`Error` (`message`,
    `subtype`, `error_fields` such as ``exit_code``/``stderr``), then a :class:`Complete` without
    figures whose `result_subtype` is `result_subtype` (default `subtype`) and `is_error` True."""
    return (
        Error(message=message, subtype=subtype, session_id=session_id, **error_fields),
        Complete(
            stats=TurnStats(session_id=session_id, result_subtype=result_subtype or subtype, is_error=True),
            last_message_uuid=last_message_uuid,
            session_id=session_id,
        ),
    )
