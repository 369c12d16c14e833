"""A deliberately misbehaving MCP server speaking raw JSON-RPC over stdio (no SDK), for the mcp pack's
degradation tests. ``python misbehaving_server.py MODE``:

- ``silent``: reads every request and never answers (not even ``initialize``).
- ``deep-schema``: lists ``deep`` (an input schema nested DEPTH levels, default 5000) beside ``fine``.
- ``rpc-error``: ``tools/call`` of ``flaky`` answers JSON-RPC error -32000 (the code the SDK also uses
  for a closed connection); ``pid`` answers the server's pid, so a restart is visible.
"""

from __future__ import annotations

import json
import os
import sys

MODE = sys.argv[1] if len(sys.argv) > 1 else "silent"
DEPTH = int(os.environ.get("DEPTH", "5000"))


def send(message: dict) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def deep_schema(depth: int) -> str:
    # written as text: json.dumps of a 5000-deep dict would hit Python's recursion limit here too
    return '{"type": "object", "properties": {"x": ' * depth + '{"type": "string"}' + "}}" * depth


def tools_list_text(request_id: object) -> str:
    fine = {"name": "fine", "description": "A normal tool.", "inputSchema": {"type": "object"}}
    tools = [fine, {"name": "pid", "description": "The pid.", "inputSchema": {"type": "object"}}]
    if MODE == "deep-schema":
        deep = '{"name": "deep", "description": "Deep.", "inputSchema": ' + deep_schema(DEPTH) + "}"
        body = "[" + deep + ", " + ", ".join(json.dumps(t) for t in tools) + "]"
    else:
        tools.append({"name": "flaky", "description": "Fails.", "inputSchema": {"type": "object"}})
        body = json.dumps(tools)
    return '{"jsonrpc": "2.0", "id": ' + json.dumps(request_id) + ', "result": {"tools": ' + body + "}}"


def text_result(request_id: object, text: str) -> dict:
    return {"jsonrpc": "2.0", "id": request_id, "result": {"content": [{"type": "text", "text": text}]}}


def main() -> None:
    for line in sys.stdin:
        try:
            message = json.loads(line)
        except ValueError:
            continue
        method, request_id = message.get("method"), message.get("id")
        if MODE == "silent" or request_id is None:
            continue
        if method == "initialize":
            send(
                {
                    "jsonrpc": "2.0",
                    "id": request_id,
                    "result": {
                        "protocolVersion": message["params"]["protocolVersion"],
                        "capabilities": {"tools": {}},
                        "serverInfo": {"name": "misbehaving", "version": "0"},
                    },
                }
            )
        elif method == "tools/list":
            sys.stdout.write(tools_list_text(request_id) + "\n")
            sys.stdout.flush()
        elif method == "tools/call":
            name = message["params"]["name"]
            if name == "flaky":
                send(
                    {
                        "jsonrpc": "2.0",
                        "id": request_id,
                        "error": {"code": -32000, "message": "database is down"},
                    }
                )
            elif name == "pid":
                send(text_result(request_id, str(os.getpid())))
            else:
                send(text_result(request_id, "fine"))
        elif method == "ping":
            send({"jsonrpc": "2.0", "id": request_id, "result": {}})
        else:
            send({"jsonrpc": "2.0", "id": request_id, "error": {"code": -32601, "message": f"no {method}"}})


if __name__ == "__main__":
    main()
