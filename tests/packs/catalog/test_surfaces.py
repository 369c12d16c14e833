"""Router/phase asymmetries of the catalog pack, enforced by the renderers AND at dispatch."""

from __future__ import annotations

import pytest
from reyn_tools_catalog import CatalogBridge

from reyn_core import HostBridge
from reyn_core.host import Profile, render_phase, render_router

BOTH = ["describe_agent", "describe_skill", "invoke_skill", "list_agents", "list_skills"]
ROUTER_ONLY = ["delegate_to_agent", "plan"]
PHASE_ONLY = ["ask_user", "lint_skill"]


def test_router_renders_everything_but_ask_user(ws):
    names = [t["function"]["name"] for t in render_router(ws.registry, ws.ctx())]
    assert names == sorted(BOTH + ROUTER_ONLY)


def test_phase_renders_everything_but_delegate_and_plan(ws):
    ops = render_phase(ws.registry, ws.ctx("phase"), ["catalog", "ask_user"]).ops
    assert sorted(op.kind for op in ops) == sorted(BOTH + PHASE_ONLY)


def test_the_profiles_default_allowed_ops_admit_ask_user_only(ws):
    # the default is the profile's ([surfaces.phase] default_allowed_ops), not the gates'
    defaults = Profile().surfaces.phase.default_allowed_ops
    ops = render_phase(ws.registry, ws.ctx("phase"), defaults).ops
    assert [op.kind for op in ops] == ["ask_user"]


def test_a_registry_without_a_profile_offers_a_phase_that_names_no_ops_nothing(ws):
    assert render_phase(ws.registry, ws.ctx("phase"), None).ops == ()
    env = ws.call("ask_user", {"question": "q"}, surface="phase", bridge=HostBridge(ask_user=lambda **k: "a"))
    assert env["error"]["kind"] == "gate_refused" and "allowed_ops []" in env["error"]["message"]


def test_clusters_and_dispatch_kinds(ws):
    reg = ws.registry
    assert {reg.get(n).cluster for n in BOTH + ROUTER_ONLY} == {"catalog"}
    assert reg.get("ask_user").cluster == "ask_user"
    assert reg.get("lint_skill").cluster == "catalog"
    assert {n for n in BOTH + ROUTER_ONLY + PHASE_ONLY if reg.get(n).dispatch_kind == "deferred"} == set(
        ROUTER_ONLY
    )


@pytest.mark.parametrize("tool", ROUTER_ONLY)
def test_router_only_tools_are_refused_on_the_phase_at_dispatch(ws, tool):
    calls = []
    service = CatalogBridge(
        send_to_agent=lambda **k: calls.append(k), dispatch_plan=lambda **k: calls.append(k)
    )
    bridge = HostBridge(services={CatalogBridge: service})
    env = ws.call(tool, {}, surface="phase", bridge=bridge, allowed_ops=["catalog", tool])
    assert env["error"]["kind"] == "gate_refused" and env["error"]["layer"] == "role"
    assert "not offered on the phase surface" in env["error"]["message"]
    assert calls == []


def test_ask_user_is_refused_on_the_router_at_dispatch(ws):
    calls = []
    env = ws.call("ask_user", {"question": "q"}, bridge=HostBridge(ask_user=lambda **k: calls.append(k)))
    assert env["error"]["kind"] == "gate_refused" and env["error"]["layer"] == "role"
    assert calls == []


@pytest.mark.parametrize("tool", BOTH)
def test_shared_tools_run_on_both_surfaces(ws, skill_text, tool):
    ws.skill("s", skill_text("s"))
    ws.agent("a", "---\nname: a\ndescription: An agent.\n---\n")
    args = {"name": "s" if "skill" in tool else "a"} if tool.startswith("describe") else {}
    if tool == "invoke_skill":
        args = {"skill": "s"}
    bridge = HostBridge(services={CatalogBridge: CatalogBridge(run_skill=lambda **k: "ran")})
    assert ws.call(tool, args, bridge=bridge)["status"] == "ok"
    assert ws.call(tool, args, surface="phase", bridge=bridge, allowed_ops=["catalog"])["status"] == "ok"


def test_catalog_tools_outside_the_phase_allowed_ops_are_refused(ws):
    env = ws.call("list_skills", {}, surface="phase", allowed_ops=["file"])
    assert env["error"]["kind"] == "gate_refused" and env["error"]["layer"] == "call"


def test_plan_and_invoke_skill_schemas_avoid_refs_and_explicit_open_objects(ws):
    import json

    plan = json.dumps(ws.registry.get("plan").parameters)
    assert "$ref" not in plan and "$defs" not in plan
    assert "additionalProperties" not in ws.registry.get("invoke_skill").parameters["properties"]["input"]
