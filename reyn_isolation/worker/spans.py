"""The worker's spans: a call that carries the host's trace context runs inside a span under it.

Imported only when a call frame carries ``trace`` (the host sends it only while its tracing is on and
a span is current), so a worker of a host that does not trace imports no OpenTelemetry at all. The
worker's ``TracerProvider`` (opentelemetry-sdk, from the same installation as reyn-core) is global in
the worker, so spans the plugin's own code opens nest under the call's span. Finished spans are kept
in memory, never exported from the worker (it has no network unless granted): each reply takes the
spans of its own call (the call's span and its descendants) as data, and the host re-creates them in
its trace (reyn-otel's ``worker_spans``, through the core's observation seam). Without
opentelemetry-sdk the worker traces nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

MAX_SPANS = 256
"""The most spans one reply carries (the earliest-started are kept)."""
MAX_KEPT = 4 * MAX_SPANS
"""The most finished spans kept, between replies, for calls still running."""
MAX_ATTRIBUTES = 64
MAX_TEXT = 4096

_state: dict[str, Any] = {}


def _setup() -> bool:
    """The worker's provider and in-memory exporter, once; False without opentelemetry-sdk."""
    if "ok" in _state:
        return bool(_state["ok"])
    try:
        from opentelemetry import trace
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
        from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator
    except ImportError:
        _state["ok"] = False
        return False
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    trace.set_tracer_provider(provider)
    _state.update(
        ok=True,
        exporter=exporter,
        tracer=provider.get_tracer("reyn_isolation.worker"),
        propagator=TraceContextTextMapPropagator(),
    )
    return True


class CallSpan:
    """The span of one traced call: current while its handler runs (``enter``/``exit``), ended with
    its outcome, then taken with its descendants (``finish``)."""

    def __init__(self, carrier: Mapping[str, Any], tool: str) -> None:
        from opentelemetry import trace

        parent = _state["propagator"].extract({k: str(v) for k, v in carrier.items() if isinstance(k, str)})
        self.span = _state["tracer"].start_span(
            f"isolated_worker {tool}",
            context=parent,
            kind=trace.SpanKind.INTERNAL,
            attributes={"gen_ai.tool.name": tool, "reyn.isolated": True},
        )
        _state.setdefault("running", set()).add(self.span.get_span_context().span_id)
        self._token: Any = None

    def enter(self) -> None:
        from opentelemetry import context, trace

        self._token = context.attach(trace.set_span_in_context(self.span))

    def exit(self) -> None:
        from opentelemetry import context

        if self._token is not None:
            context.detach(self._token)
            self._token = None

    def finish(self, reply: Mapping[str, Any]) -> list[dict[str, Any]]:
        """End the span with the reply's outcome; its spans and its descendants' as data."""
        from opentelemetry.trace import Status, StatusCode

        if reply.get("ok") is not True:
            kind = str(reply.get("kind"))[:80]
            self.span.set_attribute("error.type", kind)
            self.span.set_status(Status(StatusCode.ERROR, kind))
        self.span.end()
        return _take(self.span.get_span_context().span_id)


def call_span(carrier: Any, tool: str) -> CallSpan | None:
    """A ``CallSpan`` when the frame carried a trace context and the SDK is importable, else None."""
    if not isinstance(carrier, Mapping) or not isinstance(carrier.get("traceparent"), str):
        return None
    if not _setup():
        return None
    return CallSpan(carrier, tool)


def _take(root: int) -> list[dict[str, Any]]:
    """The finished spans under ``root`` (itself included), removed from the exporter. Those of calls
    still running stay for their own replies (at most ``MAX_KEPT``, the latest-started); the rest
    (under a call that already replied, or under none) are dropped, so the buffer never grows."""
    exporter = _state["exporter"]
    running: set[int] = _state.setdefault("running", set())
    running.discard(root)
    finished = list(exporter.get_finished_spans())
    parent_of = {s.context.span_id: (s.parent.span_id if s.parent is not None else None) for s in finished}

    def call_of(span_id: int | None) -> int | None:
        seen = 0
        while span_id is not None and seen <= len(parent_of):
            if span_id == root or span_id in running:
                return span_id
            span_id = parent_of.get(span_id)
            seen += 1
        return None

    calls = [(call_of(s.context.span_id), s) for s in finished]
    mine = [s for call, s in calls if call == root]
    exporter.clear()
    others = [s for call, s in calls if call is not None and call != root]
    if others:  # the clear took every span: keep the running calls' for their replies
        others.sort(key=lambda s: s.start_time or 0)
        exporter.export(others[-MAX_KEPT:])
    mine.sort(key=lambda s: s.start_time or 0)
    return [_as_data(s) for s in mine[:MAX_SPANS]]


def _value(value: Any) -> Any:
    if isinstance(value, str):
        return value[:MAX_TEXT]
    if isinstance(value, bool | int | float):
        return value
    if isinstance(value, list | tuple):
        return [_value(v) for v in value[:64] if isinstance(v, str | bool | int | float)]
    return str(value)[:MAX_TEXT]


def _attributes(attributes: Any) -> dict[str, Any]:
    items = list((attributes or {}).items())[:MAX_ATTRIBUTES]
    return {str(k)[:256]: _value(v) for k, v in items}


def _as_data(span: Any) -> dict[str, Any]:
    return {
        "span_id": f"{span.context.span_id:016x}",
        "parent_id": None if span.parent is None else f"{span.parent.span_id:016x}",
        "name": span.name[:256],
        "kind": span.kind.name,
        "start": span.start_time,
        "end": span.end_time,
        "attributes": _attributes(span.attributes),
        "status": [span.status.status_code.name, (span.status.description or "")[:MAX_TEXT]],
        "events": [
            {"name": e.name[:256], "time": e.timestamp, "attributes": _attributes(e.attributes)}
            for e in list(span.events)[:MAX_ATTRIBUTES]
        ],
    }


__all__ = ["CallSpan", "call_span"]
