"""A call its client cancels (``notifications/cancelled``) holds what it held until its sync tool's
worker thread ends, against a real ``reyn mcp serve --http`` subprocess on 127.0.0.1: its
``--max-connections`` place, its ``--max-concurrent-calls`` slot and its count as a running call.
The SDK interrupts the handler at once, but a thread cannot be stopped — before, the cancel gave all
three back while the tool kept running, so a client could run any number of sync tools at a cap of
one by cancelling each. The control: once the tool's thread ends, the next call gets through."""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import AsyncIterator

import httpx

from .conftest import HttpServer, ServeWorld
from .test_serve_http_hangups import a_quick_call
from .test_serve_http_limits import _session, open_session, wait_for


def _block(tag: str) -> dict:
    return {
        "jsonrpc": "2.0",
        "id": f"call-{tag}",
        "method": "tools/call",
        "params": {"name": "probe_block", "arguments": {"tag": tag}},
    }


async def start_then_cancel(http: httpx.AsyncClient, url: str, sid: str, tag: str, markers) -> int:
    """Call ``probe_block(tag)``, wait until its thread runs, cancel the call; the cancel's status."""
    async with http.stream("POST", url, json=_block(tag), headers=_session(sid)) as response:
        assert response.status_code == 200
        await wait_for(lambda: (markers / f"{tag}.started").exists(), f"{tag} running")
        cancel = {
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {"requestId": f"call-{tag}", "reason": "the test cancels it"},
        }
        cancelled = await http.post(url, json=cancel, headers=_session(sid))
    return cancelled.status_code


async def started(http: httpx.AsyncClient, url: str, sid: str, tag: str, markers) -> int:
    """Call ``probe_block(tag)`` and leave it running (its stream dropped once its thread runs)."""
    async with http.stream("POST", url, json=_block(tag), headers=_session(sid)) as response:
        if response.status_code == 200:
            await wait_for(lambda: (markers / f"{tag}.started").exists(), f"{tag} running")
        return response.status_code


@contextlib.asynccontextmanager
async def b0_cancelled(
    world: ServeWorld, *args: str
) -> AsyncIterator[tuple[HttpServer, httpx.AsyncClient, str]]:
    """A server started with ``args``, a session of it, and ``probe_block(b0)`` started and cancelled."""
    with world.http(*args) as server:
        async with httpx.AsyncClient(timeout=60) as http:
            sid = await open_session(http, server.url)
            assert await start_then_cancel(http, server.url, sid, "b0", world.markers) == 202
            yield server, http, sid


async def test_a_cancelled_sync_call_keeps_its_place_until_its_thread_ends(serve_world: ServeWorld) -> None:
    markers = serve_world.markers
    async with b0_cancelled(serve_world, "--max-connections", "2") as (server, http, sid):
        second = await started(http, server.url, sid, "b1", markers)  # b0's thread + b1: the cap
        over = await a_quick_call(http, server.url, sid, "q0")
        (markers / "b0.go").touch()
        (markers / "b1.go").touch()
        await wait_for(lambda: (markers / "b0.finished").exists(), "b0's thread ends")
        later = await a_quick_call(http, server.url, sid, "q1")
        for _ in range(600):  # the places come back as the threads end (bounded wait)
            if later.status_code != 503:
                break
            await asyncio.sleep(0.05)
            later = await a_quick_call(http, server.url, sid, "q1")
    assert second == 200
    assert over.status_code == 503, over.text  # before: 200, the cancel had given b0's place back
    assert "2 requests or calls are running (--max-connections)" in over.text
    assert later.status_code == 200 and '"q1"' in later.text  # the control


async def test_a_cancelled_sync_call_keeps_its_slot_until_its_thread_ends(serve_world: ServeWorld) -> None:
    markers = serve_world.markers
    async with b0_cancelled(serve_world, "--max-concurrent-calls", "1") as (server, http, sid):
        queued = asyncio.ensure_future(http.post(server.url, json=_block("b1"), headers=_session(sid)))
        # b1 may start only once b0's thread has ended; give it the chance to start too early
        # (before: at once), then let b0 end. b1 records which tools still ran when it started.
        for _ in range(60):
            if (markers / "b1.started").exists():
                break
            await asyncio.sleep(0.05)
        (markers / "b0.go").touch()
        (markers / "b1.go").touch()
        answer = await asyncio.wait_for(queued, 60)
    assert answer.status_code == 200 and '"finished"' in answer.text  # the control: b1 ran after
    assert (markers / "b1.started").read_text() == ""  # no other tool's thread ran when it started


async def test_a_stopping_server_waits_for_a_cancelled_calls_thread(serve_world: ServeWorld) -> None:
    markers = serve_world.markers
    async with b0_cancelled(serve_world, "--shutdown-grace", "60") as (server, _http, _sid):
        server.proc.send_signal(signal.SIGTERM)
        await wait_for(lambda: "stopping: waiting" in server.log.read_text(), "the shutdown")
        (markers / "b0.go").touch()
        await asyncio.to_thread(server.proc.wait, 60)
    log = server.log.read_text()
    assert "waiting up to 60s for 1 running call(s)" in log  # before: 0, the cancel had ended it
    assert (markers / "b0.finished").exists()  # the control: its thread ran to its end
