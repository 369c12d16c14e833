"""Handlers of the mcp pack's tools (imported lazily by the dispatcher; imports the ``mcp`` SDK)."""

from __future__ import annotations

from typing import Any

import mcp_types
from pydantic import BaseModel, ConfigDict, Field

from reyn_core import (
    ArgumentProblem,
    InvalidToolArguments,
    SchemaRefused,
    ToolContext,
    ToolDenied,
    ToolExecutionError,
    ToolGates,
    ToolTimeout,
    json_schema_validator,
    settings_as,
    tool,
)

from . import client, pool
from .availability import server_enum, servers_available
from .deadline import Deadline
from .failures import McpCallTimeout, McpConnectionError, McpServerError
from .results import bounded_listing, convert_result, names_preview
from .settings import McpSettings, ServerConfig
from .snapshot import rendered_fields, served_sha256


def resolve_server(settings: McpSettings, ctx: ToolContext | None, server: str) -> ServerConfig:
    """The configured server ``server`` if this agent may use it; otherwise a clear error."""
    allowed = settings.servers_for(ctx.agent if ctx else None)
    if server not in settings.servers:
        raise InvalidToolArguments(
            f"no MCP server named {server!r}; available: {allowed or 'none'}",
            problems=[ArgumentProblem("/server", f"must be one of {allowed}")],
        )
    if server not in allowed:
        who = repr(ctx.agent) if ctx and ctx.agent else "this caller"
        raise ToolDenied(
            f"agent {who} may not use MCP server {server!r} (plugins.mcp.settings.agent_servers); "
            f"allowed: {allowed or 'none'}"
        )
    return settings.servers[server]


def _timeout(settings: McpSettings, config: ServerConfig) -> float:
    return config.timeout_s or settings.call_timeout_s


async def _on_pool(
    settings: McpSettings, server: str, config: ServerConfig, fn: Any, ctx: ToolContext
) -> Any:
    """``fn(connection)`` on the session pool; a stdio server's write roots are checked against
    the host's own files of this call (``ctx.host_files``) before it is started (``pool.SessionPool.run``)."""
    try:
        return await pool.get_pool().run(
            fn,
            server,
            config,
            settings.connect_timeout_s,
            ctx.host_files,
            settings.max_message_bytes,
            settings.max_message_values,
        )
    except McpCallTimeout as exc:
        raise ToolTimeout(str(exc)) from None
    except (McpConnectionError, McpServerError) as exc:
        raise ToolExecutionError(str(exc)) from None


def served(tool: mcp_types.Tool) -> dict[str, Any]:
    """The tool object exactly as the server sent it: every field it set (unknown ones included,
    under their wire names), none the SDK defaulted. What the rug-pull pin hashes."""
    return tool.model_dump(mode="json", by_alias=True, exclude_unset=True)


def tool_to_dict(tool: mcp_types.Tool) -> dict[str, Any]:
    """A snapshot entry: the whole served object, and the parts a model is shown (read from it)."""
    whole = served(tool)
    return {**rendered_fields(whole), "served": whole}


def check_arguments(server: str, tool: mcp_types.Tool, arguments: dict[str, Any]) -> None:
    """Validate ``arguments`` against the tool's input schema with the core's validator factory: no
    reference is ever fetched, patterns run on RE2; a schema it refuses refuses the tool."""
    try:
        validate = json_schema_validator(tool.input_schema)
    except SchemaRefused as exc:
        raise ToolExecutionError(
            f"MCP tool {server}/{tool.name} is refused: its input schema cannot be used to check "
            f"arguments ({exc}); the call was not sent"
        ) from None
    problems = validate(arguments)
    if problems:
        problems = [ArgumentProblem(p.pointer, p.message[:300]) for p in problems[:20]]
        listed = "; ".join(p.render() for p in problems[:8])
        raise InvalidToolArguments(
            f"invalid arguments for MCP tool {server}/{tool.name}: {listed}",
            problems=[ArgumentProblem("/arguments" + p.pointer, p.message) for p in problems],
        )


