"""A call's availability check is asked off the event loop, against a real ``reyn mcp serve --http``
subprocess on 127.0.0.1: while one session's ``tools/call`` waits for a check that blocks, another
session's ``ping`` is answered — before, the dispatcher asked the check on the event loop, and the
whole server stalled until the check answered or its deadline passed. The check still decides: the
call runs once it says yes (the control) and is refused when it says no."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from .conftest import ServeWorld
from .test_serve_http_limits import _session, open_session, ping, wait_for

CALL = {
    "jsonrpc": "2.0",
    "id": "call-checked",
    "method": "tools/call",
    "params": {"name": "probe_checked", "arguments": {}},
}


@pytest.mark.parametrize("deny", [False, True])
async def test_another_session_is_answered_while_a_call_waits_for_its_check(
    serve_world: ServeWorld, deny: bool
) -> None:
    markers = serve_world.markers
    # the check waits for this test's go, not for the 1 s deadline (probe_plugin)
    with serve_world.http(SERVE_PROBE_CHECK_DEADLINE="120") as server:
        async with httpx.AsyncClient(timeout=120) as http:
            calling = await open_session(http, server.url)
            other = await open_session(http, server.url)
            (markers / "check.arm").touch()
            if deny:
                (markers / "check.deny").touch()
            call = asyncio.ensure_future(http.post(server.url, json=CALL, headers=_session(calling)))
            try:
                await wait_for(lambda: (markers / "check.started").exists(), "the check asked")
                try:  # the check blocks until the go below, which comes only after this answer
                    pong = await asyncio.wait_for(ping(http, server.url, other), 30)
                except TimeoutError:
                    pong = None  # before: the event loop waited in the check
            finally:
                (markers / "check.go").touch()
            answer = await asyncio.wait_for(call, 120)
    assert pong is not None and pong.status_code == 200 and '"result"' in pong.text
    assert answer.status_code == 200
    if deny:
        assert "is not available in this context" in answer.text
    else:  # the control: the check said yes, the call ran
        assert '"checked"' in answer.text and '"isError":false' in answer.text.replace(" ", "")
