"""Real HTTP servers on 127.0.0.1 for the web pack: bounded in time, stopped by the fixture."""

from __future__ import annotations

import gzip
import json
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from reyn_core import ToolContext
from reyn_core.host import ToolRegistry
from reyn_testing import registry_from_plugin

BOMB = gzip.compress(b"\0" * 20_000_000, compresslevel=9)  # ~20 KB on the wire, 20 MB inflated
PAGE = b"""<!doctype html><html><head><title> Test  Page </title>
<style>body{color:red}</style><script>var secret = "do-not-show";</script></head>
<body><h1>Hello</h1><p>First <b>para</b> with a <a href="/text">text link</a>.</p>
<ul><li>one</li><li>two</li></ul><a href="https://example.org/x">abs</a><a href="javascript:alert(1)">js</a>
<noscript>hidden-noscript</noscript></body></html>"""


Route = Callable[[BaseHTTPRequestHandler], None]


def _send(
    h: BaseHTTPRequestHandler,
    status: int,
    body: bytes,
    ctype: str | None = "text/plain",
    headers: dict[str, str] | None = None,
) -> None:
    h.send_response(status)
    if ctype is not None:
        h.send_header("Content-Type", ctype)
    for k, v in (headers or {}).items():
        h.send_header(k, v)
    h.send_header("Content-Length", str(len(body)))
    h.end_headers()
    h.wfile.write(body)


def _trickle(h: BaseHTTPRequestHandler, chunk: bytes, pause: float, limit_s: float) -> None:
    h.send_response(200)
    h.send_header("Content-Type", "text/plain")
    h.end_headers()
    deadline = time.monotonic() + limit_s
    try:
        while time.monotonic() < deadline:
            h.wfile.write(chunk)
            h.wfile.flush()
            if pause:
                time.sleep(pause)
    except OSError:
        pass  # the client went away: that is the point of the test
    h.close_connection = True


def default_routes(port: int) -> dict[str, Route]:
    base = f"http://127.0.0.1:{port}"
    return {
        "/page": lambda h: _send(h, 200, PAGE, "text/html; charset=utf-8"),
        "/text": lambda h: _send(h, 200, b"plain  text\n\n\n\nsecond line", "text/plain"),
        "/json": lambda h: _send(h, 200, b'{"a": 1}', "application/json"),
        "/latin1": lambda h: _send(h, 200, "caf\u00e9".encode("latin-1"), "text/plain; charset=iso-8859-1"),
        "/long": lambda h: _send(h, 200, ("0123456789" * 1000).encode(), "text/plain"),
        "/image": lambda h: _send(h, 200, b"\x89PNG\r\n\x1a\n" + b"\0" * 100, "image/png"),
        "/no-type": lambda h: _send(h, 200, b"???", None),
        "/missing": lambda h: _send(h, 404, b"nope", "text/plain"),
        "/redirect": lambda h: _send(h, 302, b"", headers={"Location": "/page"}),
        "/redirect-abs": lambda h: _send(h, 301, b"", headers={"Location": f"{base}/text"}),
        "/redirect-loop": lambda h: _send(h, 302, b"", headers={"Location": "/redirect-loop"}),
        "/redirect-no-location": lambda h: _send(h, 302, b""),
        "/redirect-to-loopback2": lambda h: _send(
            h, 302, b"", headers={"Location": f"http://127.0.0.2:{port}/page"}
        ),
        "/redirect-to-ipv6-loopback": lambda h: _send(
            h, 307, b"", headers={"Location": f"http://[::1]:{port}/page"}
        ),
        "/redirect-to-decimal": lambda h: _send(
            h, 302, b"", headers={"Location": f"http://2130706434:{port}/page"}
        ),
        "/redirect-to-file": lambda h: _send(h, 302, b"", headers={"Location": "file:///etc/passwd"}),
        "/gzip-bomb": lambda h: _send(h, 200, BOMB, "text/plain", {"Content-Encoding": "gzip"}),
        "/gzip-small": lambda h: _send(
            h, 200, gzip.compress(b"small gzipped text"), "text/plain", {"Content-Encoding": "gzip"}
        ),
        "/brotli": lambda h: _send(h, 200, b"xx", "text/plain", {"Content-Encoding": "br"}),
        "/huge-declared": lambda h: _send(h, 200, b"x" * 300_000, "text/plain"),
        "/huge-streamed": lambda h: _trickle(h, b"y" * 65536, 0.0, 5.0),
        "/slow": lambda h: _trickle(h, b"z", 0.3, 8.0),
    }


class _Handler(BaseHTTPRequestHandler):
    routes: dict[str, Route] = {}
    seen: list[dict[str, Any]] = []

    def do_GET(self) -> None:
        parts = urlsplit(self.path)
        type(self).seen.append(
            {"path": parts.path, "query": parse_qs(parts.query), "headers": dict(self.headers)}
        )
        route = self.routes.get(parts.path)
        if route is None:
            _send(self, 404, b"no route")
            return
        route(self)

    def log_message(self, format: str, *args: Any) -> None:
        pass


class LocalServer:
    """A threaded HTTP server on 127.0.0.1 with per-path routes."""

    def __init__(self, routes: Callable[[int], dict[str, Route]] = default_routes) -> None:
        handler = type("Handler", (_Handler,), {"routes": {}, "seen": []})
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.httpd.daemon_threads = True
        self.handler = handler
        self.port = self.httpd.server_address[1]
        handler.routes = routes(self.port)
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def seen(self) -> list[dict[str, Any]]:
        return self.handler.seen

    def __enter__(self) -> LocalServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=5)


@pytest.fixture
def http_server() -> Iterator[LocalServer]:
    with LocalServer() as server:
        yield server


def _json_route(payload: Any, check: Callable[[BaseHTTPRequestHandler], int] | None = None) -> Route:
    def route(h: BaseHTTPRequestHandler) -> None:
        status = check(h) if check else 200
        _send(h, status, json.dumps(payload).encode(), "application/json")

    return route


def _web_registry(settings: Any) -> ToolRegistry:
    """A frozen registry holding the web pack's tools, as the loader would build it (the author
    testing kit's ``registry_from_plugin``, which validates the settings again)."""
    return registry_from_plugin("reyn_tools_web.plugin", plugin_id="web", settings=dict(settings))


@pytest.fixture
def ctx() -> ToolContext:
    return ToolContext(surface="router")


@pytest.fixture
def web_registry() -> Callable[[Any], ToolRegistry]:
    """Build a registry of the web pack's tools with the given settings."""
    return _web_registry


@pytest.fixture
def json_route() -> Callable[..., Route]:
    """A route answering a fixed JSON payload (``check(h)`` may choose the status)."""
    return _json_route


@pytest.fixture
def serve() -> Iterator[Callable[[Callable[[int], dict[str, Route]]], LocalServer]]:
    """Start a LocalServer with custom routes; every server started is stopped at the end."""
    started: list[LocalServer] = []

    def start(routes: Callable[[int], dict[str, Route]]) -> LocalServer:
        server = LocalServer(routes).__enter__()
        started.append(server)
        return server

    yield start
    for server in started:
        server.__exit__(None, None, None)


@pytest.fixture
def send() -> Callable[..., None]:
    """``send(h, status, body, ctype="text/plain", headers=None)``: answer from a custom route."""
    return _send
