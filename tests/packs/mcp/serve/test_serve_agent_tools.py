"""``reyn mcp serve`` applies the calling agent's tool list (an agent file's ``tools:`` from the
catalog pack, or the profile's ``[agents.<name>] tools``) to ``tools/list`` and ``tools/call``
alike, through the core's gates; the real server spawned over stdio, the real SDK ``Client``. Plan
mode reaches the served list the same way (in process: serve has no plan-mode switch)."""

from __future__ import annotations

import mcp_types as types
from mcp import Client

from .conftest import BASE_PROFILE, ServeWorld

CATALOG_PROFILE = (
    BASE_PROFILE.replace(
        'enable = ["serve_probe", "file", "shell", "mcp"]',
        'enable = ["serve_probe", "file", "shell", "mcp", "catalog"]',
    )
    + '\n[plugins.catalog.settings]\nagent_dirs = ["agents"]\n'
)


def _text(result: types.CallToolResult) -> str:
    return "".join(c.text for c in result.content if isinstance(c, types.TextContent))


def _with_scout(world: ServeWorld, extra: str = "") -> None:
    agents = world.root / "agents"
    agents.mkdir(exist_ok=True)
    (agents / "scout.md").write_text(
        "---\nname: scout\ndescription: Looks around.\ntools: [probe_echo, read_file]\n---\nLook.\n"
    )
    world.write_profile(CATALOG_PROFILE + extra)


async def test_the_agent_files_list_is_what_serve_lists_and_lets_call(serve_world: ServeWorld) -> None:
    _with_scout(serve_world)
    async with Client(serve_world.stdio("--agent", "scout")) as client:
        listed = sorted(t.name for t in (await client.list_tools()).tools)
        read = await client.call_tool("read_file", {"path": "notes.txt"})
        refused = await client.call_tool("list_directory", {"path": "."})
    assert listed == ["probe_echo", "read_file"]
    assert not read.is_error and "hello from the workspace" in _text(read)
    assert refused.is_error and "'scout' may not use 'list_directory'" in _text(refused)
    # control: the default agent of the same server is not narrowed
    async with Client(serve_world.stdio()) as client:
        names = {t.name for t in (await client.list_tools()).tools}
        listing = await client.call_tool("list_directory", {"path": "."})
    assert {"probe_echo", "read_file", "list_directory", "list_agents"} <= names
    assert not listing.is_error


async def test_the_profiles_agent_list_narrows_the_served_agent(serve_world: ServeWorld) -> None:
    _with_scout(serve_world, '\n[agents.mcp]\ntools = ["probe_echo"]\n')
    async with Client(serve_world.stdio()) as client:  # the default agent, "mcp"
        listed = [t.name for t in (await client.list_tools()).tools]
        refused = await client.call_tool("read_file", {"path": "notes.txt"})
        echoed = await client.call_tool("probe_echo", {"text": "hi"})
    assert listed == ["probe_echo"]
    assert refused.is_error and "'mcp' may not use 'read_file'" in _text(refused)
    assert not echoed.is_error


async def test_plan_mode_hides_the_catalogs_plan_from_the_served_list(tmp_path, isolated_profile_env) -> None:
    from reyn_tools_mcp.serve import ServedRegistry

    from reyn_core import RouterCallerState, ToolContext
    from reyn_core.host import Profile, load

    registry = load(Profile.from_toml_text('[plugins]\nenable = ["catalog"]\n')).registry
    normal = ServedRegistry(registry, ToolContext(surface="router", agent="mcp", workspace=tmp_path))
    planning = ServedRegistry(
        registry,
        ToolContext(
            surface="router", agent="mcp", workspace=tmp_path, router_state=RouterCallerState(plan_mode=True)
        ),
    )
    assert "plan" in normal.deferred  # control: offered to clients that can be asked
    assert "delegate_to_agent" in planning.deferred  # the registry's deferred tools, whatever the gates say
    assert "plan" not in [t.name for t in planning.tools(with_elicitation=True)]
    result = await planning.call("plan", {"goal": "g", "steps": []})  # no elicitation: excluded first
    assert result.is_error and "tool 'plan' is excluded for this call" in _text(result)


async def test_serve_supplies_the_catalogs_service_so_a_delegation_goes_to_the_clients_user(
    serve_world: ServeWorld,
) -> None:
    _with_scout(serve_world)
    asked: list[str] = []

    async def answer(ctx, params):
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"result": "scouted"})

    async with Client(serve_world.stdio(), elicitation_callback=answer) as client:
        result = await client.call_tool("delegate_to_agent", {"agent": "scout", "task": "look around"})
    assert not result.is_error and result.structured_content == {"result": "scouted"}
    assert len(asked) == 1 and "look around" in asked[0]
