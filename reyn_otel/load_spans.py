"""OpenTelemetry spans for a load: ``reyn.load`` with a child per phase (discovery, each plugin's
provenance / import / tool collection steps, registration), handed here by the core's load phases
(``SpanObserver.phase``); the diagnostics a phase adds are events on its span (``reyn.diagnostic``
with code, severity, message, plugin and tool).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any


class LoadPhase:
    """A phase's span, to which diagnostics are added as events."""

    __slots__ = ("span",)

    def __init__(self, span: Any) -> None:
        self.span = span

    def diagnostics(self, diags: Sequence[Any]) -> None:
        """One ``reyn.diagnostic`` event per diagnostic."""
        for d in diags:
            attrs = {"reyn.diagnostic.code": d.code, "reyn.diagnostic.severity": d.severity}
            attrs["reyn.diagnostic.message"] = d.message
            if d.plugin:
                attrs["reyn.plugin.id"] = d.plugin
            if d.tool:
                attrs["gen_ai.tool.name"] = d.tool
            self.span.add_event("reyn.diagnostic", attrs)

    def set(self, key: str, value: Any) -> None:
        """Set an attribute on the span (a None value sets nothing)."""
        if value is not None:
            self.span.set_attribute(key, value)


@contextmanager
def load_phase(tracer: Any, name: str, plugin: str | None = None) -> Iterator[LoadPhase]:
    """The span ``name`` (``reyn.load``, ``reyn.load.discovery``, …), current inside the block."""
    attributes = {"reyn.plugin.id": plugin} if plugin else {}
    with tracer.start_as_current_span(name, attributes=attributes) as span:
        yield LoadPhase(span)


__all__ = ["LoadPhase", "load_phase"]
