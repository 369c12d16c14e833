"""Two call-layer rules of ``gates.check`` that a pack supplies without the core naming it: a tool's
``plan_mode`` gate (hidden while a plan step runs) and per-agent tool lists (``OperatorPolicy
.agent_tools``). Each is checked through both renderers and the dispatcher, with a positive control."""

from __future__ import annotations

import pytest

from reyn_core import RouterCallerState, ToolContext, ToolGates, tool
from reyn_core.host import (
    OperatorPolicy,
    RegistryBuilder,
    ToolRegistry,
    dispatch_tool,
    gates,
    phase_context,
    render_phase,
    render_router,
)


@tool(cluster="work", purity="side_effect", gates=ToolGates(plan_mode="deny"))
def lay_out(goal: str) -> str:
    """Lay out steps toward a goal."""
    return f"planned {goal}"


@tool(cluster="work", purity="read_only")
def look(text: str) -> str:
    """Look at a text."""
    return text


def registry(operator: OperatorPolicy | None = None) -> ToolRegistry:
    builder = RegistryBuilder(operator=operator) if operator is not None else RegistryBuilder()
    builder.register(lay_out)
    builder.register(look)
    return builder.freeze()


def names(rendered) -> list[str]:
    return [t["function"]["name"] for t in rendered]


PLAN_STEP = ToolContext(surface="router", router_state=RouterCallerState(plan_mode=True))


# --------------------------------------------------------------------------- plan mode


def test_plan_mode_hides_a_tool_denying_it_from_render_router_directly():
    reg = registry()
    assert names(render_router(reg, ToolContext(surface="router"))) == ["lay_out", "look"]  # control
    assert names(render_router(reg, PLAN_STEP)) == ["look"]


async def test_plan_mode_refuses_the_call_at_dispatch_with_its_layer_and_rule():
    reg = registry()
    env = await dispatch_tool(reg, "lay_out", {"goal": "ship"}, PLAN_STEP)
    assert env["error"]["kind"] == "gate_refused" and env["error"]["layer"] == "call"
    assert "not offered in plan mode" in env["error"]["message"]
    decision = gates.check(reg.get("lay_out"), "router", PLAN_STEP, registry=reg)
    assert (decision.allowed, decision.layer, decision.rule) == (False, "call", "plan_mode")
    # the same call outside plan mode runs, and the other tool runs in plan mode
    assert (await dispatch_tool(reg, "lay_out", {"goal": "ship"}, ToolContext(surface="router")))[
        "status"
    ] == "ok"
    assert (await dispatch_tool(reg, "look", {"text": "x"}, PLAN_STEP))["status"] == "ok"


def test_the_plan_mode_gate_survives_the_manifest_and_defaults_to_allow():
    from reyn_core import lazy_definitions, tool_manifest

    manifest = tool_manifest([lay_out, look])
    entries = {e["name"]: e for e in manifest["tools"]}
    assert entries["lay_out"]["gates"] == {"router": "allow", "phase": "allow", "plan_mode": "deny"}
    assert entries["look"]["gates"] == {"router": "allow", "phase": "allow"}  # as written before the key
    rebuilt = {d.name: d for d in lazy_definitions(manifest)}
    assert rebuilt["lay_out"].gates.plan_mode == "deny" and rebuilt["look"].gates.plan_mode == "allow"


# --------------------------------------------------------------------------- per-agent tool lists

LISTS = OperatorPolicy(agent_tools={"scout": ["look"]}, default_allowed_ops=("work",))


def test_an_agents_tool_list_narrows_both_renders_for_that_agent_only():
    reg = registry(LISTS)
    scout, other = ToolContext(agent="scout"), ToolContext(agent="builder")
    assert names(render_router(reg, scout)) == ["look"]
    assert names(render_router(reg, other)) == ["lay_out", "look"]  # control: another agent
    assert names(render_router(reg, ToolContext())) == ["lay_out", "look"]  # and no agent
    assert [op.kind for op in render_phase(reg, scout).ops] == ["look"]
    assert [op.kind for op in render_phase(reg, other).ops] == ["lay_out", "look"]


@pytest.mark.parametrize("surface", ["router", "phase", "mcp", "cli"])
async def test_dispatch_refuses_a_tool_outside_the_agents_list_on_every_surface(surface):
    reg = registry(LISTS)
    ctx = ToolContext(surface=surface, agent="scout")
    ctx = phase_context(ctx, ["work"]) if surface == "phase" else ctx
    env = await dispatch_tool(reg, "lay_out", {"goal": "g"}, ctx)
    assert env["error"]["kind"] == "gate_refused" and env["error"]["layer"] == "call"
    assert "'scout' may not use 'lay_out'" in env["error"]["message"]
    assert (await dispatch_tool(reg, "look", {"text": "t"}, ctx))["status"] == "ok"  # control


def test_the_registry_list_and_the_hosts_per_call_list_both_apply():
    reg = registry(LISTS)
    narrowed = ToolContext(agent="scout", agent_tools=["lay_out"])
    assert names(render_router(reg, narrowed)) == []
    assert names(render_router(reg, ToolContext(agent="builder", agent_tools=["lay_out"]))) == ["lay_out"]


def test_an_agents_list_is_frozen_with_the_policy():
    listed = {"scout": ["look"]}
    policy = OperatorPolicy(agent_tools=listed)
    listed["scout"].append("lay_out")
    listed["builder"] = []
    assert dict(policy.agent_tools) == {"scout": frozenset({"look"})}
    with pytest.raises(TypeError, match="list of names"):
        OperatorPolicy(agent_tools={"scout": "look"})  # would admit "l", "o", "k"


def test_a_mistyped_plan_mode_gate_is_refused_at_registration_not_read_as_allow():
    from dataclasses import replace

    from reyn_core.errors import ToolRegistrationError

    typo = replace(lay_out, gates=ToolGates(plan_mode="Deny"))  # type: ignore[arg-type]
    with pytest.raises(ToolRegistrationError, match="plan_mode"):
        RegistryBuilder().register(typo)


@pytest.mark.parametrize("surface", ["phase", "mcp", "cli"])
async def test_plan_mode_is_the_callers_state_so_every_surface_refuses_the_tool(surface):
    reg = registry(OperatorPolicy(default_allowed_ops=("work",)))
    ctx = ToolContext(surface=surface, router_state=RouterCallerState(plan_mode=True))
    env = await dispatch_tool(reg, "lay_out", {"goal": "g"}, ctx)
    assert env["error"]["kind"] == "gate_refused" and "not offered in plan mode" in env["error"]["message"]
    assert (await dispatch_tool(reg, "look", {"text": "t"}, ctx))["status"] == "ok"  # control
    if surface == "phase":
        assert [op.kind for op in render_phase(reg, ctx).ops] == ["look"]
        assert [op.kind for op in render_phase(reg, ToolContext(surface="phase")).ops] == ["lay_out", "look"]
