"""``--max-connections`` counts a tool call until the call itself ends, against a real
``reyn mcp serve --http`` subprocess on 127.0.0.1: a client that hangs up on a running call (the SDK
does not cancel it) does not free its place — before, one session ran four 8-second calls at once at
a cap of 1 by dropping each stream once its call had started."""

from __future__ import annotations

import asyncio
import contextlib

import httpx

from .conftest import ServeWorld
from .test_serve_http_limits import _session, open_session, wait_for


def _call(tag: str, tool: str = "probe_wait") -> dict:
    key = {"probe_wait": "tag", "probe_deferred": "question"}.get(tool, "text")
    arguments = {key: tag}
    return {
        "jsonrpc": "2.0",
        "id": f"call-{tag}",
        "method": "tools/call",
        "params": {"name": tool, "arguments": arguments},
    }


async def hang_up_on(http: httpx.AsyncClient, url: str, sid: str, tag: str, markers) -> int:
    """Start ``probe_wait(tag)`` over its own stream, wait until the tool runs, then drop the
    connection without reading the answer; the status the request got."""
    async with http.stream("POST", url, json=_call(tag), headers=_session(sid)) as response:
        if response.status_code == 200:
            await wait_for(lambda: (markers / f"{tag}.started").exists(), f"{tag} running")
        return response.status_code  # leaving the block closes the connection mid-answer


async def a_quick_call(http: httpx.AsyncClient, url: str, sid: str, tag: str) -> httpx.Response:
    return await http.post(url, json=_call(tag, "probe_echo"), headers=_session(sid))


async def test_a_call_whose_client_hung_up_keeps_its_place_until_it_ends(serve_world: ServeWorld) -> None:
    markers = serve_world.markers
    with serve_world.http("--max-connections", "2") as server:
        async with httpx.AsyncClient(timeout=60) as http:
            sid = await open_session(http, server.url)
            hung = [await hang_up_on(http, server.url, sid, t, markers) for t in ("h0", "h1")]
            third = await hang_up_on(http, server.url, sid, "h2", markers)  # both still run: refused
            quick = await a_quick_call(http, server.url, sid, "q0")  # likewise
            for t in ("h0", "h1"):
                (markers / f"{t}.go").touch()
            await wait_for(
                lambda: all((markers / f"{t}.finished").exists() for t in ("h0", "h1")), "the ends"
            )
            later = await a_quick_call(http, server.url, sid, "q1")
            for _ in range(600):  # the places are given back as the calls return (bounded wait)
                if later.status_code != 503:
                    break
                await asyncio.sleep(0.05)
                later = await a_quick_call(http, server.url, sid, "q1")
    assert hung == [200, 200]
    assert third == 503 and not (markers / "h2.started").exists()  # never handed to the server
    assert quick.status_code == 503
    assert "2 requests or calls are running (--max-connections)" in quick.text
    assert later.status_code == 200 and '"q1"' in later.text
    assert not any((markers / f"{t}.cancelled").exists() for t in ("h0", "h1"))  # they ran to their end


async def test_without_hang_ups_calls_read_to_their_end_free_their_places(serve_world: ServeWorld) -> None:
    # the control: the same calls, each answer read in full, leave the cap free for the next call
    markers = serve_world.markers
    with serve_world.http("--max-connections", "1") as server:
        async with httpx.AsyncClient(timeout=60) as http:
            sid = await open_session(http, server.url)
            answers = []
            for t in ("r0", "r1", "r2"):
                (markers / f"{t}.go").touch()
                answers.append(await http.post(server.url, json=_call(t), headers=_session(sid)))
            quick = await a_quick_call(http, server.url, sid, "q0")
    assert [a.status_code for a in answers] == [200, 200, 200]
    assert all('"finished"' in a.text for a in answers)
    assert quick.status_code == 200 and '"q0"' in quick.text
    with contextlib.suppress(FileNotFoundError):
        assert "refused" not in server.log.read_text()
