"""``reyn mcp serve --http`` on a loopback address other than 127.0.0.1: the Host allow-list follows
the bound address, so a real client of that address is served (not 421), and the other loopback
names — which reach another address — are still refused (issue 21). Linux routes all of 127/8 to lo."""

from __future__ import annotations

import socket

import httpx
import pytest
from mcp import Client
from reyn_tools_mcp.serve_http_options import bound_host_values

from .conftest import ServeWorld
from .test_serve_http import HEADERS, INIT


def _has_ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6) as s:
            s.bind(("::1", 0))
        return True
    except OSError:
        return False


@pytest.mark.parametrize("host", ["127.0.0.2", "127.42.0.9"])
async def test_a_client_of_another_loopback_address_is_served(serve_world: ServeWorld, host: str) -> None:
    with serve_world.http(host=host) as server:
        async with Client(server.url) as client:
            tools = (await client.list_tools()).tools
            ok = await client.call_tool("probe_echo", {"text": "on " + host})
        async with httpx.AsyncClient(timeout=30) as http:
            # 127.0.0.1 / localhost name another address: a rebinding page must not pass with them
            for foreign in (f"127.0.0.1:{server.port}", f"localhost:{server.port}", "evil.example"):
                refused = await http.post(server.url, json=INIT, headers={**HEADERS, "Host": foreign})
                assert refused.status_code == 421, foreign
    assert tools and ok.structured_content == {"text": "on " + host, "agent": "mcp"}


@pytest.mark.skipif(not _has_ipv6_loopback(), reason="no IPv6 loopback on this machine")
async def test_a_client_of_the_ipv6_loopback_is_served(serve_world: ServeWorld) -> None:
    with serve_world.http(host="::1") as server:
        async with Client(server.url) as client:
            ok = await client.call_tool("probe_echo", {"text": "v6"})
        async with httpx.AsyncClient(timeout=30) as http:
            refused = await http.post(server.url, json=INIT, headers={**HEADERS, "Host": "evil.example"})
    assert ok.structured_content == {"text": "v6", "agent": "mcp"}
    assert refused.status_code == 421


def test_the_allow_list_names_the_bound_address_in_canonical_form() -> None:
    assert bound_host_values("127.0.0.2", 8000) == ["127.0.0.2:8000"]
    assert bound_host_values("0:0:0:0:0:0:0:1", 80) == ["[::1]:80", "localhost:80", "127.0.0.1:80"]
    assert bound_host_values("127.0.0.1", 80) == ["127.0.0.1:80", "localhost:80", "[::1]:80"]
    assert bound_host_values("0.0.0.0", 80) == []
