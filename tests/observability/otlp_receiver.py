"""A real OTLP/HTTP trace receiver on 127.0.0.1: it decodes each ``POST /v1/traces`` body with
``opentelemetry-proto`` (no collector binary is installable here) and keeps the spans.

Bounded: it stops by itself after ``lifetime_s``, and a body over ``MAX_BODY`` is refused.
"""

from __future__ import annotations

import http.server
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from local_server import QuietHandler
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

MAX_BODY = 16 * 1024 * 1024
KINDS = {0: "UNSPECIFIED", 1: "INTERNAL", 2: "SERVER", 3: "CLIENT", 4: "PRODUCER", 5: "CONSUMER"}


def _value(v: Any) -> Any:
    which = v.WhichOneof("value")
    if which == "array_value":
        return [_value(x) for x in v.array_value.values]
    if which == "kvlist_value":
        return {kv.key: _value(kv.value) for kv in v.kvlist_value.values}
    return getattr(v, which) if which else None


@dataclass(frozen=True)
class ReceivedSpan:
    """One span as it arrived on the wire."""

    service: str
    name: str
    kind: str
    trace_id: str
    span_id: str
    parent_span_id: str
    attributes: dict[str, Any]
    status_code: int
    status_message: str
    events: tuple[str, ...]


@dataclass
class OtlpReceiver:
    """``with OtlpReceiver() as r:`` — spans in ``r.spans``, raw bodies in ``r.bodies``."""

    lifetime_s: float = 120.0
    spans: list[ReceivedSpan] = field(default_factory=list)
    bodies: list[bytes] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        receiver = self

        class Handler(QuietHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                if self.path != "/v1/traces" or length > MAX_BODY:
                    self.send_error(404 if self.path != "/v1/traces" else 413)
                    return
                body = self.rfile.read(length)
                receiver._add(body)
                self.reply(200, ExportTraceServiceResponse().SerializeToString(), "application/x-protobuf")

        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True

    def _add(self, body: bytes) -> None:
        request = ExportTraceServiceRequest.FromString(body)
        with self._lock:
            self.bodies.append(body)
            for rs in request.resource_spans:
                resource = {kv.key: _value(kv.value) for kv in rs.resource.attributes}
                for ss in rs.scope_spans:
                    for s in ss.spans:
                        self.spans.append(
                            ReceivedSpan(
                                service=str(resource.get("service.name", "")),
                                name=s.name,
                                kind=KINDS.get(s.kind, str(s.kind)),
                                trace_id=s.trace_id.hex(),
                                span_id=s.span_id.hex(),
                                parent_span_id=s.parent_span_id.hex(),
                                attributes={kv.key: _value(kv.value) for kv in s.attributes},
                                status_code=s.status.code,
                                status_message=s.status.message,
                                events=tuple(e.name for e in s.events),
                            )
                        )

    @property
    def endpoint(self) -> str:
        """The traces endpoint (``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``)."""
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1/traces"

    def named(self, name: str, service: str | None = None) -> list[ReceivedSpan]:
        with self._lock:
            return [s for s in self.spans if s.name == name and (service is None or s.service == service)]

    def wait_for(
        self, name: str, count: int = 1, timeout_s: float = 30.0, service: str | None = None
    ) -> list[ReceivedSpan]:
        """The spans called ``name`` once ``count`` of them arrived (AssertionError after ``timeout_s``)."""
        deadline = time.monotonic() + timeout_s
        while True:
            found = self.named(name, service)
            if len(found) >= count:
                return found
            if time.monotonic() > deadline:
                with self._lock:
                    seen = sorted({(s.service, s.name) for s in self.spans})
                raise AssertionError(f"{count} span(s) {name!r} did not arrive; received: {seen}")
            time.sleep(0.05)

    def __enter__(self) -> OtlpReceiver:
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        self._timer = threading.Timer(self.lifetime_s, self._server.shutdown)
        self._timer.daemon = True
        self._timer.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._timer.cancel()
        self._server.shutdown()
        self._server.server_close()
