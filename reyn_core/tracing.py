"""OpenTelemetry ``execute_tool`` spans for dispatched calls (optional: ``pip install reyn-core[otel]``).

Nothing here imports ``opentelemetry`` until a host or a profile turns tracing on with
``configure_tracing(enabled=True)``: with the extra absent, or tracing off, the dispatcher pays one
module-attribute test per call (``active is None``) and nothing else.

When on, every call gets one span following the OpenTelemetry GenAI semantic conventions
(``execute_tool {tool}``, kind INTERNAL, ``gen_ai.operation.name = execute_tool``,
``gen_ai.tool.name``, ``gen_ai.tool.call.id``, ``gen_ai.tool.type``, ``error.type``) plus Reyn's own
attributes under ``reyn.*`` (docs/observability.md lists them). The span is the current span for the
whole call, so whatever the handler traces itself nests under it: an async handler runs in the
caller's context, and a sync handler's worker thread runs in a copy of it (``runner``), which is
where OpenTelemetry keeps the current span.

Arguments and results are never recorded unless the operator opts in (``capture_content``, or the
standard ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true``); then each is cut to
``content_max_chars`` and any property the tool's schema marks ``writeOnly`` or ``format: password``
is replaced by ``"[redacted]"``. The arguments are otherwise identified by the same keyed hash as in
the audit log (``reyn.tool.arguments.hmac_sha256``), which cannot be guessed back without the key.
"""

from __future__ import annotations

import contextvars
import os
from collections.abc import Awaitable, Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .errors import ToolError, ToolGateRefused, ToolNotFound, ToolRuntimeMissing
from .jsondata import canonical_json
from .redaction import redact

if TYPE_CHECKING:
    from .context import ToolContext
    from .registry import ToolRegistry
    from .registry.prepared import PreparedTool

INSTRUMENTATION_NAME = "reyn_core"
CONTENT_ENV = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"


@dataclass(frozen=True, slots=True)
class _Active:
    """Tracing as configured: the tracer, the opt-ins, and the key of the argument hash."""

    tracer: Any
    capture_content: bool
    content_max_chars: int
    hash_key: bytes | None


active: _Active | None = None
"""The configured tracing, or None when off (the dispatcher tests only this)."""

# Set by ``traced`` just before it awaits ``invoke_tool`` again for the call it wraps; that inner call
# clears it first thing (``opens_span``), so it runs untraced while every call its handler makes opens
# its own span. The dispatcher's off path thus stays one attribute test, with no extra frame.
_wrapping: contextvars.ContextVar[bool] = contextvars.ContextVar("reyn_tracing_wrapping", default=False)
_call_id: contextvars.ContextVar[str | None] = contextvars.ContextVar("reyn_tool_call_id", default=None)


