"""What a cancellation may pass ``--max-connections`` with, against a real ``reyn mcp serve --http``
subprocess on 127.0.0.1 (one call running fills a cap of 1). Another session's (or a session-less)
POST that sends its head and never its body does not spend the reads a session's own cancellation
needs: it is refused unread (before, the reads were server-wide and spent before the session was
checked, so the own cancellation got 503). With ``--stateless`` (each POST a session of its own) no
cancellation passes (before, any client's passed uncounted and did nothing). A batch of
cancellations counts (before, it passed and the SDK, which serves no batches, answered 400). The
controls: the session's own single cancellation passes and stops its call; a stateless call is
answered when it finishes."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from .conftest import ServeWorld
from .test_serve_http_about_held import _cancel
from .test_serve_http_limits import HEADERS, VERSION, _session, open_session, wait_for
from .test_serve_http_slow_body import two_sessions
from .test_serve_http_unread_at_cap import BOUND, _first_line_or_close, _head, _raw

CALL = {
    "jsonrpc": "2.0",
    "id": "w-call",
    "method": "tools/call",
    "params": {"name": "probe_wait", "arguments": {"tag": "w0"}},
}


@pytest.mark.parametrize("foreign", ["another session", "no session"])
async def test_an_unfinished_foreign_body_does_not_block_a_cancel(
    serve_world: ServeWorld, foreign: str
) -> None:
    markers = serve_world.markers
    args = ("--max-connections", "1", "--header-timeout", "30")
    async with two_sessions(serve_world, *args) as (server, http, mine, other):
        async with http.stream("POST", server.url, json=CALL, headers=_session(mine)):
            await wait_for(lambda: (markers / "w0.started").exists(), "w0 running")
            extra = (f"mcp-session-id: {other}",) if foreign == "another session" else ()
            reader, writer = await _raw(server.port, _head(server.port, 100, *extra))  # no body
            await asyncio.sleep(0.5)  # the server takes the head in first (an order, not a bound)
            own = await http.post(server.url, json=_cancel("w-call"), headers=_session(mine))
            await wait_for(lambda: (markers / "w0.cancelled").exists(), "w0 cancelled")
            refused = await _first_line_or_close(reader)
            writer.close()
    assert own.status_code == 202, own.text  # the control: its own cancellation passes and stops it
    assert refused.startswith(b"HTTP/1.1 503"), refused  # the foreign body, refused unread


async def test_a_stateless_cancel_does_not_pass_the_cap(serve_world: ServeWorld) -> None:
    markers = serve_world.markers
    headers = {**HEADERS, "mcp-protocol-version": VERSION}
    with serve_world.http("--stateless", "--max-connections", "1") as server:
        async with httpx.AsyncClient(timeout=BOUND) as http:
            async with http.stream("POST", server.url, json=CALL, headers=headers) as response:
                await wait_for(lambda: (markers / "w0.started").exists(), "w0 running")
                cancel = await http.post(server.url, json=_cancel("w-call"), headers=headers)
                still_running = not (markers / "w0.cancelled").exists()
                (markers / "w0.go").touch()
                answer = (await response.aread()).decode()
    assert cancel.status_code == 503, cancel.text  # counted: each POST is a session of its own
    assert still_running
    assert response.status_code == 200 and "finished" in answer, answer  # the control: answered


async def test_a_batch_of_cancels_counts_at_the_cap(serve_world: ServeWorld) -> None:
    markers = serve_world.markers
    with serve_world.http("--max-connections", "1") as server:
        async with httpx.AsyncClient(timeout=BOUND) as http:
            mine = await open_session(http, server.url)
            async with http.stream("POST", server.url, json=CALL, headers=_session(mine)):
                await wait_for(lambda: (markers / "w0.started").exists(), "w0 running")
                batch = await http.post(
                    server.url, json=[_cancel("w-call"), _cancel("w-call")], headers=_session(mine)
                )
                still_running = not (markers / "w0.cancelled").exists()
                own = await http.post(server.url, json=_cancel("w-call"), headers=_session(mine))
                await wait_for(lambda: (markers / "w0.cancelled").exists(), "w0 cancelled")
    assert batch.status_code == 503, batch.text  # counted and refused at the cap (before: 400)
    assert still_running
    assert own.status_code == 202, own.text  # the control: the single cancellation passes
