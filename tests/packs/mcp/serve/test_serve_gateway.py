"""Reyn as a pinning MCP gateway, and ``[lock] enforce``: an upstream SDK server's tools imported,
locked and re-served; an upstream that changes a tool after import gets the call refused with the
reason; a plugin whose files no longer match the lock is not served at all."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import mcp_types as types
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from .conftest import PROBE_MODULE, ServeWorld, _record_line

UPSTREAM = Path(__file__).parent.parent / "servers" / "demo_server.py"


def _text(result: types.CallToolResult) -> str:
    return "".join(c.text for c in result.content if isinstance(c, types.TextContent))


def _gateway_profile(enforce: bool) -> str:
    return (
        '[plugins]\nenable = ["mcp"]\n\n'
        f"[plugins.mcp.settings.servers.demo]\ncommand = {json.dumps(sys.executable)}\n"
        f"args = [{json.dumps(str(UPSTREAM))}]\nimport_tools = true\n"
        f"read_roots = ['.', {json.dumps(str(UPSTREAM.parent))}]\n\n"  # its cwd and script (sandbox)
        f'[audit]\nlog = "audit.jsonl"\n\n[lock]\nenforce = {"true" if enforce else "false"}\n'
    )


async def test_upstream_tools_are_re_served_until_the_upstream_changes_them(serve_world: ServeWorld) -> None:
    serve_world.write_profile(_gateway_profile(enforce=False))
    refresh = serve_world.reyn("mcp", "refresh")
    assert refresh.returncode == 0, refresh.stdout + refresh.stderr
    lock = serve_world.reyn("plugins", "lock")
    assert lock.returncode == 0, lock.stdout + lock.stderr
    serve_world.write_profile(_gateway_profile(enforce=True))

    async with Client(serve_world.stdio()) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        before = await client.call_tool("demo__echo", {"text": "through the gateway"})
        added = await client.call_tool("demo__add", {"a": 2, "b": 3})
        bad = await client.call_tool("demo__add", {"a": "two", "b": 3})
        mutated = await client.call_tool("demo__mutate", {})  # the upstream rewrites `echo` live
        after = await client.call_tool("demo__echo", {"text": "through the gateway"})
        still = await client.call_tool("demo__add", {"a": 2, "b": 3})

    assert {"demo__echo", "demo__add", "demo__mutate"} <= set(tools)
    assert tools["demo__echo"].description == "Echo the text back."
    assert tools["demo__echo"].annotations.open_world_hint is True
    assert not before.is_error and "through the gateway" in _text(before)
    assert not added.is_error and added.structured_content["structured_content"] == {"result": 5}
    assert bad.is_error and "invalid arguments" in _text(bad)  # checked against the locked schema
    assert not mutated.is_error
    assert after.is_error
    assert "changed tool 'echo' since it was imported" in _text(after) and "refused" in _text(after)
    assert not still.is_error  # only the changed tool is refused
    statuses = [(r["tool"], r["status"]) for r in serve_world.audit_lines()]
    assert ("demo__echo", "denied") in statuses


async def test_a_plugin_that_drifted_from_the_lock_is_not_served(serve_world: ServeWorld) -> None:
    serve_world.write_profile(
        '[plugins]\nenable = ["serve_probe", "file", "mcp"]\n\n[lock]\nenforce = false\n'
    )
    lock = serve_world.reyn("plugins", "lock")
    assert lock.returncode == 0, lock.stdout + lock.stderr
    serve_world.write_profile(
        '[plugins]\nenable = ["serve_probe", "file", "mcp"]\n\n[lock]\nenforce = true\n'
    )
    async with Client(serve_world.stdio()) as client:
        locked = {t.name for t in (await client.list_tools()).tools}
    assert "probe_echo" in locked

    # Tamper with the installed plugin (and its RECORD, so only the lock can tell).
    module = serve_world.site / f"{PROBE_MODULE}.py"
    module.write_text(module.read_text().replace("Echo the text back", "Echo the text to evil.example"))
    info = serve_world.site / "reyn_serve_probe-1.0.dist-info"
    rels = [module.name, f"{info.name}/METADATA", f"{info.name}/entry_points.txt"]
    lines = [_record_line(serve_world.site, r) for r in rels]
    (info / "RECORD").write_text("\n".join([*lines, f"{info.name}/RECORD,,"]) + "\n")

    async with Client(serve_world.stdio()) as client:
        served = {t.name for t in (await client.list_tools()).tools}
        with pytest.raises(MCPError) as unknown:
            await client.call_tool("probe_echo", {"text": "x"})
    assert not any(name.startswith("probe_") for name in served)
    assert {"read_file", "list_directory"} <= served  # the untampered plugins are still served
    assert unknown.value.code == types.INVALID_PARAMS  # not registered at all: never imported
