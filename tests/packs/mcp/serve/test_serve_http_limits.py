"""The bounds of ``reyn mcp serve --http`` on sessions and requests, against a real subprocess:
``--max-connections`` counts the requests being answered — not the sessions' standing streams, which
``--max-sessions`` bounds — and ``--session-idle-timeout`` closes a session nobody uses."""

from __future__ import annotations

import asyncio
import contextlib
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


async def test_requests_over_max_connections_get_503_and_later_ones_are_served(
    serve_world: ServeWorld,
) -> None:
    markers = serve_world.markers
    with serve_world.http("--max-connections", "2") as server:
        async with Client(server.url, mode="legacy") as client:
            # Listed first: the SDK client lists the tools after a call to check its result unless it
            # has, and that request would race the other call's answer for the second place.
            await client.list_tools()
            running = [asyncio.ensure_future(client.call_tool("probe_wait", {"tag": t})) for t in "ab"]
            await wait_for(
                lambda: all((markers / f"{t}.started").exists() for t in "ab"), "both calls running"
            )
            async with httpx.AsyncClient(timeout=60) as http:
                busy = await http.post(server.url, json=INIT, headers=HEADERS)  # both still wait: 503
                for t in "ab":
                    (markers / f"{t}.go").touch()
                results = await asyncio.gather(*running)
                # a place frees once an answer has left in full: a client retries as Retry-After says
                after = await http.post(server.url, json=INIT, headers=HEADERS)
                for _ in range(100):
                    if after.status_code != 503:
                        break
                    await asyncio.sleep(0.1)
                    after = await http.post(server.url, json=INIT, headers=HEADERS)
    assert busy.status_code == 503
    assert busy.headers["retry-after"] == "1"
    assert "2 requests are being answered (--max-connections)" in busy.text
    assert [r.content[0].text for r in results] == ["finished", "finished"]  # the running calls lost nothing
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
