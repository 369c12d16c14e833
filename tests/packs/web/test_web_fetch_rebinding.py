"""No DNS rebinding: web_fetch resolves each hop's host once, checks those addresses, and connects
to a checked address (the Host header carries the name). A resolver that answers 127.0.0.1 for the
check and something forbidden afterwards never gets a second question for that hop."""

from __future__ import annotations

import socket
from http.server import BaseHTTPRequestHandler
from typing import Any

import pytest
from reyn_tools_web.settings import WebSettings

from reyn_core.host import dispatch_tool

NAME = "rebind.test"


class FlippingResolver:
    """``getaddrinfo`` answering 127.0.0.1 for NAME the first ``honest`` times, then 10.0.0.1."""

    def __init__(self, honest: int) -> None:
        self.honest = honest
        self.calls: list[str] = []
        self.real = socket.getaddrinfo

    def __call__(self, host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        name = host.decode() if isinstance(host, bytes) else host
        if name != NAME:
            return self.real(host, port, *args, **kwargs)
        self.calls.append(name)
        ip = "127.0.0.1" if len(self.calls) <= self.honest else "10.0.0.1"
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (ip, int(port or 0)))]


def settings() -> WebSettings:
    # the address (not the name) is allowlisted, so a rebound 10.0.0.1 would be refused if checked
    return WebSettings.model_validate(
        {"fetch": {"enabled": True, "allow_hosts": ["127.0.0.1"], "timeout_s": 5}}
    )


@pytest.fixture
def resolver(monkeypatch) -> Any:
    def make(honest: int) -> FlippingResolver:
        fake = FlippingResolver(honest)
        monkeypatch.setattr(socket, "getaddrinfo", fake)
        return fake

    return make


async def test_one_lookup_per_hop_and_the_host_header_names_the_host(
    web_registry, ctx, http_server, resolver
) -> None:
    fake = resolver(honest=1)
    env = await dispatch_tool(
        web_registry(settings()), "web_fetch", {"url": f"http://{NAME}:{http_server.port}/text"}, ctx
    )
    assert env["status"] == "ok", env
    assert fake.calls == [NAME]  # checked once; the connection went to the checked 127.0.0.1
    assert len(http_server.seen) == 1
    assert http_server.seen[0]["headers"]["Host"] == f"{NAME}:{http_server.port}"


async def test_each_redirect_hop_is_resolved_once_and_a_rebound_hop_is_refused(
    web_registry, ctx, serve, resolver
) -> None:
    def redirect(to: str) -> Any:
        def route(h: BaseHTTPRequestHandler) -> None:
            h.send_response(302)
            h.send_header("Location", to)
            h.send_header("Content-Length", "0")
            h.end_headers()

        return route

    def ok(h: BaseHTTPRequestHandler) -> None:
        h.send_response(200)
        h.send_header("Content-Type", "text/plain")
        h.send_header("Content-Length", "5")
        h.end_headers()
        h.wfile.write(b"final")

    server = serve(
        lambda port: {
            "/a": redirect(f"http://{NAME}:{port}/b"),
            "/b": redirect(f"http://{NAME}:{port}/c"),
            "/c": ok,
        }
    )
    reg = web_registry(settings())

    fake = resolver(honest=3)  # every hop answers 127.0.0.1: three hops, three lookups
    env = await dispatch_tool(reg, "web_fetch", {"url": f"http://{NAME}:{server.port}/a"}, ctx)
    assert env["status"] == "ok" and env["data"]["text"] == "final", env
    assert fake.calls == [NAME] * 3
    assert [s["path"] for s in server.seen] == ["/a", "/b", "/c"]
    assert {s["headers"]["Host"] for s in server.seen} == {f"{NAME}:{server.port}"}

    server.seen.clear()
    fake = resolver(honest=1)  # the name rebinds to 10.0.0.1 after the first answer
    env = await dispatch_tool(reg, "web_fetch", {"url": f"http://{NAME}:{server.port}/a"}, ctx)
    assert env["status"] == "error" and env["error"]["kind"] == "denied", env
    assert "10.0.0.1" in env["error"]["message"] and "private" in env["error"]["message"]
    assert fake.calls == [NAME, NAME]  # hop 1 and hop 2, once each
    assert [s["path"] for s in server.seen] == ["/a"]  # the rebound hop was never requested
