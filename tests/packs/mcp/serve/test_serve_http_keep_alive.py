"""An idle keep-alive connection of ``reyn mcp serve --http`` (a real subprocess on 127.0.0.1, a raw
socket) is closed by the ``--header-timeout`` deadline only, and gracefully (issue 24): uvicorn's
own keep-alive timeout (5 s) is set past it. Before, uvicorn closed it at 5 s — httpx's keep-alive
expiry too, so a client reusing a connection at that moment raced the close (a flaky ReadError)."""

from __future__ import annotations

import asyncio
import time

from .conftest import ServeWorld
from .test_serve_http_unread_at_cap import BOUND, _raw

HEADER_TIMEOUT = 15  # well past uvicorn's default keep-alive timeout (5 s)


async def test_an_idle_keep_alive_connection_lasts_until_the_header_timeout(serve_world: ServeWorld) -> None:
    with serve_world.http("--header-timeout", str(HEADER_TIMEOUT)) as server:
        head = f"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\nAccept: application/json\r\n\r\n"
        reader, writer = await _raw(server.port, head.encode())
        status = await asyncio.wait_for(reader.readline(), BOUND)
        assert status.startswith(b"HTTP/1.1 4"), status  # answered (no session): kept alive after it
        while (await asyncio.wait_for(reader.readline(), BOUND)) not in (b"\r\n", b""):
            pass  # the head
        length = 0
        answered = time.monotonic()
        # the rest of the answer, then the close: an end of file (a graceful close), not a reset
        while chunk := await asyncio.wait_for(reader.read(65536), BOUND):
            length += len(chunk)
        idle = time.monotonic() - answered
        writer.close()
    # the server cannot close it before its deadline; uvicorn's own close came at 5 s. The margin
    # between the two (10 s: the client may see the answer late on a loaded machine, which only
    # shortens what it measures) keeps this a statement of which close came, not of how fast.
    assert idle > 10, idle
