"""An upstream call's timeout is reported at its time, whatever the server does (issue 24). The
server here stops reading its stdin at ``tools/call`` of ``slow`` and floods requests, so the host's
writer is stuck on its full stdin and its writes block on a stdout the host stops reading. Before,
the timed-out call awaited its own cancellation (the SDK's ``notifications/cancelled``, up to 5 s
behind that writer) and then the graceful close of the server (about 2.5 s): an 8 s timeout was
reported at 15.6 s. Now the request is cancelled and the server stopped in the background: the
caller hears of the timeout while that stop is still under way (the server is killed at once, as a
failed one, but its close — pipes, reaping — is not awaited). The positive controls: the same server
answers ``pid`` while it reads its stdin, and the next call opens a fresh one. Real servers
(servers/stdio_hazards_server.py, raw JSON-RPC over stdio, unconfined so that its pid is the host's).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
from pathlib import Path

import pytest

from reyn_core.host import dispatch_tool

from .test_mcp_degraded_servers import err, run_isolated, server_pid, sessions

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
    from reyn_tools_mcp.client import ServerConnection
    from reyn_tools_mcp.failures import McpCallTimeout
    from reyn_tools_mcp.settings import ServerConfig

    conn = ServerConnection("flood", ServerConfig.model_validate(FLOOD), 20.0, {})
    try:
        pid = int((await conn.call_tool("pid", {}, 20)).content[0].text)  # type: ignore[union-attr]
        with pytest.raises(McpCallTimeout) as raised:
            await conn.call_tool("slow", {}, TIMEOUT_S)
        # nothing ran on the loop since the error was raised: before, the call awaited the server's
        # close, so nothing was left to stop by then. (Whether the killed server is still in /proc
        # here is up to the kernel and the child watcher's thread, so that is not asserted.)
        assert conn.stopping
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
    settings = mcp_settings({"flood": FLOOD}, call_timeout_s=TIMEOUT_S)
    reg = mcp_registry(settings)
    before = await server_pid(reg, ctx, "flood")
    kind, message = err(await dispatch_tool(reg, "call_mcp_tool", {"server": "flood", "tool": "slow"}, ctx))
    assert kind == "timeout"
    assert f"did not answer tools/call 'slow' within {TIMEOUT_S} s" in message
    assert await server_pid(reg, ctx, "flood") != before
    assert sessions(settings, "flood") == 2


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


# ------------------------------------------------ a failed server is stopped hard; shutdown is bounded
# (review of the above: a server ignoring SIGTERM and its stdin's end kept the next call waiting for
# its graceful stop, and a shutdown out of time left it running after the host)


def stubborn(log: Path, **env: str) -> dict:
    """The ``stubborn`` server (it writes ``term`` / ``eof`` lines to ``log/<pid>``)."""
    return {
        "command": sys.executable,
        "args": [str(HAZARDS), "stubborn", str(log)],
        "sandbox": "off",
        "env": env,
    }


def notes(log: Path, pid: int) -> list[str]:
    path = log / str(pid)
    return path.read_text().split() if path.exists() else []


def servers_of(log: Path) -> list[int]:
    """The running processes started with ``log`` on their command line (this test's servers)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if str(log) in (entry / "cmdline").read_text() and running(int(entry.name)):
                    found.append(int(entry.name))
            except OSError:
                pass
    return found


async def test_a_timed_out_server_gets_no_grace_and_a_healthy_one_closes_gracefully(tmp_path) -> None:
    """The timed-out server (busy in ``hang``, not reading its stdin, ignoring SIGTERM) is killed at
    once: it never sees the graceful close's SIGTERM. Before, the next call waited for that close
    (2 s of grace, SIGTERM, 5 s, SIGKILL) and the server logged ``term``. Positive control: the
    healthy server after it is closed gracefully — it sees the end of its stdin and exits by itself."""
    from reyn_tools_mcp.client import ServerConnection
    from reyn_tools_mcp.failures import McpCallTimeout
    from reyn_tools_mcp.settings import ServerConfig

    conn = ServerConnection("stubborn", ServerConfig.model_validate(stubborn(tmp_path)), 20.0, {})
    try:
        first = int((await conn.call_tool("pid", {}, 20)).content[0].text)  # type: ignore[union-attr]
        with pytest.raises(McpCallTimeout):
            await conn.call_tool("hang", {}, 1)
        second = int((await conn.call_tool("pid", {}, TIMEOUT_S)).content[0].text)  # type: ignore[union-attr]
        assert second != first and not running(first)
        assert notes(tmp_path, first) == []  # no SIGTERM, no grace: killed
    finally:
        await conn.close()
    assert not running(second)
    assert notes(tmp_path, second) == ["eof"]  # closed gracefully: it saw its stdin end and exited


async def test_a_shutdown_out_of_time_leaves_no_process_and_no_task(tmp_path) -> None:
    """The reviewer's scenario: a server that ignores SIGTERM and its stdin's end, with a slow
    handshake; a call times out, the next is submitted, and the pool is closed with a budget its
    graceful close cannot meet. Before, the pool stopped its loop with the server still running
    (and tasks pending); now, once the budget is spent, every server is killed and every task
    cancelled before the loop stops. Positive control: the first call answered."""
    from reyn_tools_mcp.failures import McpCallTimeout
    from reyn_tools_mcp.pool import SessionPool
    from reyn_tools_mcp.settings import ServerConfig

    config = ServerConfig.model_validate(
        stubborn(tmp_path, HAZARDS_SLOW_INIT="1", HAZARDS_LIVE_AFTER_EOF="1")
    )
    pool = SessionPool()
    loop = pool._loop
    try:

        def run(tool: str, timeout_s: float):
            return pool.run(lambda c: c.call_tool(tool, {}, timeout_s), "stubborn", config, 20.0, {})

        first = int((await run("pid", 20)).content[0].text)  # type: ignore[union-attr]
        with pytest.raises(McpCallTimeout):
            await run("hang", 1)
        after = asyncio.ensure_future(run("pid", 5))
        await asyncio.to_thread(pool.close, 2.0)  # the next server's graceful close needs 7 s
        after.cancel()
        with contextlib.suppress(BaseException):
            await after
    finally:
        left = servers_of(tmp_path)
        for pid in left:
            os.kill(pid, 9)  # this test's own servers
    assert first > 0
    assert left == []
    assert loop.is_closed()  # the loop's thread ended: nothing was left running on it
