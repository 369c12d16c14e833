"""OpenTelemetry ``execute_tool`` spans for dispatched calls: ``SpanObserver.call`` (``observer.py``)
hands each call here, through the core's one observation seam (``reyn_core.host.ObservedCall``).

Every call gets one span following the OpenTelemetry GenAI semantic conventions
(``execute_tool {tool}``, kind INTERNAL, ``gen_ai.operation.name = execute_tool``,
``gen_ai.tool.name``, ``gen_ai.tool.call.id``, ``gen_ai.tool.type``, ``error.type``) plus Reyn's own
attributes under ``reyn.*`` (docs/observability.md lists them). The span is the current span for the
whole call, so whatever the handler traces itself nests under it: an async handler runs in the
caller's context, and a sync handler's worker thread runs in a copy of it, which is where
OpenTelemetry keeps the current span.

Arguments and results are never recorded unless the operator opts in (``capture_content``, or the
standard ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true``); then each is cut to
``content_max_chars`` and any property the tool's schema marks ``writeOnly`` or ``format: password``
is replaced by ``"[redacted]"`` (the core's one rule, ``reyn_core.host.redact``). The arguments are
otherwise identified by the same keyed hash as in the audit log (``reyn.tool.arguments.hmac_sha256``),
which cannot be guessed back without the key.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from reyn_core import ToolError, ToolGateRefused, ToolNotFound, ToolRuntimeMissing, canonical_json
from reyn_core.host import escape_lone_surrogates, redact

if TYPE_CHECKING:
    from reyn_core.host import ObservedCall, ToolRegistry

CONTENT_ENV = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"


@dataclass(frozen=True, slots=True)
class Tracing:
    """Tracing as configured: the tracer, the opt-ins, and the key of the argument hash."""

    tracer: Any
    capture_content: bool
    content_max_chars: int
    hash_key: bytes | None


def env_true(name: str) -> bool:
    """Whether the environment variable ``name`` is ``true`` (any case), as OpenTelemetry reads it."""
    return os.environ.get(name, "").strip().lower() == "true"


def _bounded(value: Any, limit: int) -> str:
    try:
        # an exporter writes UTF-8 (OTLP drops an attribute holding a lone surrogate, with a traceback)
        text = escape_lone_surrogates(canonical_json(value))
    except Exception:  # not JSON data: its type only, never a repr that could run code or leak
        text = f"<{type(value).__name__}>"
    return text if len(text) <= limit else text[:limit] + "…"


def _origin_attributes(prepared: Any) -> dict[str, Any]:
    """The provenance attributes of a tool; its definition digest is the registry snapshot's,
    computed once (a canonical JSON of the whole definition: most of a span's cost if made per call)."""
    out: dict[str, Any] = {"reyn.tool.definition_digest": prepared.digest}
    origin = prepared.definition.origin
    if origin is not None:
        for key, value in (
            ("reyn.origin.kind", origin.kind),
            ("reyn.plugin.id", origin.plugin_id),
            ("reyn.plugin.distribution", origin.distribution),
            ("reyn.plugin.version", origin.version),
            ("reyn.plugin.tree_digest", origin.tree_digest),
        ):
            if value is not None:
                out[key] = value
    return out


def _lookup(registry: ToolRegistry, name: str) -> Any | None:
    try:
        return registry.prepared(name)
    except Exception:  # unknown: the call itself reports it (ToolNotFound), recorded as error.type
        return None


def _record_error(span: Any, exc: BaseException) -> None:
    from opentelemetry.trace import Status, StatusCode

    kind = exc.kind if isinstance(exc, ToolError) else type(exc).__qualname__
    span.set_attribute("error.type", kind)
    if isinstance(exc, ToolGateRefused):
        span.set_attribute("reyn.gate.outcome", "refused")
        span.set_attribute("reyn.gate.layer", exc.layer)
    elif isinstance(exc, ToolRuntimeMissing):
        span.set_attribute("reyn.gate.outcome", "refused")
        span.set_attribute("reyn.gate.layer", "runtime")
    elif isinstance(exc, ToolError) and not isinstance(exc, ToolNotFound):
        span.set_attribute("reyn.gate.outcome", "allowed")  # every later step runs after the gates
    # The description is the kind only: a message may quote argument values.
    span.set_status(Status(StatusCode.ERROR, kind))


async def execute_tool_span(
    settings: Tracing, call: ObservedCall, proceed: Callable[[], Awaitable[Any]]
) -> Any:
    """``await proceed()`` (the dispatcher's call) inside its ``execute_tool`` span, current
    throughout; the span records the outcome and ends when the call returns or raises."""
    from opentelemetry import context as otel_context
    from opentelemetry import trace

    name = call.name
    prepared = _lookup(call.registry, name) if type(name) is str else None
    tool_name = name if type(name) is str else "?"
    attributes: dict[str, Any] = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": tool_name,
        "gen_ai.tool.type": "function",
        "reyn.surface": call.surface,
    }
    if call.call_id is not None:
        attributes["gen_ai.tool.call.id"] = call.call_id
    parsed, problems = call.arguments(call.args)
    if not problems:
        attributes["reyn.tool.arguments.hmac_sha256"] = call.argument_hash(parsed, key=settings.hash_key)
    if prepared is not None:
        attributes.update(_origin_attributes(prepared))
        if settings.capture_content and not problems:
            attributes["gen_ai.tool.call.arguments"] = _bounded(
                redact(parsed, prepared.definition.parameters), settings.content_max_chars
            )
    span = settings.tracer.start_span(
        f"execute_tool {tool_name}", kind=trace.SpanKind.INTERNAL, attributes=attributes
    )
    token = otel_context.attach(trace.set_span_in_context(span))
    try:
        result = await proceed()
        span.set_attribute("reyn.gate.outcome", "allowed")
        if settings.capture_content:
            span.set_attribute("gen_ai.tool.call.result", _bounded(result, settings.content_max_chars))
        return result
    except BaseException as exc:
        _record_error(span, exc)
        raise
    finally:
        otel_context.detach(token)
        span.end()


__all__ = ["Tracing", "execute_tool_span"]
