"""The source tools are router only (role gates) and, by default, not served to MCP clients (their
availability check): absent from the phase render and refused at phase dispatch; absent from
``reyn mcp serve``'s list and refused there unless ``serve_over_mcp`` is set."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import pytest
from reyn_tools_source import SourceSettings

from reyn_core.host import render_phase, render_router

from .conftest import PLUGIN_DIST, World

TOOLS = ["reyn_src_list", "reyn_src_read"]
REYN = str(Path(sys.executable).parent / "reyn")


def test_the_router_render_offers_both_tools(world: World) -> None:
    names = [t["function"]["name"] for t in render_router(world.registry(), world.ctx(world.registry()))]
    assert set(TOOLS) <= set(names)


@pytest.mark.parametrize("allowed_ops", [["source"], TOOLS, ["*"]])
def test_the_phase_render_never_offers_them(world: World, allowed_ops: list[str]) -> None:
    reg = world.registry()
    kinds = [op.kind for op in render_phase(reg, world.ctx(reg, "phase"), allowed_ops).ops]
    assert not set(TOOLS) & set(kinds)
    assert "demo_echo" in [op.kind for op in render_phase(reg, world.ctx(reg, "phase"), ["*"]).ops]  # control


@pytest.mark.parametrize("name", TOOLS)
def test_a_phase_call_is_refused_by_the_role_gate(world: World, name: str) -> None:
    reg = world.registry()
    args = (
        {"distribution": PLUGIN_DIST, "path": "demo_src_plugin/notes.txt"} if name == "reyn_src_read" else {}
    )
    env = world.call(reg, name, args, surface="phase", allowed_ops=TOOLS)
    assert env["error"]["kind"] == "gate_refused" and env["error"]["layer"] == "role"
    assert world.call(reg, name, args)["status"] == "ok"  # positive control: the router call


def _served(world: World, settings: SourceSettings | None):
    from reyn_tools_mcp.serve import ServedRegistry

    reg = world.registry(settings)
    return ServedRegistry(reg, world.ctx(reg, served_by="mcp"))


def test_mcp_clients_are_not_offered_them_by_default(world: World) -> None:
    served = _served(world, None)
    names = [t.name for t in served.tools(True)]
    assert "demo_echo" in names and not set(TOOLS) & set(names)
    result = asyncio.run(served.call("reyn_src_list", {}))
    assert result.is_error and "reyn-core" not in str(result.content[0])


def test_mcp_clients_are_offered_them_when_the_operator_opts_in(world: World) -> None:
    served = _served(world, SourceSettings(serve_over_mcp=True))
    assert set(TOOLS) <= {t.name for t in served.tools(True)}
    result = asyncio.run(served.call("reyn_src_list", {}))
    assert not result.is_error and "reyn-core" in str(result.content[0])


def test_a_host_gating_as_the_mcp_surface_is_refused_too(world: World) -> None:
    reg = world.registry()
    env = world.call(reg, "reyn_src_list", {}, surface="mcp", ctx=world.ctx(reg, "mcp"))
    assert env["error"]["kind"] == "gate_refused" and env["error"]["layer"] == "call"


# --------------------------------------------------------------------------- the real `reyn mcp serve`


async def _served_names(workspace: Path) -> list[str]:
    from mcp import Client, StdioServerParameters

    env = {k: v for k, v in os.environ.items() if not k.startswith("REYN_")}
    env["REYN_CACHE_DIR"] = str(workspace / ".cache")
    params = StdioServerParameters(command=REYN, args=["mcp", "serve"], cwd=str(workspace), env=env)
    async with Client(params) as client:
        listed = [t.name for t in (await client.list_tools()).tools]
        called = await client.call_tool("reyn_src_list", {})
    return [*listed, f"call:{'error' if called.is_error else 'ok'}"]


@pytest.mark.parametrize(("opt_in", "offered"), [(False, False), (True, True)])
async def test_reyn_mcp_serve_follows_serve_over_mcp(tmp_path: Path, opt_in: bool, offered: bool) -> None:
    settings = "[plugins.source.settings]\nserve_over_mcp = true\n" if opt_in else ""
    (tmp_path / "reyn.toml").write_text('[plugins]\nenable = ["source", "file", "mcp"]\n' + settings)
    names = await asyncio.wait_for(_served_names(tmp_path), 120)
    assert "read_file" in names  # positive control: the file pack's router tools are served
    assert (set(TOOLS) <= set(names)) is offered and (not set(TOOLS) & set(names)) is (not offered)
    assert names[-1] == ("call:ok" if offered else "call:error")
