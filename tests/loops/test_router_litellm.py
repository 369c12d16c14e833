"""RouterLoop through the REAL litellm client against a scripted OpenAI-compatible server on 127.0.0.1."""

from __future__ import annotations

import json
import re

import pytest

from reyn_core import ToolContext
from reyn_core.host import render_router
from reyn_core.render import render_router_json
from reyn_loops import LLMCallError, RouterLoop, SurfaceEvent
from reyn_loops.testing.scripted_server import ScriptedReply as R
from reyn_loops.testing.scripted_server import tool_results

from .conftest import MODEL


def tool_msgs(body: dict) -> list[dict]:
    return [m for m in body["messages"] if m["role"] == "tool"]


def top_level_spans(raw: bytes) -> dict[str, str]:
    """Key -> the exact text of its value in a JSON object, as it appears in ``raw`` (no re-encoding)."""
    text = raw.decode("utf-8")
    decoder = json.JSONDecoder()
    ws = re.compile(r"\s*")
    spans: dict[str, str] = {}
    i = ws.match(text, 0).end()
    assert text[i] == "{"
    i = ws.match(text, i + 1).end()
    while text[i] != "}":
        key, i = decoder.raw_decode(text, i)
        i = ws.match(text, i).end()
        assert text[i] == ":"
        i = ws.match(text, i + 1).end()
        _, end = decoder.raw_decode(text, i)
        spans[key] = text[i:end]
        i = ws.match(text, end).end()
        if text[i] == ",":
            i = ws.match(text, i + 1).end()
    return spans


def test_top_level_spans_reads_values_verbatim():
    raw = b'{"a": {"y": 1, "x": [2, 3]},"tools":[{"b":1}] , "c":"}"}'
    assert top_level_spans(raw) == {"a": '{"y": 1, "x": [2, 3]}', "tools": '[{"b":1}]', "c": '"}"'}


async def test_tools_the_server_receives_are_byte_identical_to_render_router(tools, ctx, scripted):
    server, client = scripted(R.text("hi"), R.text("again"))
    result = await RouterLoop(tools.registry, model=MODEL, ctx=ctx, client=client).run("hello")
    assert result.status == "done" and result.text == "hi"
    raw = server.requests[0].raw
    # The exact bytes of the `tools` value in the HTTP body are render_router_json's canonical JSON:
    # same keys, same key order, same separators, same escaping.
    assert top_level_spans(raw)["tools"].encode("utf-8") == render_router_json(tools.registry, ctx).encode(
        "utf-8"
    )
    received = server.requests[0].body["tools"]
    assert received == render_router(tools.registry, ctx)
    assert "wipe" not in [t["function"]["name"] for t in received]  # phase-only tool never shown
    # Streaming requests carry the same bytes.
    await RouterLoop(tools.registry, model=MODEL, ctx=ctx, client=client, stream=True).run("hello")
    assert top_level_spans(server.requests[1].raw)["tools"] == render_router_json(tools.registry, ctx)


async def test_single_tool_call_round_trips(tools, ctx, scripted):
    server, client = scripted(R.calls(("add", {"a": 2, "b": 3})), R.text("2 + 3 = 5"))
    result = await RouterLoop(tools.registry, model=MODEL, ctx=ctx, client=client).run("add 2 and 3")
    assert result.status == "done" and result.text == "2 + 3 = 5" and result.turns == 2
    second = server.requests[1].body
    assistant = second["messages"][1]
    assert assistant["tool_calls"][0]["function"]["name"] == "add"
    [tool_msg] = tool_msgs(second)
    assert tool_msg["tool_call_id"] == assistant["tool_calls"][0]["id"]
    assert json.loads(tool_msg["content"]) == {"status": "ok", "data": 5}
    assert tools.calls.names() == ["add"]


async def test_parallel_tool_calls_run_concurrently_and_answer_in_order(tools, ctx, scripted):
    server, client = scripted(
        R.calls(("read_note", {"name": "todo.md"}), ("read_note", {"name": "ideas.md"})), R.text("read both")
    )
    result = await RouterLoop(tools.registry, model=MODEL, ctx=ctx, client=client).run("read my notes")
    assert result.status == "done"
    assert tools.calls.max_running == 2  # both handlers were in flight at once
    msgs = tool_msgs(server.requests[1].body)
    assert [m["tool_call_id"] for m in msgs] == ["call_1_0", "call_1_1"]
    assert [json.loads(m["content"])["data"] for m in msgs] == [
        "buy milk\nship reyn\n",
        "a registry of tools\n",
    ]


