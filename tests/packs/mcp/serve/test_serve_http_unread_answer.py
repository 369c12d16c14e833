"""An answer is bound in time as a request is, against a real ``reyn mcp serve --http`` subprocess
on 127.0.0.1: a connection whose client takes none of its large answer (a tool returning 300,000
labels) for ``--send-timeout`` is closed, and the place its request held under ``--max-connections``
is free — before, the answer's last write waited for the client to read the one before, without a
bound, and every other session's request got 503 until the client closed. The controls: a client
reading the same answer slowly — longer in all than the timeout, never that long without taking
some — gets all of it, with the answer streamed (events) or one JSON body."""

from __future__ import annotations

import asyncio
import json
import socket

import httpx
import pytest

from .conftest import ServeWorld
from .test_serve_http_limits import VERSION, open_session
from .test_serve_http_slow_body import _ping_until_answered, two_sessions
from .test_serve_http_unread_at_cap import BOUND, _head

COUNT = 300_000  # labels: an answer of megabytes, more than the sockets' buffers hold
RECEIVE_BUFFER = 256 * 1024  # the client's: bounded, so its kernel does not take the answer for it
READ = 64 * 1024  # what a slow reader takes at a time


def _big_call(port: int, sid: str) -> bytes:
    """A ``probe_list`` call as a raw request, head and body."""
    call = {
        "jsonrpc": "2.0",
        "id": "big",
        "method": "tools/call",
        "params": {"name": "probe_list", "arguments": {"count": COUNT}},
    }
    body = json.dumps(call).encode()
    return _head(port, len(body), f"mcp-session-id: {sid}", f"mcp-protocol-version: {VERSION}") + body


async def _small_window(port: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, RECEIVE_BUFFER)
    sock.setblocking(False)
    await asyncio.get_running_loop().sock_connect(sock, ("127.0.0.1", port))
    return await asyncio.open_connection(sock=sock)


async def _send_big_call(port: int, sid: str) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    reader, writer = await _small_window(port)
    writer.write(_big_call(port, sid))
    await writer.drain()
    return reader, writer


async def _read_slowly(reader: asyncio.StreamReader) -> bytes:
    """The response, head and body, read a little at a time (a pause after each read, so the whole
    takes longer than the send timeout: never a pass/fail timing); ``IncompleteReadError`` when the
    server closes the connection first."""

    async def take(n: int) -> bytes:
        data = bytearray()
        while len(data) < n:
            data += await asyncio.wait_for(reader.readexactly(min(READ, n - len(data))), BOUND)
            await asyncio.sleep(0.02)
        return bytes(data)

    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), BOUND)
    lowered = head.lower()
    if b"content-length:" in lowered:
        return head + await take(int(lowered.split(b"content-length:")[1].split(b"\r\n")[0]))
    body = b""
    while size := int(await asyncio.wait_for(reader.readuntil(b"\r\n"), BOUND), 16):  # chunked
        body += (await take(size + 2))[:-2]
    await take(2)  # the last chunk's end
    return head + body


def _labels(response: bytes) -> list[str]:
    """The labels the call's result carries (a JSON body, or the event stream's result event)."""
    _, _, body = response.partition(b"\r\n\r\n")
    for line in body.splitlines():
        if line.startswith(b"data:") or line.startswith(b"{"):
            message = json.loads(line.removeprefix(b"data:"))
            if message.get("id") == "big":
                return message["result"]["structuredContent"]["result"]
    raise AssertionError(f"no result in {body[:300]!r}")


async def test_an_answer_never_read_is_closed_and_frees_its_place(serve_world: ServeWorld) -> None:
    args = ("--max-connections", "1", "--send-timeout", "2")
    async with two_sessions(serve_world, *args) as (server, http, sid, other):
        reader, writer = await _send_big_call(server.port, sid)
        # its answer has begun (the place is taken); the rest of it is never read
        status = await asyncio.wait_for(reader.readline(), BOUND)
        answered = await _ping_until_answered(http, server.url, other)  # (before: 503 throughout)
        writer.close()
    assert status.startswith(b"HTTP/1.1 200"), status
    assert answered.status_code == 200, answered.text
    assert "took none of its answer within 2s (--send-timeout)" in server.log.read_text()


@pytest.mark.parametrize("mode", [(), ("--json-response",)], ids=["events", "json"])
async def test_a_slow_reader_gets_its_whole_answer(serve_world: ServeWorld, mode: tuple[str, ...]) -> None:
    args = ("--send-timeout", "1", "--header-timeout", "1", *mode)
    with serve_world.http(*args) as server:
        async with httpx.AsyncClient(timeout=BOUND) as http:
            sid = await open_session(http, server.url)
        reader, writer = await _send_big_call(server.port, sid)
        response = await _read_slowly(reader)
        writer.close()
    assert response.startswith(b"HTTP/1.1 200"), response[:200]
    assert _labels(response) == [f"item-{i}" for i in range(COUNT)]
