"""A real MCP server over stdio (mcp SDK MCPServer) that exports its own spans over OTLP/HTTP.

It is a third-party server with its own OpenTelemetry set-up: the SDK's SERVER spans continue the
trace context its client sends in ``params._meta``. ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` says where
(a synchronous processor: each span is sent before the answer goes out).
"""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

server = MCPServer("upstream")


@server.tool()
def echo(text: str) -> str:
    """Echo the text back."""
    return text


if __name__ == "__main__":
    provider = TracerProvider(resource=Resource.create({"service.name": "upstream"}))
    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter()))
    trace.set_tracer_provider(provider)
    server.run()
