"""The real OpenTelemetry SDK with its in-memory exporter, installed once as the global provider."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

pytest.importorskip("opentelemetry.sdk", reason="the dev extra installs opentelemetry-sdk")

from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from reyn_otel import configure_tracing

_EXPORTER = InMemorySpanExporter()
_PROVIDER = TracerProvider()
_PROVIDER.add_span_processor(SimpleSpanProcessor(_EXPORTER))
trace.set_tracer_provider(_PROVIDER)


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    """Tracing on for one test, its finished spans in the exporter; off again afterwards."""
    _EXPORTER.clear()
    configure_tracing(True, hash_key=b"k" * 32)
    yield _EXPORTER
    configure_tracing(False)
    _EXPORTER.clear()


@pytest.fixture(autouse=True)
def _isolated(isolated_profile_env: None) -> None:
    """Loads here see only the test's profile, and the argument-hash key is made under tmp_path."""
