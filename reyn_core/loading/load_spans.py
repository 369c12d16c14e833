"""OpenTelemetry spans for a load: ``reyn.load`` with a child per phase (discovery, each plugin's
provenance / import / tool collection steps, registration); the diagnostics a phase adds are events on
its span (``reyn.diagnostic`` with code, severity, message, plugin and tool). No-ops while tracing is
off (``reyn_core.tracing``): nothing of OpenTelemetry is imported then.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from reyn_core import tracing
from reyn_core.loading.diagnostics import Diagnostic


class _Phase:
    """A phase's span (None when tracing is off), to which diagnostics are added as events."""

    __slots__ = ("span",)

    def __init__(self, span: Any) -> None:
        self.span = span

    def diagnostics(self, diags: Sequence[Diagnostic]) -> None:
        """One ``reyn.diagnostic`` event per diagnostic; an error marks the span's status."""
        if self.span is None:
            return
        for d in diags:
            attrs = {"reyn.diagnostic.code": d.code, "reyn.diagnostic.severity": d.severity}
            attrs["reyn.diagnostic.message"] = d.message
            if d.plugin:
                attrs["reyn.plugin.id"] = d.plugin
            if d.tool:
                attrs["gen_ai.tool.name"] = d.tool
            self.span.add_event("reyn.diagnostic", attrs)

    def set(self, key: str, value: Any) -> None:
        """Set an attribute on the span (ignored without one)."""
        if self.span is not None and value is not None:
            self.span.set_attribute(key, value)


@contextmanager
def phase(name: str, plugin: str | None = None) -> Iterator[_Phase]:
    """The span ``name`` (``reyn.load``, ``reyn.load.discovery``, …), current inside the block."""
    state = tracing.active
    if state is None:
        yield _Phase(None)
        return
    attributes = {"reyn.plugin.id": plugin} if plugin else {}
    with state.tracer.start_as_current_span(name, attributes=attributes) as span:
        yield _Phase(span)


__all__ = ["phase"]
