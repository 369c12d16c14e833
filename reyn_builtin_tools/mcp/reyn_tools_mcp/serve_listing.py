"""What an MCP client sees of the served registry: its tools as MCP ``Tool``s (``mcp_tools``: name,
title, annotations from ``purity``, the result schema as ``outputSchema``) and a dispatcher
envelope as an MCP tool result (``result_from_envelope``)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

import mcp_types as types

from reyn_core.host import ToolRegistry, output_schema


def title_for(name: str) -> str:
    """A human title from a tool name: ``read_file`` → ``Read file``, ``demo__echo`` → ``Demo: echo``."""
    words = ": ".join(part.replace("_", " ").replace("-", " ").strip() for part in name.split("__"))
    return words[:1].upper() + words[1:]


def annotations_for(purity: str, title: str) -> types.ToolAnnotations:
    """MCP tool annotations from the definition's ``purity``: ``read_only`` → ``readOnlyHint``,
    ``side_effect`` → ``destructiveHint``, ``external`` → ``openWorldHint`` (each stated either way)."""
    return types.ToolAnnotations(
        title=title,
        read_only_hint=purity == "read_only",
        destructive_hint=purity == "side_effect",
        open_world_hint=purity == "external",
    )


def mcp_tools(registry: ToolRegistry, rendered: Iterable[Mapping[str, Any]]) -> list[types.Tool]:
    """``render_router`` entries as MCP ``Tool``s: name, description and parameters exactly as
    rendered; a tool whose definition has a result schema also gets it as ``outputSchema``
    (``output_schema``: an object root, a non-object result wrapped under ``result``)."""
    out = []
    for entry in rendered:
        function = entry["function"]
        name = function["name"]
        title = title_for(name)
        definition = registry.get(name)
        returns = definition.returns
        out.append(
            types.Tool(
                name=name,
                title=title,
                description=function["description"],
                input_schema=function["parameters"],
                output_schema=output_schema(returns)[0] if returns is not None else None,
                annotations=annotations_for(definition.purity, title),
            )
        )
    return out


# --------------------------------------------------------------------------- results


def result_from_envelope(
    envelope: Mapping[str, Any], returns: Mapping[str, Any] | None = None
) -> types.CallToolResult:
    """A dispatcher envelope as an MCP tool result: text always; an error envelope as ``isError``
    with the envelope's message. ``structuredContent``: for a tool with a result schema
    (``returns``), the result as its ``outputSchema`` says (``{"result": value}`` when wrapped);
    without one, a JSON object result as it is."""
    if envelope.get("status") != "ok":
        error = envelope.get("error") or {}
        message = str(error.get("message") or "the tool call failed")
        return types.CallToolResult(content=[types.TextContent(text=message)], is_error=True)
    data = envelope.get("data")
    text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
    structured = data if isinstance(data, dict) else None
    if returns is not None and output_schema(returns)[1]:
        structured = {"result": data}
    return types.CallToolResult(content=[types.TextContent(text=text)], structured_content=structured)


def error_result(message: str) -> types.CallToolResult:
    """A tool result that is an error: ``message`` as its text, ``isError`` set."""
    return types.CallToolResult(content=[types.TextContent(text=message)], is_error=True)


__all__ = ["annotations_for", "error_result", "mcp_tools", "result_from_envelope", "title_for"]