async def test_streaming_tool_calls_round_trip(tools, ctx, scripted):
    server, client = scripted(
        R.calls(
            ("write_note", {"name": "out.md", "text": "streamed arguments arrive in pieces"}),
            ("add", {"a": 40, "b": 2}),
            content="Working on it.",
        ),
        R.text("Done: wrote out.md and 40 + 2 = 42."),
    )
    events: list[SurfaceEvent] = []
    loop = RouterLoop(
        tools.registry, model=MODEL, ctx=ctx, client=client, stream=True, on_event=events.append
    )
    result = await loop.run("write a note and add")
    assert result.status == "done" and result.text == "Done: wrote out.md and 40 + 2 = 42."
    assert all(r.body.get("stream") is True for r in server.requests)
    assert (tools.workspace / "out.md").read_text() == "streamed arguments arrive in pieces"
    results = tool_results(server.requests[1].body)
    assert results["call_1_1"] == {"status": "ok", "data": 42}
    deltas = "".join(e.data["text"] for e in events if e.kind == "text_delta")
    assert "Working on it." in deltas and "42" in deltas


async def test_unknown_tool_is_an_error_the_model_sees_and_the_loop_continues(tools, ctx, scripted):
    server, client = scripted(
        R.calls(("ad", {"a": 1, "b": 1})), R.calls(("add", {"a": 1, "b": 1})), R.text("2")
    )
    result = await RouterLoop(tools.registry, model=MODEL, ctx=ctx, client=client).run("1+1")
    assert result.status == "done" and result.text == "2"
    error = tool_results(server.requests[1].body)["call_1_0"]
    assert error["status"] == "error" and error["error"]["kind"] == "not_found"
    assert "did you mean 'add'" in error["error"]["message"]
    assert tools.calls.names() == ["add"]


async def test_refused_tool_is_an_error_and_its_handler_never_runs(tools, ctx, scripted):
    server, client = scripted(R.calls(("wipe", {"confirm": True})), R.text("I may not wipe here."))
    result = await RouterLoop(tools.registry, model=MODEL, ctx=ctx, client=client).run("wipe it")
    assert result.status == "done"
    error = tool_results(server.requests[1].body)["call_1_0"]["error"]
    assert error["kind"] == "gate_refused" and error["layer"] == "role"
    assert "wipe" not in tools.calls.names()


async def test_bad_and_malformed_arguments_go_back_with_pointers(tools, ctx, scripted):
    server, client = scripted(
        R.calls(("add", {"a": "one", "b": 2}), ("add", '{"a": 1, "b": ')), R.text("sorry")
    )
    await RouterLoop(tools.registry, model=MODEL, ctx=ctx, client=client).run("add")
    results = tool_results(server.requests[1].body)
    wrong_type = results["call_1_0"]["error"]
    assert wrong_type["kind"] == "invalid_arguments" and wrong_type["errors"][0]["path"] == "/a"
    assert results["call_1_1"]["error"]["kind"] == "invalid_arguments"
    assert "JSON" in results["call_1_1"]["error"]["message"]
    assert tools.calls.names() == []


@pytest.mark.parametrize("status", [429, 500])
async def test_provider_error_is_a_clear_exception_after_retries(tools, ctx, scripted, status):
    server, client = scripted(R.error(status, "provider trouble"), num_retries=2)
    messages = [{"role": "user", "content": "hello"}]
    with pytest.raises(LLMCallError) as info:
        await RouterLoop(tools.registry, model=MODEL, ctx=ctx, client=client).run(messages)
    err = info.value
    assert err.status_code == status and "after 2 retries" in str(err) and "provider trouble" in str(err)
    assert len(server.requests) == 3  # one call and litellm's two retries
    assert messages == [{"role": "user", "content": "hello"}]  # the caller's list is untouched


