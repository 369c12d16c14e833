"""An upstream call's timeout is reported at its time, whatever the server does (issue 24). The
server here stops reading its stdin at ``tools/call`` of ``slow`` and floods requests, so the host's
writer is stuck on its full stdin and its writes block on a stdout the host stops reading. Before,
the timed-out call awaited its own cancellation (the SDK's ``notifications/cancelled``, up to 5 s
behind that writer) and then the graceful close of the server (about 2.5 s): an 8 s timeout was
reported at 15.6 s. Now the request is cancelled and the server stopped in the background: the
caller hears of the timeout while the server still runs. The positive controls: the same server
answers ``pid`` while it reads its stdin, and the next call opens a fresh one. Real servers
(servers/stdio_hazards_server.py, raw JSON-RPC over stdio, unconfined so that its pid is the host's).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from reyn_core.host import dispatch_tool

from .test_mcp_degraded_servers import err, run_isolated

HAZARDS = Path(__file__).parent / "servers" / "stdio_hazards_server.py"
FLOOD = {"command": sys.executable, "args": [str(HAZARDS), "ping-flood"], "sandbox": "off"}
TIMEOUT_S = 2


def running(pid: int) -> bool:
    """Whether the process ``pid`` (a server this test started) still runs: not reaped, not a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


async def test_the_timeout_is_reported_before_the_server_is_stopped() -> None:
    from reyn_tools_mcp.client import McpCallTimeout, ServerConnection
    from reyn_tools_mcp.settings import ServerConfig

    conn = ServerConnection("flood", ServerConfig.model_validate(FLOOD), 20.0, {})
    try:
        pid = int((await conn.call_tool("pid", {}, 20)).content[0].text)  # type: ignore[union-attr]
        with pytest.raises(McpCallTimeout) as raised:
            await conn.call_tool("slow", {}, TIMEOUT_S)
        # nothing ran on the loop since the error was raised: before, the server had been stopped
        # (and reaped) by then, since the call awaited its close
        assert running(pid)
        assert f"did not answer tools/call 'slow' within {TIMEOUT_S} s" in str(raised.value)
        again = int((await conn.call_tool("pid", {}, 20)).content[0].text)  # type: ignore[union-attr]
        assert again != pid and conn.opened == 2  # a fresh server ...
        assert not running(pid)  # ... started once the old one had stopped
    finally:
        await conn.close()
    assert not running(again)


async def test_through_the_dispatcher_the_call_fails_as_a_timeout_and_the_next_call_answers(
    mcp_registry, mcp_settings, ctx
) -> None:
    from reyn_tools_mcp import client

    settings = mcp_settings({"flood": FLOOD}, call_timeout_s=TIMEOUT_S)
    reg = mcp_registry(settings)
    pid = {"server": "flood", "tool": "pid"}
    before = await dispatch_tool(reg, "call_mcp_tool", pid, ctx)
    assert before["status"] == "ok", before
    kind, message = err(await dispatch_tool(reg, "call_mcp_tool", {"server": "flood", "tool": "slow"}, ctx))
    assert kind == "timeout"
    assert f"did not answer tools/call 'slow' within {TIMEOUT_S} s" in message
    after = await dispatch_tool(reg, "call_mcp_tool", pid, ctx)
    assert after["status"] == "ok", after
    assert after["data"]["text"] != before["data"]["text"]
    assert client.get_pool().connection_state("flood", settings.servers["flood"], {})["sessions_opened"] == 2


def test_a_shutdown_right_after_a_timeout_leaves_no_task_and_no_process() -> None:
    """In a fresh interpreter with no logging configured: the host shuts down while the timed-out
    request's cancellation and the server's stop still run. Nothing is printed on stderr (no "Task
    was destroyed but it is pending", no exception never retrieved) and the server is gone."""
    settings = {"servers": {"flood": FLOOD}, "call_timeout_s": TIMEOUT_S}
    calls = [
        ["call_mcp_tool", {"server": "flood", "tool": "pid"}],
        ["call_mcp_tool", {"server": "flood", "tool": "slow"}],
    ]
    (answered, timed_out), stderr = run_isolated(settings, calls)
    assert answered["status"] == "ok", answered
    assert err(timed_out)[0] == "timeout"
    pid = int(answered["data"]["text"])
    left = running(pid) and str(HAZARDS) in Path(f"/proc/{pid}/cmdline").read_text()
    if left:
        os.kill(pid, 9)  # this test's own server
    assert not left
    assert stderr == "", json.dumps(stderr)
