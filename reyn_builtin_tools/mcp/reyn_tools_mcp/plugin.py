"""The mcp pack's plugin module (entry point ``mcp``): settings, tools, import mode, ``reyn mcp``.

Nothing here imports the ``mcp`` SDK: the three static tools are the light definitions of
``definitions.py`` (read from the generated ``tools.json``, with lazy handlers), and imported server
tools are built from the tools/list snapshot file (see ``snapshot``) — the one kind of tool that is
not a ``@tool`` function, since a server defines it — so loading and rendering never spawn a server
or open a connection.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from reyn_core import (
    ToolContext,
    ToolDefinition,
    ToolGates,
    ToolOrigin,
    ToolRuntimeMissing,
    hookimpl,
    settings_as,
)

from .availability import HOW_TO_CONFIGURE
from .sandbox import status_diagnostics
from .settings import McpSettings
from .snapshot import SnapshotError, read_snapshot, snapshot_tools, tool_sha256

REYN_API = 1
PLUGIN_ID = "mcp"
# --------------------------------------------------------------------------- import mode

_INVALID_NAME_CHARS = re.compile(r"[^a-zA-Z0-9_-]")


def imported_name(prefix: str, tool: str) -> str:
    """``<prefix>__<tool>``, with characters a provider rejects replaced by ``_``."""
    return f"{prefix}__{_INVALID_NAME_CHARS.sub('_', tool)}"


def _imported_handler(server: str, tool: str, sha256: str) -> Callable[..., Any]:
    async def call(_reyn_ctx: ToolContext, **arguments: Any) -> Any:
        from .tools import call_imported

        return await call_imported(_reyn_ctx, server, tool, sha256, arguments)

    call.__name__ = f"mcp_{server}_{_INVALID_NAME_CHARS.sub('_', tool)}"
    return call


def _agent_may_use(server: str) -> Callable[[ToolContext], bool]:
    """The availability check of ``server``'s imported tools: one per server, shared by all its tools
    (``imported_definitions``), so a listing asks it once for them all (``reyn_core.own_check``: tools
    sharing a check in one ``ctx`` share its ask) and a late ask of it hides that server's tools, no
    other's."""

    def available(ctx: ToolContext) -> bool:
        if server not in settings_as(ctx, McpSettings).servers_for(ctx.agent):
            raise ToolRuntimeMissing(
                f"agent {ctx.agent!r} may not use MCP server {server!r} (plugins.mcp.settings.agent_servers)"
            )
        return True

    return available


# An upstream description is re-sent to the model on every turn: cut far below the core's limit, with
# a marker the model can read, so one server cannot flood every prompt.
IMPORTED_DESCRIPTION_CHARS = 4_000


def _imported_description(text: Any, tool: str, server: str) -> str:
    description = (text if isinstance(text, str) else "").strip()
    if not description:
        return f"Tool {tool!r} of MCP server {server!r}."
    if len(description) <= IMPORTED_DESCRIPTION_CHARS:
        return description
    cut = len(description) - IMPORTED_DESCRIPTION_CHARS
    return description[:IMPORTED_DESCRIPTION_CHARS] + f" [... {cut} more characters cut: description limit]"


def imported_definitions(settings: McpSettings, snapshot: dict[str, Any]) -> list[ToolDefinition]:
    """Registry tools for every server with ``import_tools = true``, from the snapshot."""
    out: list[ToolDefinition] = []
    for server in sorted(settings.servers):
        config = settings.servers[server]
        if not config.import_tools:
            continue
        prefix = config.prefix or server
        may_use = _agent_may_use(server)
        for entry in snapshot_tools(snapshot, server):
            tool = entry["name"]
            sha = tool_sha256(entry)
            upstream = entry.get("input_schema")
            schema: dict[str, Any] = copy.deepcopy(upstream) if isinstance(upstream, dict) else {}
            schema.setdefault("type", "object")
            properties = schema.setdefault("properties", {})
            # a property called `kind` would clash with the phase op discriminator: router only. Any
            # `properties` but an object (null, a number) is the core's to refuse, for this tool alone.
            phase: Literal["allow", "deny"] = (
                "deny" if isinstance(properties, dict) and "kind" in properties else "allow"
            )
            description = _imported_description(entry.get("description"), tool, server)
            out.append(
                ToolDefinition(
                    name=imported_name(prefix, tool),
                    description=description,
                    parameters=schema,
                    handler=_imported_handler(server, tool, sha),
                    gates=ToolGates(router="allow", phase=phase),
                    cluster="mcp",
                    purity="external",
                    available=may_use,
                    origin=ToolOrigin(
                        kind="mcp",
                        plugin_id=PLUGIN_ID,
                        source_kind=f"mcp-{config.transport}",
                        source_url=config.source(),
                        artifact_sha256=sha.removeprefix("sha256:"),
                    ),
                )
            )
    return out


