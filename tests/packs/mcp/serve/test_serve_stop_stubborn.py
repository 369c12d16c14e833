"""The stop of ``reyn mcp serve`` is bounded whatever runs (issue 24), driven as a real subprocess.

- An async tool that swallows its cancellation (``probe_stubborn``) no longer keeps the server up:
  once told to close, the transport gets the grace again (or until a further signal); a call still
  running then is abandoned as a hung thread is — logged, ``call.abandoned`` in the audit log, exit
  ``EXIT_ABANDONED``. Before, the stop awaited the transport without a bound, and further SIGTERMs
  only set an event nothing waited on (stdio and HTTP). The control: an async tool that lets its
  cancellation end it (``probe_wait``) is cancelled, nothing is abandoned, exit 0.
- The cleanups are bounded after a clean stop too: a hanging ``atexit`` handler with no call running
  does not keep the process up (before, unbounded), and the exit is 0.
- A second SIGTERM during the cleanups exits at once with the status already decided (before, the
  default handler was back: -15).
"""

from __future__ import annotations

import asyncio
import contextlib
import signal

import httpx
import pytest
from reyn_tools_mcp.serve_stop import CLEANUP_TIMEOUT_S, EXIT_ABANDONED

from .conftest import ServeWorld
from .test_serve_http_limits import _session, open_session, standing_stream, wait_for
from .test_serve_stop import BOUND, stdio_serve


def _call(tag: str, tool: str = "probe_stubborn") -> dict:
    params = {"name": tool, "arguments": {"tag": tag}}
    return {"jsonrpc": "2.0", "id": f"call-{tag}", "method": "tools/call", "params": params}


def _events(world: ServeWorld, tool: str) -> list[str]:
    return [line.get("event", line.get("status")) for line in world.audit_lines() if line.get("tool") == tool]


@pytest.mark.parametrize("stop", ["SIGTERM", "stdin closed"])
async def test_stdio_abandons_an_async_tool_swallowing_its_cancellation(
    serve_world: ServeWorld, stop: str
) -> None:
    markers = serve_world.markers
    try:
        with stdio_serve(serve_world, "--shutdown-grace", "1") as server:
            server.initialize()
            server.send(_call("s0"))
            await wait_for(lambda: (markers / "s0.started").exists(), "s0 running")
            if stop == "SIGTERM":
                server.proc.send_signal(signal.SIGTERM)
            else:
                server.close_stdin()
            code = await server.exit_code()
            log = server.log.read_text()
    finally:
        (markers / "s0.go").touch()
    assert code == EXIT_ABANDONED, log
    assert (markers / "s0.cancelled").exists()  # it was cancelled, and ran on
    assert "the transport did not close" in log, log
    assert "abandoned 1 call(s)" in log and "probe_stubborn (request id 'call-s0')" in log, log
    assert _events(serve_world, "probe_stubborn") == ["call.abandoned"]


async def test_stdio_cancels_an_async_tool_that_lets_its_cancellation_end_it(serve_world: ServeWorld) -> None:
    markers = serve_world.markers
    with stdio_serve(serve_world, "--shutdown-grace", "1") as server:
        server.initialize()
        server.send(_call("w0", "probe_wait"))
        await wait_for(lambda: (markers / "w0.started").exists(), "w0 running")
        server.proc.send_signal(signal.SIGTERM)
        code = await server.exit_code()
        log = server.log.read_text()
    assert code == 0, log
    assert (markers / "w0.cancelled").exists() and "abandoned" not in log, log
    assert _events(serve_world, "probe_wait") == ["cancelled"]


async def test_http_abandons_an_async_tool_swallowing_its_cancellation(serve_world: ServeWorld) -> None:
    markers = serve_world.markers
    try:
        with serve_world.http("--shutdown-grace", "1") as server:
            async with httpx.AsyncClient(timeout=BOUND) as http:
                sid = await open_session(http, server.url)
                async with http.stream("POST", server.url, json=_call("h0"), headers=_session(sid)):
                    await wait_for(lambda: (markers / "h0.started").exists(), "h0 running")
                    server.proc.send_signal(signal.SIGTERM)
                    code = await asyncio.to_thread(server.proc.wait, BOUND)
            log = server.log.read_text()
    finally:
        (markers / "h0.go").touch()
    assert code == EXIT_ABANDONED, log
    assert "abandoned 1 call(s)" in log and "probe_stubborn (request id 'call-h0')" in log, log
    assert _events(serve_world, "probe_stubborn") == ["call.abandoned"]


async def test_a_hanging_cleanup_does_not_keep_a_clean_stop_up(serve_world: ServeWorld) -> None:
    with stdio_serve(serve_world, "--shutdown-grace", "1", SERVE_PROBE_HANG_AT_EXIT="1") as server:
        server.initialize()
        server.close_stdin()
        code = await server.exit_code()
        log = server.log.read_text()
    assert code == 0, log  # nothing was abandoned
    assert (serve_world.markers / "atexit.started").exists()  # it ran (once), and hung
    assert f"running the atexit handlers did not finish within {CLEANUP_TIMEOUT_S:g}s" in log, log


async def test_a_second_signal_during_the_cleanups_exits_with_the_decided_status(
    serve_world: ServeWorld,
) -> None:
    markers = serve_world.markers
    (markers / "h0.long").touch()
    try:
        with stdio_serve(serve_world, "--shutdown-grace", "1", SERVE_PROBE_HANG_AT_EXIT="1") as server:
            await server.hung_call(markers)
            server.proc.send_signal(signal.SIGTERM)
            await wait_for(lambda: (markers / "atexit.started").exists(), "the atexit handler running")
            server.proc.send_signal(signal.SIGTERM)
            code = await server.exit_code()
            log = server.log.read_text()
    finally:
        (markers / "h0.go").touch()
    assert code == EXIT_ABANDONED, log
    assert "during the stop's cleanups: exiting now" in log, log
    assert _events(serve_world, "probe_block") == ["cancelled", "call.abandoned"]


@pytest.mark.parametrize("grace", ["0", "5"])
async def test_a_transport_left_open_with_no_call_running_is_a_clean_stop(
    serve_world: ServeWorld, grace: str
) -> None:
    """A client's standing event stream keeps uvicorn's close waiting, and a second signal (a double
    Ctrl-C) stops the stop's wait for the transport: with no call running nothing is abandoned, so
    the exit is 0 and no call is named (before: exit 3, "a call ignores its cancellation", for grace
    0 with one signal and for any grace with two). The control is
    ``test_http_abandons_an_async_tool_swallowing_its_cancellation``: the same wait with a call
    still running exits 3 and names it."""
    with serve_world.http("--shutdown-grace", grace) as server:
        async with httpx.AsyncClient(timeout=BOUND) as http, contextlib.AsyncExitStack() as stack:
            sid = await open_session(http, server.url)
            await standing_stream(stack, http, server.url, sid)
            server.proc.send_signal(signal.SIGTERM)
            await asyncio.sleep(0.3)
            server.proc.send_signal(signal.SIGTERM)
            code = await asyncio.to_thread(server.proc.wait, BOUND)
        log = server.log.read_text()
    assert code == 0, log
    assert "abandoned" not in log and "ignores its cancellation" not in log, log
