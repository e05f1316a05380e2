"""Per-turn usage from the CLI's cumulative figures: cost (USD), API time (ms), tokens.

The CLI reports `result.total_cost_usd`, `result.duration_api_ms` and `result.modelUsage`
cumulatively for its process (DESIGN.md); a turn's figures are the differences from the
previous `result`. :class:`UsageMeter` keeps the previous figures for one process; a
process started with ``--resume`` starts from the totals it restored from the transcript
(:meth:`UsageMeter.resumed`), not from zero.

The CLI restarts its figures inside one process too: at ``/clear`` (CLI 2.1.332 sends a
`conversation_reset` and the ``/clear`` turn's own `result` reports ``total_cost_usd: 0``
and ``modelUsage: {}``). The adapter restarts the meter on `conversation_reset`
(:meth:`UsageMeter.restart`), and a `result` whose `total_cost_usd` is below the previous
one is read the same way (figures that went down restarted from zero), so the next turn is
charged its own requests, never 0.
"""

from __future__ import annotations

import math
from typing import Any

from kandev_nb.agent import events as ev
from kandev_nb.agent.fastpath import trusted
from kandev_nb.wire.protocol import ResultMessage

__all__ = ["UsageMeter", "base_model", "main_model_key", "to_int", "turn_tokens", "usage_total"]

