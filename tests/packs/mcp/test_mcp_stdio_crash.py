"""An upstream stdio server that crashes mid-message lost the connection; its unfinished line is
not a message (issue 24). The server writes the start of its ``tools/list`` answer, no newline,
and exits 1: the call fails naming the lost connection and that the output ended mid-message.
Before, the transport parsed the unfinished line and reported it as a message that cannot be
parsed (``json_invalid: EOF …``). The positive control: a server that answers lists its tool.
Real servers (servers/stdio_hazards_server.py, raw JSON-RPC over stdio) through the dispatcher."""

from __future__ import annotations

import sys
from pathlib import Path

from reyn_core.host import dispatch_tool

from .test_mcp_degraded_servers import err

HAZARDS = Path(__file__).parent / "servers" / "stdio_hazards_server.py"


def hazards(mode: str) -> dict:
    return {"command": sys.executable, "args": [str(HAZARDS), mode]}


async def test_a_crash_mid_message_is_a_lost_connection_not_bad_json(mcp_registry, mcp_settings, ctx) -> None:
    reg = mcp_registry(mcp_settings({"crash": hazards("crash"), "fine": hazards("fine")}))
    kind, message = err(await dispatch_tool(reg, "list_mcp_tools", {"server": "crash"}, ctx))
    assert kind == "execution_error"
    assert "was lost during tools/list: its output ended mid-message" in message, message
    assert "cannot be parsed" not in message and "json_invalid" not in message
    fine = await dispatch_tool(reg, "list_mcp_tools", {"server": "fine"}, ctx)
    assert fine["status"] == "ok", fine  # the positive control
    assert "add" in str(fine["data"])
