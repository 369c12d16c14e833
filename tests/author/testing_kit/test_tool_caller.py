"""``ToolCaller``: calling tools as the router and the phase would, through the real dispatcher."""

from __future__ import annotations

import asyncio

import pytest

from reyn_core import ToolContext, ToolGates, tool
from reyn_core.host import RegistryBuilder
from reyn_testing import Envelope, ToolCaller


@tool(cluster="math", purity="read_only")
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool(cluster="math", purity="read_only", gates=ToolGates(phase="deny"))
def router_only(x: int) -> int:
    """Return x (router only)."""
    return x


@tool(cluster="ctx", purity="read_only")
def whoami(ctx: ToolContext) -> dict:
    """Report the caller's surface, agent and workspace."""
    return {"surface": ctx.surface, "agent": ctx.agent, "workspace": str(ctx.workspace)}


@tool(cluster="math", purity="read_only")
async def slow_add(a: int, b: int) -> int:
    """Add after yielding to the loop."""
    await asyncio.sleep(0)
    return a + b


@tool(cluster="math", purity="read_only")
def explode() -> None:
    """Always fails."""
    raise RuntimeError("boom\nsecret second line")


@pytest.fixture
def caller(tmp_path) -> ToolCaller:
    builder = RegistryBuilder()
    for t in (add, router_only, whoami, slow_add, explode):
        builder.register(t)
    return ToolCaller(builder.freeze(), workspace=tmp_path)


def test_router_call_returns_an_ok_envelope(caller):
    result = caller.router("add", {"a": 2, "b": 3})
    assert result == {"status": "ok", "data": 5}
    assert isinstance(result, Envelope) and result.ok and result.unwrap() == 5


def test_the_handler_sees_the_router_surface_agent_and_workspace(caller, tmp_path):
    assert caller.router("whoami").data == {
        "surface": "router",
        "agent": "test-agent",
        "workspace": str(tmp_path),
    }


def test_the_phase_call_sees_the_phase_surface(caller):
    assert caller.phase("whoami").data["surface"] == "phase"


def test_phase_allowed_ops_default_to_the_tool_itself(caller):
    assert caller.phase("add", {"a": 1, "b": 1}).unwrap() == 2


def test_phase_refuses_a_tool_outside_allowed_ops(caller):
    result = caller.phase("add", {"a": 1, "b": 1}, allowed_ops=["file"])
    assert (result.error_kind, result["error"]["layer"]) == ("gate_refused", "call")
    assert "allowed_ops" in result.error_message


def test_a_cluster_name_in_allowed_ops_admits_its_tools(caller):
    assert caller.phase("add", {"a": 1, "b": 1}, allowed_ops=["math"]).ok
    assert caller.phase_ops(["math"]) == ["add", "explode", "slow_add"]


def test_role_gate_refuses_a_router_only_tool_in_a_phase(caller):
    result = caller.phase("router_only", {"x": 1})
    assert (result.error_kind, result["error"]["layer"]) == ("gate_refused", "role")


def test_router_tools_lists_what_the_model_sees(caller):
    assert caller.router_tools() == ["add", "explode", "router_only", "slow_add", "whoami"]
    assert caller.router_tools(exclude=["add"]) == ["explode", "router_only", "slow_add", "whoami"]


def test_router_exclude_refuses_the_call_too(caller):
    assert caller.router("add", {"a": 1, "b": 1}, exclude=["add"]).error_kind == "gate_refused"


def test_unknown_tool_is_not_found_with_a_suggestion(caller):
    result = caller.router("ad", {})
    assert result.error_kind == "not_found"
    assert "'add'" in result.error_message


def test_malformed_json_arguments_are_invalid_arguments(caller):
    assert caller.router("add", '{"a": 1,').error_kind == "invalid_arguments"


def test_wrong_types_are_reported_with_pointers(caller):
    result = caller.router("add", {"a": "x", "b": 1})
    assert result.error_kind == "invalid_arguments"
    assert result["error"]["errors"][0]["path"] == "/a"


def test_a_raising_handler_becomes_an_execution_error_without_traceback(caller):
    result = caller.router("explode")
    assert result.error_kind == "execution_error"
    assert "RuntimeError: boom" in result.error_message
    assert "secret second line" not in result.error_message
    with pytest.raises(AssertionError, match="execution_error"):
        result.unwrap()


def test_error_envelope_accessors_are_none_when_ok(caller):
    result = caller.router("add", {"a": 1, "b": 2})
    assert result.error_kind is None and result.error_message is None


def test_async_handlers_work_from_sync_tests(caller):
    assert caller.router("slow_add", {"a": 1, "b": 2}).unwrap() == 3


async def test_sync_calls_also_work_inside_a_running_event_loop(caller):
    assert caller.router("slow_add", {"a": 2, "b": 2}).unwrap() == 4


async def test_awaitable_variants(caller):
    assert (await caller.arouter("add", {"a": 1, "b": 2})).data == 3
    assert (await caller.aphase("add", {"a": 1, "b": 2}, allowed_ops=["math"])).data == 3


def test_an_explicit_context_is_used_with_the_surface_set(caller, tmp_path):
    ctx = ToolContext(agent="other", workspace=tmp_path)
    assert caller.router("whoami", ctx=ctx).data["agent"] == "other"
