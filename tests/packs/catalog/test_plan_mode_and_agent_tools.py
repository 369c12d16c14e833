"""Plan mode and the agents' ``tools:`` lists reach every surface through the core's gates, supplied
by this pack: ``plan`` declares ``plan_mode="deny"``, and the ``reyn_agent_tools`` hook hands each
agent file's list to the load. Through ``render_router`` / ``render_phase`` and the dispatcher
directly, with a real ``load()`` of the catalog and file packs."""

from __future__ import annotations

import asyncio
import textwrap
from pathlib import Path

import pytest
from reyn_tools_catalog import CatalogBridge

from reyn_core import HostBridge, RouterCallerState, ToolContext
from reyn_core.host import Profile, dispatch_tool, gates, load, phase_context, render_phase, render_router

PLAN = {"goal": "ship", "steps": [{"id": "a", "description": "build"}, {"id": "b", "description": "test"}]}


def names(rendered) -> list[str]:
    return [t["function"]["name"] for t in rendered]


# --------------------------------------------------------------------------- plan mode


def test_plan_mode_hides_plan_from_render_router_directly(ws):
    normal = ws.ctx("router")
    planning = ToolContext(
        surface="router", workspace=ws.root, router_state=RouterCallerState(plan_mode=True)
    )
    assert "plan" in names(render_router(ws.registry, normal))  # control
    shown = names(render_router(ws.registry, planning))
    assert "plan" not in shown
    assert "delegate_to_agent" in shown and "list_skills" in shown  # only the planner is hidden


def test_plan_mode_refuses_plan_at_dispatch_with_a_clear_layer_and_reason(ws):
    plans = []
    bridge = HostBridge(services={CatalogBridge: CatalogBridge(dispatch_plan=lambda **k: plans.append(k))})
    state = RouterCallerState(plan_mode=True)
    env = ws.call("plan", PLAN, bridge=bridge, router_state=state, extras={"registry": ws.registry})
    assert env["error"]["kind"] == "gate_refused" and env["error"]["layer"] == "call"
    assert "not offered in plan mode" in env["error"]["message"]
    assert plans == []
    # control: the same call outside plan mode reaches the bridge
    ok = ws.call("plan", PLAN, bridge=bridge, extras={"registry": ws.registry})
    assert ok["status"] == "ok" and len(plans) == 1


# --------------------------------------------------------------------------- agent tool lists


def agent_file(folder: Path, name: str, tools: str | None) -> None:
    line = f"tools: {tools}\n" if tools is not None else ""
    (folder / f"{name}.md").write_text(f"---\nname: {name}\ndescription: The {name}.\n{line}---\nWork.\n")


@pytest.fixture
def loaded(tmp_path, isolated_profile_env):
    agents = tmp_path / "agents"
    agents.mkdir()
    agent_file(agents, "scout", "[list_skills, read_file, no_such_tool]")
    agent_file(agents, "free", None)  # no list: not narrowed

    def run(extra: str = ""):
        profile = Profile.from_toml_text(
            textwrap.dedent(f"""
            [plugins]
            enable = ["catalog", "file"]
            [plugins.catalog.settings]
            agent_dirs = ["{agents}"]
            """)
            + extra
        )
        return load(profile)

    return run


def test_an_agent_files_list_narrows_the_router_and_the_phase_for_that_agent(loaded, tmp_path):
    result = loaded()
    reg = result.registry
    scout = ToolContext(surface="router", agent="scout", workspace=tmp_path)
    assert names(render_router(reg, scout)) == ["list_skills", "read_file"]
    phase = render_phase(reg, scout, ["catalog", "file", "ask_user"])
    assert [op.kind for op in phase.ops] == ["list_skills", "read_file"]
    # controls: an agent without a list, and no agent, see everything the gates otherwise allow
    free = names(render_router(reg, ToolContext(surface="router", agent="free", workspace=tmp_path)))
    assert {"list_skills", "read_file", "list_directory", "plan", "describe_agent"} <= set(free)
    assert names(render_router(reg, ToolContext(surface="router", workspace=tmp_path))) == free


def test_dispatch_refuses_what_the_agents_file_does_not_list(loaded, tmp_path):
    reg = loaded().registry
    (tmp_path / "a.txt").write_text("hi\n")
    scout = ToolContext(surface="router", agent="scout", workspace=tmp_path)
    refused = asyncio.run(dispatch_tool(reg, "list_directory", {"path": "."}, scout))
    assert refused["error"]["kind"] == "gate_refused" and refused["error"]["layer"] == "call"
    assert "'scout' may not use 'list_directory'" in refused["error"]["message"]
    assert gates.check(reg.get("list_directory"), "router", scout, registry=reg).rule == "agent_tools"
    assert asyncio.run(dispatch_tool(reg, "read_file", {"path": "a.txt"}, scout))["status"] == "ok"
    pctx = phase_context(scout, ["file"])
    env = asyncio.run(dispatch_tool(reg, "list_directory", {"path": "."}, pctx, allowed_ops=["file"]))
    assert env["error"]["kind"] == "gate_refused"
    other = ToolContext(surface="router", agent="free", workspace=tmp_path)
    assert asyncio.run(dispatch_tool(reg, "list_directory", {"path": "."}, other))["status"] == "ok"


def test_a_listed_name_that_matches_no_loaded_tool_is_a_diagnostic(loaded):
    diags = [d for d in loaded().report.diagnostics if d.code == "RC010"]
    assert len(diags) == 1 and diags[0].severity == "warning"
    assert diags[0].tool == "no_such_tool" and diags[0].plugin == "catalog"
    assert "agent 'scout' lists tool 'no_such_tool'" in diags[0].message


def test_the_profiles_agent_list_replaces_the_agent_files(loaded, tmp_path):
    result = loaded('[agents.scout]\ntools = ["list_directory", "typo_tool"]\n')
    scout = ToolContext(surface="router", agent="scout", workspace=tmp_path)
    assert names(render_router(result.registry, scout)) == ["list_directory"]
    found = [(d.tool, d.plugin) for d in result.report.diagnostics if d.code == "RC010"]
    assert found == [("typo_tool", None)]  # the agent file's list is not used, so not checked


def test_a_profile_list_for_an_agent_no_plugin_declares_applies_too(loaded, tmp_path):
    result = loaded("[agents.reviewer]\ntools = []\n")
    reviewer = ToolContext(surface="router", agent="reviewer", workspace=tmp_path)
    assert names(render_router(result.registry, reviewer)) == []
