"""``plan``: 2-7 steps, unique ids, known dependencies, no cycles, only tools the host offers."""

from __future__ import annotations

import pytest
from reyn_tools_catalog import CatalogBridge

from reyn_core import HostBridge, RouterCallerState


def step(id, deps=(), tools=(), description="do"):
    return {"id": id, "description": description, "tools": list(tools), "depends_on": list(deps)}


@pytest.fixture
def planner(ws):
    plans = []
    service = CatalogBridge(
        dispatch_plan=lambda *, plan, ctx: plans.append(plan) or {"accepted": len(plan.steps)}
    )
    bridge = HostBridge(services={CatalogBridge: service})

    def run(steps, goal="goal", **kw):
        kw.setdefault("extras", {"registry": ws.registry})
        return ws.call("plan", {"goal": goal, "steps": steps}, bridge=bridge, **kw)

    run.plans = plans
    return run


def errors(env):
    assert env["status"] == "error" and env["error"]["kind"] == "invalid_arguments", env
    return {e["path"]: e["message"] for e in env["error"]["errors"]}


def test_a_valid_plan_reaches_the_bridge(planner):
    env = planner(
        [step("a", tools=["list_skills"]), step("b", ["a"]), step("c", ["a", "b"], ["describe_skill"])]
    )
    assert env == {"status": "ok", "data": {"accepted": 3}}
    assert [s.id for s in planner.plans[0].steps] == ["a", "b", "c"]


@pytest.mark.parametrize("count", [0, 1, 8])
def test_fewer_than_two_or_more_than_seven_steps_are_refused(planner, count):
    env = planner([step(f"s{i}") for i in range(count)])
    assert "/steps" in errors(env)
    assert planner.plans == []


def test_duplicate_step_ids_are_refused(planner):
    assert errors(planner([step("a"), step("a")])) == {
        "/steps/1/id": "step id 'a' is already used by step 0; ids must be unique"
    }


def test_a_dependency_on_an_unknown_step_is_refused(planner):
    assert errors(planner([step("a"), step("b", ["z"])])) == {
        "/steps/1/depends_on/0": "step 'b' depends on 'z', which is not a step of this plan; step ids: a, b"
    }


def test_a_step_depending_on_itself_is_refused(planner):
    assert errors(planner([step("a", ["a"]), step("b")])) == {
        "/steps/0/depends_on/0": "step 'a' depends on itself"
    }


def test_a_cycle_is_refused_and_shown(planner):
    found = errors(planner([step("a", ["c"]), step("b", ["a"]), step("c", ["b"])]))
    assert found == {"/steps": "the steps form a cycle: a -> c -> b -> a; a plan must be acyclic"}


def test_an_unknown_tool_is_refused_with_the_tools_a_step_may_use(planner):
    message = errors(planner([step("a", tools=["rm_everything"]), step("b")]))["/steps/0/tools/0"]
    assert message.startswith("unknown tool 'rm_everything'; tools a step may use: ")
    assert "list_skills" in message and "'plan'" not in message


def test_a_step_cannot_use_plan_itself(planner):
    assert errors(planner([step("a", tools=["plan"]), step("b")])) == {
        "/steps/0/tools/0": "a plan step cannot use 'plan'"
    }


def test_a_malformed_step_id_is_refused(planner):
    assert errors(planner([step("a b"), step("b")])) == {
        "/steps/0/id": "step id 'a b' may only use letters, digits, '_' and '-'"
    }


def test_every_problem_is_reported_at_once(planner):
    found = errors(planner([step("a", ["ghost"], ["nope"]), step("a")]))
    assert set(found) == {"/steps/1/id", "/steps/0/depends_on/0", "/steps/0/tools/0"}


def test_tools_hidden_from_this_call_are_unknown_to_the_plan(planner):
    state = RouterCallerState(exclude=frozenset({"list_agents"}))
    env = planner([step("a", tools=["list_agents"]), step("b")], router_state=state)
    assert "unknown tool 'list_agents'" in errors(env)["/steps/0/tools/0"]


def test_the_host_may_list_plan_tools_explicitly(planner):
    env = planner([step("a", tools=["web_search"]), step("b")], extras={"plan_tools": ["web_search"]})
    assert env["status"] == "ok"


def test_without_a_tool_catalogue_the_plan_cannot_be_checked_and_is_refused(planner):
    env = planner([step("a"), step("b")], extras={})
    assert env["error"]["kind"] == "runtime_missing"
    assert "extras={'registry': registry}" in env["error"]["message"]
    assert planner.plans == []


def test_missing_step_fields_are_schema_errors(planner):
    env = planner([{"id": "a"}, step("b")])
    assert "/steps/0/description" in errors(env) or "/steps/0" in errors(env)