async def call_server_tool(
    settings: McpSettings,
    ctx: ToolContext,
    server: str,
    tool: str,
    arguments: dict[str, Any],
    *,
    expect_sha256: str | None = None,
) -> dict[str, Any]:
    """Check ``tool`` and ``arguments`` against the server's tools/list, then call it.

    With ``expect_sha256`` (import mode) the listing is fetched fresh and the tool's definition must
    hash to that value, or the call is refused: the server changed the tool after it was imported.
    """
    config = resolve_server(settings, ctx, server)
    # one deadline for the whole call: the listings, the open, the tools/call (deadline.py)
    timeout = Deadline(_timeout(settings, config))

    async def job(conn: client.ServerConnection) -> mcp_types.CallToolResult:
        tools = await conn.list_tools(timeout, refresh=expect_sha256 is not None)
        if tool not in tools:
            tools = await conn.list_tools(timeout, refresh=True)
        definition = tools.get(tool)
        if definition is None:
            raise InvalidToolArguments(
                f"MCP server {server!r} has no tool {tool[:200]!r}; "
                f"its tools: {names_preview(sorted(tools))}",
                problems=[ArgumentProblem("/tool", f"must be one of {names_preview(sorted(tools))}")],
            )
        if expect_sha256 is not None:
            live = served_sha256(served(definition))
            if live != expect_sha256:
                # any served field: description, schemas, annotations, _meta, fields not known yet
                raise ToolDenied(
                    f"MCP server {server!r} changed tool {tool!r} since it was imported (the tool it "
                    f"serves now hashes to {live}, the snapshot's to {expect_sha256}); the call was "
                    "refused and the other tools keep working. Review the change with `reyn mcp check`, "
                    "run `reyn mcp refresh`, then `reyn plugins lock`"
                )
        check_arguments(server, definition, arguments)
        return await conn.call_tool(tool, arguments, timeout)

    result = await _on_pool(settings, server, config, job, ctx)
    return convert_result(server, tool, result, settings.max_text_chars)


# --------------------------------------------------------------------------- handlers


CLUSTER = "mcp"
GATES = ToolGates(router="allow", phase="allow")


def _server() -> Any:
    return Field(min_length=1, max_length=32, description="MCP server name (see list_mcp_servers).")


def _no_additional_properties(schema: dict[str, Any]) -> None:
    # Any JSON object: the server's own schema for the tool checks it (check_arguments).
    schema.pop("additionalProperties", None)


class ListMcpServersArgs(BaseModel):
    model_config = ConfigDict(extra="forbid", json_schema_extra={"required": []})


@tool(cluster=CLUSTER, purity="read_only", gates=GATES, available=servers_available)
async def list_mcp_servers(args: ListMcpServersArgs, ctx: ToolContext) -> dict[str, Any]:
    """List the MCP servers you may use, with their transport and whether they are connected."""
    settings = settings_as(ctx, McpSettings)
    running = pool.existing_pool()
    servers = []
    for name in settings.servers_for(ctx.agent if ctx else None):
        config = settings.servers[name]
        state = running.connection_state(name, config, ctx.host_files) if running else {"connected": False}
        servers.append(
            {
                "name": name,
                "transport": config.transport,
                "source": config.source(),
                "connected": state["connected"],
                "import_tools": config.import_tools,
            }
        )
    return {"servers": servers}


class ListMcpToolsArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    server: str = _server()


@tool(
    cluster=CLUSTER, purity="read_only", gates=GATES, available=servers_available, schema_enricher=server_enum
)
async def list_mcp_tools(args: ListMcpToolsArgs, ctx: ToolContext) -> dict[str, Any]:
    """List the tools of one MCP server with their descriptions and input schemas."""
    server = args.server
    settings = settings_as(ctx, McpSettings)
    config = resolve_server(settings, ctx, server)
    timeout = _timeout(settings, config)
    tools = await _on_pool(settings, server, config, lambda conn: conn.list_tools(timeout, refresh=True), ctx)
    return bounded_listing(server, [tool_to_dict(tools[n]) for n in sorted(tools)], settings.max_text_chars)


class CallMcpToolArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    server: str = _server()
    tool: str = Field(min_length=1, max_length=128, description="Tool name on that server.")
    arguments: dict[str, Any] = Field(
        {}, description="Arguments for the server's tool.", json_schema_extra=_no_additional_properties
    )


@tool(
    cluster=CLUSTER, purity="external", gates=GATES, available=servers_available, schema_enricher=server_enum
)
async def call_mcp_tool(args: CallMcpToolArgs, ctx: ToolContext) -> dict[str, Any]:
    """Call a tool of an MCP server. Arguments are checked against the server's own schema for that
    tool. The result keeps the server's text, structured content and is_error flag."""
    return await call_server_tool(
        settings_as(ctx, McpSettings), ctx, args.server, args.tool, dict(args.arguments or {})
    )


TOOLS = (list_mcp_servers, list_mcp_tools, call_mcp_tool)


async def call_imported(
    ctx: ToolContext, server: str, tool: str, sha256: str, arguments: dict[str, Any]
) -> dict[str, Any]:
    """The handler behind an imported ``<prefix>__<tool>`` registry tool."""
    return await call_server_tool(
        settings_as(ctx, McpSettings), ctx, server, tool, arguments, expect_sha256=sha256
    )