_USAGE_KEYS = ("input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
_NOTHING = (0.0, 0.0, 0.0, 0.0, 0.0)  # a model's figures before its first result
_SLACK = 1e-9  # USD: a cumulative total below the previous one by more than this restarted


def to_int(value: Any) -> int:
    """A token count or duration from the wire; anything else (bool, NaN, inf, text) is 0."""
    if type(value) is int:  # the usual case, first
        return value
    if isinstance(value, bool) or not isinstance(value, int | float):
        return 0
    return int(value) if math.isfinite(value) else 0


def usage_total(usage: dict[str, Any]) -> int:
    """input + output + cache creation + cache read tokens of one `usage` object."""
    total = 0
    for key in _USAGE_KEYS:
        value = usage.get(key)
        total += value if type(value) is int else to_int(value)
    return total


def base_model(name: str) -> str:
    """``"claude-opus-4-8[1m]"`` -> ``"claude-opus-4-8"`` (modelUsage keys carry the suffix)."""
    return name.split("[", 1)[0]


def main_model_key(cumulative: dict[str, Any], main_model: str | None) -> str | None:
    """The `modelUsage` key of `main_model` (keys may carry a suffix like ``[1m]``); with no
    main model known, the only key, else None."""
    if not cumulative:
        return None
    if main_model is not None:
        base = base_model(main_model)
        return next((name for name in cumulative if base_model(name) == base), None)
    return next(iter(cumulative)) if len(cumulative) == 1 else None


class UsageMeter:
    """The previous cumulative figures of one CLI process (reset when a new one starts).

    Attributes:
        prev_total_cost: `total_cost_usd` of the last result, USD.
        prev_api_ms: `duration_api_ms` of the last result, ms.
        prev_model_usage: the last `modelUsage` per model: (input, output, cache read, cache
            creation) tokens and cost (USD), as floats.
    """

    def __init__(self) -> None:
        self.prev_total_cost = 0.0
        self.prev_api_ms = 0
        self.prev_model_usage: dict[str, tuple[float, float, float, float, float]] = {}
        self._prev_raw: dict[str, tuple[Any, ...]] = {}  # the same, as sent (to skip what did not change)

    @classmethod
    def resumed(cls, cost_state: dict[str, Any] | None) -> UsageMeter:
        """A meter for a process started with ``--resume``, whose cumulative figures start
        from what it restored: the transcript's last ``cost-state`` line
        (:func:`kandev_nb.agent.transcript.last_cost_state`: ``totalCostUSD`` USD,
        ``totalAPIDuration`` ms, ``modelUsage``); from zero when there is none (the CLI
        restores nothing then either)."""
        meter = cls()
        if not cost_state:
            return meter
        meter.prev_total_cost = _num(cost_state.get("totalCostUSD"))
        meter.prev_api_ms = to_int(cost_state.get("totalAPIDuration"))
        usage = cost_state.get("modelUsage")
        if isinstance(usage, dict):
            meter.delta(usage)  # records each model's figures as the previous ones
        return meter

    def restart(self) -> None:
        """The CLI's cumulative figures restart at zero (`conversation_reset`, ``/clear``):
        the next result's figures are all this process spent since."""
        self.prev_total_cost = 0.0
        self.prev_api_ms = 0
        self.prev_model_usage.clear()
        self._prev_raw.clear()

    def delta(self, cumulative: dict[str, Any], total_cost: float | None = None) -> dict[str, ev.ModelUsage]:
        """This turn's usage per model: `result.modelUsage` (cumulative per process) minus
        what the last result said. Models with nothing new are left out.

        Args:
            cumulative: the result's `modelUsage` (model -> figures, tokens and USD).
            total_cost: the same result's `total_cost_usd` (USD); below the previous total,
                the CLI restarted its figures (:meth:`restart`) and they count from zero.
                A model whose own figures went down restarted likewise.
        """
        if total_cost is not None and total_cost < self.prev_total_cost - _SLACK:
            self.restart()
        out: dict[str, ev.ModelUsage] = {}
        previous = self.prev_model_usage
        for model, usage in cumulative.items():
            if not isinstance(usage, dict):
                continue
            get = usage.get
            raw = (
                get("inputTokens"),
                get("outputTokens"),
                get("cacheReadInputTokens"),
                get("cacheCreationInputTokens"),
                get("costUSD"),
            )
            if raw == self._prev_raw.get(model):
                continue  # the same figures as the last result: nothing new (the usual case for a subagent's model)
            self._prev_raw[model] = raw
            now = (_num(raw[0]), _num(raw[1]), _num(raw[2]), _num(raw[3]), _num(raw[4]))
            prev = previous.get(model, _NOTHING)
            if any(v < p for v, p in zip(now, prev, strict=True)):
                prev = _NOTHING  # this model's figures restarted
            previous[model] = now
            delta = [max(v - p, 0.0) for v, p in zip(now, prev, strict=True)]
            if any(delta):
                window = get("contextWindow")
                out[model] = trusted(ev.ModelUsage)(
                    input_tokens=int(delta[0]),
                    output_tokens=int(delta[1]),
                    cache_read_input_tokens=int(delta[2]),
                    cache_creation_input_tokens=int(delta[3]),
                    cost_usd=round(delta[4], 10),
                    context_window=window if type(window) is int else None,  # not a bool
                )
        return out

    def stats(
        self, msg: ResultMessage, model_usage: dict[str, ev.ModelUsage], main: str | None, session_id: str | None
    ) -> ev.TurnStats:
        """The turn's :class:`~kandev_nb.agent.events.TurnStats` from its `result` line: cost (USD)
        and API time (ms) as differences of the CLI's cumulative `total_cost_usd` and
        `duration_api_ms`, tokens from the `modelUsage` deltas (:func:`turn_tokens`)."""
        total = msg.total_cost_usd
        if total is None:
            cost, total = 0.0, self.prev_total_cost
        else:
            cost = max(total - self.prev_total_cost, 0.0)
            self.prev_total_cost = max(total, self.prev_total_cost)
        api_total = msg.duration_api_ms
        api_ms = max(api_total - self.prev_api_ms, 0)
        self.prev_api_ms = max(api_total, self.prev_api_ms)
        denials = msg.permission_denials
        return trusted(ev.TurnStats)(
            session_id=msg.session_id or session_id,
            result_subtype=msg.subtype,
            is_error=msg.is_error,
            cost_usd=round(cost, 10),
            total_cost_usd=total,
            duration_ms=msg.duration_ms,
            duration_api_ms=api_ms,
            num_turns=msg.num_turns,
            **turn_tokens(msg.usage, model_usage),
            model_usage=model_usage,
            main_model=main,
            permission_denials=tuple(d for d in denials if isinstance(d, dict)) if denials else (),
            stop_reason=msg.stop_reason,
            terminal_reason=msg.terminal_reason,
            api_error_status=msg.api_error_status,
            errors=tuple(msg.errors),
            result_text=msg.result,
            user_message_uuids=msg.user_message_uuids,
            result_origin=msg.origin,
        )


_TOKEN_KEYS = ("input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")


def turn_tokens(usage: dict[str, Any], model_usage: dict[str, ev.ModelUsage]) -> dict[str, int]:
    """A turn's four token counts from the same deltas as its cost: the sums over the
    `result.modelUsage` deltas (all models, subagents included), so they add up with the
    per-model rows. Only a result without `modelUsage` falls back to `result.usage`, which
    an interrupted turn reports as zeros."""
    if len(model_usage) == 1:  # the usual case
        (u,) = model_usage.values()
        return {
            "input_tokens": u.input_tokens,
            "output_tokens": u.output_tokens,
            "cache_read_input_tokens": u.cache_read_input_tokens,
            "cache_creation_input_tokens": u.cache_creation_input_tokens,
        }
    if model_usage:
        return {k: sum(int(getattr(u, k)) for u in model_usage.values()) for k in _TOKEN_KEYS}
    return {k: to_int(usage.get(k)) for k in _TOKEN_KEYS}


def _num(value: Any) -> float:
    """A `modelUsage` figure as a finite float; anything else (bool, text, NaN, inf, an int
    beyond a float) is 0.0, as :func:`to_int` reads them (``int(inf)`` raised and lost the turn's
    `result`)."""
    if type(value) is float:  # the usual case, first
        return value if math.isfinite(value) else 0.0
    if isinstance(value, int) and not isinstance(value, bool):
        try:
            return float(value)
        except OverflowError:
            return 0.0
    return 0.0
