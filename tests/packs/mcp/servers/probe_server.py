"""A real MCP server over stdio (mcp SDK MCPServer) that reports what it can reach: a file, a TCP
and a UDP address. Used by the sandbox tests: under the default grants it must reach nothing."""

from __future__ import annotations

import os
import socket

from mcp.server.mcpserver import MCPServer

server = MCPServer("probe")


@server.tool()
def read_file(path: str) -> str:
    """The file's text, or ``denied: <errno name>``."""
    try:
        with open(os.path.expanduser(path), encoding="utf-8") as fh:
            return fh.read()
    except OSError as exc:
        return f"denied: {exc.__class__.__name__} {exc.errno}"


@server.tool()
def tcp_connect(port: int) -> str:
    """``connected`` when a TCP connection to 127.0.0.1:port succeeds, else ``denied: ...``."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=3):
            return "connected"
    except OSError as exc:
        return f"denied: {exc.__class__.__name__} {exc.errno}"


if __name__ == "__main__":
    server.run()
