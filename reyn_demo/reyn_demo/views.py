"""One definition, three views: the same tool as the router, a phase and an MCP client see it.

The router entry is ``render_router`` (and, to show a render target, its Gemini adaptation); the phase
op is ``render_phase``; the MCP entry comes from a real ``reyn mcp serve`` subprocess over stdio,
listed by the ``mcp`` SDK's client — the way Claude Desktop or an editor would see the tool.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from reyn_core import ToolContext
from reyn_core.host import phase_context, render_phase, render_router

TOOL = "convert_units"
WIDTH = 100


def _line(label: str, value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    if len(text) > WIDTH:
        text = text[: WIDTH - 1] + "…"
    return f"    {label:<22} {text}"


async def _mcp_listing(profile: Path, workspace: Path) -> dict[str, Any] | None:
    """The ``tools/list`` entry of ``TOOL`` from ``reyn mcp serve`` (stdio), or None."""
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    reyn = Path(sys.executable).parent / "reyn"
    params = StdioServerParameters(
        command=str(reyn),
        args=["mcp", "serve", "--profile-file", str(profile), "--workspace", str(workspace)],
    )
    # The server's log (what it serves, load warnings) goes to a file in the workspace, not the transcript.
    with open(workspace / ".reyn" / "mcp-serve.log", "w", encoding="utf-8") as log:
        async with Client(stdio_client(params, errlog=log)) as client:
            tools = (await client.list_tools()).tools
    for tool in tools:
        if tool.name == TOOL:
            return tool.model_dump(mode="json", by_alias=True, exclude_none=True)
    return None


def show_views(registry: Any, profile: Path, workspace: Path, say: Any) -> list[str]:
    """Print the three views of ``TOOL``; returns problems (empty when every view was shown)."""
    if TOOL not in registry:
        return [f"{TOOL} is not loaded (the example plugin): no views to show"]
    ctx = ToolContext(surface="router", agent="demo", workspace=workspace)
    definition = registry.get(TOOL)
    say(f"  {TOOL}: one ToolDefinition ({definition.origin.describe() if definition.origin else 'host'})")
    say("  router (render_router, target openai) — the tools-array entry a model is sent:")
    (entry,) = [e for e in render_router(registry, ctx) if e["function"]["name"] == TOOL]
    say(_line("parameters", entry["function"]["parameters"]))
    (gemini,) = [e for e in render_router(registry, ctx, target="gemini") if e["function"]["name"] == TOOL]
    say(_line("… for gemini", gemini["function"]["parameters"]))
    say("  phase (render_phase, allowed_ops=['example']) — the op a phase reply may emit:")
    phase = render_phase(registry, phase_context(ctx, ["example"]), ["example"])
    (op,) = [o for o in phase.ops if o.kind == TOOL]
    say(_line(f'{{"kind": "{TOOL}", …}}', op.args_schema))
    say("  MCP (tools/list from `reyn mcp serve` over stdio, the SDK's client):")
    try:
        listed = asyncio.run(_mcp_listing(profile, workspace))
    except Exception as exc:  # the demo goes on; the summary names the problem
        return [f"reyn mcp serve did not answer tools/list: {type(exc).__name__}: {exc}"]
    if listed is None:
        return [f"reyn mcp serve did not list {TOOL}"]
    for key in ("title", "inputSchema", "outputSchema", "annotations"):
        if key in listed:
            say(_line(key, listed[key]))
    same = listed.get("inputSchema") == entry["function"]["parameters"]
    say(f"  The router's parameters and MCP's inputSchema are {'the same' if same else 'DIFFERENT'} schema.")
    return [] if same else [f"{TOOL}: router parameters and MCP inputSchema differ"]


__all__ = ["show_views"]
