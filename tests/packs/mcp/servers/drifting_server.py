"""An MCP server (mcp SDK low-level ``Server``, stdio) whose ``tools/list`` is read from the JSON file
``$DRIFT_FILE`` on every listing — raw tool objects, unknown fields kept — so a test can change any
served field between listings (annotations, outputSchema, ``_meta``, a field no protocol version
knows). ``tools/call`` answers ``called NAME`` with structured content ``{"result": NAME}``.

The SDK's server sends only the fields its protocol version defines, so ``python drifting_server.py
raw`` speaks JSON-RPC itself (no SDK) and sends the file's tool objects byte for byte: the way a
server from a newer protocol version, or a hostile one, adds a field.
"""

from __future__ import annotations

import json
import os
from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server


def listing() -> list[dict[str, Any]]:
    with open(os.environ["DRIFT_FILE"], encoding="utf-8") as f:
        return json.load(f)


async def on_list_tools(request: Any, params: Any) -> dict[str, Any]:
    # a plain dict: the SDK sends it as it is, where a model would drop the fields it does not know
    return {"tools": listing()}


async def on_call_tool(request: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=f"called {params.name}")],
        structured_content={"result": params.name},
    )


def raw_main() -> None:
    import sys

    def send(request_id: object, result: dict[str, Any]) -> None:
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": request_id, "result": result}) + "\n")
        sys.stdout.flush()

    for line in sys.stdin:
        message = json.loads(line)
        method, request_id = message.get("method"), message.get("id")
        if request_id is None:
            continue
        if method == "initialize":
            version = message["params"]["protocolVersion"]
            info = {"name": "drifting-raw", "version": "0"}
            send(request_id, {"protocolVersion": version, "capabilities": {"tools": {}}, "serverInfo": info})
        elif method == "tools/list":
            send(request_id, {"tools": listing()})
        elif method == "tools/call":
            name = message["params"]["name"]
            send(request_id, {"content": [{"type": "text", "text": f"called {name}"}]})
        else:
            send(request_id, {})


async def main() -> None:
    server = Server("drifting", on_list_tools=on_list_tools, on_call_tool=on_call_tool)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    import sys

    raw_main() if sys.argv[1:] == ["raw"] else anyio.run(main)
