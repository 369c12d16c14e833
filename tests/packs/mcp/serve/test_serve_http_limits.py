"""The bounds of ``reyn mcp serve --http`` on sessions and requests, against a real subprocess:
``--max-connections`` counts the requests being answered — not the sessions' standing streams, which
``--max-sessions`` bounds — and ``--session-idle-timeout`` closes a session nobody uses."""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import time

import httpx
import pytest
from mcp import Client

from .conftest import ServeWorld, free_port

VERSION = "2025-11-25"
HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": VERSION, "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}},
}


def _session(session_id: str) -> dict[str, str]:
    return {**HEADERS, "mcp-session-id": session_id, "mcp-protocol-version": VERSION}


async def open_session(http: httpx.AsyncClient, url: str) -> str:
    """Initialize a handshake session by hand; its id."""
    response = await http.post(url, json=INIT, headers=HEADERS)
    assert response.status_code == 200, response.text
    session_id = response.headers["mcp-session-id"]
    done = await http.post(
        url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=_session(session_id)
    )
    assert done.status_code == 202, done.text
    return session_id


async def ping(http: httpx.AsyncClient, url: str, session_id: str) -> httpx.Response:
    return await http.post(
        url, json={"jsonrpc": "2.0", "id": 7, "method": "ping"}, headers=_session(session_id)
    )


async def standing_stream(
    stack: contextlib.AsyncExitStack, http: httpx.AsyncClient, url: str, sid: str
) -> None:
    """Open the session's standing ``GET`` event stream and keep it open until ``stack`` closes."""
    headers = {"Accept": "text/event-stream", "mcp-session-id": sid, "mcp-protocol-version": VERSION}
    response = await stack.enter_async_context(http.stream("GET", url, headers=headers))
    assert response.status_code == 200


async def wait_for(predicate, what: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.05)


async def test_standing_streams_do_not_count_against_max_connections(serve_world: ServeWorld) -> None:
    # Twice as many sessions, each holding its standing stream, as --max-connections: all are served
    # (uvicorn's own limit counted each stream, so a cap of 64 failed calls at 48 sessions).
    with serve_world.http("--max-connections", "4") as server:
        async with httpx.AsyncClient(timeout=60) as http, contextlib.AsyncExitStack() as streams:
            sessions = [await open_session(http, server.url) for _ in range(8)]
            for sid in sessions:
                await standing_stream(streams, http, server.url, sid)
            pings = [await ping(http, server.url, sid) for sid in sessions]
            async with Client(server.url, mode="legacy") as client:
                calls = [await client.call_tool("probe_echo", {"text": f"c{i}"}) for i in range(8)]
    assert [p.status_code for p in pings] == [200] * 8
    assert [c.structured_content["text"] for c in calls] == [f"c{i}" for i in range(8)]


async def call_tool(http: httpx.AsyncClient, url: str, session_id: str, tag: str) -> str:
    """``probe_wait(tag)`` over one POST, its answer read to its end; the call's text."""
    call = {"name": "probe_wait", "arguments": {"tag": tag}}
    request = {"jsonrpc": "2.0", "id": f"call-{tag}", "method": "tools/call", "params": call}
    response = await http.post(url, json=request, headers=_session(session_id))
    assert response.status_code == 200, response.text
    for line in response.text.splitlines():  # an event stream, or one JSON body (--json-response)
        data = line.removeprefix("data:").strip()
        if data.startswith("{") and json.loads(data).get("id") == request["id"]:
            return json.loads(data)["result"]["content"][0]["text"]
    raise AssertionError(f"no answer to {request['id']} in {response.text!r}")


async def test_requests_over_max_connections_get_503_and_later_ones_are_served(
    serve_world: ServeWorld,
) -> None:
    # Every answer is read to its end before the next request goes out, so no earlier request can
    # still hold a place when the two calls arrive: a request stops counting when the last part of
    # its answer leaves (an SDK client acts on the answer's event before the stream's end, so its
    # previous request could still count; test_serve_http_in_flight.py pins the count itself).
    markers = serve_world.markers
    with serve_world.http("--max-connections", "2") as server:
        async with httpx.AsyncClient(timeout=60) as http:
            sid = await open_session(http, server.url)
            running = [asyncio.ensure_future(call_tool(http, server.url, sid, t)) for t in "ab"]
            started = lambda: all((markers / f"{t}.started").exists() for t in "ab")  # noqa: E731
            await wait_for(lambda: started() or any(c.done() for c in running), "both calls running")
            for ended in [c for c in running if c.done()]:
                await ended  # refused or failed before it ran: its own error, at once
            busy = await http.post(server.url, json=INIT, headers=HEADERS)  # both still wait: 503
            for t in "ab":
                (markers / f"{t}.go").touch()
            results = await asyncio.gather(*running)
            # both answers have left in full: their places are free
            after = await http.post(server.url, json=INIT, headers=HEADERS)
    assert busy.status_code == 503
    assert busy.headers["retry-after"] == "1"
    assert "2 requests or calls are running (--max-connections)" in busy.text
    assert results == ["finished", "finished"]  # the running calls lost nothing
    assert after.status_code == 200
    assert "refused 1 request(s)" in server.log.read_text()


