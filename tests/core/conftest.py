"""Fixtures for the core tests: contexts, small registries, and a request-counting HTTP server."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from reyn_core import ToolContext

GOLDEN = Path(__file__).parent / "golden"


@pytest.fixture
def router_ctx(tmp_path: Path) -> ToolContext:
    """A router-surface context rooted in a temporary workspace."""
    return ToolContext(surface="router", agent="tester", workspace=tmp_path)


@pytest.fixture
def phase_ctx(tmp_path: Path) -> ToolContext:
    """A phase-surface context rooted in a temporary workspace."""
    return ToolContext(surface="phase", agent="tester", workspace=tmp_path)


@dataclass
class CountingServer:
    """A real HTTP server on 127.0.0.1 that counts every request it receives."""

    port: int
    requests: list[str] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


@pytest.fixture
def counting_server() -> Iterator[CountingServer]:
    """Serve JSON schemas on 127.0.0.1 and record each request path. Stops after the test, and in any
    case after 60 s on its own (a timer shuts it down), so a stuck test cannot leak it."""
    state = CountingServer(port=0)

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            state.requests.append(self.path)
            body = b'{"type": "integer"}'
            self.send_response(200)
            self.send_header("Content-Type", "application/schema+json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.timeout = 1
    state.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    watchdog = threading.Timer(60, server.shutdown)
    watchdog.daemon = True
    watchdog.start()
    try:
        yield state
    finally:
        watchdog.cancel()
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