def _env_true(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() == "true"


def configure_tracing(
    enabled: bool,
    *,
    capture_content: bool = False,
    content_max_chars: int = 1024,
    hash_key: bytes | None = None,
) -> bool:
    """Turn ``execute_tool`` spans on or off for this process; returns whether they are now on.

    On needs ``opentelemetry-api`` (the ``otel`` extra): without it this logs nothing, stays off and
    returns False. ``OTEL_SDK_DISABLED=true`` keeps tracing off whatever ``enabled`` says (the
    standard switch). The tracer is the global provider's (``opentelemetry.trace``), so the
    operator's SDK set-up and ``OTEL_*`` variables decide where spans go. ``capture_content`` (or
    ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true``) records arguments and results, each
    cut to ``content_max_chars``. ``hash_key`` keys the argument hash (the installation key; None: a
    key made for this process).
    """
    global active
    if not enabled or _env_true("OTEL_SDK_DISABLED"):
        active = None
        return False
    if content_max_chars < 0:
        raise ValueError(f"content_max_chars must be >= 0, got {content_max_chars}")
    try:
        from opentelemetry import trace
    except ImportError:
        active = None
        return False
    from . import __version__

    active = _Active(
        tracer=trace.get_tracer(INSTRUMENTATION_NAME, __version__),
        capture_content=capture_content or _env_true(CONTENT_ENV),
        content_max_chars=content_max_chars,
        hash_key=hash_key,
    )
    return True


def active_tracer() -> Any | None:
    """The tracer of the configured tracing, or None while tracing is off: what a runtime on top of
    the core (reyn-loops' ``chat`` spans) opens its own spans with, so they share the set-up."""
    state = active
    return None if state is None else state.tracer


def opens_span() -> bool:
    """Whether this ``invoke_tool`` call opens a span: False only for the inner call of ``traced``."""
    if _wrapping.get():
        _wrapping.set(False)
        return False
    return True


@contextmanager
def tool_call_id(call_id: str | None) -> Iterator[None]:
    """Within this block, dispatched calls carry ``gen_ai.tool.call.id = call_id`` (the id the model
    gave the call; the loops set it)."""
    token = _call_id.set(call_id)
    try:
        yield
    finally:
        _call_id.reset(token)


def _bounded(value: Any, limit: int) -> str:
    try:
        text = canonical_json(value)
    except Exception:  # not JSON data: its type only, never a repr that could run code or leak
        text = f"<{type(value).__name__}>"
    return text if len(text) <= limit else text[:limit] + "…"


def _origin_attributes(prepared: PreparedTool) -> dict[str, Any]:
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


def _lookup(registry: ToolRegistry, name: str) -> PreparedTool | None:
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


async def traced(
    invoke: Callable[..., Awaitable[Any]],
    registry: ToolRegistry,
    name: str,
    args: Any,
    ctx: ToolContext,
    surface: str | None,
    exclude: Iterable[str],
    allowed_ops: Iterable[str] | None,
    *,
    own_arguments: Callable[[Any], tuple[Any, Any]],
    argument_hash: Callable[..., str],
    approval: str | None = None,
) -> Any:
    """``await invoke(...)`` (the dispatcher's call) inside its ``execute_tool`` span, current
    throughout; the span records the outcome and ends when the call returns or raises.

    The dispatcher hands in its own argument copy and keyed hash (this module sits below the
    dispatcher, so the load's spans can use it without importing the dispatcher)."""
    from opentelemetry import context as otel_context
    from opentelemetry import trace

    state = active
    assert state is not None  # the dispatcher calls this only when tracing is on
    prepared = _lookup(registry, name) if type(name) is str else None
    tool_name = name if type(name) is str else "?"
    attributes: dict[str, Any] = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": tool_name,
        "gen_ai.tool.type": "function",
        "reyn.surface": surface or ctx.surface,
    }
    call_id = _call_id.get()
    if call_id is not None:
        attributes["gen_ai.tool.call.id"] = call_id
    parsed, problems = own_arguments(args)
    if not problems:
        attributes["reyn.tool.arguments.hmac_sha256"] = argument_hash(parsed, key=state.hash_key)
    if prepared is not None:
        attributes.update(_origin_attributes(prepared))
        if state.capture_content and not problems:
            attributes["gen_ai.tool.call.arguments"] = _bounded(
                redact(parsed, prepared.definition.parameters), state.content_max_chars
            )
    span = state.tracer.start_span(
        f"execute_tool {tool_name}", kind=trace.SpanKind.INTERNAL, attributes=attributes
    )
    token = otel_context.attach(trace.set_span_in_context(span))
    try:
        _wrapping.set(True)  # the call below is this span's own: it runs untraced (``opens_span``)
        result = await invoke(
            registry,
            name,
            args,
            ctx,
            surface=surface,
            exclude=exclude,
            allowed_ops=allowed_ops,
            approval=approval,
        )
        span.set_attribute("reyn.gate.outcome", "allowed")
        if state.capture_content:
            span.set_attribute("gen_ai.tool.call.result", _bounded(result, state.content_max_chars))
        return result
    except BaseException as exc:
        _record_error(span, exc)
        raise
    finally:
        _wrapping.set(False)  # even if tracing was turned off before the inner call looked
        otel_context.detach(token)
        span.end()


__all__ = ["active_tracer", "configure_tracing", "tool_call_id", "traced"]
