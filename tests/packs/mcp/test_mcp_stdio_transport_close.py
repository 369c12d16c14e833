"""Closing an upstream stdio server's transport releases the host's ends of its pipes, whatever
the server left behind (issue 24). An unconfined server (``sandbox = "off"``) that forks a child
keeping its stdout open exits within the grace; before, nothing then closed the subprocess
transport, so each open/close left the stdout read end open (descriptors 9→11→13→15, asyncio's
"unclosed transport" at exit). The positive control: each session of the same server answers a
ping first. Real subprocesses (servers/stdio_hazards_server.py) through the transport itself."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TextIO

import anyio
import mcp_types
from mcp.shared.message import SessionMessage

HAZARDS = Path(__file__).parent / "servers" / "stdio_hazards_server.py"


def _fds() -> int:
    return len(os.listdir("/proc/self/fd"))


async def _open_ping_close(mode: str, errlog: TextIO) -> None:
    from reyn_tools_mcp.lines import LineSplitter
    from reyn_tools_mcp.stdio_transport import StdioSpawn, stdio_transport

    spawn = StdioSpawn([sys.executable, str(HAZARDS), mode], env={}, cwd=None, stop=None)
    async with stdio_transport(spawn, errlog, LineSplitter(64 * 1024)) as (read, write):
        ping = mcp_types.JSONRPCRequest(jsonrpc="2.0", id=1, method="ping")
        await write.send(SessionMessage(ping))
        with anyio.fail_after(10):
            answer = await read.receive()
        assert isinstance(answer, SessionMessage), answer  # the positive control: it works
        assert answer.message.id == 1


async def _descriptors_left(mode: str) -> int:
    with open(os.devnull, "w") as errlog:
        await _open_ping_close(mode, errlog)  # the first open may set up the loop's own descriptors
        before = _fds()
        for _ in range(3):
            await _open_ping_close(mode, errlog)
        return _fds() - before


async def test_a_server_whose_child_holds_stdout_leaves_no_descriptor() -> None:
    assert await _descriptors_left("forks") == 0


async def test_a_well_behaved_server_leaves_no_descriptor() -> None:
    assert await _descriptors_left("fine") == 0
