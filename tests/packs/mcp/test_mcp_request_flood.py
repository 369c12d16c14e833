"""A server that floods server→client requests and never reads its stdin cannot grow the host
(issue 24). The session starts a task per request, each waiting for the writer, which is stuck on
the server's full stdin; the transport stops reading stdout once ``MAX_UNANSWERED`` answers wait
(backpressure), so the server waits on its own pipe. Before, the host read on: thousands of tasks
(11,459 and RSS 72→202 MB in 10 s), the pool loop stalling, an 8 s call timeout reported at 17 s.
The call still fails by its timeout; another server and the next call work (the positive
controls). Real servers (servers/stdio_hazards_server.py, raw JSON-RPC over stdio)."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import anyio
import pytest
from mcp.client.session import ClientSession

from reyn_core.host import dispatch_tool

from .test_mcp_degraded_servers import err

HAZARDS = Path(__file__).parent / "servers" / "stdio_hazards_server.py"
TASKS_AT_MOST = 200  # the session's own few, and one per waiting answer (at most MAX_UNANSWERED)


def hazards(mode: str) -> dict:
    return {"command": sys.executable, "args": [str(HAZARDS), mode]}


async def test_a_request_flood_is_held_back_by_the_reader() -> None:
    """Through the transport with the SDK's own session: while the call waits, the server's
    requests pile up to the bound and no further; the host's task count stays small."""
    import os

    from reyn_tools_mcp.lines import LineSplitter
    from reyn_tools_mcp.stdio_transport import MAX_UNANSWERED, ServerRequests, StdioSpawn, stdio_transport

    spawn = StdioSpawn([sys.executable, str(HAZARDS), "ping-flood"], env={}, cwd=None, stop=None)
    requests = ServerRequests()
    with open(os.devnull, "w") as errlog:
        async with stdio_transport(spawn, errlog, LineSplitter(64 * 1024), requests) as (read, write):
            async with ClientSession(read, write, read_timeout_seconds=10) as session:
                await session.initialize()
                assert (await session.list_tools()).tools[0].name == "slow"  # the positive control
                call = asyncio.ensure_future(session.call_tool("slow", {}))
                with anyio.fail_after(10):
                    while requests.outstanding < MAX_UNANSWERED:  # the flood reaches the bound
                        await asyncio.sleep(0.05)
                        assert not call.done()
                for _ in range(20):  # the flood goes on; the reader does not
                    await asyncio.sleep(0.05)
                    assert requests.outstanding <= MAX_UNANSWERED
                    assert len(asyncio.all_tasks()) < TASKS_AT_MOST
                assert requests.high_water == MAX_UNANSWERED
                call.cancel()
                with pytest.raises(asyncio.CancelledError):
                    await call


async def test_the_flooded_call_fails_by_its_timeout_and_the_rest_works(
    mcp_registry, mcp_settings, ctx
) -> None:
    from reyn_tools_mcp import pool

    settings = mcp_settings({"flood": hazards("ping-flood"), "fine": hazards("fine")}, call_timeout_s=3)
    reg = mcp_registry(settings)
    kind, message = err(await dispatch_tool(reg, "call_mcp_tool", {"server": "flood", "tool": "slow"}, ctx))
    assert "3" in message and ("timeout" in message or "did not answer" in message), (kind, message)
    key = pool.config_fingerprint("flood", settings.servers["flood"], {})
    requests = pool.get_pool()._connections[key].requests
    assert requests is not None and 0 < requests.high_water <= requests.bound
    fine = {"server": "fine", "tool": "add", "arguments": {"a": 2, "b": 3}}
    answered = await dispatch_tool(reg, "call_mcp_tool", fine, ctx)
    assert answered["status"] == "ok", answered