async def test_a_new_session_over_max_sessions_gets_503_until_one_ends(serve_world: ServeWorld) -> None:
    with serve_world.http("--max-sessions", "2") as server:
        async with httpx.AsyncClient(timeout=60) as http:
            first = await open_session(http, server.url)
            second = await open_session(http, server.url)
            over = await http.post(server.url, json=INIT, headers=HEADERS)
            still = await ping(http, server.url, first)
            ended = await http.delete(server.url, headers=_session(second))
            third = await http.post(server.url, json=INIT, headers=HEADERS)
    assert over.status_code == 503 and "Too many open sessions" in over.text
    assert still.status_code == 200  # the open sessions are unaffected
    assert ended.status_code == 200
    assert third.status_code == 200 and third.headers["mcp-session-id"] not in (first, second)


async def test_an_idle_session_is_closed_and_one_with_a_standing_stream_is_kept(
    serve_world: ServeWorld,
) -> None:
    with serve_world.http("--session-idle-timeout", "1") as server:
        async with httpx.AsyncClient(timeout=60) as http, contextlib.AsyncExitStack() as streams:
            idle = await open_session(http, server.url)
            listening = await open_session(http, server.url)
            await standing_stream(streams, http, server.url, listening)
            await wait_for(lambda: f"Session {idle} idle timeout" in server.log.read_text(), "the idle close")
            gone = await ping(http, server.url, idle)
            kept = await ping(http, server.url, listening)
    assert gone.status_code == 404 and "Session not found" in gone.text
    assert kept.status_code == 200
    assert f"Session {listening} idle timeout" not in server.log.read_text()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--max-sessions", "0"], "--max-sessions must be at least 1"),
        (["--max-connections", "0"], "--max-connections must be at least 1"),
        (["--session-idle-timeout", "0"], "--session-idle-timeout must be a positive number of seconds"),
        (["--session-idle-timeout", "nan"], "--session-idle-timeout must be a positive number of seconds"),
        (["--session-idle-timeout", "inf"], "--session-idle-timeout must be a positive number of seconds"),
        (["--send-timeout", "0"], "--send-timeout must be a positive number of seconds"),
        (["--stateless", "--max-sessions", "5"], "--stateless keeps none"),
        (["--stateless", "--session-idle-timeout", "60"], "--stateless keeps none"),
    ],
)
def test_unusable_session_bounds_are_refused_before_binding(
    serve_world: ServeWorld, args: list[str], message: str
) -> None:
    proc = serve_world.reyn("mcp", "serve", "--http", f"127.0.0.1:{free_port()}", *args, timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert message in proc.stderr and "Traceback" not in proc.stderr


def test_the_bounds_are_in_the_help(serve_world: ServeWorld) -> None:
    out = serve_world.reyn("mcp", "serve", "--help").stdout
    assert "--max-sessions N" in out and "--session-idle-timeout SECONDS" in out
    assert "standing" in out  # --max-connections says what it does not count
    assert "--send-timeout SECONDS" in out


def _closed_by_server(sock: socket.socket) -> bool:
    """Whether the server closed ``sock`` (it sent nothing): EOF or a reset, never a timeout."""
    sock.settimeout(60)
    try:
        return sock.recv(1) == b""
    except ConnectionResetError:
        return True


async def test_open_connections_are_capped_even_for_peers_that_never_send_headers(
    serve_world: ServeWorld,
) -> None:
    from reyn_tools_mcp.serve_http import CONNECTION_MARGIN

    cap = 1 + 2 + CONNECTION_MARGIN  # --max-connections + --max-sessions + the margin
    with serve_world.http("--max-connections", "1", "--max-sessions", "2") as server:
        with contextlib.ExitStack() as idle:
            for _ in range(cap - 1):  # sockets that never send a byte
                idle.enter_context(socket.create_connection(("127.0.0.1", server.port)))
            async with httpx.AsyncClient(timeout=60) as http:
                served = await http.post(server.url, json=INIT, headers=HEADERS)  # the cap-th: served
                over = idle.enter_context(socket.create_connection(("127.0.0.1", server.port)))
                refused = _closed_by_server(over)
                async with httpx.AsyncClient(timeout=60) as late:
                    with pytest.raises(httpx.TransportError):
                        await late.post(server.url, json=INIT, headers=HEADERS)
        async with httpx.AsyncClient(timeout=60) as http:  # the idle ones gone, there is room again
            for _ in range(100):
                try:
                    again = await http.post(server.url, json=INIT, headers=HEADERS)
                    break
                except httpx.TransportError:
                    await asyncio.sleep(0.1)
    assert served.status_code == 200
    assert refused
    assert again.status_code == 200
    assert "are open, the cap" in server.log.read_text()
