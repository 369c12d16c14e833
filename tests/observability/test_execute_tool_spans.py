"""``execute_tool`` spans, with the real OpenTelemetry SDK and its in-memory exporter (issue 27).

One span per dispatched call following the GenAI semantic conventions, with Reyn's own attributes
under ``reyn.*``; a refusal names the gate layer that decided; the span is current while the handler
runs (async handlers and sync handlers in their worker thread, with and without a timeout), so the
handler's own spans nest under it; no argument or result text unless the operator opts in, and
properties the schema marks secret never.
"""

from __future__ import annotations

import asyncio
from typing import Any

from opentelemetry import trace
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode
from registry_kit import plugin_origin

from reyn_core import ToolContext, ToolDefinition
from reyn_core.definition_digest import definition_digest
from reyn_core.dispatch import argument_hash
from reyn_core.host import RegistryBuilder, ToolRegistry, dispatch_tool, invoke_tool, tool_call_id
from reyn_core.operator_policy import OperatorPolicy
from reyn_otel import configure_tracing

CTX = ToolContext(surface="router", agent="test")
KEY = b"k" * 32
ORIGIN = plugin_origin(version="1.2.3")
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"text": {"type": "string"}, "token": {"type": "string", "writeOnly": True}},
    "required": ["text"],
}
_inner = trace.get_tracer("handler")


async def echo_async(text: str, token: str = "") -> dict[str, str]:
    with _inner.start_as_current_span("handler work"):
        await asyncio.sleep(0)
    return {"echo": text}


def echo_sync(text: str, token: str = "") -> dict[str, str]:
    with _inner.start_as_current_span("handler work"):
        pass
    return {"echo": text}


def registry(handler: Any = echo_async, *, timeout_s: float | None = None, **policy: Any) -> ToolRegistry:
    builder = RegistryBuilder(operator=OperatorPolicy(**policy))
    builder.register(
        ToolDefinition(
            name="notes_echo",
            description="Echo.",
            parameters=SCHEMA,
            handler=handler,
            timeout_s=timeout_s,
            origin=ORIGIN,
        )
    )
    return builder.freeze()


def only(spans: InMemorySpanExporter, name: str) -> Any:
    found = [s for s in spans.get_finished_spans() if s.name == name]
    assert len(found) == 1, [s.name for s in spans.get_finished_spans()]
    return found[0]


async def test_a_call_has_its_execute_tool_span_with_provenance(spans: InMemorySpanExporter) -> None:
    reg = registry()
    with tool_call_id("call_1"):
        envelope = await dispatch_tool(reg, "notes_echo", {"text": "hi"}, CTX)
    assert envelope["status"] == "ok"
    span = only(spans, "execute_tool notes_echo")
    attrs = dict(span.attributes)
    assert span.kind is SpanKind.INTERNAL
    assert attrs["gen_ai.operation.name"] == "execute_tool"
    assert attrs["gen_ai.tool.name"] == "notes_echo"
    assert attrs["gen_ai.tool.call.id"] == "call_1"
    assert attrs["gen_ai.tool.type"] == "function"
    assert attrs["reyn.surface"] == "router"
    assert attrs["reyn.plugin.id"] == "notes"
    assert attrs["reyn.plugin.distribution"] == "reyn-notes"
    assert attrs["reyn.plugin.version"] == "1.2.3"
    assert attrs["reyn.plugin.tree_digest"] == ORIGIN.tree_digest
    assert attrs["reyn.tool.definition_digest"] == definition_digest(reg.get("notes_echo"))
    assert attrs["reyn.gate.outcome"] == "allowed"
    assert attrs["reyn.tool.arguments.hmac_sha256"] == argument_hash({"text": "hi"}, key=KEY)
    assert "error.type" not in attrs
    assert span.status.status_code is not StatusCode.ERROR


async def test_a_refused_call_carries_the_deciding_layer(spans: InMemorySpanExporter) -> None:
    envelope = await dispatch_tool(
        registry(router_exclude=frozenset({"notes_echo"})), "notes_echo", {"text": "hi"}, CTX
    )
    assert envelope["error"]["kind"] == "gate_refused"
    attrs = dict(only(spans, "execute_tool notes_echo").attributes)
    assert attrs["error.type"] == "gate_refused"
    assert attrs["reyn.gate.outcome"] == "refused"
    assert attrs["reyn.gate.layer"] == "operator"
    # positive control: the same tool on the phase surface (not excluded there) runs
    spans.clear()
    ok = await dispatch_tool(
        registry(router_exclude=frozenset({"notes_echo"})),
        "notes_echo",
        {"text": "hi"},
        CTX,
        surface="phase",
        allowed_ops=["notes_echo"],
    )
    assert ok["status"] == "ok"
    assert dict(only(spans, "execute_tool notes_echo").attributes)["reyn.gate.outcome"] == "allowed"


async def test_an_unknown_tool_is_an_error_span(spans: InMemorySpanExporter) -> None:
    envelope = await dispatch_tool(registry(), "nope", {}, CTX)
    assert envelope["error"]["kind"] == "not_found"
    span = only(spans, "execute_tool nope")
    assert span.attributes["error.type"] == "not_found"
    assert span.status.status_code is StatusCode.ERROR


async def _nests(spans: InMemorySpanExporter, reg: ToolRegistry) -> None:
    with _inner.start_as_current_span("caller") as caller:
        assert (await dispatch_tool(reg, "notes_echo", {"text": "hi"}, CTX))["status"] == "ok"
    tool_span = only(spans, "execute_tool notes_echo")
    work = only(spans, "handler work")
    assert tool_span.parent is not None and tool_span.parent.span_id == caller.get_span_context().span_id
    assert work.parent is not None and work.parent.span_id == tool_span.context.span_id
    assert work.context.trace_id == caller.get_span_context().trace_id


