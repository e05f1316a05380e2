"""Hooks as Python functions, in the Agent SDK's shapes.

>>> def no_rm(input_data, tool_use_id, context):
...     if "rm " in input_data["tool_input"].get("command", ""):
...         return {"hookSpecificOutput": {"hookEventName": "PreToolUse",
...                 "permissionDecision": "deny", "permissionDecisionReason": "no rm here"}}
...     return {}
>>> registry = HookRegistry({"PreToolUse": [HookMatcher(matcher="Bash", hooks=[no_rm])]})
>>> registry.initialize_config()["PreToolUse"][0]["hookCallbackIds"]
['hook_0']

Wire (as claude-agent-sdk's ``_internal/query.py`` does it, measured on CLI 2.1.332): the
`initialize` control_request carries ``hooks: {event: [{"matcher", "hookCallbackIds",
"timeout"}]}``; when a hook fires the CLI sends a control_request ``{"subtype":
"hook_callback", "callback_id", "input", "tool_use_id"}`` and waits for the hook's output
(``hookSpecificOutput``, ``continue``, ``stopReason``, ``systemMessage``, ``decision``...)
as the control_response's `response`.

A hook is ``(input_data: dict, tool_use_id: str | None, context: dict) -> dict``, sync or
async. Async hooks run on the kernel's loop; sync ones in a worker thread, so a slow one
never stops the reader. A hook that raises, runs past its matcher's `timeout` (seconds,
default :data:`DEFAULT_TIMEOUT_S`) or returns something that is not a hook output makes a
:class:`~kandev_nb.errors.HookWarning` and, for the events that gate something
(:data:`GATING_EVENTS`), a deny carrying the error text; for the others, no decision.
The CLI is told a timeout :data:`CLI_GRACE_S` seconds longer than ours, so our deny always
reaches it first. Returning None means "no opinion" (``{}``).
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kandev_nb.errors import HookError

__all__ = [
    "CLI_GRACE_S",
    "DEFAULT_TIMEOUT_S",
    "GATING_EVENTS",
    "HOOK_EVENTS",
    "HookCallback",
    "HookMatcher",
    "HookOutcome",
    "HookRegistry",
    "answer_hook_callback",
    "hooks_key",
]

HookCallback = Callable[[dict[str, Any], str | None, dict[str, Any]], Any]
"""``(input_data, tool_use_id, context) -> dict`` (or an awaitable of one)."""

HOOK_EVENTS = (
    "PreToolUse",
    "PostToolUse",
    "PostToolUseFailure",
    "UserPromptSubmit",
    "Stop",
    "SubagentStart",
    "SubagentStop",
    "PreCompact",
    "Notification",
    "PermissionRequest",
)
"""The events the CLI calls hooks for (claude-agent-sdk's ``HookEvent``)."""

GATING_EVENTS = ("PreToolUse", "PermissionRequest", "UserPromptSubmit")
"""Events where a failing hook denies (the tool does not run, the prompt is blocked)."""

DEFAULT_TIMEOUT_S = 60.0
"""Seconds a hook may run when its matcher gives no `timeout` (the SDK's default)."""

CLI_GRACE_S = 5.0
"""Extra seconds in the timeout told to the CLI, so our own deny (at `timeout`) arrives first."""

_DECISIONS = ("allow", "deny", "ask")


@dataclass
class HookMatcher:
    """Which hooks run for which tool (the Agent SDK's ``HookMatcher``).

    Attributes:
        matcher: a tool name or pattern (``"Bash"``, ``"Write|Edit"``); None matches all.
        hooks: the callables, run in order by the CLI.
        timeout: seconds each hook may run (None: :data:`DEFAULT_TIMEOUT_S`).
    """

    matcher: str | None = None
    hooks: list[HookCallback] = field(default_factory=list)
    timeout: float | None = None


@dataclass(frozen=True)
class HookOutcome:
    """What one `hook_callback` gave.

    Attributes:
        event: `input.hook_event_name` (e.g. "PreToolUse"); name: the hook's function name.
        response: the hook output sent back to the CLI (the control_response's `response`).
        decision: "allow", "deny" or "ask" when the hook decided a tool call (PreToolUse
            `permissionDecision`, PermissionRequest `decision.behavior`), else None.
        reason: the decision's reason (`permissionDecisionReason`, `decision.message`).
        warning: set when the hook raised, timed out or returned junk (then `response` is
            the deny or the empty output we sent instead).
        tool_use_id, tool_name: the call the hook was about, if any.
        duration_ms: the hook's wall time, ms.
    """

    event: str
    name: str
    response: dict[str, Any]
    decision: str | None = None
    reason: str = ""
    warning: str | None = None
    tool_use_id: str | None = None
    tool_name: str | None = None
    duration_ms: int = 0


@dataclass(frozen=True)
class _Entry:
    event: str
    callback: HookCallback
    timeout: float


def _matchers(hooks: Mapping[str, Sequence[Any]] | None) -> dict[str, list[HookMatcher]]:
    """Checked copies of `hooks` (HookMatcher or the SDK's dict spelling ``{"matcher", "hooks"}``)."""
    out: dict[str, list[HookMatcher]] = {}
    for event, matchers in (hooks or {}).items():
        if event not in HOOK_EVENTS:
            raise HookError(f"unknown hook event {event!r}; known: {', '.join(HOOK_EVENTS)}")
        if isinstance(matchers, HookMatcher | dict):
            matchers = [matchers]
        checked: list[HookMatcher] = []
        for m in matchers:
            if isinstance(m, dict):
                m = HookMatcher(matcher=m.get("matcher"), hooks=list(m.get("hooks") or []), timeout=m.get("timeout"))
            if not isinstance(m, HookMatcher):
                raise HookError(f"hooks[{event!r}] must be a list of kandev_nb.HookMatcher, not {type(m).__name__}")
            if m.timeout is not None and (
                isinstance(m.timeout, bool) or not isinstance(m.timeout, int | float) or m.timeout <= 0
            ):
                raise HookError(f"HookMatcher timeout must be a positive number of seconds, not {m.timeout!r}")
            for fn in m.hooks:
                if not callable(fn):
                    raise HookError(f"hooks[{event!r}]: {fn!r} is not callable")
            checked.append(m)
        out[event] = checked
    return out


def hook_name(fn: Any) -> str:
    """A hook's display name: its ``__name__`` (``functools.partial``: the wrapped one's)."""
    return str(getattr(fn, "__name__", None) or getattr(getattr(fn, "func", None), "__name__", None) or repr(fn))


class HookRegistry:
    """The hooks of one CLI process: their `initialize` config and their `hook_callback` answers.

    Args:
        hooks: ``{event: [HookMatcher, ...]}`` (events from :data:`HOOK_EVENTS`).

    Raises:
        HookError: an unknown event, a matcher of the wrong type, a non-callable hook.
    """

    def __init__(self, hooks: Mapping[str, Sequence[Any]] | None) -> None:
        self.matchers = _matchers(hooks)
        self._entries: dict[str, _Entry] = {}
        self._tasks: dict[str, asyncio.Task[Any]] = {}
        self._config: dict[str, list[dict[str, Any]]] = {}
        for event, matchers in self.matchers.items():
            for m in matchers:
                timeout = float(m.timeout or DEFAULT_TIMEOUT_S)
                ids = []
                for fn in m.hooks:
                    callback_id = f"hook_{len(self._entries)}"
                    self._entries[callback_id] = _Entry(event, fn, timeout)
                    ids.append(callback_id)
                if ids:
                    self._config.setdefault(event, []).append(
                        {"matcher": m.matcher, "hookCallbackIds": ids, "timeout": timeout + CLI_GRACE_S}
                    )

    def __bool__(self) -> bool:
        return bool(self._entries)

    def track(self, request_id: str, task: asyncio.Task[Any]) -> None:
        """Remember the task answering `hook_callback` `request_id`, until it is done."""
        self._tasks[request_id] = task
        task.add_done_callback(lambda _: self._tasks.pop(request_id, None))

    def cancel(self, request_id: str) -> bool:
        """The CLI withdrew `hook_callback` `request_id` (control_cancel_request, sent when
        the turn is interrupted): cancel the hook's await, send nothing. A sync hook's
        thread cannot be stopped; its result is dropped. Returns True if one was running."""
        task = self._tasks.pop(request_id, None)
        if task is None or task.done():
            return False
        task.cancel()
        return True

    def initialize_config(self) -> dict[str, list[dict[str, Any]]] | None:
        """The `hooks` field of the `initialize` control_request (None when there are none)."""
        return self._config or None

    async def call(self, request: Mapping[str, Any]) -> HookOutcome:
        """Run the hook a `hook_callback` control_request names and build the answer.

        Never raises for the hook's faults: they become the outcome's `warning`.

        Raises:
            HookError: `callback_id` names no hook of this process (the caller answers
                the request with an error).
        """
        callback_id = str(request.get("callback_id"))
        entry = self._entries.get(callback_id)
        if entry is None:
            raise HookError(f"no hook with callback_id {callback_id!r}")
        raw_input = request.get("input")
        input_data: dict[str, Any] = dict(raw_input) if isinstance(raw_input, dict) else {}
        event = str(input_data.get("hook_event_name") or entry.event)
        tool_use_id = request.get("tool_use_id")
        tool_use_id = tool_use_id if isinstance(tool_use_id, str) else input_data.get("tool_use_id")
        tool_name = input_data.get("tool_name")
        name = hook_name(entry.callback)
        started = time.monotonic()
        warning: str | None = None
        try:
            output = await asyncio.wait_for(_invoke(entry.callback, input_data, tool_use_id), entry.timeout)
            response = _check_output(output, event)
        except TimeoutError:
            warning = f"hook {name} ({event}) did not return within its timeout of {entry.timeout:g} s"
        except Exception as exc:  # noqa: BLE001 - any fault of the user's hook becomes a deny
            warning = f"hook {name} ({event}) failed: {type(exc).__name__}: {exc}"
        duration_ms = int((time.monotonic() - started) * 1000)
        if warning is not None:
            response = _failure_output(event, warning)
        decision, reason = _decision_of(response, event)
        return HookOutcome(
            event=event,
            name=name,
            response=response,
            decision=decision,
            reason=reason,
            warning=warning,
            tool_use_id=tool_use_id if isinstance(tool_use_id, str) else None,
            tool_name=tool_name if isinstance(tool_name, str) else None,
            duration_ms=duration_ms,
        )


async def _invoke(fn: HookCallback, input_data: dict[str, Any], tool_use_id: Any) -> Any:
    context: dict[str, Any] = {"signal": None}
    if inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(type(fn).__call__):
        return await fn(input_data, tool_use_id, context)
    result = await asyncio.to_thread(fn, input_data, tool_use_id, context)
    if inspect.isawaitable(result):
        return await result
    return result


_TYPES: dict[str, tuple[type, ...]] = {
    "continue": (bool,),
    "suppressOutput": (bool,),
    "stopReason": (str,),
    "systemMessage": (str,),
    "reason": (str,),
    "decision": (str,),
    "hookSpecificOutput": (dict,),
    "async": (bool,),
    "asyncTimeout": (int, float),
}


def _check_output(output: Any, event: str) -> dict[str, Any]:
    """The hook's output as the CLI takes it (``continue_``/``async_`` spelled ``continue``/``async``).

    Raises:
        TypeError: not a dict (None is ``{}``), or a known field of the wrong type, or a
            `permissionDecision` other than allow/deny/ask.
    """
    if output is None:
        return {}
    if not isinstance(output, dict):
        raise TypeError(f"a hook must return a dict (the hook output), not {type(output).__name__}: {output!r:.200}")
    out = {("continue" if k == "continue_" else "async" if k == "async_" else k): v for k, v in output.items()}
    for key, types in _TYPES.items():
        if key in out and not isinstance(out[key], types):
            raise TypeError(
                f"hook output {key!r} must be {' or '.join(t.__name__ for t in types)}, not {out[key]!r:.100}"
            )
    specific = out.get("hookSpecificOutput")
    if isinstance(specific, dict):
        specific = {"hookEventName": event, **specific}
        out["hookSpecificOutput"] = specific
        decision = specific.get("permissionDecision")
        if decision is not None and decision not in _DECISIONS:
            raise TypeError(f"permissionDecision must be one of {', '.join(_DECISIONS)}, not {decision!r}")
    if out.get("decision") is not None and out["decision"] not in ("approve", "block"):
        raise TypeError(f"hook output 'decision' must be 'approve' or 'block', not {out['decision']!r}")
    return out


def _failure_output(event: str, text: str) -> dict[str, Any]:
    """What the CLI gets for a failed hook: a deny for gating events, else no decision."""
    reason = f"kandev-nb: {text}"
    if event == "PreToolUse":
        return {
            "hookSpecificOutput": {
                "hookEventName": event,
                "permissionDecision": "deny",
                "permissionDecisionReason": reason,
            }
        }
    if event == "PermissionRequest":
        return {"hookSpecificOutput": {"hookEventName": event, "decision": {"behavior": "deny", "message": reason}}}
    if event == "UserPromptSubmit":
        return {"decision": "block", "reason": reason}
    return {}


def _decision_of(response: Mapping[str, Any], event: str) -> tuple[str | None, str]:
    """The tool decision in a hook output, and its reason."""
    specific = response.get("hookSpecificOutput")
    specific = specific if isinstance(specific, dict) else {}
    if event == "PreToolUse":
        decision = specific.get("permissionDecision")
        if decision is None and response.get("decision") in ("approve", "block"):  # the older spelling
            decision = "allow" if response["decision"] == "approve" else "deny"
        reason = specific.get("permissionDecisionReason") or response.get("reason") or ""
        return (decision if decision in _DECISIONS else None), str(reason)
    if event == "PermissionRequest":
        inner = specific.get("decision")
        if isinstance(inner, dict) and inner.get("behavior") in ("allow", "deny"):
            return str(inner["behavior"]), str(inner.get("message") or "")
    return None, ""


def hooks_key(hooks: Mapping[str, Sequence[Any]] | None) -> tuple[Any, ...]:
    """A value that changes when the hooks of a launch change (events, matchers, functions,
    timeouts): a new key needs a new CLI process, as hooks are registered in `initialize`."""
    return tuple(
        (event, m.matcher, tuple(id(fn) for fn in m.hooks), m.timeout)
        for event, ms in _matchers(hooks).items()
        for m in ms
    )


async def answer_hook_callback(
    registry: HookRegistry,
    request_id: str,
    request: Mapping[str, Any],
    control: Any,
    emit: Callable[[Any], None],
    asked: set[str],
    session_id: str | None,
) -> None:
    """Answer one `hook_callback` control_request with the hook's output (on its own task).

    A tool decision (allow/deny) becomes a :class:`~kandev_nb.agent.events.PermissionDecided`
    with ``decided_by="hook"`` and `hook` = the function's name, emitted before the answer
    so the tool card shows it ("denied by hook no_rm"); its `tool_use_id` is added to
    `asked`, so the call is not reported again as decided by the CLI's settings. A failed
    hook also issues a :class:`~kandev_nb.errors.HookWarning` (shown in the running cell).

    A request naming no hook of this process is answered with an error.
    """
    import warnings

    from kandev_nb.agent import events as ev
    from kandev_nb.errors import HookWarning, TransportClosedError

    try:
        outcome = await registry.call(request)
    except HookError as exc:
        with contextlib.suppress(TransportClosedError):
            await control.answer_error(request_id, str(exc))
        return
    if outcome.warning is not None:
        verdict = " The call was denied." if outcome.event in GATING_EVENTS else ""
        warnings.warn_explicit(f"{outcome.warning}.{verdict}", HookWarning, "kandev_nb hook", 0, registry=None)
    if outcome.decision in ("allow", "deny") and outcome.tool_use_id:
        asked.add(outcome.tool_use_id)
        emit(
            ev.PermissionDecided(
                request_id=f"hook:{request_id}",
                tool_name=outcome.tool_name or "unknown",
                behavior="allow" if outcome.decision == "allow" else "deny",
                decided_by="hook",
                hook=outcome.name,
                waited_ms=outcome.duration_ms,
                message=outcome.reason,
                tool_use_id=outcome.tool_use_id,
                session_id=session_id,
            )
        )
    with contextlib.suppress(TransportClosedError):
        await control.answer(request_id, outcome.response)
