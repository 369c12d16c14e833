"""OpenTelemetry ``chat`` spans, one per model turn of ``RouterLoop`` / ``PhaseRunner``.

A turn's span (``chat {model}``, kind CLIENT, ``gen_ai.operation.name = chat``, ``gen_ai.request.model``,
``gen_ai.usage.input_tokens`` / ``output_tokens``) covers the model call and the tool calls the turn
makes, so their ``execute_tool`` spans are its children. It exists only while tracing is on (reyn-otel's
``configure_tracing``; ``reyn_core.host.active_tracer``), and not when litellm's own OpenTelemetry
callback is on (``litellm.callbacks`` naming ``otel``): that callback already makes a span per
completion, and two spans for one call would double every token count a backend sums.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from reyn_core.host import active_tracer


class _Turn:
    """What a turn reports to its span (nothing when there is no span)."""

    __slots__ = ("span",)

    def __init__(self, span: Any) -> None:
        self.span = span

    def reply(self, usage: Mapping[str, Any], finish_reason: str | None) -> None:
        """Record the reply's token usage and finish reason."""
        if self.span is None:
            return
        for key, attr in (
            ("prompt_tokens", "gen_ai.usage.input_tokens"),
            ("completion_tokens", "gen_ai.usage.output_tokens"),
        ):
            value = usage.get(key)
            if isinstance(value, int):
                self.span.set_attribute(attr, value)
        if finish_reason:
            self.span.set_attribute("gen_ai.response.finish_reasons", [finish_reason])


def litellm_traces() -> bool:
    """Whether litellm's own OpenTelemetry callback is on (only looked at when litellm is loaded)."""
    litellm = sys.modules.get("litellm")
    if litellm is None:
        return False
    names = []
    for attr in ("callbacks", "success_callback", "_async_success_callback"):
        for cb in getattr(litellm, attr, None) or ():
            names.append(cb if isinstance(cb, str) else type(cb).__name__)
    return any("otel" in n.lower() or "opentelemetry" in n.lower() for n in names)


@contextmanager
def chat_turn(model: str, system: str | None = None) -> Iterator[_Turn]:
    """The ``chat`` span of one turn, current inside the block (a no-op when tracing is off)."""
    tracer = active_tracer()
    if tracer is None or litellm_traces():
        yield _Turn(None)
        return
    from opentelemetry import trace
    from opentelemetry.trace import Status, StatusCode

    attributes: dict[str, Any] = {"gen_ai.operation.name": "chat", "gen_ai.request.model": model}
    if system:
        attributes["gen_ai.provider.name"] = system
    with tracer.start_as_current_span(
        f"chat {model}",
        kind=trace.SpanKind.CLIENT,
        attributes=attributes,
        record_exception=False,
        set_status_on_exception=False,
    ) as span:
        try:
            yield _Turn(span)
        except BaseException as exc:
            span.set_attribute("error.type", type(exc).__qualname__)
            span.set_status(Status(StatusCode.ERROR, type(exc).__qualname__))
            raise


__all__ = ["chat_turn", "litellm_traces"]
