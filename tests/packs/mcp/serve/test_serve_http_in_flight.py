"""What ``--max-connections`` counts (``InFlightRequests``), against a real uvicorn on 127.0.0.1: a
request counts until the last part of its answer is handed to the connection, not until the
server's handling of it returns — the SDK's streamed answers return a moment after the client has
read them, and the client's next request must not meet its previous request's place."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import httpx
import uvicorn
from local_server import free_port
from reyn_tools_mcp.serve_http_middleware import InFlightRequests

BOUND = 60  # seconds any one wait may take before the test fails (never a pass/fail timing)


class HeldAnswers:
    """An ASGI app whose ``/after`` answers in full and then keeps its handling open, whose
    ``/during`` sends the first part of its answer and waits before the last, and whose ``/quick``
    answers at once. ``release`` lets the held ones end."""

    def __init__(self) -> None:
        self.holding = asyncio.Event()
        self.release = asyncio.Event()
        self.returned = 0

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        path = scope["path"]
        await send({"type": "http.response.start", "status": 200, "headers": []})
        if path == "/during":
            await send({"type": "http.response.body", "body": b"first part ", "more_body": True})
            self.holding.set()
            await self.release.wait()
        await send({"type": "http.response.body", "body": path.encode()})
        if path == "/after":  # answered in full; the handling goes on (as a streamed answer's close)
            self.holding.set()
            await self.release.wait()
        self.returned += 1


@contextlib.asynccontextmanager
async def serving(app: Any) -> AsyncIterator[str]:
    """``app`` served by uvicorn on a free port of 127.0.0.1 until the block ends; its base URL."""
    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=port, lifespan="off", log_level="error")
    )
    task = asyncio.ensure_future(server.serve())
    try:
        for _ in range(BOUND * 20):
            if server.started or task.done():
                break
            await asyncio.sleep(0.05)
        assert server.started, "uvicorn did not start"
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        await asyncio.wait_for(task, BOUND)


async def test_a_request_answered_in_full_frees_its_place_before_its_handling_returns() -> None:
    app = HeldAnswers()
    in_flight = InFlightRequests(app, limit=1)
    async with serving(in_flight) as url, httpx.AsyncClient(timeout=BOUND) as http:
        try:
            first = await http.post(f"{url}/after")  # read to its end: the whole answer has left
            await asyncio.wait_for(app.holding.wait(), BOUND)
            next_one = await http.post(f"{url}/quick")  # the first one's handling has not returned
            assert next_one.status_code == 200 and next_one.text == "/quick"
            await asyncio.wait_for(in_flight.answered(), BOUND)  # a stopping server need not wait for it
            assert app.returned == 1  # /quick returned, /after has not
        finally:
            app.release.set()
    assert first.status_code == 200 and first.text == "/after"
    assert in_flight.refused == 0


async def test_a_request_whose_answer_is_still_being_sent_keeps_its_place() -> None:
    # the control: the place is held while the answer is incomplete, and frees once it is complete
    app = HeldAnswers()
    in_flight = InFlightRequests(app, limit=1)
    async with serving(in_flight) as url, httpx.AsyncClient(timeout=BOUND) as http:
        held = asyncio.ensure_future(http.post(f"{url}/during"))
        try:
            await asyncio.wait_for(app.holding.wait(), BOUND)
            busy = await http.post(f"{url}/quick")
        finally:
            app.release.set()
        first = await asyncio.wait_for(held, BOUND)
        later = await http.post(f"{url}/quick")
    assert busy.status_code == 503 and busy.headers["retry-after"] == "1"
    assert "1 requests or calls are running (--max-connections)" in busy.text
    assert first.status_code == 200 and first.text == "first part /during"
    assert later.status_code == 200 and later.text == "/quick"
    assert in_flight.refused == 1


async def test_a_request_whose_handling_ends_without_a_last_part_frees_its_place() -> None:
    async def breaks_off(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["path"] == "/breaks":
            await send({"type": "http.response.start", "status": 200, "headers": []})
            await send({"type": "http.response.body", "body": b"part", "more_body": True})
            raise RuntimeError("the handler broke off")
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})

    in_flight = InFlightRequests(breaks_off, limit=1)
    async with serving(in_flight) as url, httpx.AsyncClient(timeout=BOUND) as http:
        with contextlib.suppress(httpx.HTTPError):
            await http.post(f"{url}/breaks")
        await asyncio.wait_for(in_flight.answered(), BOUND)
        after = await http.post(f"{url}/quick")
    assert after.status_code == 200 and after.text == "ok"


async def test_a_call_held_under_a_request_keeps_the_place_after_the_request_ends() -> None:
    # hold_place: a call started under a request holds its place until the call ends, even when
    # the request ends first (a client that hung up) or ended before the call started
    from reyn_tools_mcp.serve_http_middleware import PLACE

    releases: list[Any] = []

    async def calls(scope: dict[str, Any], receive: Any, send: Any) -> None:
        early = scope[PLACE]() if scope["path"] == "/call" else None
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": scope["path"].encode()})
        late = scope[PLACE]() if scope["path"] == "/late" else None  # after the answer has left
        releases.extend(r for r in (early, late) if r is not None)

    in_flight = InFlightRequests(calls, limit=1)
    async with serving(in_flight) as url, httpx.AsyncClient(timeout=BOUND) as http:
        for path in ("/call", "/late"):
            first = await http.post(f"{url}{path}")  # answered in full; its call still runs
            busy = await http.post(f"{url}/quick")
            assert first.status_code == 200 and busy.status_code == 503
            releases.pop()()  # the call ends
            refused = in_flight.refused
            again = await http.post(f"{url}/quick")  # the control: the place is free again
            assert again.status_code == 200 and in_flight.refused == refused
        await asyncio.wait_for(in_flight.answered(), BOUND)
    assert in_flight.refused == 2


async def test_at_the_cap_no_more_bodies_are_read_as_answers_than_ids_are_awaited() -> None:
    # one awaited id: one body is read as its possible answer at the cap; a second one arriving
    # meanwhile is refused unread (before, every such body was read, each for up to 10 s, and the
    # first, completed late, met the read's end). The control: the first, completed, passes.
    app = HeldAnswers()
    in_flight = InFlightRequests(app, limit=1)
    in_flight.expect_answer("reyn-ask-one", "s1")
    answer = b'{"jsonrpc": "2.0", "id": "reyn-ask-one", "result": {}}'
    async with serving(in_flight) as url, httpx.AsyncClient(timeout=BOUND) as http:
        port = int(url.rsplit(":", 1)[1])
        held = asyncio.ensure_future(http.post(f"{url}/during"))
        head = (
            f"POST /answer HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nmcp-session-id: s1\r\n"
            f"Content-Length: {len(answer)}\r\n\r\n"
        ).encode()
        try:
            await asyncio.wait_for(app.holding.wait(), BOUND)  # the cap is full
            peers = []
            for _ in range(2):
                reader, writer = await asyncio.open_connection("127.0.0.1", port)
                writer.write(head + answer[:10])
                await writer.drain()
                peers.append((reader, writer))
                for _ in range(BOUND * 20):  # until the server reads it (or has refused it)
                    if in_flight._reading or in_flight.refused:
                        break
                    await asyncio.sleep(0.05)
            second = await asyncio.wait_for(peers[1][0].readline(), BOUND)
            peers[0][1].write(answer[10:])
            await peers[0][1].drain()
            first = await asyncio.wait_for(peers[0][0].readline(), BOUND)
            for _, writer in peers:
                writer.close()
        finally:
            app.release.set()
        await asyncio.wait_for(held, BOUND)
    assert second.startswith(b"HTTP/1.1 503"), second
    assert first.startswith(b"HTTP/1.1 200"), first
