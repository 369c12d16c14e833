"""RouterLoop with approvals, through the real litellm client against the scripted server: a write
the policy selects stops the run as pending (nothing ran, the read the model emitted after it is
held), and the run resumes after a decision — in the same process, or saved and resumed by another
process after an operator approved with ``reyn approvals approve`` in a third."""

from __future__ import annotations

import json
import os
from pathlib import Path

from reyn_core import ToolContext
from reyn_core.host import load, load_profile
from reyn_loops import RouterLoop
from reyn_loops.testing.scripted_server import ScriptedReply as R

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
DRIVER = Path(__file__).with_name("router_driver.py")


def _loop(registry, client, root):
    ctx = ToolContext(surface="router", agent="writer", workspace=root)
    return RouterLoop(registry, model="openai/scripted", ctx=ctx, client=client)


def _tool_contents(body):
    return {m["tool_call_id"]: json.loads(m["content"]) for m in body["messages"] if m["role"] == "tool"}


async def test_a_write_waits_for_approval_and_the_read_after_it_sees_it_on_resume(world, server, llm_client):
    registry = load(load_profile()).registry
    server.add(
        R.calls((world.write, {"path": "out/n.md", "text": "hello"}), (world.read, {"path": "out/n.md"})),
        R.text("done"),
    )
    loop = _loop(registry, llm_client, world.root)
    run = await loop.run("write then read")
    assert run.status == "pending"
    assert [(p.waits, p.name) for p in run.pending] == [("approval", world.write), ("held", world.read)]
    assert not (world.root / "out").exists()  # nothing ran before approval
    assert len(server.requests) == 1
    registry.approvals.decide(run.pending[0].approval, approve=True, by="user:tester", channel="user")
    done = await loop.resume(run, {})
    assert done.status == "done" and done.text == "done"
    answers = _tool_contents(server.requests[1].body)
    assert [a["status"] for a in answers.values()] == ["ok", "ok"]
    assert list(answers.values())[1]["data"] == "hello\n"  # the read after the write saw it


async def test_resuming_before_a_decision_stays_pending_and_runs_nothing(world, server, llm_client):
    registry = load(load_profile()).registry
    server.add(R.calls((world.write, {"path": "out/n.md", "text": "hello"})), R.text("done"))
    loop = _loop(registry, llm_client, world.root)
    run = await loop.run("write")
    again = await loop.resume(run, {})
    assert again.status == "pending" and again.pending[0].approval == run.pending[0].approval
    assert not (world.root / "out").exists() and len(server.requests) == 1


async def test_a_denial_reaches_the_model_with_its_reason(world, server, llm_client):
    registry = load(load_profile()).registry
    server.add(R.calls((world.write, {"path": "out/n.md", "text": "hello"})), R.text("ok, not writing"))
    loop = _loop(registry, llm_client, world.root)
    run = await loop.run("write")
    registry.approvals.decide(
        run.pending[0].approval, approve=False, by="user:tester", channel="user", reason="wrong folder"
    )
    done = await loop.resume(run, {})
    assert done.status == "done"
    [answer] = _tool_contents(server.requests[1].body).values()
    assert answer["error"]["kind"] == "denied" and "wrong folder" in answer["error"]["message"]
    assert not (world.root / "out").exists()


def _driver(world, command, server, state):
    done = world.python(str(DRIVER), command, server.base_url, str(state))
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_approve_in_one_process_and_resume_in_another(world, server, tmp_path):
    server.add(R.calls((world.write, {"path": "out/n.md", "text": "hello"})), R.text("written"))
    state = tmp_path / "run.json"
    first = _driver(world, "run", server, state)
    assert first["status"] == "pending" and not (world.root / "out").exists()
    approval = first["pending"][0]["approval"]
    code, listed = world.reyn_json("approvals", "list")
    assert code == 0 and [r["id"] for r in listed] == [approval]
    assert listed[0]["request"]["arguments"] == {"path": "out/n.md", "text": "hello", "mode": "append"}
    assert world.reyn("approvals", "approve", approval, "--by", "ops").returncode == 0
    assert not (world.root / "out").exists()  # deciding runs nothing
    last = _driver(world, "resume", server, state)
    assert last["status"] == "done" and last["text"] == "written"
    assert (world.root / "out/n.md").read_text() == "hello\n"
    events = [e["event"] for e in world.audit_events() if "event" in e]
    assert events == ["approval.requested", "approval.approved", "approval.executed"]
