"""Debug logs and tracing of the adapter, as in the seed ("Debug & Tracing").

With ``KANDEV_DEBUG_AGENT_MESSAGES=true`` every :class:`~kandev_nb.agent.adapter.Adapter` gets a
:class:`DebugObserver` that writes two JSONL files per adapter (one per session):

- ``raw-streamjson-<id>.jsonl``: each message the adapter received, as decoded (control
  messages are the control plane's and are not in it, as in the seed);
- ``normalized-streamjson-<id>.jsonl``: each AgentEvent it produced, as
  ``event.model_dump(mode="json")``, with the index of the raw message it came from.

They go to ``KANDEV_DEBUG_DIR`` if set, else the current directory. ``<id>`` is the
adapter's own id (the session_id is not known before the first message).

When OpenTelemetry is installed (``opentelemetry-api``; an SDK and exporter configured by
the application, or ``opentelemetry-sdk`` plus the OTLP exporter, which we then set up)
and ``OTEL_EXPORTER_OTLP_ENDPOINT`` is set as well, each turn becomes a
``streamjson.prompt`` span with one child span per event (``streamjson.message_chunk``,
``streamjson.tool_call``, ...), each carrying span events ``raw`` and ``normalized`` with
the JSON of the message and of the event, for side-by-side comparison.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import uuid
from pathlib import Path
from typing import IO, Any, Protocol

from kandev_nb.agent import events as ev

__all__ = ["ENV_DEBUG", "ENV_DEBUG_DIR", "DebugObserver", "Observer", "debug_enabled", "from_env"]

log = logging.getLogger("kandev_nb.agent.debug")

ENV_DEBUG = "KANDEV_DEBUG_AGENT_MESSAGES"
ENV_DEBUG_DIR = "KANDEV_DEBUG_DIR"
_TRUE = frozenset({"1", "true", "yes", "on"})


class Observer(Protocol):
    """Called by the adapter after each message with the events it made from it."""

    def __call__(self, msg: Any, events: list[ev.AgentEvent]) -> None: ...


def debug_enabled(environ: dict[str, str] | None = None) -> bool:
    """True when ``KANDEV_DEBUG_AGENT_MESSAGES`` is "true" (or 1, yes, on; any case)."""
    value = (environ if environ is not None else os.environ).get(ENV_DEBUG, "")
    return value.strip().lower() in _TRUE


def from_env(environ: dict[str, str] | None = None) -> DebugObserver | None:
    """A :class:`DebugObserver` if debug logging is enabled in the environment, else None."""
    env = dict(os.environ if environ is None else environ)
    if not debug_enabled(env):
        return None
    directory = Path(env.get(ENV_DEBUG_DIR) or os.getcwd())
    tracing = bool(env.get("OTEL_EXPORTER_OTLP_ENDPOINT"))
    return DebugObserver(directory, tracing=tracing)


def _raw_of(msg: Any) -> Any:
    raw = getattr(msg, "raw", None)
    if raw is not None:
        return raw
    return {"invalid_line": getattr(msg, "text", repr(msg)), "error": getattr(msg, "error", None)}


def _event_json(event: ev.AgentEvent) -> dict[str, Any]:
    return event.model_dump(mode="json")


class DebugObserver:
    """Writes the raw and normalised JSONL logs, and OpenTelemetry spans when enabled.

    Args:
        directory: where the two files go (created if missing).
        agent_id: the ``<id>`` in the file names (default: 12 random hex digits).
        tracing: also make spans (needs OpenTelemetry; silently off without it).

    Attributes:
        raw_path, normalized_path: the two files (created on the first message).
    """

    def __init__(
        self, directory: str | os.PathLike[str], agent_id: str | None = None, *, tracing: bool = False
    ) -> None:
        self.agent_id = agent_id or uuid.uuid4().hex[:12]
        self.directory = Path(directory)
        self.raw_path = self.directory / f"raw-streamjson-{self.agent_id}.jsonl"
        self.normalized_path = self.directory / f"normalized-streamjson-{self.agent_id}.jsonl"
        self._raw: IO[str] | None = None
        self._normalized: IO[str] | None = None
        self._count = 0
        self._failed = False
        self._tracer = _Tracer.create() if tracing else None

    def __call__(self, msg: Any, events: list[ev.AgentEvent]) -> None:
        """Log one message and its events (never raises; a failing write is logged once)."""
        self._count += 1
        raw = _raw_of(msg)
        try:
            if not self._failed and (self._raw is None or self._normalized is None):
                self.directory.mkdir(parents=True, exist_ok=True)
                self._raw = open(self.raw_path, "a", encoding="utf-8")  # noqa: SIM115
                self._normalized = open(self.normalized_path, "a", encoding="utf-8")  # noqa: SIM115
            if self._raw is not None and self._normalized is not None:
                self._write(raw, events, self._raw, self._normalized)
        except OSError as exc:
            log.warning("kandev_nb debug log disabled: %s", exc)
            self.close()
            self._failed = True
        if self._tracer is not None:
            self._tracer.record(raw, events)

    def _write(self, raw: Any, events: list[ev.AgentEvent], raw_fh: IO[str], normalized_fh: IO[str]) -> None:
        raw_fh.write(json.dumps(raw, ensure_ascii=False) + "\n")
        for event in events:
            line = {"raw_index": self._count, **_event_json(event)}
            normalized_fh.write(json.dumps(line, ensure_ascii=False) + "\n")
        raw_fh.flush()
        normalized_fh.flush()

    def close(self) -> None:
        """Close the files (a later message reopens them in append mode)."""
        for fh in (self._raw, self._normalized):
            if fh is not None:
                with contextlib.suppress(OSError):
                    fh.close()
        self._raw = self._normalized = None
        if self._tracer is not None:
            self._tracer.end_turn()


class _Tracer:
    """The seed's span hierarchy: ``streamjson.prompt`` per turn, a child span per event."""

    def __init__(self, tracer: Any, trace_api: Any) -> None:
        self._tracer = tracer
        self._trace = trace_api
        self._prompt: Any = None

    @classmethod
    def create(cls) -> _Tracer | None:
        """A tracer if OpenTelemetry is importable, else None (tracing silently off)."""
        try:
            from opentelemetry import trace
        except ImportError:
            return None
        _configure_sdk(trace)
        return cls(trace.get_tracer("kandev_nb"), trace)

    def record(self, raw: Any, events: list[ev.AgentEvent]) -> None:
        if self._prompt is None:
            self._prompt = self._tracer.start_span("streamjson.prompt")
        raw_json = json.dumps(raw, ensure_ascii=False)[:65536]
        context = self._trace.set_span_in_context(self._prompt)
        if not events and isinstance(raw, dict) and raw.get("type") == "system":
            events_to_trace: list[ev.AgentEvent | None] = [None]
        else:
            events_to_trace = list(events)
        for event in events_to_trace:
            name = f"streamjson.{event.type if event is not None else raw.get('type', 'message')}"
            span = self._tracer.start_span(name, context=context)
            span.add_event("raw", {"json": raw_json})
            if event is not None:
                span.add_event("normalized", {"json": json.dumps(_event_json(event), ensure_ascii=False)[:65536]})
                if event.session_id:
                    span.set_attribute("session_id", event.session_id)
            span.end()
            if isinstance(event, ev.Complete):
                self.end_turn()

    def end_turn(self) -> None:
        if self._prompt is not None:
            self._prompt.end()
            self._prompt = None


_configured = False


def _configure_sdk(trace: Any) -> None:
    """Install an OTLP exporter if the app has no tracer provider and the SDK is installed."""
    global _configured
    if _configured:
        return
    _configured = True
    provider = trace.get_tracer_provider()
    if type(provider).__name__ not in ("ProxyTracerProvider", "NoOpTracerProvider"):
        return  # the application configured tracing itself
    try:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
    except ImportError:
        log.info("opentelemetry-sdk or the OTLP exporter is not installed: spans are not exported")
        return
    sdk_provider = TracerProvider(resource=Resource.create({"service.name": "kandev-nb"}))
    sdk_provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    trace.set_tracer_provider(sdk_provider)
