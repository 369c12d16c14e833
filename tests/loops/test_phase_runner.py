"""PhaseRunner through the real litellm client against a scripted local server."""

from __future__ import annotations

import json
from typing import Any

import pytest

from reyn_core.host import render_phase
from reyn_core.render.phase_catalog import phase_context
from reyn_loops import PhaseRunner, PhaseState
from reyn_loops.testing.scripted_server import ScriptedReply as R

from .conftest import MODEL


def reply(
    type_: str = "finish",
    ops: list[dict[str, Any]] | None = None,
    artifact: Any = None,
    next_phase: str | None = None,
) -> R:
    decision = {"finish": "finish", "abort": "abort", "transition": "continue"}[type_]
    body: dict[str, Any] = {
        "control": {"type": type_, "decision": decision, "next_phase": next_phase},
        "control_ir": ops or [],
    }
    if artifact is not None:
        body["artifact"] = artifact
    return R.text(json.dumps(body))


SUMMARY = {"type": "summary", "data": {"text": "two todos"}}


def runner(tools, ctx, client, **kw: Any) -> PhaseRunner:
    kw.setdefault("allowed_ops", ["notes"])
    return PhaseRunner(tools.registry, model=MODEL, ctx=ctx, client=client, name="summarise", **kw)


async def test_valid_output_finishes_with_the_artifact(tools, ctx, scripted):
    server, client = scripted(reply("finish", artifact=SUMMARY))
    result = await runner(tools, ctx, client, artifact_type="summary").run("Summarise todo.md")
    assert result.status == "finish" and result.artifact == SUMMARY and result.error is None
    body = server.requests[0].body
    system = body["messages"][0]["content"]
    expected_catalogue = render_phase(tools.registry, phase_context(ctx, ["notes"]), ["notes"]).prompt_text()
    assert expected_catalogue in system and '"summary"' in system
    assert body["response_format"] == {
        "type": "json_object"
    }  # litellm: no JSON-schema support for this model


async def test_structured_output_sends_the_output_contract_schema(tools, ctx, scripted):
    server, client = scripted(reply("finish", artifact=SUMMARY))
    phase = runner(tools, ctx, client, structured=True)
    await phase.run("go")
    fmt = server.requests[0].body["response_format"]
    assert fmt["type"] == "json_schema" and fmt["json_schema"]["name"] == "phase_output"
    schema = fmt["json_schema"]["schema"]
    assert schema["properties"] == phase.surface.output_schema["properties"]
    kinds = [o["properties"]["kind"]["const"] for o in schema["properties"]["control_ir"]["items"]["oneOf"]]
    assert kinds == ["read_note", "write_note"]


async def test_ops_run_in_order_and_their_results_are_fed_back(tools, ctx, scripted):
    server, client = scripted(
        reply(
            "finish",
            ops=[
                {"kind": "write_note", "name": "s.md", "text": "two todos"},
                {"kind": "read_note", "name": "s.md"},
            ],
        ),
        reply("finish", artifact=SUMMARY),
    )
    result = await runner(tools, ctx, client).run("write it")
    assert result.status == "finish" and result.artifact == SUMMARY
    assert tools.calls.names() == ["write_note", "read_note"]
    fed = server.requests[1].body["messages"][-1]["content"]
    results = json.loads(fed.split("\n", 1)[1])
    assert [r["kind"] for r in results] == ["write_note", "read_note"]
    assert results[1]["result"] == {"status": "ok", "data": "two todos"}
    assert [r["kind"] for r in result.op_results] == ["write_note", "read_note"]


async def test_failing_op_is_reported_back_to_the_model(tools, ctx, scripted):
    server, client = scripted(
        reply("finish", ops=[{"kind": "read_note", "name": "../etc/passwd"}]), reply("abort")
    )
    result = await runner(tools, ctx, client).run("read")
    fed = json.loads(server.requests[1].body["messages"][-1]["content"].split("\n", 1)[1])
    assert fed[0]["result"]["error"]["kind"] == "denied"
    assert result.status == "abort" and result.error is None  # the model chose to abort


async def test_malformed_json_is_sent_back_once_with_the_exact_error(tools, ctx, scripted):
    server, client = scripted(R.text('{"control": {"type": "finish",'), reply("finish", artifact=SUMMARY))
    result = await runner(tools, ctx, client).run("go")
    assert result.status == "finish"
    feedback = server.requests[1].body["messages"][-1]["content"]
    assert "not valid JSON" in feedback and "line 1 column" in feedback


async def test_second_bad_reply_aborts_the_phase_cleanly(tools, ctx, scripted):
    server, client = scripted(
        R.text("not json"), R.text('{"control": {"type": "finish", "decision": "abort"}}')
    )
    result = await runner(tools, ctx, client).run("go")
    assert result.status == "abort" and result.output is None
    assert "twice in a row" in result.error and "/control" in result.error
    assert len(server.requests) == 2 and tools.calls.names() == []


