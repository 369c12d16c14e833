"""RouterLoop with deferred tools, through the REAL litellm client against the scripted local server:
the model finds a deferred tool with the search tool and calls it on the next turn; a deferred tool
called by name without searching runs if its gates allow; found tools stay across runs."""

from __future__ import annotations

import json
from typing import Any

import pytest

from reyn_core.host import DeferralPolicy, ToolDeferral
from reyn_core.jsondata import compact_json
from reyn_loops import RouterLoop
from reyn_loops.testing.scripted_server import ScriptedReply as R
from reyn_loops.testing.scripted_server import tool_names, tool_results

from .conftest import MODEL, Calls, Tools, build_registry

POLICY = DeferralPolicy(clusters={"math", "agents"})


@pytest.fixture
def tools(tmp_path) -> Tools:
    """The surface tests' tools plus the search pack's ``find_tools``."""
    calls = Calls()
    return Tools(build_registry(tmp_path, calls, search=True), calls, tmp_path)


def names(body: dict[str, Any]) -> list[str]:
    return list(tool_names(body))


async def test_the_model_finds_a_deferred_tool_and_calls_it_next_turn(tools, ctx, scripted):
    server, client = scripted(
        R.calls(("find_tools", {"query": "add two integers"})),
        R.calls(("add", {"a": 2, "b": 40})),
        R.text("42"),
    )
    loop = RouterLoop(tools.registry, model=MODEL, ctx=ctx, client=client, deferral=POLICY)
    result = await loop.run("what is 2 + 40?")
    assert result.status == "done" and result.text == "42"
    first, second, third = (r.body for r in server.requests)
    assert "add" not in names(first) and "find_tools" in names(first)
    assert names(first)[-1] == "find_tools" and {"read_note", "write_note"} <= set(names(first))
    found = json.loads(tool_msgs(second)[0]["content"])
    assert found["status"] == "ok" and found["data"]["tools"][0]["name"] == "add"
    assert "delegate" not in names(first) and "plan" not in names(first)
    # From the next turn on, the found tool is in the array, right after the search tool.
    assert names(second)[-2:] == ["find_tools", "add"]
    assert names(third)[-2:] == ["find_tools", "add"]
    assert tool_results(third)[result.tool_calls[1].id] == {"status": "ok", "data": 42}
    assert tools.calls.names() == ["add"]
    # The bytes sent are ToolDeferral's render for the same found names.
    deferral = ToolDeferral(tools.registry, POLICY)
    assert server.requests[1].body["tools"] == deferral.split(loop.ctx, ["add"]).tools


async def test_a_deferred_tool_called_by_name_without_searching_runs(tools, ctx, scripted):
    server, client = scripted(R.calls(("add", {"a": 1, "b": 1})), R.text("2"))
    loop = RouterLoop(tools.registry, model=MODEL, ctx=ctx, client=client, deferral=POLICY)
    result = await loop.run("1 + 1")
    assert result.status == "done" and tools.calls.names() == ["add"]
    assert result.tool_calls[0].envelope == {"status": "ok", "data": 2}
    assert "add" not in names(server.requests[0].body) and "add" in names(server.requests[1].body)


async def test_search_never_offers_and_dispatch_refuses_a_gate_refused_tool(tools, ctx, scripted):
    # wipe is router-denied by its author: neither search nor a direct call may reach it.
    server, client = scripted(
        R.calls(("find_tools", {"query": "delete everything wipe"}), ("wipe", {"confirm": True})),
        R.text("cannot"),
    )
    loop = RouterLoop(tools.registry, model=MODEL, ctx=ctx, client=client, deferral=POLICY)
    result = await loop.run("wipe it all")
    search, direct = (c.envelope for c in result.tool_calls)
    assert "wipe" not in [t["name"] for t in search["data"]["tools"]]
    assert direct["status"] == "error" and direct["error"]["kind"] == "gate_refused"
    assert "wipe" not in names(server.requests[1].body) and tools.calls.names() == []


async def test_loop_exclusions_apply_to_search(tools, ctx, scripted):
    server, client = scripted(R.calls(("find_tools", {"query": "add integers"})), R.text("no"))
    loop = RouterLoop(tools.registry, model=MODEL, ctx=ctx, client=client, deferral=POLICY, exclude=["add"])
    result = await loop.run("add")
    assert result.tool_calls[0].envelope["data"]["tools"] == []
    assert "add" not in names(server.requests[1].body)


async def test_found_tools_stay_in_later_runs_of_the_conversation(tools, ctx, scripted):
    server, client = scripted(
        R.calls(("find_tools", {"query": "add"})), R.text("found it"), R.text("still here")
    )
    loop = RouterLoop(tools.registry, model=MODEL, ctx=ctx, client=client, deferral=POLICY)
    first = await loop.run("find an adder")
    await loop.run([*first.messages, {"role": "user", "content": "again"}])
    assert "add" in names(server.requests[2].body)


async def test_without_a_policy_the_loop_sends_what_render_router_sends(tools, ctx, scripted):
    server, client = scripted(R.text("hi"))
    loop = RouterLoop(tools.registry, model=MODEL, ctx=ctx, client=client, deferral=DeferralPolicy())
    await loop.run("hi")
    plain = RouterLoop(tools.registry, model=MODEL, ctx=ctx, client=client)
    assert compact_json(server.requests[0].body["tools"]) == compact_json(plain.tools())
    assert loop.dispatch_registry is tools.registry


def tool_msgs(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [m for m in body["messages"] if m["role"] == "tool"]
