"""A stopping ``reyn mcp serve --http`` (a real subprocess on 127.0.0.1) does not wait without bound
for a sync tool's thread: after ``--shutdown-grace`` a call whose thread still runs is abandoned —
the log names it — and the process exits ``EXIT_ABANDONED`` (not 0: a supervisor sees the stop was
not clean). Before, the event loop's close waited for the thread (a tool without a timeout: for as
long as it ran, for ever if it hung). The control: a sync call that finishes within the grace has
its answer, nothing is abandoned, and the exit is 0."""

from __future__ import annotations

import asyncio
import signal

import httpx
from reyn_tools_mcp.serve_stop import EXIT_ABANDONED

from .conftest import ServeWorld
from .test_serve_http_cancel_holds import _block
from .test_serve_http_limits import _session, open_session, wait_for

BOUND = 60  # the tool below would block for ten minutes: a generous bound on the process's exit


async def sigterm_during_a_hung_call(server, http: httpx.AsyncClient, sid: str, markers) -> int:
    """Call ``probe_block(h0)``, SIGTERM the server once its thread runs; the process's exit status."""
    async with http.stream("POST", server.url, json=_block("h0"), headers=_session(sid)):
        await wait_for(lambda: (markers / "h0.started").exists(), "h0 running")
        server.proc.send_signal(signal.SIGTERM)
        return await asyncio.to_thread(server.proc.wait, BOUND)


async def test_a_hung_sync_tool_is_abandoned_after_the_grace(serve_world: ServeWorld) -> None:
    markers = serve_world.markers
    (markers / "h0.long").touch()  # probe_block(h0) blocks its thread for ten minutes
    try:
        with serve_world.http("--shutdown-grace", "1") as server:
            async with httpx.AsyncClient(timeout=BOUND) as http:
                sid = await open_session(http, server.url)
                code = await sigterm_during_a_hung_call(server, http, sid, markers)
            log = server.log.read_text()
    finally:
        (markers / "h0.go").touch()
    assert code == EXIT_ABANDONED, log
    assert "abandoned 1 call(s) still running after --shutdown-grace" in log, log
    assert "probe_block (request id 'call-h0')" in log and "stopped" in log
    assert not (markers / "h0.finished").exists()  # the process ended under it
    lines = [line for line in serve_world.audit_lines() if line.get("tool") == "probe_block"]
    assert [line.get("event", line.get("status")) for line in lines] == ["cancelled", "call.abandoned"]


async def test_a_sync_call_finishing_within_the_grace_is_not_abandoned(serve_world: ServeWorld) -> None:
    markers = serve_world.markers
    with serve_world.http("--shutdown-grace", "30") as server:
        async with httpx.AsyncClient(timeout=BOUND) as http:
            sid = await open_session(http, server.url)
            async with http.stream("POST", server.url, json=_block("f0"), headers=_session(sid)) as response:
                await wait_for(lambda: (markers / "f0.started").exists(), "f0 running")
                server.proc.send_signal(signal.SIGTERM)
                (markers / "f0.go").touch()
                answer = (await response.aread()).decode()
            code = await asyncio.to_thread(server.proc.wait, BOUND)
        log = server.log.read_text()
    assert code == 0 and "finished" in answer, answer
    assert "abandoned" not in log and "stopped" in log, log