async def test_op_outside_allowed_ops_is_refused_and_its_handler_never_runs(tools, ctx, scripted):
    wipe = {"kind": "wipe", "confirm": True}
    server, client = scripted(reply("finish", ops=[wipe]), reply("finish", ops=[wipe]))
    result = await runner(tools, ctx, client).run("wipe")
    assert result.status == "abort"
    feedback = server.requests[1].body["messages"][-1]["content"]
    assert "/control_ir/0/kind: 'wipe' is not an allowed op (allowed: read_note, write_note)" in feedback
    assert "wipe" not in tools.calls.names()


async def test_op_with_bad_arguments_gets_pointer_feedback(tools, ctx, scripted):
    server, client = scripted(
        reply("finish", ops=[{"kind": "write_note", "name": 3}]), reply("finish", artifact=SUMMARY)
    )
    await runner(tools, ctx, client).run("write")
    feedback = server.requests[1].body["messages"][-1]["content"]
    assert "/control_ir/0" in feedback and tools.calls.names() == []


async def test_ask_user_suspends_and_resumes_with_the_answer(tools, ctx, scripted):
    _, client = scripted(
        reply(
            "finish",
            ops=[
                {"kind": "ask_user", "question": "Which file?"},
                {"kind": "write_note", "name": "answer.md", "text": "noted"},
            ],
        ),
        reply("finish", artifact=SUMMARY),
    )
    phase = runner(tools, ctx, client, allowed_ops=["notes", "ask_user"])
    first = await phase.run("ask first")
    assert first.status == "suspended" and first.question == "Which file?"
    assert tools.calls.names() == ["ask_user"]  # the op after the question waits for the answer
    state = PhaseState.from_json(first.state.to_json())  # resumable from JSON, e.g. in another process
    again = runner(tools, ctx, client, allowed_ops=["notes", "ask_user"])
    done = await again.resume(state, "todo.md")
    assert done.status == "finish" and done.artifact == SUMMARY
    assert tools.calls.names() == ["ask_user", "write_note"]
    assert [r["kind"] for r in done.op_results] == ["ask_user", "write_note"]
    assert done.op_results[0]["result"]["data"] == {"question": "Which file?", "answer": "todo.md"}


async def test_resume_with_another_phase_is_refused(tools, ctx, scripted):
    _, client = scripted(reply("finish", ops=[{"kind": "ask_user", "question": "?"}]))
    first = await runner(tools, ctx, client, allowed_ops=["ask_user"]).run("ask")
    other = PhaseRunner(
        tools.registry, model=MODEL, ctx=ctx, client=client, name="other", allowed_ops=["ask_user"]
    )
    with pytest.raises(Exception, match="belongs to phase 'summarise'"):
        await other.resume(first.state, "x")


async def test_transition_names_the_next_phase(tools, ctx, scripted):
    _, client = scripted(reply("transition", artifact=SUMMARY, next_phase="review"))
    result = await runner(tools, ctx, client, next_phases=["review"]).run("go")
    assert result.status == "transition" and result.next_phase == "review" and result.artifact == SUMMARY


async def test_model_abort_ends_the_phase_without_running_its_ops(tools, ctx, scripted):
    _, client = scripted(reply("abort", ops=[{"kind": "write_note", "name": "x.md", "text": "x"}]))
    result = await runner(tools, ctx, client).run("go")
    assert result.status == "abort" and result.error is None
    assert tools.calls.names() == [] and not (tools.workspace / "x.md").exists()


async def test_step_limit_aborts(tools, ctx, scripted):
    _, client = scripted(*[reply("finish", ops=[{"kind": "read_note", "name": "todo.md"}]) for _ in range(3)])
    result = await runner(tools, ctx, client, max_steps=2).run("loop")
    assert result.status == "abort" and "within 2 model calls" in result.error


async def test_transition_to_an_undeclared_phase_is_sent_back_once(tools, ctx, scripted):
    server, client = scripted(
        reply("transition", artifact=SUMMARY, next_phase="deploy"),
        reply("transition", artifact=SUMMARY, next_phase="review"),
    )
    result = await runner(tools, ctx, client, next_phases=["review", "fix"]).run("go")
    assert result.status == "transition" and result.next_phase == "review"
    feedback = server.requests[1].body["messages"][-1]["content"]
    assert (
        "/control/next_phase: 'deploy' is not a phase this phase may transition to (declared: review, fix)"
        in feedback
    )


async def test_two_undeclared_transitions_abort_and_undeclared_phases_are_free(tools, ctx, scripted):
    _, client = scripted(reply("transition", next_phase="deploy"), reply("transition", next_phase="ship"))
    result = await runner(tools, ctx, client, next_phases=["review"]).run("go")
    assert result.status == "abort" and "twice in a row" in result.error and "'ship'" in result.error
    _, client = scripted(reply("transition", next_phase="anywhere"))
    free = await runner(tools, ctx, client).run("go")  # no next phases declared: any target is accepted
    assert free.status == "transition" and free.next_phase == "anywhere"
