"""A deliberately misbehaving MCP server speaking raw JSON-RPC over stdio (no SDK), for the mcp pack's
degradation tests. ``python misbehaving_server.py MODE``:

- ``silent``: reads every request and never answers (not even ``initialize``).
- ``deep-schema``: lists ``deep`` (an input schema nested DEPTH levels, default 5000) beside ``fine``.
- ``rpc-error``: ``tools/call`` of ``flaky`` answers JSON-RPC error -32000 (the code the SDK also uses
  for a closed connection); ``pid`` answers the server's pid, so a restart is visible.
- ``oversize``: also lists ``sized``, whose answer is one line of exactly ``arguments["bytes"]``
  bytes, and ``flood``, which answers with a line that never ends: FLOOD_BYTES (default 8 MiB)
  without a newline, then nothing more until stdin ends. And ``cells``: its answer holds
  ``arguments["cells"]`` small values and a text of ``arguments["commas"]`` commas (one string);
  with ``arguments["notify"]`` the cells come first in a ``notifications/message``, and the answer
  is small.
- ``linger``: as ``rpc-error``, but after stdin ends it stays up LINGER_S seconds (default 30), as a
  server that ignores the end of its input would.
"""

from __future__ import annotations

import json
import os
import sys
import time

MODE = sys.argv[1] if len(sys.argv) > 1 else "silent"
DEPTH = int(os.environ.get("DEPTH", "5000"))
FLOOD_BYTES = int(os.environ.get("FLOOD_BYTES", str(8 * 1024 * 1024)))
LINGER_S = float(os.environ.get("LINGER_S", "30"))


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
        if MODE == "oversize":
            tools += [
                {"name": "sized", "description": "A sized answer.", "inputSchema": {"type": "object"}},
                {"name": "flood", "description": "An endless answer.", "inputSchema": {"type": "object"}},
                {"name": "cells", "description": "Many values.", "inputSchema": {"type": "object"}},
            ]
        body = json.dumps(tools)
    return '{"jsonrpc": "2.0", "id": ' + json.dumps(request_id) + ', "result": {"tools": ' + body + "}}"


def text_result(request_id: object, text: str) -> dict:
    return {"jsonrpc": "2.0", "id": request_id, "result": {"content": [{"type": "text", "text": text}]}}


def sized_line(request_id: object, size: int) -> str:
    """A ``tools/call`` answer that is exactly ``size`` bytes long (its newline not counted)."""
    empty = json.dumps(text_result(request_id, ""))
    return json.dumps(text_result(request_id, "x" * (size - len(empty))))


def flood(request_id: object) -> None:
    """The start of an answer, then FLOOD_BYTES of its text and never a newline."""
    out = sys.stdout.buffer
    out.write(('{"jsonrpc": "2.0", "id": ' + json.dumps(request_id) + ', "result": {"content": [').encode())
    written, chunk = 0, b"x" * 65536
    try:
        while written < FLOOD_BYTES:
            out.write(chunk)
            written += len(chunk)
        out.flush()
    except BrokenPipeError:
        os._exit(0)


def cells(request_id: object, arguments: dict) -> None:
    """An answer (or, with ``notify``, a log notification before a small answer) holding
    ``cells`` values ``{"a": 1}`` and one text of ``commas`` commas."""
    data = {"cells": [{"a": 1}] * arguments.get("cells", 0), "text": "," * arguments.get("commas", 0)}
    if arguments.get("notify"):
        send({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": data}})
        send(text_result(request_id, "after the notification"))
        return
    result = text_result(request_id, data["text"])
    result["result"]["structuredContent"] = data
    send(result)


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
            elif name == "sized":
                sys.stdout.write(sized_line(request_id, message["params"]["arguments"]["bytes"]) + "\n")
                sys.stdout.flush()
            elif name == "flood":
                flood(request_id)
            elif name == "cells":
                cells(request_id, message["params"]["arguments"])
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
    if MODE == "linger":
        time.sleep(LINGER_S)