async def test_an_async_handlers_span_nests_under_execute_tool(spans: InMemorySpanExporter) -> None:
    await _nests(spans, registry(echo_async))


async def test_an_async_handler_with_a_timeout_nests_too(spans: InMemorySpanExporter) -> None:
    await _nests(spans, registry(echo_async, timeout_s=5))


async def test_a_sync_handlers_span_in_its_worker_thread_nests(spans: InMemorySpanExporter) -> None:
    await _nests(spans, registry(echo_sync))


async def test_a_sync_handler_with_a_timeout_daemon_thread_nests(spans: InMemorySpanExporter) -> None:
    await _nests(spans, registry(echo_sync, timeout_s=5))


async def test_no_argument_or_result_text_unless_opted_in(spans: InMemorySpanExporter) -> None:
    await dispatch_tool(registry(), "notes_echo", {"text": "the-plain-text", "token": "s3cr3t-value"}, CTX)
    span = only(spans, "execute_tool notes_echo")
    flat = repr(dict(span.attributes)) + repr(span.events) + span.name
    assert "the-plain-text" not in flat and "s3cr3t-value" not in flat
    assert "gen_ai.tool.call.arguments" not in span.attributes


async def test_opted_in_content_is_bounded_and_secrets_are_redacted(spans: InMemorySpanExporter) -> None:
    configure_tracing(True, capture_content=True, content_max_chars=40, hash_key=KEY)
    await dispatch_tool(registry(), "notes_echo", {"text": "x" * 100, "token": "s3cr3t-value"}, CTX)
    attrs = dict(only(spans, "execute_tool notes_echo").attributes)
    args_text = attrs["gen_ai.tool.call.arguments"]
    assert "s3cr3t-value" not in args_text
    assert len(args_text) <= 41  # 40 characters and the ellipsis
    spans.clear()
    await dispatch_tool(registry(), "notes_echo", {"text": "short", "token": "s3cr3t-value"}, CTX)
    attrs = dict(only(spans, "execute_tool notes_echo").attributes)
    assert attrs["gen_ai.tool.call.arguments"] == '{"text":"short","token":"[redacted]"}'
    assert attrs["gen_ai.tool.call.result"] == '{"echo":"short"}'


async def test_tracing_off_makes_no_span(spans: InMemorySpanExporter) -> None:
    configure_tracing(False)
    assert (await dispatch_tool(registry(), "notes_echo", {"text": "hi"}, CTX))["status"] == "ok"
    assert [s.name for s in spans.get_finished_spans()] == ["handler work"]  # the handler's own only


async def test_a_tool_a_handler_calls_gets_its_own_nested_span(spans: InMemorySpanExporter) -> None:
    inner_reg = registry()

    async def outer(text: str, token: str = "") -> Any:
        return await dispatch_tool(inner_reg, "notes_echo", {"text": text}, CTX)

    builder = RegistryBuilder()
    builder.register(
        ToolDefinition(name="outer", description="Calls notes_echo.", parameters=SCHEMA, handler=outer)
    )
    assert (await dispatch_tool(builder.freeze(), "outer", {"text": "hi"}, CTX))["status"] == "ok"
    outer_span = only(spans, "execute_tool outer")
    inner_span = only(spans, "execute_tool notes_echo")
    assert inner_span.parent is not None and inner_span.parent.span_id == outer_span.context.span_id


async def named(text: str, token: str = "") -> str:
    return b"caf\xe9".decode("utf-8", "surrogateescape") if text == "lone" else "café 😀"


async def test_opted_in_content_utf8_cannot_carry_is_exported_with_its_escape(
    spans: InMemorySpanExporter,
) -> None:
    # a file name that is not UTF-8 in the result: OTLP dropped the attribute (with a traceback)
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    configure_tracing(True, capture_content=True, hash_key=KEY)

    for text in ("lone", "fine"):
        spans.clear()
        # invoke_tool: a Python caller receives the result as it is (dispatch_tool refuses it)
        await invoke_tool(registry(named), "notes_echo", {"text": text}, CTX)
        span = only(spans, "execute_tool notes_echo")
        exported = encode_spans([span]).resource_spans[0].scope_spans[0].spans[0]
        sent = {a.key: a.value.string_value for a in exported.attributes}
        assert sent["gen_ai.tool.call.result"] == ('"caf\\udce9"' if text == "lone" else '"café 😀"')


async def test_a_result_dispatch_tool_refuses_is_an_error_span(spans: InMemorySpanExporter) -> None:
    # the span states what the caller received: before, it was ok (the refusal came after it ended)
    configure_tracing(True, capture_content=True, hash_key=KEY)
    refused = await dispatch_tool(registry(named), "notes_echo", {"text": "lone"}, CTX)
    assert refused["error"]["kind"] == "execution_error"
    span = only(spans, "execute_tool notes_echo")
    assert span.status.status_code is StatusCode.ERROR
    assert span.attributes["error.type"] == "execution_error"
    assert "gen_ai.tool.call.result" not in span.attributes  # nothing was sent
    # positive control: text UTF-8 can carry is sent, and the span is ok with it
    spans.clear()
    assert (await dispatch_tool(registry(named), "notes_echo", {"text": "fine"}, CTX))["status"] == "ok"
    span = only(spans, "execute_tool notes_echo")
    assert span.status.status_code is not StatusCode.ERROR
    assert span.attributes["gen_ai.tool.call.result"] == '"café 😀"'