def import_problems(settings: McpSettings, snapshot_path: Path | None = None) -> list[str]:
    """Import-mode servers whose snapshot is missing or unreadable (for diagnostics)."""
    path = snapshot_path or settings.snapshot_path(Path.cwd())
    wanted = [s for s in sorted(settings.servers) if settings.servers[s].import_tools]
    if not wanted:
        return []
    try:
        data = read_snapshot(path)
    except SnapshotError as exc:
        return [str(exc)]
    return [
        f"MCP server {s!r} has import_tools = true but no tools in the snapshot {path}; "
        "run `reyn mcp refresh`"
        for s in wanted
        if s not in data.get("servers", {})
    ]


# --------------------------------------------------------------------------- hooks


@hookimpl
def reyn_settings_model() -> type[McpSettings]:
    """``[plugins.mcp.settings]``."""
    return McpSettings


@hookimpl
def reyn_register_tools(register: Any, settings: Any, workspace: Path) -> None:
    """The three MCP tools, plus imported server tools from the snapshot (import mode)."""
    from .definitions import TOOLS  # here, not at import: it reads tools.json (the package imports us)

    s = settings_as(settings, McpSettings)
    for definition in TOOLS:
        register(definition)
    if any(c.import_tools for c in s.servers.values()):
        try:
            # the load's workspace: the very file reyn_trusted_files protects
            snapshot = read_snapshot(s.snapshot_path(workspace))
        except SnapshotError:
            snapshot = {"servers": {}}  # reported by diagnostics(); the core tools still load
        for definition in imported_definitions(s, snapshot):
            register(definition)


@hookimpl
def reyn_trusted_files(settings: Any, workspace: Path) -> dict[str, str]:
    """The import-mode snapshot: the next load builds tools and their schemas from it, so no confined
    process may rewrite it (nor the folder that holds it, where it is replaced atomically). Named
    whether or not a server imports today: turning ``import_tools`` on must not read planted tools.
    Resolved against the load's workspace, where ``reyn mcp refresh --workspace`` writes it."""
    path = settings_as(settings, McpSettings).snapshot_path(workspace)
    return {str(path.absolute()): "the mcp pack's tool snapshot (import mode)"}


@hookimpl
def reyn_cli_commands() -> dict[str, Any]:
    """``reyn mcp refresh|check|list|serve|install``."""
    return {"mcp": mcp_command}


def mcp_command(argv: list[str], loaded: Any) -> int:
    """``reyn mcp serve ...`` runs the MCP server (``serve``); the other actions are ``cli.main``. Both
    use ``loaded``, the ``LoadResult`` of the profile ``reyn`` was given."""
    if argv[:1] == ["serve"]:
        from .serve_command import main as serve_main

        return serve_main(argv[1:], loaded)
    if argv[:1] == ["install"]:
        from .install import main as install_main

        return install_main(argv[1:], loaded)
    from .cli import main

    if any(a in ("-h", "--help") for a in argv[:1]):
        print(
            "reyn mcp serve [--http HOST:PORT] ...: serve the registry to MCP clients "
            "(reyn mcp serve --help)\n"
            "reyn mcp install CLIENT ...: add it to an MCP client's configuration (reyn mcp install --help)"
        )
    return main(argv, loaded)


def diagnostics(settings: Any) -> list[dict[str, str]]:
    """Findings for ``reyn doctor``: dicts with ``code``, ``severity``, ``message``, ``hint``.

    RM001 (info) no servers configured; RM002 (warning) an import-mode server has no snapshot;
    RX001-RX003 the kernel sandbox of the stdio servers (``sandbox.status_diagnostics``).
    """
    s = settings_as(settings, McpSettings)
    out: list[dict[str, str]] = []
    if not s.servers:
        out.append(
            {
                "code": "RM001",
                "severity": "info",
                "tool": "call_mcp_tool",
                "message": "no MCP servers are configured",
                "hint": HOW_TO_CONFIGURE,
            }
        )
    for problem in import_problems(s):
        out.append(
            {
                "code": "RM002",
                "severity": "warning",
                "tool": "",
                "message": problem,
                "hint": "run `reyn mcp refresh` (it starts each import-mode server once)",
            }
        )
    out.extend(status_diagnostics(s.servers))
    return out


@hookimpl
def reyn_diagnostics(settings: Any) -> list[dict[str, str]]:
    """RM001 (no servers) and RM002 (an import-mode server without a snapshot), for ``reyn doctor``."""
    return diagnostics(settings)
