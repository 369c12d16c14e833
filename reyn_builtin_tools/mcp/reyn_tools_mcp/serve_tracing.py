"""What ``reyn mcp serve`` adds to the MCP SDK's own SERVER span of each message it answers.

The SDK (``mcp`` 2.3+) already makes one span per inbound request and notification — ``initialize``,
``tools/list``, ``tools/call {name}``, ``ping``, … — kind SERVER, with ``mcp.method.name``,
``mcp.protocol.version``, ``jsonrpc.request.id``, ``gen_ai.tool.name`` and ``gen_ai.operation.name =
execute_tool`` for calls, ``error.type`` for failures, and the client's ``params._meta``
``traceparent`` as its remote parent; its client injects ``traceparent`` into every request it sends
(CLIENT spans). Reyn makes no second span beside those: this middleware, placed inside the SDK's,
sets on that current span what the SDK leaves out — ``mcp.session.id`` (streamable HTTP's
``Mcp-Session-Id``; stdio has no session id), ``network.transport`` (``pipe`` or ``tcp``),
``network.protocol.name`` and the client's address for HTTP. The dispatcher's ``execute_tool`` span
then opens inside it, so a served call reads ``tools/call {name}`` → ``execute_tool {name}``.

Only ``opentelemetry-api`` is used, a dependency of the ``mcp`` SDK itself; with no SDK provider set
the span is a no-op and this costs one ``is_recording()`` test per message.
"""

from __future__ import annotations

from typing import Any

from opentelemetry import trace


def _http_attributes(request: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"network.transport": "tcp", "network.protocol.name": "http"}
    headers = getattr(request, "headers", None)
    session_id = headers.get("mcp-session-id") if headers is not None else None
    if isinstance(session_id, str) and session_id:
        out["mcp.session.id"] = session_id[:256]
    client = getattr(request, "client", None)
    host, port = getattr(client, "host", None), getattr(client, "port", None)
    if isinstance(host, str):
        out["client.address"] = host
        if isinstance(port, int):
            out["client.port"] = port
    return out


class McpSpanAttributes:
    """Server middleware (``Server.middleware``, after the SDK's ``OpenTelemetryMiddleware``)."""

    async def __call__(self, ctx: Any, call_next: Any) -> Any:
        span = trace.get_current_span()
        if span.is_recording():
            request = ctx.request
            span.set_attributes(
                {"network.transport": "pipe"} if request is None else _http_attributes(request)
            )
        return await call_next(ctx)


__all__ = ["McpSpanAttributes"]
