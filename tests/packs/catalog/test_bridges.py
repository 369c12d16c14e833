"""Every bridge present and absent, and the in-process default bridge."""

from __future__ import annotations

import asyncio
import io

import pytest
from reyn_tools_catalog import CatalogBridge, DefaultHost, default_bridge

from reyn_core import HostBridge

PLAN = {
    "goal": "ship",
    "steps": [
        {"id": "a", "description": "build", "tools": ["list_skills"]},
        {"id": "b", "description": "test", "depends_on": ["a"]},
    ],
}

CASES = {
    # tool: (bridge name, surface, arguments)
    "invoke_skill": ("run_skill", "router", {"skill": "s", "input": {}}),
    "delegate_to_agent": ("send_to_agent", "router", {"agent": "helper", "task": "do it"}),
    "plan": ("dispatch_plan", "router", PLAN),
    "ask_user": ("ask_user", "phase", {"question": "Which colour?", "options": ["red", "blue"]}),
}


def bridge_with(name, fn):
    """A host bridge supplying one bridge: ``ask_user`` in the core's ``HostBridge``, the others in
    the catalog pack's ``CatalogBridge`` service."""
    if name == "ask_user":
        return HostBridge(ask_user=fn)
    return HostBridge(services={CatalogBridge: CatalogBridge(**{name: fn})})


@pytest.fixture
def stocked(ws, skill_text):
    ws.skill("s", skill_text("s"))
    ws.agent("helper", "---\nname: helper\ndescription: Helps.\n---\n")
    return ws


def call(ws, tool, bridge, **kw):
    _, surface, args = CASES[tool]
    return ws.call(
        tool,
        args,
        surface=surface,
        bridge=bridge,
        allowed_ops=["catalog", "ask_user"] if surface == "phase" else None,
        extras={"registry": ws.registry},
        **kw,
    )


@pytest.mark.parametrize("tool", sorted(CASES))
def test_without_its_bridge_a_tool_is_runtime_missing_naming_the_bridge(stocked, tool):
    bridge_name = CASES[tool][0]
    env = call(stocked, tool, HostBridge())
    assert env["error"]["kind"] == "runtime_missing"
    assert f"needs the host bridge {bridge_name!r}" in env["error"]["message"]
    supply = "HostBridge(ask_user=...)" if tool == "ask_user" else f"CatalogBridge({bridge_name}=...)"
    assert supply in env["error"]["message"]


@pytest.mark.parametrize("tool", sorted(CASES))
def test_with_its_bridge_a_tool_calls_it_with_keyword_arguments(stocked, tool):
    bridge_name = CASES[tool][0]
    seen = {}

    async def bridge_fn(**kwargs):
        seen.update(kwargs)
        return {"handled": bridge_name}

    env = call(stocked, tool, bridge_with(bridge_name, bridge_fn))
    assert env == {"status": "ok", "data": {"handled": bridge_name}}
    assert "ctx" in seen
    if tool == "invoke_skill":
        assert seen["skill"].name == "s" and seen["input"] == {}
    elif tool == "delegate_to_agent":
        assert seen["agent"].name == "helper" and seen["message"] == "do it"
    elif tool == "plan":
        assert seen["plan"].goal == "ship" and [s.id for s in seen["plan"].steps] == ["a", "b"]
    else:
        assert seen["question"] == "Which colour?" and seen["options"] == ["red", "blue"]


def test_a_sync_bridge_works_too_and_a_string_answer_is_wrapped(stocked):
    env = call(stocked, "ask_user", HostBridge(ask_user=lambda **kw: "blue"))
    assert env == {"status": "ok", "data": {"answer": "blue"}}


def test_a_bridge_that_raises_becomes_an_execution_error_without_traceback(stocked):
    def boom(**kw):
        raise ConnectionError("agent runtime unreachable")

    env = call(stocked, "delegate_to_agent", bridge_with("send_to_agent", boom))
    assert env["error"]["kind"] == "execution_error"
    assert "ConnectionError: agent runtime unreachable" in env["error"]["message"]
    assert "Traceback" not in env["error"]["message"]


# --------------------------------------------------------------------------- default bridge


def test_default_bridge_asks_on_the_terminal_and_maps_an_option_number(stocked):
    out = io.StringIO()
    answers = iter(["2"])
    env = call(stocked, "ask_user", default_bridge(input_fn=lambda prompt: next(answers), output=out))
    assert env == {"status": "ok", "data": {"answer": "blue"}}
    assert "? Which colour?\n  1. red\n  2. blue" in out.getvalue()


def test_default_bridge_without_a_terminal_is_runtime_missing(stocked, monkeypatch):
    monkeypatch.setattr("sys.stdin", io.StringIO("typed\n"))  # not a TTY
    env = call(stocked, "ask_user", default_bridge())
    assert env["error"]["kind"] == "runtime_missing"
    assert "no terminal is attached" in env["error"]["message"]


def test_default_bridge_reports_a_closed_terminal(stocked):
    def eof(prompt):
        raise EOFError

    env = call(stocked, "ask_user", default_bridge(input_fn=eof, output=io.StringIO()))
    assert env["error"]["kind"] == "runtime_missing" and "closed" in env["error"]["message"]


def test_default_bridge_hands_back_skill_instructions(stocked):
    env = call(stocked, "invoke_skill", default_bridge())
    assert env["data"]["status"] == "ready" and env["data"]["instructions"] == "Do it.\n"


def test_default_bridge_records_delegations_and_plans(stocked):
    host = DefaultHost()
    bridge = host.bridge()
    first = call(stocked, "delegate_to_agent", bridge, agent="boss")["data"]
    second = call(stocked, "plan", bridge)["data"]
    assert first == {"status": "delegated", "ticket": "delegation-1", "agent": "helper"}
    assert second == {"status": "accepted", "plan_id": "plan-2", "steps": 2, "order": [["a"], ["b"]]}
    assert host.delegations == [
        {"ticket": "delegation-1", "agent": "helper", "message": "do it", "from": "boss"}
    ]
    assert host.plans[0]["plan"]["goal"] == "ship"


def test_default_bridge_can_carry_a_host_catalogue(stocked):
    bridge = default_bridge(catalog={"skills": [{"name": "only", "description": "Only one."}]})
    assert stocked.call("list_skills", {}, bridge=bridge)["data"]["count"] == 1


def test_default_host_ask_user_runs_off_the_event_loop():
    host = DefaultHost(input_fn=lambda prompt: "fine", output=io.StringIO())
    from reyn_core import ToolContext

    async def both():
        return await asyncio.gather(
            host.ask_user(question="q", options=[], ctx=ToolContext()), asyncio.sleep(0)
        )

    assert asyncio.run(both())[0] == {"answer": "fine"}
