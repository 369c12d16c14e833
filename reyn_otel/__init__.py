"""reyn-otel: OpenTelemetry spans for Reyn, an add-on on the core's public API (issue 24).

``configure_tracing(True)`` (or a profile's ``[observability] tracing = true``, which finds this
distribution by its ``reyn.tracing`` entry point) installs a ``SpanObserver`` on the core's one
observation seam: an ``execute_tool`` span per dispatched call (OpenTelemetry GenAI conventions plus
``reyn.*`` attributes), a span per load phase with its diagnostics as events, and the trace carried
into isolated workers and their spans back. ``export_spans()`` sets up the SDK for the ``reyn``
command from the standard ``OTEL_*`` variables (docs/observability.md).

Importing this package imports nothing of OpenTelemetry; turning tracing on imports the API only.
"""

from __future__ import annotations

from .command import export_spans, exporter_names
from .observer import INSTRUMENTATION_NAME, SpanObserver, configure_tracing

__all__ = ["INSTRUMENTATION_NAME", "SpanObserver", "configure_tracing", "export_spans", "exporter_names"]
