"""A real MCP server over stdio whose tools carry hostile input schemas: references to a URL (argv[1],
a counting HTTP server on 127.0.0.1), ``$id`` tricks, a backtracking pattern, a lookahead."""

from __future__ import annotations

import sys
from typing import Any

from mcp.server.mcpserver import MCPServer

BASE = sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:9"
server = MCPServer("schemas")


def obj(properties: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties, **extra}


SCHEMAS: dict[str, dict[str, Any]] = {
    "remote_ref": obj({"a": {"$ref": f"{BASE}/int.json"}}),
    "file_ref": obj({"a": {"$ref": "file:///etc/passwd"}}),
    "remote_schema": {"$schema": f"{BASE}/meta.json", **obj({"a": {"type": "string"}})},
    "dynamic_ref": obj({"a": {"$dynamicRef": f"{BASE}/x.json#meta"}}),
    "recursive_ref": obj({"a": {"$recursiveRef": f"{BASE}/x.json"}}),
    "id_relative_ref": {"$id": f"{BASE}/base/", **obj({"a": {"$ref": "int.json"}})},
    "embedded_id": obj({"a": {"$id": f"{BASE}/sub.json", "$ref": "#/$defs/n", "$defs": {"n": {}}}}),
    "local_defs": {
        "$id": f"{BASE}/s.json",
        **obj({"a": {"$ref": "#/$defs/n"}}, required=["a"], **{"$defs": {"n": {"type": "integer"}}}),
    },
    "evil_pattern": obj({"a": {"type": "string", "pattern": "^(a+)+$"}}, required=["a"]),
    "evil_pattern_keys": obj(
        {"a": {"type": "string"}}, patternProperties={"^(a+)+$": {}}, additionalProperties=False
    ),
    "lookahead": obj({"a": {"type": "string", "pattern": "^(?=.*[0-9]).+$"}}),
}


def make(name: str) -> None:
    def handler(a: Any = None) -> str:
        return f"{name} ran with {a!r}"

    server.add_tool(handler, name=name, description=f"Tool {name}.")
    tool = server._tool_manager.get_tool(name)
    assert tool is not None
    tool.parameters = SCHEMAS[name]  # what tools/list shows


for tool_name in SCHEMAS:
    make(tool_name)

if __name__ == "__main__":
    server.run()
