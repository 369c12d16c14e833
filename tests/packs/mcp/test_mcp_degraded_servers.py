"""Misbehaving MCP servers (servers/misbehaving_server.py, raw JSON-RPC over stdio): a handshake that
never answers, a schema nested too deep for the JSON parser, a JSON-RPC error -32000. Each ends in a
specific error within its own timeout, prints nothing on stderr, and keeps only a real transport
failure from restarting the server."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from reyn_core.host import dispatch_tool

MISBEHAVING = Path(__file__).parent / "servers" / "misbehaving_server.py"

# Runs the calls in a fresh interpreter with no logging configured, as a host would, so anything the
# SDK or asyncio would print on stderr (tracebacks, "Future exception was never retrieved") shows.
ISOLATED = r"""
import asyncio, json, sys
from pathlib import Path
from reyn_core import ToolContext, ToolOrigin
from reyn_core.host import RegistryBuilder, ToolRegistry, dispatch_tool
from reyn_tools_mcp import plugin, pool
from reyn_tools_mcp.settings import McpSettings

settings = McpSettings.model_validate(json.loads(sys.argv[1]))
reg = RegistryBuilder(settings={"mcp": settings})
plugin.reyn_register_tools(
    lambda t: reg.register(t, origin=ToolOrigin(kind="plugin", plugin_id="mcp")), settings, Path.cwd()
)
reg = reg.freeze()

async def main():
    out = []
    for name, args in json.loads(sys.argv[2]):
        out.append(await dispatch_tool(reg, name, args, ToolContext(surface="router")))
    return out

results = asyncio.run(main())
pool.shutdown()
print(json.dumps(results))
"""


def misbehaving(mode: str, **env: str) -> dict:
    return {"command": sys.executable, "args": [str(MISBEHAVING), mode], **({"env": env} if env else {})}


def run_isolated(settings: dict, calls: list) -> tuple[list[dict], str]:
    proc = subprocess.run(
        [sys.executable, "-c", ISOLATED, json.dumps(settings), json.dumps(calls)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1]), proc.stderr


def err(env: dict) -> tuple[str, str]:
    assert env["status"] == "error", env
    return env["error"]["kind"], env["error"]["message"]


async def server_pid(reg, ctx, server: str) -> str:
    """The process id of ``server`` that answers its ``pid`` tool (which must answer)."""
    env = await dispatch_tool(reg, "call_mcp_tool", {"server": server, "tool": "pid"}, ctx)
    assert env["status"] == "ok", env
    return env["data"]["text"]


def sessions(settings, server: str) -> int:
    """How many times the pool has opened ``server`` (its ``sessions_opened``)."""
    from reyn_tools_mcp import pool

    return pool.get_pool().connection_state(server, settings.servers[server], {})["sessions_opened"]


# ---------------------------------------------------------------- a handshake that never answers


async def test_silent_handshake_fails_at_connect_timeout(mcp_registry, mcp_settings, ctx) -> None:
    reg = mcp_registry(mcp_settings({"silent": misbehaving("silent")}, connect_timeout_s=2))
    started = time.monotonic()
    kind, message = err(await dispatch_tool(reg, "list_mcp_tools", {"server": "silent"}, ctx))
    assert time.monotonic() - started < 10  # generous: 2 s plus the spawn, not 2 + 10 + 2 s of teardown
    assert kind == "execution_error"
    assert "did not finish its handshake within connect_timeout_s=2 s" in message


def test_silent_handshake_prints_nothing_on_stderr() -> None:
    settings = {"servers": {"silent": misbehaving("silent")}, "connect_timeout_s": 2}
    (envelope,), stderr = run_isolated(settings, [["list_mcp_tools", {"server": "silent"}]])
    assert "handshake" in err(envelope)[1]
    assert stderr == ""


# ---------------------------------------------------------------- a schema nested 5,000 deep


def test_too_deep_schema_is_a_clean_refusal_with_a_diagnostic_and_no_stderr(server_script) -> None:
    settings = {
        "servers": {
            "deep": misbehaving("deep-schema"),
            "demo": {"command": sys.executable, "args": [str(server_script)]},
        },
        "call_timeout_s": 20,
    }
    calls = [
        ["list_mcp_tools", {"server": "deep"}],
        ["call_mcp_tool", {"server": "deep", "tool": "fine"}],
        ["call_mcp_tool", {"server": "demo", "tool": "echo", "arguments": {"text": "still here"}}],
    ]
    (listing, call, other), stderr = run_isolated(settings, calls)
    for envelope in (listing, call):
        kind, message = err(envelope)
        assert kind == "execution_error"  # at once, not a timeout after call_timeout_s
        assert "cannot be parsed" in message and "recursion limit exceeded" in message
        assert "Traceback" not in message and len(message) < 800
    assert other["status"] == "ok" and other["data"]["text"] == "still here"
    assert stderr == ""


async def test_moderately_deep_schema_still_lists(mcp_registry, mcp_settings, ctx) -> None:
    reg = mcp_registry(mcp_settings({"deep": misbehaving("deep-schema", DEPTH="20")}))
    env = await dispatch_tool(reg, "list_mcp_tools", {"server": "deep"}, ctx)
    assert env["status"] == "ok", env
    assert [t["name"] for t in env["data"]["tools"]] == ["deep", "fine", "pid"]


# ---------------------------------------------------------------- JSON-RPC error -32000


async def test_json_rpc_error_32000_is_a_tool_error_and_keeps_the_server(
    mcp_registry, mcp_settings, ctx, operator_log
) -> None:
    settings = mcp_settings({"flaky": misbehaving("rpc-error")})
    reg = mcp_registry(settings)
    before = await server_pid(reg, ctx, "flaky")
    kind, message = err(await dispatch_tool(reg, "call_mcp_tool", {"server": "flaky", "tool": "flaky"}, ctx))
    after = await server_pid(reg, ctx, "flaky")
    assert kind == "execution_error" and "JSON-RPC error -32000" in message
    # the server's own message is for the operator, not the model
    assert "database is down" not in message and "database is down" in operator_log.text()
    assert "lost" not in message
    assert before == after  # same process: not restarted
    assert sessions(settings, "flaky") == 1
