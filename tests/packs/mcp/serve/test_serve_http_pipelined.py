"""Pipelined requests are served in turn, against a real ``reyn mcp serve --http`` subprocess on
127.0.0.1 and a raw socket: a second request sent in the same write as the first, its body still
arriving when the first is answered, is answered once its body is in — before, the connection was
closed after the first answer, as if the first request had been answered before its own body was
read (the check read the state of the next request, begun by then). The control: two complete
pipelined requests are both answered."""

from __future__ import annotations

import asyncio
import json

import httpx

from .conftest import ServeWorld
from .test_serve_http_limits import VERSION, open_session
from .test_serve_http_unread_at_cap import BOUND, _head, _raw


def _ping(port: int, sid: str, request_id: int) -> tuple[bytes, bytes]:
    """A ping as a raw request: its head and its body."""
    body = json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "ping"}).encode()
    return _head(port, len(body), f"mcp-session-id: {sid}", f"mcp-protocol-version: {VERSION}"), body


async def _response(reader: asyncio.StreamReader) -> tuple[bytes, bytes]:
    """One response with a ``Content-Length`` (``--json-response``): its head and its body; b"", b""
    when the server closes the connection instead."""
    try:
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), BOUND)
    except (asyncio.IncompleteReadError, ConnectionError):
        return b"", b""
    length = int(head.lower().split(b"content-length:")[1].split(b"\r\n")[0])
    return head, await asyncio.wait_for(reader.readexactly(length), BOUND)


async def _session(server_url: str) -> str:
    async with httpx.AsyncClient(timeout=BOUND) as http:
        return await open_session(http, server_url)


async def test_a_pipelined_request_whose_body_is_still_arriving_is_answered(serve_world: ServeWorld) -> None:
    with serve_world.http("--json-response") as server:
        sid = await _session(server.url)
        head1, body1 = _ping(server.port, sid, 1)
        head2, body2 = _ping(server.port, sid, 2)
        reader, writer = await _raw(server.port, head1 + body1 + head2 + body2[:5])  # one write
        first = await _response(reader)
        writer.write(body2[5:])  # the rest of the second body, once the first is answered
        await writer.drain()
        second = await _response(reader)  # (before: b"", the connection closed)
        writer.close()
    assert first[0].startswith(b"HTTP/1.1 200") and json.loads(first[1])["id"] == 1, first
    assert second[0].startswith(b"HTTP/1.1 200") and json.loads(second[1])["id"] == 2, second


async def test_complete_pipelined_requests_are_answered_in_turn(serve_world: ServeWorld) -> None:
    with serve_world.http("--json-response") as server:
        sid = await _session(server.url)
        requests = [_ping(server.port, sid, i) for i in (1, 2, 3)]
        reader, writer = await _raw(server.port, b"".join(head + body for head, body in requests))
        answers = [await _response(reader) for _ in requests]
        writer.close()
    assert [json.loads(body)["id"] for _, body in answers] == [1, 2, 3], answers
