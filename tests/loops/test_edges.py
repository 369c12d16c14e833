"""Bad inputs and edge cases of the surfaces: each has its own clear outcome, nothing crashes."""

from __future__ import annotations

import json

import pytest

from reyn_core import ReynError
from reyn_core.host import OperatorPolicy, RegistryBuilder
from reyn_loops import LLMCallError, LLMRequest, PhaseRunner, ReplayClient, RouterLoop
from reyn_loops.testing.scripted_server import ScriptedReply as R

from .conftest import MODEL


def test_limits_below_one_are_refused(tools):
    with pytest.raises(ValueError, match="max_turns"):
        RouterLoop(tools.registry, model=MODEL, max_turns=0)
    with pytest.raises(ValueError, match="max_steps"):
        PhaseRunner(tools.registry, model=MODEL, max_steps=0)


async def test_only_a_pending_run_can_be_resumed(tools, ctx, scripted):
    _, client = scripted(R.text("hi"))
    loop = RouterLoop(tools.registry, model=MODEL, ctx=ctx, client=client)
    done = await loop.run("hi")
    with pytest.raises(ReynError, match="only a pending run can be resumed"):
        await loop.resume(done, {})


async def test_a_client_error_is_not_retried_and_names_the_cause(tools, ctx, scripted):
    server, client = scripted(num_retries=2)  # empty script: the server answers 400
    with pytest.raises(LLMCallError, match="no reply left") as info:
        await RouterLoop(tools.registry, model=MODEL, ctx=ctx, client=client).run("hi")
    assert info.value.status_code == 400 and len(server.requests) == 1


async def test_a_tool_call_without_a_name_is_not_found(tools, ctx, scripted):
    _server, client = scripted(R.calls(("", {})), R.text("sorry"))
    result = await RouterLoop(tools.registry, model=MODEL, ctx=ctx, client=client).run("x")
    assert result.tool_calls[0].envelope["error"]["kind"] == "not_found"


async def test_an_event_listener_that_raises_never_breaks_the_run(tools, ctx, scripted):
    def explode(event):
        raise RuntimeError("listener bug")

    _, client = scripted(R.calls(("add", {"a": 1, "b": 2})), R.text("3"))
    result = await RouterLoop(tools.registry, model=MODEL, ctx=ctx, client=client, on_event=explode).run("x")
    assert result.status == "done" and result.text == "3"


async def test_no_visible_tools_means_no_tools_key(ctx, scripted):
    server, client = scripted(R.text("plain chat"))
    result = await RouterLoop(RegistryBuilder().freeze(), model=MODEL, ctx=ctx, client=client).run("hi")
    assert result.text == "plain chat"
    assert "tools" not in server.requests[0].body and "tool_choice" not in server.requests[0].body


async def test_replayed_streaming_reply_reaches_the_delta_listener(tmp_path):
    fixture = tmp_path / "s.jsonl"
    request = LLMRequest(MODEL, [{"role": "user", "content": "x"}], stream=True)
    fixture.write_text(
        json.dumps({"key": request.key(), "reply": {"message": {"role": "assistant", "content": "hey"}}})
        + "\n"
    )
    pieces: list[str] = []
    reply = await ReplayClient(fixture, record=False).complete(request, on_delta=pieces.append)
    assert reply.text == "hey" and pieces == ["hey"]


async def test_a_json_reply_that_is_not_an_object_gets_feedback(tools, ctx, scripted):
    server, client = scripted(
        R.text("[1, 2]"), R.text(json.dumps({"control": {"type": "abort", "decision": "abort"}}))
    )
    result = await PhaseRunner(
        tools.registry, model=MODEL, ctx=ctx, client=client, allowed_ops=["notes"]
    ).run("x")
    assert "must be a JSON object" in server.requests[1].body["messages"][-1]["content"]
    assert result.status == "abort" and result.error is None


async def test_json_mode_can_be_switched_off(tools, ctx, scripted):
    server, client = scripted(R.text(json.dumps({"control": {"type": "finish", "decision": "finish"}})))
    await PhaseRunner(
        tools.registry, model=MODEL, ctx=ctx, client=client, json_mode=False, structured=False
    ).run("x")
    assert "response_format" not in server.requests[0].body


async def test_a_phase_with_no_allowed_ops_says_so_and_refuses_every_op(tools, ctx, scripted):
    add = {"kind": "add", "a": 1, "b": 1}
    server, client = scripted(
        *[R.text(json.dumps({"control": {"type": "finish", "decision": "finish"}, "control_ir": [add]}))] * 2
    )
    result = await PhaseRunner(tools.registry, model=MODEL, ctx=ctx, client=client, allowed_ops=[]).run("x")
    assert "No ops are allowed in this phase" in server.requests[0].body["messages"][0]["content"]
    assert result.status == "abort" and "'add' is not an allowed op (allowed: none)" in result.error
    assert tools.calls.names() == []


async def test_phase_default_allowed_ops_come_from_the_registry_policy(tools, ctx):
    # a registry the host built without a policy: a phase that names no ops is offered none
    runner = PhaseRunner(tools.registry, model=MODEL, ctx=ctx, structured=False)
    assert runner.allowed_ops == () and runner.surface.ops == ()
    builder = RegistryBuilder(operator=OperatorPolicy(default_allowed_ops=("math", "ask_user")))
    for t in tools.registry.tools():
        builder.register(t)
    runner = PhaseRunner(builder.freeze(), model=MODEL, ctx=ctx, structured=False)
    assert runner.allowed_ops == ("math", "ask_user")
    assert [o.kind for o in runner.surface.ops] == ["add", "ask_user"]
