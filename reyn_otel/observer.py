"""``configure_tracing``: turn OpenTelemetry spans on or off for this process, by installing a
``SpanObserver`` on the core's one observation seam (``reyn_core.host.observe_with``).

The observer makes the ``execute_tool`` span of every dispatched call (``call_spans``), the spans of
a load (``load_spans``), and carries the trace into isolated workers and their spans back
(``worker_spans``). The tracer is the global provider's (``opentelemetry.trace``), so the operator's
SDK set-up and ``OTEL_*`` variables decide where spans go.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from importlib import metadata
from typing import TYPE_CHECKING, Any

from reyn_core.host import observe_with

from .call_spans import CONTENT_ENV, Tracing, env_true, execute_tool_span
from .load_spans import LoadPhase, load_phase

if TYPE_CHECKING:
    from reyn_core.host import ObservedCall

INSTRUMENTATION_NAME = "reyn_core"
"""The instrumentation scope of every span: the core's calls and loads, whichever add-on makes them."""


class SpanObserver:
    """The core's observer (``reyn_core.host.Observer``) that makes OpenTelemetry spans."""

    __slots__ = ("settings", "tracer")

    def __init__(self, settings: Tracing) -> None:
        self.settings = settings
        self.tracer = settings.tracer

    async def call(self, call: ObservedCall, proceed: Callable[[], Awaitable[Any]]) -> Any:
        """The call inside its ``execute_tool`` span."""
        return await execute_tool_span(self.settings, call, proceed)

    @contextmanager
    def phase(self, name: str, plugin: str | None) -> Iterator[LoadPhase]:
        """A load phase inside its span."""
        with load_phase(self.tracer, name, plugin) as span:
            yield span

    def carrier(self) -> dict[str, str] | None:
        """The current span's W3C trace context, for the isolated worker that runs the call."""
        from .worker_spans import trace_carrier

        return trace_carrier()

    def adopt(self, records: Any) -> int:
        """The worker's spans, re-created under the current span (never raises)."""
        from .worker_spans import recreate

        return recreate(self.tracer, records)


def configure_tracing(
    enabled: bool,
    *,
    capture_content: bool = False,
    content_max_chars: int = 1024,
    hash_key: bytes | None = None,
) -> bool:
    """Turn ``execute_tool`` and load spans on or off for this process; returns whether they are now on.

    ``OTEL_SDK_DISABLED=true`` keeps tracing off whatever ``enabled`` says (the standard switch): the
    one ``False`` answer to ``enabled=True``. An install without ``opentelemetry-api`` (its
    dependency) raises ``ImportError`` saying so, with spans off: a load reports it (``RC012``).
    ``capture_content`` (or ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true``) records
    arguments and results, each cut to ``content_max_chars``. ``hash_key`` keys the argument hash (the
    installation key; None: a key made for this process).
    """
    if not enabled or env_true("OTEL_SDK_DISABLED"):
        observe_with(None)
        return False
    if content_max_chars < 0:
        raise ValueError(f"content_max_chars must be >= 0, got {content_max_chars}")
    try:
        from opentelemetry import trace
    except ImportError as exc:  # a broken install: off, and said
        observe_with(None)
        raise ImportError(
            f"reyn-otel needs opentelemetry-api, which cannot be imported ({exc}); reinstall reyn-otel "
            "(pip install --force-reinstall reyn-otel) or install opentelemetry-api"
        ) from exc
    settings = Tracing(
        tracer=trace.get_tracer(INSTRUMENTATION_NAME, metadata.version("reyn-core")),
        capture_content=capture_content or env_true(CONTENT_ENV),
        content_max_chars=content_max_chars,
        hash_key=hash_key,
    )
    observe_with(SpanObserver(settings))
    return True


__all__ = ["INSTRUMENTATION_NAME", "SpanObserver", "configure_tracing"]
