"""The light checks of the static MCP tools: availability (layer 3) and the ``server`` enum enricher.
They read only the settings, so loading and rendering import them without the ``mcp`` SDK."""

from __future__ import annotations

from typing import Any

from reyn_core import ToolContext, ToolRuntimeMissing, settings_as

from .settings import McpSettings

HOW_TO_CONFIGURE = (
    'add a server to the profile: [plugins.mcp.settings.servers.NAME] command = "..." '
    '(stdio) or url = "https://..." (streamable HTTP)'
)


def servers_available(ctx: ToolContext) -> bool:
    """Layer 3: the discovery/call tools need at least one server this agent may use."""
    settings = settings_as(ctx, McpSettings)
    if not settings.servers:
        raise ToolRuntimeMissing(f"no MCP servers are configured; {HOW_TO_CONFIGURE}")
    if not settings.servers_for(ctx.agent):
        raise ToolRuntimeMissing(
            f"agent {ctx.agent!r} may use no MCP server (plugins.mcp.settings.agent_servers)"
        )
    return True


def server_enum(schema: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    """Schema enricher: the ``server`` property lists the servers this agent may use."""
    names = settings_as(ctx, McpSettings).servers_for(ctx.agent)
    if names and "server" in schema.get("properties", {}):
        schema["properties"]["server"]["enum"] = names
    return schema
