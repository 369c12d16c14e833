"""The host's half of tracing into an isolated worker: the trace context a call frame carries, and
the worker's spans re-created in the host's trace (``SpanObserver.carrier`` / ``adopt``).

Used only while the host's tracing is on (the core asks its observer): ``trace_carrier`` gives the W3C
``traceparent`` / ``tracestate`` of the current span (the dispatcher's ``execute_tool`` span, which
is current while the proxy's handler runs); ``recreate`` opens, through the host's own tracer, one span
per span the worker sent, under the span its parent id names (the call's span for the worker's root),
with the worker's name, kind, start and end times, attributes, events and status, plus
``reyn.worker.span_id``. The host's SDK exports them with its own spans (the worker has no network to
export itself, and only the public OpenTelemetry API is used, so any SDK set-up works); their span ids
are the host's. A span whose parent is not among them is dropped, never made a root.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

MAX_SPANS = 256
"""The most worker spans one reply may add to the host's trace."""


def trace_carrier() -> dict[str, str] | None:
    """The current span's W3C trace context as a carrier, or None (no span current)."""
    from opentelemetry import trace
    from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

    if not trace.get_current_span().get_span_context().is_valid:
        return None
    carrier: dict[str, str] = {}
    TraceContextTextMapPropagator().inject(carrier)
    return carrier or None


def recreate(tracer: Any, spans: Any) -> int:
    """The worker's ``spans`` (data) re-created under the current span through ``tracer``; returns how
    many were. Never raises: the spans come from the worker, and tracing never costs a call its answer."""
    if not isinstance(spans, list):
        return 0
    try:
        return _recreate(tracer, spans)
    except Exception:
        return 0


def _recreate(tracer: Any, spans: list[Any]) -> int:
    from opentelemetry import trace

    parent = trace.get_current_span()
    made: dict[Any, Any] = {f"{parent.get_span_context().span_id:016x}": parent}
    pending = [  # ids are the worker's hex strings: anything else (a list, a number) is dropped
        s
        for s in spans[:MAX_SPANS]
        if isinstance(s, Mapping)
        and isinstance(s.get("span_id"), str)
        and isinstance(s.get("parent_id"), str)
    ]
    while pending:
        rest = [s for s in pending if s.get("parent_id") not in made]
        if len(rest) == len(pending):
            break  # what is left has no known parent: dropped
        for data in pending:
            if data.get("parent_id") in made:
                span = _make(tracer, data, made[data.get("parent_id")])
                if span is not None:
                    made[data.get("span_id")] = span
        pending = rest
    return len(made) - 1


_NS_LIMIT = 2**64
"""A span's times are nanoseconds in OTLP's ``fixed64``: one outside it would fail the exporter's
encoding of the whole batch, the host's own spans included."""


def _time(value: Any) -> int:
    """A worker's timestamp as nanoseconds; ``ValueError`` outside ``fixed64`` (``ArithmeticError``
    for ``int(inf)``)."""
    ns = int(value)
    if not 0 <= ns < _NS_LIMIT:
        raise ValueError(f"a span time of {ns.bit_length()} bits")
    return ns


def _make(tracer: Any, data: Mapping[str, Any], parent: Any) -> Any:
    from opentelemetry import trace
    from opentelemetry.trace import SpanKind, Status, StatusCode

    try:
        name, start, end = str(data["name"])[:256], _time(data["start"]), _time(data["end"])
        kind = SpanKind[str(data.get("kind"))] if str(data.get("kind")) in SpanKind.__members__ else None
        given = data.get("attributes")
        attributes = dict(given) if isinstance(given, Mapping) else {}
        attributes["reyn.worker.span_id"] = str(data.get("span_id"))[:32]
        span = tracer.start_span(
            name,
            context=trace.set_span_in_context(parent),
            kind=kind or SpanKind.INTERNAL,
            attributes=attributes,
            start_time=start,
        )
    except (KeyError, TypeError, ValueError, ArithmeticError):  # ArithmeticError: int(1e400)
        return None
    events = data.get("events")
    for event in events[:64] if isinstance(events, list) else ():
        given = event.get("attributes") if isinstance(event, Mapping) else None
        if (
            isinstance(given, Mapping)
            and isinstance(event.get("time"), int)
            and 0 <= event["time"] < _NS_LIMIT
        ):
            span.add_event(str(event.get("name"))[:256], attributes=dict(given), timestamp=event["time"])
    status = data.get("status")
    if isinstance(status, list) and status and status[0] == "ERROR":
        span.set_status(Status(StatusCode.ERROR, str(status[1] if len(status) > 1 else "")[:4096]))
    span.end(end_time=end)
    return span


__all__ = ["MAX_SPANS", "recreate", "trace_carrier"]
