"""An isolated plugin's call continues the host's trace: the call frame carries ``traceparent``, the
worker runs the handler inside its own span under it, and the spans the plugin's code opens nest
there; the host re-creates them in its trace, exported by the host's real SDK. With tracing off, no
trace context crosses and the worker imports no OpenTelemetry. Real workers, the real SDK."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("opentelemetry.sdk", reason="the dev extra installs opentelemetry-sdk")

from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import reyn_core.host as host
from reyn_core import ToolContext
from reyn_otel import configure_tracing

from .plugin_kit import declaration, install_package_plugin

TRACED = '''
import sys

from reyn_core import ToolError, hookimpl, tool

REYN_API = 1


@tool(purity="read_only")
def traced(text: str) -> str:
    """Do some work inside a span of the plugin's own."""
    from opentelemetry import trace

    with trace.get_tracer("plugin.own").start_as_current_span("plugin work") as span:
        span.set_attribute("plugin.length", len(text))
        span.add_event("halfway", {"step": 1})
    return text.upper()


@tool(purity="read_only")
async def traced_async(text: str) -> str:
    """The same from an async handler."""
    from opentelemetry import trace

    with trace.get_tracer("plugin.own").start_as_current_span("plugin async work"):
        return text.lower()


@tool(purity="read_only")
def fails() -> str:
    """Fail."""
    raise ToolError("nope")


@tool(purity="read_only")
def near_limit(size: int) -> str:
    """A result of ``size`` characters, inside a span whose attribute is as large again."""
    from opentelemetry import trace

    with trace.get_tracer("plugin.own").start_as_current_span("big span") as span:
        span.set_attribute("plugin.padding", "p" * size)
    return "r" * size


@tool(purity="read_only")
def hostile_spans() -> str:
    """Reply once with malformed spans beside a good result (list ids, a start of 1e400)."""
    import json

    import reyn_isolation.worker.call_server as server
    import reyn_isolation.worker.spans as spans
    from reyn_isolation.protocol import HEADER

    real_take, real_encode = spans._take, server.encode

    def take(root):
        spans._take = real_take
        good = real_take(root)
        host = good[0]["parent_id"]
        bad = {"name": "bad", "start": 1, "end": 2}
        return good + [
            {**bad, "span_id": ["a", "list"], "parent_id": host, "name": "bad id"},
            {**bad, "span_id": "00000000000000aa", "parent_id": ["a", "list"], "name": "bad parent"},
            {**bad, "span_id": "00000000000000bb", "parent_id": host, "name": "huge", "start": "HUGE"},
        ]

    def encode(message):
        if "spans" not in message:
            return real_encode(message)
        server.encode = real_encode
        body = json.dumps(message).replace('"HUGE"', "1e400").encode()
        return HEADER.pack(len(body)) + body

    spans._take, server.encode = take, encode
    return "kept"


LATE = []


@tool(purity="read_only")
def start_late(orphans: int) -> int:
    """Open a span that ends after this call replied, and end ``orphans`` spans under no call."""
    from opentelemetry import context, trace

    tracer = trace.get_tracer("plugin.own")
    LATE.append(tracer.start_span("late"))
    for _ in range(orphans):
        tracer.start_span("orphan", context=context.Context()).end()
    return orphans


@tool(purity="read_only")
def end_late() -> int:
    """End the late span (its call replied long ago)."""
    LATE.pop().end()
    return 0


@tool(purity="read_only")
def buffered() -> int:
    """How many finished spans the worker holds (this call's own span is still open)."""
    import reyn_isolation.worker.spans as spans

    return len(spans._state["exporter"].get_finished_spans())


@tool(purity="read_only")
def otel_modules() -> list:
    """The OpenTelemetry modules this process imported."""
    return sorted(m for m in sys.modules if m.startswith("opentelemetry"))


@hookimpl
def reyn_register_tools(register, settings):
    for t in (traced, traced_async, fails, near_limit, hostile_spans, start_late, end_late, buffered):
        register(t)
    register(otel_modules)
