"""An MCP server's input schema can never make Reyn fetch anything or backtrack: a real MCP server
(stdio) lists tools whose schemas point at a real HTTP server on 127.0.0.1 that records every request.
call_mcp_tool refuses those tools naming the reference; import mode refuses them at registration."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest

from reyn_core import ToolContext, ToolRegistrationError
from reyn_core.host import RegistryBuilder, ToolRegistry, dispatch_tool

SCHEMA_SERVER = Path(__file__).parent / "servers" / "schema_server.py"


@pytest.fixture
def recorder(counting_server: Any) -> Any:
    """The shared recording HTTP server on 127.0.0.1 (tests/conftest.py)."""
    return counting_server


def settings_for(mcp_settings: Any, recorder: Any, **server: Any) -> Any:
    return mcp_settings(
        {"schemas": {"command": sys.executable, "args": [str(SCHEMA_SERVER), recorder.url], **server}}
    )


async def call(reg: ToolRegistry, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    args = {"server": "schemas", "tool": tool, "arguments": arguments}
    return await asyncio.wait_for(
        dispatch_tool(reg, "call_mcp_tool", args, ToolContext(surface="router")), 120
    )


def test_the_recorder_really_records(recorder: Any) -> None:
    import urllib.request

    with urllib.request.urlopen(f"{recorder.url}/probe", timeout=5) as response:
        assert response.status == 200
    assert recorder.requests == ["/probe"]


REFUSED = {
    "remote_ref": "/int.json",
    "file_ref": "file:///etc/passwd",
    "remote_schema": "/meta.json",
    "dynamic_ref": "$dynamicRef",
    "recursive_ref": "$recursiveRef",
    "id_relative_ref": "'int.json'",
    "embedded_id": "embedded $id",
    "lookahead": "lookahead",
}


async def test_tools_with_retrievable_references_or_unsupported_patterns_are_refused_unfetched(
    mcp_registry: Any, mcp_settings: Any, recorder: Any
) -> None:
    reg = mcp_registry(settings_for(mcp_settings, recorder))
    for tool, named in REFUSED.items():
        env = await call(reg, tool, {"a": 1})
        assert env["status"] == "error", (tool, env)
        message = env["error"]["message"]
        assert env["error"]["kind"] == "execution_error", (tool, message)
        assert f"MCP tool schemas/{tool} is refused" in message and "the call was not sent" in message
        assert named in message, (tool, message)
    assert recorder.requests == []


async def test_local_defs_under_a_remote_id_still_work_and_fetch_nothing(
    mcp_registry: Any, mcp_settings: Any, recorder: Any
) -> None:
    reg = mcp_registry(settings_for(mcp_settings, recorder))
    env = await call(reg, "local_defs", {"a": 5})
    assert env["status"] == "ok" and "local_defs ran with 5" in env["data"]["text"]
    env = await call(reg, "local_defs", {"a": "five"})
    assert env["error"]["kind"] == "invalid_arguments"
    assert [e["path"] for e in env["error"]["errors"]] == ["/arguments/a"]
    assert recorder.requests == []


async def test_backtracking_patterns_run_in_linear_time(
    mcp_registry: Any, mcp_settings: Any, recorder: Any
) -> None:
    reg = mcp_registry(settings_for(mcp_settings, recorder))
    evil = "a" * 40 + "!"  # 2**40 steps for a backtracking engine
    env = await call(reg, "evil_pattern", {"a": evil})
    assert env["error"]["kind"] == "invalid_arguments"
    assert "does not match '^(a+)+$'" in env["error"]["message"]
    env = await call(reg, "evil_pattern_keys", {evil: 1})
    assert env["error"]["kind"] == "invalid_arguments"
    assert "does not match any of the regexes" in env["error"]["message"]
    env = await call(reg, "evil_pattern", {"a": "aaaa"})
    assert env["status"] == "ok" and "evil_pattern ran with 'aaaa'" in env["data"]["text"]


async def test_import_mode_refuses_those_tools_at_registration_and_keeps_the_others(
    mcp_registry: Any, mcp_settings: Any, recorder: Any
) -> None:
    from reyn_tools_mcp.plugin import imported_definitions

    reg = mcp_registry(settings_for(mcp_settings, recorder))
    listed = await asyncio.wait_for(
        dispatch_tool(reg, "list_mcp_tools", {"server": "schemas"}, ToolContext(surface="router")), 120
    )
    snapshot = {"version": 1, "servers": {"schemas": {"tools": listed["data"]["tools"]}}}
    definitions = imported_definitions(settings_for(mcp_settings, recorder, import_tools=True), snapshot)
    builder = RegistryBuilder()
    refused: dict[str, ToolRegistrationError] = {}
    for definition in definitions:
        try:
            builder.register(definition)
        except ToolRegistrationError as exc:
            refused[definition.name.removeprefix("schemas__")] = exc
    assert sorted(refused) == sorted(REFUSED)
    for tool, named in REFUSED.items():
        assert refused[tool].code == ("RS007" if tool == "lookahead" else "RS004"), refused[tool]
        assert named in refused[tool].message, refused[tool].message
    registered = sorted(t.name for t in builder.freeze().tools())
    assert registered == ["schemas__evil_pattern", "schemas__evil_pattern_keys", "schemas__local_defs"]
    assert recorder.requests == []
