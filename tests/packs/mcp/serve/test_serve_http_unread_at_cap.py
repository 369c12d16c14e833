"""What a peer can hold without completing a request, against a real ``reyn mcp serve --http``
subprocess on 127.0.0.1. A request without the bearer token is refused (401) before any of its body
is read — before, at ``--max-connections`` every POST body was read (up to 256 KiB for 10 s) as a
possible answer before the token was checked, so tokenless peers held connections and memory. And a
connection whose request head is not complete within ``--header-timeout`` is closed, on a new
connection and between keep-alive requests — before, half a request head held a connection for
ever, and enough of them filled the open-connection cap; and a request refused before its body was
read to its end has its connection closed (else the unsent rest of the body held it). The controls:
the genuine answer passes the cap, a complete request slower to answer than the header timeout is
answered, and the server serves again once the half-sent heads are closed."""

from __future__ import annotations

import asyncio
import json

import httpx

from .conftest import ServeWorld
from .test_serve_http_answer_waits import _asks, messages, next_message, open_asking_session
from .test_serve_http_answers_at_cap import _reply
from .test_serve_http_hangups import _call
from .test_serve_http_limits import _session, open_session

TOKEN = "t" * 40
AUTH = {"Authorization": f"Bearer {TOKEN}"}
BOUND = 60  # seconds any one wait may take before the test fails (never a pass/fail timing)


async def _raw(port: int, data: bytes) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(data)
    await writer.drain()
    return reader, writer


async def _first_line_or_close(reader: asyncio.StreamReader) -> bytes:
    """The status line the server answers with, or b"" when it closes the connection without one."""
    try:
        return await asyncio.wait_for(reader.readline(), BOUND)
    except ConnectionError:
        return b""


def _head(port: int, length: int, *extra: str) -> bytes:
    lines = [
        "POST /mcp HTTP/1.1",
        f"Host: 127.0.0.1:{port}",
        "Content-Type: application/json",
        "Accept: application/json, text/event-stream",
        f"Content-Length: {length}",
        *extra,
    ]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


async def _until_closed(reader: asyncio.StreamReader) -> bytes:
    """What the server sends until it closes the connection (a reset ends it too: the server closed
    it with the peer's unsent body still arriving)."""
    data = b""
    try:
        while chunk := await asyncio.wait_for(reader.read(65536), BOUND):
            data += chunk
    except ConnectionError:
        pass
    return data


async def test_a_tokenless_body_is_refused_unread_at_the_cap(serve_world: ServeWorld) -> None:
    # open connections are capped at 1 + 2 + 16 = 19; the call's stream holds one
    args = (
        "--max-connections",
        "1",
        "--max-sessions",
        "2",
        "--answer-timeout",
        "120",
        "--auth-token-env",
        "TOK",
    )
    with serve_world.http(*args, TOK=TOKEN) as server:
        async with httpx.AsyncClient(timeout=BOUND, headers=AUTH) as http:
            sid = await open_asking_session(http, server.url)
            call = _call("d0", "probe_deferred")
            async with http.stream("POST", server.url, json=call, headers=_session(sid)) as response:
                stream = messages(response)
                asked = await asyncio.wait_for(next_message(stream, _asks), BOUND)
                # the cap is full (the call waits for its user); tokenless peers fill the open
                # connections, each sending most of a body as large as an answer may be, never the rest
                peers = [
                    await _raw(server.port, _head(server.port, 262_144) + b"[" * 262_000) for _ in range(18)
                ]
                # each is refused on its headers and its connection closed: none is held
                refused = [await _until_closed(reader) for reader, _ in peers]
                for _, writer in peers:
                    writer.close()
                async with httpx.AsyncClient(timeout=BOUND, headers=AUTH) as fresh:  # a new connection
                    posted = await fresh.post(
                        server.url, json=_reply(asked["id"], "genuine"), headers=_session(sid)
                    )
                result = await asyncio.wait_for(
                    next_message(stream, lambda m: m.get("id") == call["id"]), BOUND
                )
    assert not any(b" 503 " in reply for reply in refused), refused  # not read as possible answers
    # (a 401 is sent, but the close under the arriving body may reset the connection before the peer
    # reads it: not asserted)
    assert posted.status_code == 202, posted.text  # the control: the user's answer passes the cap
    assert not result["result"].get("isError") and "genuine" in json.dumps(result)


async def test_half_sent_heads_are_closed_and_the_server_serves_again(serve_world: ServeWorld) -> None:
    # open connections are capped at 1 + 1 + 16 = 18: that many half-sent heads fill the cap
    args = ("--max-connections", "1", "--max-sessions", "1", "--header-timeout", "1")
    with serve_world.http(*args) as server:
        half = f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n".encode()
        peers = [await _raw(server.port, half) for _ in range(18)]
        closed = [await _first_line_or_close(reader) for reader, _ in peers]
        for _, writer in peers:
            writer.close()
        async with httpx.AsyncClient(timeout=BOUND) as http:
            sid = await open_session(http, server.url)  # the control: served once they are closed
            slow = {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {"name": "probe_echo", "arguments": {"text": "slow", "delay_ms": 2500}},
            }
            # the control: a complete request answered later than the header timeout is answered
            answered = await http.post(server.url, json=slow, headers=_session(sid))
    assert closed == [b""] * 18, set(closed)
    assert answered.status_code == 200 and "slow" in answered.text, answered.text


async def test_half_a_head_after_a_keep_alive_response_is_closed(serve_world: ServeWorld) -> None:
    with serve_world.http("--header-timeout", "1") as server:
        reader, writer = await _raw(server.port, _head(server.port, 2) + b"{}")  # a complete request
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), BOUND)
        length = int(head.lower().split(b"content-length:")[1].split(b"\r\n")[0])
        await asyncio.wait_for(reader.readexactly(length), BOUND)
        writer.write(f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n".encode())  # half the next
        await writer.drain()
        try:
            after = await asyncio.wait_for(reader.read(65536), BOUND)
        except ConnectionError:
            after = b""
        writer.close()
    assert head.startswith(b"HTTP/1.1 4") and b"connection: close" not in head.lower(), head  # kept open
    assert after == b""  # then closed, without an answer


async def test_a_refusal_before_the_body_has_come_says_the_connection_closes(serve_world: ServeWorld) -> None:
    # refused (401, no token) on its head while its body is still to come: the client is told the
    # connection ends, so it never sends its next request on a connection being closed under it
    # (before, the connection was closed with no word: httpx reused it and read a reset)
    with serve_world.http("--auth-token-env", "TOK", TOK=TOKEN) as server:
        reader, writer = await _raw(server.port, _head(server.port, 100) + b"[")  # 99 bytes to come
        early = await _until_closed(reader)
        writer.close()
        # the control: a complete request refused the same way keeps its connection for the next one
        reader, writer = await _raw(server.port, _head(server.port, 2) + b"{}")
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), BOUND)
        await asyncio.wait_for(reader.readuntil(b"\r\n0\r\n\r\n"), BOUND)  # its chunked body, to its end
        writer.write(_head(server.port, 2, f"Authorization: Bearer {TOKEN}") + b"{}")
        await writer.drain()
        next_head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), BOUND)
        writer.close()
    assert early.startswith(b"HTTP/1.1 401") and b"connection: close" in early.lower(), early
    assert head.startswith(b"HTTP/1.1 401") and b"connection: close" not in head.lower(), head
    assert next_head.startswith(b"HTTP/1.1 "), next_head  # answered on the same connection
