"""PhaseRunner with approvals, through the real litellm client against the scripted server: an op
waiting for approval suspends the phase like ``ask_user`` — before anything of it ran, with the ops
after it held — and the phase resumes from its JSON state (as another process would) once decided."""

from __future__ import annotations

import json
import os

from reyn_core import ToolContext
from reyn_core.host import load, load_profile
from reyn_loops import PhaseRunner, PhaseState
from reyn_loops.testing.scripted_server import ScriptedReply as R

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")


def _reply(ops=None):
    body = {"control": {"type": "finish", "decision": "finish", "next_phase": None}, "control_ir": ops or []}
    return R.text(json.dumps(body))


def _runner(registry, client, root):
    ctx = ToolContext(surface="phase", agent="writer", workspace=root)
    return PhaseRunner(
        registry, model="openai/scripted", ctx=ctx, client=client, allowed_ops=["notes"], structured=False
    )


async def test_an_op_waiting_for_approval_suspends_the_phase_and_resumes_once_approved(
    world, server, llm_client
):
    registry = load(load_profile()).registry
    write = {"kind": world.write, "path": "out/p.md", "text": "phase"}
    read = {"kind": world.read, "path": "out/p.md"}
    server.add(_reply([write, read]), _reply())
    first = await _runner(registry, llm_client, world.root).run("write then read")
    assert first.status == "suspended" and first.state.approval == first.question["approval"]
    assert not (world.root / "out").exists()  # nothing of the op ran
    state = PhaseState.from_json(first.state.to_json())
    # resuming before the decision suspends again, still running nothing
    again = await _runner(registry, llm_client, world.root).resume(state, None)
    assert again.status == "suspended" and not (world.root / "out").exists()
    registry.approvals.decide(state.approval, approve=True, by="user:tester", channel="user")
    done = await _runner(registry, llm_client, world.root).resume(state, None)
    assert done.status == "finish"
    assert [r["kind"] for r in done.op_results] == [world.write, world.read]
    assert done.op_results[1]["result"]["data"] == "phase\n"  # the op after it saw the write
    assert (world.root / "out/p.md").read_text() == "phase\n"


async def test_a_denied_op_is_reported_to_the_model_and_the_phase_goes_on(world, server, llm_client):
    registry = load(load_profile()).registry
    server.add(_reply([{"kind": world.write, "path": "out/p.md", "text": "x"}]), _reply())
    first = await _runner(registry, llm_client, world.root).run("write")
    registry.approvals.decide(
        first.state.approval, approve=False, by="user:t", channel="user", reason="not now"
    )
    done = await _runner(registry, llm_client, world.root).resume(first.state, None)
    assert done.status == "finish"
    [result] = done.op_results
    assert (
        result["result"]["error"]["reason"] == "denied" and "not now" in result["result"]["error"]["message"]
    )
    assert not (world.root / "out").exists()


async def test_a_phase_run_is_its_own_session_and_another_run_cannot_take_its_approval(
    world, server, llm_client
):
    # Two phase runs with no host session make the identical op. Run A's approval is A's: run B
    # waits for a request of its own instead of consuming it, and A resumes from its JSON state (as
    # another process would, with a new runner) and runs the op once.
    registry = load(load_profile()).registry
    write = {"kind": world.write, "path": "out/p.md", "text": "phase"}
    server.add(_reply([write]), _reply([write]), _reply())
    first = await _runner(registry, llm_client, world.root).run("write")
    assert first.status == "suspended" and first.state.session
    registry.approvals.decide(first.state.approval, approve=True, by="user:tester", channel="user")
    other = await _runner(registry, llm_client, world.root).run("write the same")
    assert other.status == "suspended" and other.state.approval != first.state.approval
    assert other.state.session != first.state.session
    assert not (world.root / "out").exists()  # B did not take A's approval
    # positive control: run A resumes by its approval, from JSON, and the op runs once
    state = PhaseState.from_json(first.state.to_json())
    done = await _runner(registry, llm_client, world.root).resume(state, None)
    assert done.status == "finish" and (world.root / "out/p.md").read_text() == "phase\n"
