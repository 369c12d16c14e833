"""Reyn mcp pack: MCP servers as tools (``list_mcp_servers``, ``list_mcp_tools``, ``call_mcp_tool``)
and optional import mode. Importing this package never imports the ``mcp`` SDK."""

from __future__ import annotations

from .plugin import diagnostics
from .settings import McpSettings

__all__ = ["McpSettings", "diagnostics"]