'''


@pytest.fixture
def exporter() -> Iterator[InMemorySpanExporter]:
    """The host's real SDK with an in-memory exporter (the global provider, set once per process)."""
    provider = trace.get_tracer_provider()
    if not isinstance(provider, TracerProvider):
        trace.set_tracer_provider(TracerProvider())
        provider = trace.get_tracer_provider()
    assert isinstance(provider, TracerProvider)
    memory = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    yield memory
    configure_tracing(False)
    memory.shutdown()  # the processor stays on the global provider; a shut exporter keeps nothing


@pytest.fixture
def isolated(site: Path) -> Any:
    install_package_plugin(site, "traced", {"__init__.py": TRACED, "reyn_permissions.toml": declaration()})
    result = host.load(
        host.Profile.from_toml_text(
            '[plugins]\nenable = ["traced"]\n[plugins.traced]\nisolation = "process"\n'
            "[plugins.traced.grants]\nmax_result_bytes = 2048\n"
        )
    )
    assert [d.render() for d in result.report.diagnostics if d.is_error] == []
    return result


def _call(result: Any, name: str, args: dict[str, Any] | None = None) -> dict[str, Any]:
    return asyncio.run(host.dispatch_tool(result.registry, name, args or {}, ToolContext(surface="cli")))


def _by_name(exporter: InMemorySpanExporter) -> dict[str, Any]:
    return {s.name: s for s in exporter.get_finished_spans()}


@pytest.mark.parametrize(("tool", "own"), [("traced", "plugin work"), ("traced_async", "plugin async work")])
def test_the_worker_continues_the_host_trace(
    exporter: InMemorySpanExporter, isolated: Any, tool: str, own: str
) -> None:
    configure_tracing(True, hash_key=b"k" * 32)
    assert _call(isolated, tool, {"text": "Hi"})["status"] == "ok"
    spans = _by_name(exporter)
    call = spans[f"execute_tool {tool}"]
    worker = spans[f"isolated_worker {tool}"]
    plugin = spans[own]
    assert {call.context.trace_id, worker.context.trace_id, plugin.context.trace_id} == {
        call.context.trace_id
    }
    assert worker.parent is not None and worker.parent.span_id == call.context.span_id
    assert plugin.parent is not None and plugin.parent.span_id == worker.context.span_id
    assert worker.attributes["reyn.isolated"] is True
    assert len(str(plugin.attributes["reyn.worker.span_id"])) == 16
    # the worker's times: inside the host's call span
    assert call.start_time <= worker.start_time <= plugin.start_time
    assert plugin.end_time <= worker.end_time <= call.end_time
    if tool == "traced":
        assert plugin.attributes["plugin.length"] == 2
        assert [(e.name, dict(e.attributes)) for e in plugin.events] == [("halfway", {"step": 1})]


def test_a_failing_call_is_an_error_span_in_the_worker_too(
    exporter: InMemorySpanExporter, isolated: Any
) -> None:
    configure_tracing(True, hash_key=b"k" * 32)
    assert _call(isolated, "fails")["status"] == "error"
    worker = _by_name(exporter)["isolated_worker fails"]
    assert worker.status.status_code.name == "ERROR"
    assert worker.attributes["error.type"] == "execution_error"


def test_tracing_off_sends_no_context_and_the_worker_imports_no_opentelemetry(
    exporter: InMemorySpanExporter, isolated: Any
) -> None:
    configure_tracing(False)
    assert _call(isolated, "otel_modules") == {"status": "ok", "data": []}
    assert exporter.get_finished_spans() == ()
    # on, then: the worker imports it for the first traced call (positive control)
    configure_tracing(True, hash_key=b"k" * 32)
    modules = _call(isolated, "otel_modules")["data"]
    assert "opentelemetry.sdk.trace" in modules


def test_spans_a_worker_sends_are_bounded_and_malformed_ones_dropped(exporter: InMemorySpanExporter) -> None:
    import reyn_core.observation as observation
    from reyn_core.host import active_tracer
    from reyn_otel.worker_spans import MAX_SPANS

    configure_tracing(True, hash_key=b"k" * 32)
    tracer = trace.get_tracer("test")
    with tracer.start_as_current_span("call") as call:
        root = f"{call.get_span_context().span_id:016x}"

        def span(i: int, parent: str, **extra: Any) -> dict[str, Any]:
            return {"span_id": f"{i:016x}", "parent_id": parent, "name": f"s{i}", "kind": "INTERNAL"} | {
                "start": 1,
                "end": 2,
                **extra,
            }

        sent: list[Any] = [
            span(1, root, attributes={"a": 1}, events=[{"name": "e", "time": 1, "attributes": {"k": "v"}}]),
            span(2, f"{1:016x}", status=["ERROR", "boom"]),
            span(3, "feedfeedfeedfeed"),  # no such parent: dropped, never a root
            span(4, root, start="soon"),  # not a time: dropped
            span(5, root, attributes=["not", "a", "mapping"], events="nope"),  # kept, without them
            "not a span",
            None,
        ]
        observer = observation.active  # the SpanObserver configure_tracing installed
        assert observer.tracer is active_tracer()
        assert observer.adopt(sent) == 3
        assert observer.adopt({"not": "a list"}) == 0
        flood = [span(100 + i, root) for i in range(10 * MAX_SPANS)]
        assert observer.adopt(flood) == MAX_SPANS
    got = {s.name: s for s in exporter.get_finished_spans()}
    assert got["s1"].parent.span_id == call.get_span_context().span_id
    assert got["s2"].parent.span_id == got["s1"].context.span_id
    assert got["s2"].status.status_code.name == "ERROR"
    assert dict(got["s1"].attributes) == {"a": 1, "reyn.worker.span_id": f"{1:016x}"}
    assert [e.name for e in got["s1"].events] == ["e"]
    assert "s3" not in got and "s4" not in got
    assert dict(got["s5"].attributes) == {"reyn.worker.span_id": f"{5:016x}"}


def test_spans_that_would_push_a_reply_over_the_limit_are_dropped_not_the_result(
    isolated: Any, exporter: InMemorySpanExporter
) -> None:
    configure_tracing(True, hash_key=b"k" * 32)
    with trace.get_tracer("test").start_as_current_span("host call"):
        reply = _call(isolated, "near_limit", {"size": 1500})  # fits alone; with its span it would not
    assert reply["status"] == "ok" and reply["data"] == "r" * 1500
    assert "big span" not in _by_name(exporter)  # the spans went, the answer stayed
    with trace.get_tracer("test").start_as_current_span("host call"):
        small = _call(isolated, "near_limit", {"size": 100})  # control: a reply that fits keeps its spans
    assert small["status"] == "ok" and small["data"] == "r" * 100
    assert "big span" in _by_name(exporter)
    with trace.get_tracer("test").start_as_current_span("host call"):
        over = _call(isolated, "near_limit", {"size": 4000})  # a result over the limit alone still fails
    assert over["status"] == "error" and "over the plugin's limit" in over["error"]["message"]


def test_malformed_spans_from_a_worker_are_dropped_and_its_result_kept(
    isolated: Any, exporter: InMemorySpanExporter
) -> None:
    configure_tracing(True, hash_key=b"k" * 32)
    with trace.get_tracer("test").start_as_current_span("host call"):
        reply = _call(isolated, "hostile_spans")
    assert reply["status"] == "ok" and reply["data"] == "kept"
    got = _by_name(exporter)
    assert "isolated_worker hostile_spans" in got  # the well-formed span still made it
    assert not {"bad id", "bad parent", "huge"} & set(got)
    with trace.get_tracer("test").start_as_current_span("host call"):  # the worker keeps working
        assert _call(isolated, "traced", {"text": "ab"})["data"] == "AB"
    assert "plugin work" in _by_name(exporter)


def test_a_frame_with_a_non_json_constant_is_malformed_and_real_numbers_pass() -> None:
    from reyn_isolation.protocol import HEADER, ProtocolError, decode, encode

    for constant in (b"NaN", b"Infinity", b"-Infinity"):
        with pytest.raises(ProtocolError, match=r"is not JSON \(NaN, Infinity\)"):
            decode(b'{"op": "result", "start": ' + constant + b"}")
    numbers = {"op": "result", "data": [0, -1, 1.5, -1e300, 1e-300, 10**30, "NaN", "Infinity"]}
    assert decode(encode(numbers)[HEADER.size :]) == numbers


def test_the_worker_keeps_no_span_of_a_call_that_replied_or_of_no_call(
    isolated: Any, exporter: InMemorySpanExporter
) -> None:
    configure_tracing(True, hash_key=b"k" * 32)
    with trace.get_tracer("test").start_as_current_span("host call"):
        assert _call(isolated, "start_late", {"orphans": 2000})["data"] == 2000
        assert _call(isolated, "buffered")["data"] == 0  # the orphans were dropped at the reply
        assert _call(isolated, "end_late")["data"] == 0  # "late" ends under a call that replied
        assert _call(isolated, "buffered")["data"] == 0
        assert _call(isolated, "traced", {"text": "ab"})["data"] == "AB"  # control: a call's own spans come
    got = _by_name(exporter)
    assert "plugin work" in got and "late" not in got and "orphan" not in got
