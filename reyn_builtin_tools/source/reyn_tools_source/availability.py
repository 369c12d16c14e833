"""Whether the source tools are offered in a context: the ``available`` check both tools share.

The role gates make them router-only (``phase="deny"``). ``reyn mcp serve`` serves what the router
surface offers and gates its calls as ``router`` (docs/decisions.md, the MCP surface), so the role
gates alone cannot keep them from MCP clients; the context says who serves the call
(``ctx.extras["served_by"] == "mcp"``, or a host that gates as the ``mcp`` surface), and there the
tools are offered only when the operator opted in with ``serve_over_mcp``. The check runs in the
gates' call layer, so the MCP list and the MCP calls agree.
"""

from __future__ import annotations

from reyn_core import ToolContext, settings_as

from .settings import SourceSettings


def served_over_mcp(ctx: ToolContext) -> bool:
    """Whether this call reaches an MCP client rather than the host's own router."""
    return ctx.surface == "mcp" or ctx.extras.get("served_by") == "mcp"


def source_available(ctx: ToolContext) -> bool:
    """False on MCP unless ``[plugins.source.settings] serve_over_mcp = true``; True elsewhere."""
    if not served_over_mcp(ctx):
        return True
    return settings_as(ctx, SourceSettings).serve_over_mcp
