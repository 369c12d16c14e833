"""A real MCP server over stdio (mcp SDK MCPServer) answering as much as it is asked to: many or
huge content blocks, huge structured content, embedded resources, images, and (with ``TOOLS=N``,
``DESC=K``) a tools/list of N extra tools with K-character descriptions. For the result-limit tests."""

from __future__ import annotations

import base64
import os

from mcp.server.mcpserver import MCPServer
from mcp_types import (
    CallToolResult,
    EmbeddedResource,
    ImageContent,
    ResourceLink,
    TextContent,
    TextResourceContents,
)

server = MCPServer("big")


@server.tool()
def blocks(count: int, size: int) -> CallToolResult:
    """``count`` text blocks of ``size`` characters each."""
    return CallToolResult(
        content=[TextContent(type="text", text=f"b{i}:" + "x" * size) for i in range(count)]
    )


@server.tool()
def structured(size: int) -> CallToolResult:
    """A short text and structured content holding ``size`` characters."""
    return CallToolResult(
        content=[TextContent(type="text", text="see structured content")],
        structured_content={"data": "y" * size, "n": 1},
    )


@server.tool()
def small_structured() -> CallToolResult:
    """Structured content that fits."""
    return CallToolResult(content=[TextContent(type="text", text='{"n": 1}')], structured_content={"n": 1})


@server.tool()
def resources(count: int, size: int) -> CallToolResult:
    """``count`` each of embedded text resources, resource links with long descriptions, images."""
    content: list = []
    for i in range(count):
        content.append(
            EmbeddedResource(
                type="resource",
                resource=TextResourceContents(uri=f"file:///r{i}", mime_type="text/plain", text="r" * size),
            )
        )
        content.append(
            ResourceLink(type="resource_link", uri=f"file:///l{i}", name=f"l{i}", description="d" * size)
        )
        image = base64.b64encode(b"\0" * size).decode()
        content.append(ImageContent(type="image", data=image, mime_type="image/png"))
    return CallToolResult(content=content)


def _extra_tool(i: int, description: str) -> None:
    def extra(value: str = "") -> str:
        return f"extra {i}"

    server.add_tool(extra, name=f"extra_{i:05d}", description=description)


if __name__ == "__main__":
    for i in range(int(os.environ.get("TOOLS", "0"))):
        _extra_tool(i, "e" * int(os.environ.get("DESC", "100")))
    server.run()
