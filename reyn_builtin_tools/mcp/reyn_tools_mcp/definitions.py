r"""The three static MCP tools (``list_mcp_servers``, ``list_mcp_tools``, ``call_mcp_tool``) as loading
and rendering see them, read from the generated ``tools.json`` (name, description, parameters
schema, gates, lazy ``"module:attr"`` handler), plus what a manifest cannot hold: the availability
check and the schema enricher (``availability.py``).

The one source of truth is the ``@tool`` functions in ``tools.py`` (imported on a tool's first
call, with the ``mcp`` SDK). After changing one, regenerate the manifest
(``tests/packs/test_lazy_definitions.py`` fails until you do)::

    python -m reyn_core.manifest reyn_tools_mcp.tools:TOOLS \
        > reyn_builtin_tools/mcp/reyn_tools_mcp/tools.json

Imported server tools (import mode) are the one kind of tool not defined this way: they come from
the tools/list snapshot of a configured server, so they are built at load time (``plugin.py``).
"""

from __future__ import annotations

from reyn_core import lazy_definitions, read_manifest

from .availability import server_enum, servers_available

TOOLS = lazy_definitions(
    read_manifest(__package__),
    available={name: servers_available for name in ("list_mcp_servers", "list_mcp_tools", "call_mcp_tool")},
    schema_enrichers={"list_mcp_tools": server_enum, "call_mcp_tool": server_enum},
)
