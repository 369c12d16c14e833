"""Where the ``reyn`` command's spans go: the OpenTelemetry SDK set up from the standard ``OTEL_*``
variables, when the profile turns tracing on (``[observability] tracing = true``; the core's command
calls ``export_spans`` through the ``reyn.tracing`` entry point, before the load).

A library host sets up its own SDK; the ``reyn`` command is its own host, so it does what the
OpenTelemetry SDK's environment configuration prescribes: a ``TracerProvider`` (sampler from
``OTEL_TRACES_SAMPLER``, resource from ``OTEL_SERVICE_NAME`` / ``OTEL_RESOURCE_ATTRIBUTES``, service
name ``reyn`` otherwise) with a batch processor per exporter named in ``OTEL_TRACES_EXPORTER``
(default ``otlp``; ``otlp`` follows ``OTEL_EXPORTER_OTLP[_TRACES]_PROTOCOL``, default
``http/protobuf``; ``console``; ``none``). Exporters are found by their standard entry points
(``opentelemetry_traces_exporter``); the OTLP exporter reads its endpoint and headers from the
environment itself. Spans still queued are flushed when the process exits.

Nothing is done when the SDK is not installed (one line on stderr says so), when a provider is
already set (``opentelemetry-instrument``, a ``sitecustomize``), or when tracing is not on.
"""

from __future__ import annotations

import os
import sys
from typing import Any

_OTLP_PROTOCOLS = {"http/protobuf": "otlp_proto_http", "grpc": "otlp_proto_grpc"}


def _warn(message: str) -> None:
    print(f"reyn: tracing: {message}", file=sys.stderr)


def exporter_names() -> list[str]:
    """The entry-point names of the exporters ``OTEL_TRACES_EXPORTER`` asks for (``otlp`` resolved
    by the OTLP protocol variables)."""
    names = [n.strip() for n in os.environ.get("OTEL_TRACES_EXPORTER", "otlp").split(",") if n.strip()]
    protocol = (
        os.environ.get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
        or os.environ.get("OTEL_EXPORTER_OTLP_PROTOCOL")
        or "http/protobuf"
    ).strip()
    out = []
    for name in names:
        if name == "none":
            return []
        out.append(_OTLP_PROTOCOLS.get(protocol, f"otlp ({protocol})") if name == "otlp" else name)
    return out


def _exporter(name: str) -> Any:
    from importlib.metadata import entry_points

    found = list(entry_points(group="opentelemetry_traces_exporter", name=name))
    if not found:
        hint = "opentelemetry-exporter-otlp-proto-http" if name.startswith("otlp") else "its package"
        _warn(f"no span exporter {name!r} is installed (OTEL_TRACES_EXPORTER); install {hint}")
        return None
    try:
        return found[0].load()()
    except Exception as exc:  # a broken exporter must not stop the command
        _warn(f"span exporter {name!r} could not be started ({type(exc).__name__}: {exc})")
        return None


def export_spans() -> bool:
    """Set up the SDK for this process unless somebody else did; returns whether a provider was set.
    (The ``reyn`` command calls it when its profile turns tracing on.)"""
    if os.environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return False
    try:
        from opentelemetry import trace
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
    except ImportError:
        _warn(
            "[observability] tracing is on but the OpenTelemetry SDK is not installed, so spans go "
            "nowhere; install opentelemetry-sdk and opentelemetry-exporter-otlp-proto-http"
        )
        return False
    if not isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider):
        return False  # the operator's own set-up wins
    named = "service.name=" in os.environ.get("OTEL_RESOURCE_ATTRIBUTES", "")
    attributes = {} if os.environ.get("OTEL_SERVICE_NAME") or named else {"service.name": "reyn"}
    provider = TracerProvider(resource=Resource.create(attributes))
    for name in exporter_names():
        exporter = _exporter(name)
        if exporter is not None:
            provider.add_span_processor(BatchSpanProcessor(exporter))
    trace.set_tracer_provider(provider)
    return True


__all__ = ["export_spans", "exporter_names"]
