"""The demo's MCP server: a tiny issue tracker over stdio, written with the official ``mcp`` SDK.

``reyn-demo`` configures the mcp pack to start it as ``python mcp_server.py``; the model reaches it
through ``list_mcp_tools`` and ``call_mcp_tool``. Deterministic, offline, no state on disk.
"""

from __future__ import annotations

from typing import Any

try:  # mcp >= 2
    from mcp.server.mcpserver import MCPServer as _Server
except ImportError:  # mcp 1.x
    from mcp.server.fastmcp import FastMCP as _Server  # type: ignore[no-redef,attr-defined]

TICKETS: dict[str, dict[str, Any]] = {
    "REYN-7": {"title": "LLM surfaces and the demo", "state": "in review", "owner": "ana"},
    "REYN-8": {"title": "Publish the packs to the index", "state": "open", "owner": "bo"},
    "REYN-9": {"title": "Lock file audit in CI", "state": "done", "owner": "cy"},
}

server = _Server("reyn-demo-tracker")


@server.tool()
def ticket_status(ticket: str) -> dict[str, Any]:
    """The title, state and owner of a tracker ticket such as REYN-7."""
    found = TICKETS.get(ticket.strip().upper())
    if found is None:
        raise ValueError(f"no ticket {ticket!r}; known: {', '.join(sorted(TICKETS))}")
    return {"ticket": ticket.strip().upper(), **found}


@server.tool()
def open_tickets() -> list[str]:
    """The ids of tickets that are not done."""
    return sorted(t for t, v in TICKETS.items() if v["state"] != "done")


if __name__ == "__main__":
    server.run("stdio")