async def test_provider_error_mid_conversation_leaves_a_consistent_conversation(tools, ctx, scripted):
    _server, client = scripted(R.calls(("add", {"a": 1, "b": 2})), R.error(500, "down"), num_retries=0)
    messages = [{"role": "user", "content": "add"}]
    with pytest.raises(LLMCallError) as info:
        await RouterLoop(tools.registry, model=MODEL, ctx=ctx, client=client).run(messages)
    convo = info.value.messages
    assert [m["role"] for m in convo] == ["user", "assistant", "tool"]  # every tool call answered
    assert len(messages) == 1


async def test_deferred_tool_stops_with_a_pending_state_and_resumes(tools, ctx, scripted):
    server, client = scripted(
        R.calls(("delegate", {"agent": "writer", "task": "draft"}), ("add", {"a": 1, "b": 1})),
        R.text("The writer says: draft ready."),
    )
    loop = RouterLoop(tools.registry, model=MODEL, ctx=ctx, client=client)
    first = await loop.run("delegate")
    assert first.status == "pending" and len(server.requests) == 1
    [pending] = first.pending
    assert pending.name == "delegate" and pending.accepted == {"ticket": "T-writer", "state": "accepted"}
    assert [m.get("tool_call_id") for m in first.messages if m["role"] == "tool"] == ["call_1_1"]
    with pytest.raises(Exception, match="missing: call_1_0"):
        await loop.resume(first, {})
    done = await loop.resume(first, {pending.id: {"draft": "ready"}})
    assert done.status == "done" and done.text == "The writer says: draft ready."
    assert tool_results(server.requests[1].body)["call_1_0"] == {"status": "ok", "data": {"draft": "ready"}}


async def test_turn_limit_stops_the_loop(tools, ctx, scripted):
    server, client = scripted(*[R.calls(("add", {"a": i, "b": i})) for i in range(5)])
    result = await RouterLoop(tools.registry, model=MODEL, ctx=ctx, client=client, max_turns=3).run("loop")
    assert result.status == "turn_limit" and result.turns == 3 and len(server.requests) == 3
    assert result.messages[-1]["role"] == "tool"


async def test_plan_mode_excludes_plan_and_a_step_narrows_the_tools(tools, ctx, scripted):
    server, client = scripted(R.text("planned"), R.calls(("read_note", {"name": "todo.md"})), R.text("ok"))
    loop = RouterLoop(tools.registry, model=MODEL, ctx=ctx, client=client, plan_mode=True)
    await loop.run("plan")
    names = [t["function"]["name"] for t in server.requests[0].body["tools"]]
    assert "plan" not in names and "delegate" in names
    assert server.requests[0].body["tools"] == render_router(tools.registry, ctx, exclude={"plan"})
    step = loop.plan_step(["add"])
    await step.run("step one")
    assert [t["function"]["name"] for t in server.requests[1].body["tools"]] == ["add"]
    refused = tool_results(server.requests[2].body)["call_2_0"]["error"]
    assert refused["kind"] == "gate_refused" and refused["layer"] == "call"
    assert tools.calls.names() == []


async def test_context_agent_reaches_handlers_through_the_loop(tools, scripted):
    _server, client = scripted(R.calls(("add", {"a": 1, "b": 1})), R.text("ok"))
    ctx = ToolContext(surface="cli", agent="someone", workspace=tools.workspace)
    loop = RouterLoop(tools.registry, model=MODEL, ctx=ctx, client=client)
    assert loop.ctx.surface == "router" and loop.ctx.agent == "someone"
    assert (await loop.run("x")).status == "done"


async def test_a_read_after_a_write_in_one_turn_sees_the_write(tools, ctx, scripted):
    # purity order (dispatch_batch): the write is a barrier, the read after it starts once it is done
    server, client = scripted(
        R.calls(
            ("write_note", {"name": "fresh.md", "text": "just written"}), ("read_note", {"name": "fresh.md"})
        ),
        R.text("done"),
    )
    result = await RouterLoop(tools.registry, model=MODEL, ctx=ctx, client=client).run("write, then read")
    assert result.status == "done"
    msgs = tool_msgs(server.requests[1].body)
    assert json.loads(msgs[1]["content"]) == {"status": "ok", "data": "just written"}
    assert tools.calls.names() == ["write_note", "read_note"]
