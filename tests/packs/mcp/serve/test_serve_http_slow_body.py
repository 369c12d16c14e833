"""A request's body is bound in time as its head is, against a real ``reyn mcp serve --http``
subprocess on 127.0.0.1: a connection whose request sent its whole head and then only part of its
``Content-Length`` body is closed ``--header-timeout`` after it opened — before, the deadline ended
with the head, so such a peer held its connection, and at ``--max-connections`` the counted place its
request took, for ever (every other session's request got 503). The control: a body sent in full
within the timeout, in two parts, is answered."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator

import httpx

from .conftest import HttpServer, ServeWorld
from .test_serve_http_limits import VERSION, open_session, ping
from .test_serve_http_unread_at_cap import BOUND, _first_line_or_close, _head, _raw, _until_closed


async def _ping_until_answered(http: httpx.AsyncClient, url: str, sid: str) -> httpx.Response:
    """A ping, again while the place a closed request held is being freed (503), within BOUND."""
    for _ in range(BOUND * 10):
        response = await ping(http, url, sid)
        if response.status_code != 503:
            return response
        await asyncio.sleep(0.1)
    return response


@contextlib.asynccontextmanager
async def two_sessions(
    serve_world: ServeWorld, *args: str
) -> AsyncIterator[tuple[HttpServer, httpx.AsyncClient, str, str]]:
    """``reyn mcp serve --http ARGS``, a client and two sessions open on it (one to hold a place
    with, the other to be answered or refused meanwhile), until the block ends."""
    with serve_world.http(*args) as server:
        async with httpx.AsyncClient(timeout=BOUND) as http:
            yield server, http, await open_session(http, server.url), await open_session(http, server.url)


async def test_a_body_never_finished_is_closed_and_frees_its_place(serve_world: ServeWorld) -> None:
    args = ("--max-connections", "1", "--header-timeout", "1")
    async with two_sessions(serve_world, *args) as (server, http, sid, other):
        extra = (f"mcp-session-id: {sid}", f"mcp-protocol-version: {VERSION}")
        reader, writer = await _raw(server.port, _head(server.port, 100, *extra) + b'{"jsonrpc"')
        closed = await _until_closed(reader)  # (before: never, and this wait failed after BOUND)
        writer.close()
        answered = await _ping_until_answered(http, server.url, other)
    assert closed == b"", closed  # closed without an answer
    assert answered.status_code == 200, answered.text


async def test_a_body_sent_in_full_within_the_timeout_is_answered(serve_world: ServeWorld) -> None:
    args = ("--max-connections", "1", "--header-timeout", "5")
    with serve_world.http(*args) as server:
        async with httpx.AsyncClient(timeout=BOUND) as http:
            sid = await open_session(http, server.url)
        body = json.dumps({"jsonrpc": "2.0", "id": 9, "method": "ping"}).encode()
        extra = (f"mcp-session-id: {sid}", f"mcp-protocol-version: {VERSION}")
        reader, writer = await _raw(server.port, _head(server.port, len(body), *extra) + body[:10])
        await asyncio.sleep(0.2)
        writer.write(body[10:])  # the rest, well within the timeout
        await writer.drain()
        status = await _first_line_or_close(reader)
        writer.close()
    assert status.startswith(b"HTTP/1.1 200"), status
