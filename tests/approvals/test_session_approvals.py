"""Approvals scoped to a session ("allow this exact call for this session"): explicit, bound to the
session that asked (``ctx.session``, kept as a keyed digest), still bound to the exact call's key,
and ended with the session. Through RouterLoop (the real litellm client against the scripted server)
and ``reyn mcp serve`` (the real SDK client over stdio), with the audit lines that prove it."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from mcp import Client

from reyn_core import ToolContext
from reyn_core.host import ApprovalDecisionError, load, load_profile
from reyn_loops import RouterLoop
from reyn_loops.testing.scripted_server import ScriptedReply as R

from .elicitation import Approver

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
REYN = str(Path(sys.executable).parent / "reyn")
NOTE = {"path": "out/n.md", "text": "hello"}


def _loop(registry, client, root, session):
    ctx = ToolContext(surface="router", agent="writer", workspace=root, session=session)
    return RouterLoop(registry, model="openai/scripted", ctx=ctx, client=client)


def _lines(world) -> list[str]:
    path = world.root / "out/n.md"
    return path.read_text().splitlines() if path.exists() else []


def _events(world, name):
    return [e for e in world.audit_events() if e.get("event") == name]


async def test_router_a_session_approval_reruns_the_exact_call_in_that_session_only(
    world, server, llm_client
):
    registry = load(load_profile()).registry
    gate = registry.approvals
    server.add(R.calls((world.write, NOTE)), R.text("one"))
    first = _loop(registry, llm_client, world.root, "conv-1")
    run = await first.run("write")
    assert run.status == "pending" and _lines(world) == []
    approval = run.pending[0].approval
    record = gate.get(approval)
    assert record.session and "conv-1" not in json.dumps(record.as_json())  # a keyed digest only
    gate.decide(approval, approve=True, by="user:tester", channel="user", for_session=True)
    assert (await first.resume(run, {})).text == "one" and _lines(world) == ["hello"]

    # the same exact call again in the same session: no new request, it runs
    server.add(R.calls((world.write, NOTE)), R.text("two"))
    again = await first.run("write again")
    assert again.status == "done" and _lines(world) == ["hello", "hello"]

    # other arguments in the same session: the key differs, so a new request waits
    server.add(R.calls((world.write, {"path": "out/n.md", "text": "other"})))
    other = await first.run("write something else")
    assert other.status == "pending" and other.pending[0].approval != approval

    # the same exact call in another session: not covered, a new request waits
    server.add(R.calls((world.write, NOTE)))
    elsewhere = await _loop(registry, llm_client, world.root, "conv-2").run("write")
    assert elsewhere.status == "pending" and elsewhere.pending[0].approval not in (approval,)
    assert _lines(world) == ["hello", "hello"]

    # naming the session-scoped approval from another session is refused, and does not void it
    from reyn_core.host import dispatch_tool

    refused = await dispatch_tool(
        registry,
        world.write,
        NOTE,
        ToolContext(surface="router", agent="writer", workspace=world.root, session="conv-2", entry="router"),
        approval=approval,
    )
    assert refused["error"]["reason"] == "session_differs" and gate.get(approval).status == "approved"

    # the session ends: its approval ends with it (an audit line), and the call waits again
    assert [r.id for r in gate.end_session("conv-1")] == [approval]
    server.add(R.calls((world.write, NOTE)))
    after = await first.run("write once more")
    assert after.status == "pending" and _lines(world) == ["hello", "hello"]

    [approved] = [e for e in _events(world, "approval.approved") if e["approval"] == approval]
    assert approved["scope"] == "session" and approved["session"] == record.session
    ended = [e for e in _events(world, "approval.expired") if e.get("reason") == "session_ended"]
    assert [e["approval"] for e in ended] == [approval]
    executed = [e for e in _events(world, "approval.executed") if e["approval"] == approval]
    assert len(executed) == 2 and {e["key"] for e in executed} == {approved["key"]}


async def test_a_request_from_no_session_cannot_be_approved_for_its_session(world):
    registry = load(load_profile()).registry
    from reyn_core.host import dispatch_tool

    envelope = await dispatch_tool(
        registry, world.write, NOTE, ToolContext(surface="router", workspace=world.root)
    )
    approval = envelope["error"]["approval"]
    with pytest.raises(ApprovalDecisionError, match="no session"):
        registry.approvals.decide(approval, approve=True, by="user:t", channel="user", for_session=True)
    assert registry.approvals.get(approval).status == "pending"  # still undecided, nothing ran
    assert _lines(world) == []


# --------------------------------------------------------------------------- reyn mcp serve (stdio)


async def test_mcp_allow_for_this_session_asks_once_then_ends_with_the_session(world):
    approve_for_session = Approver.for_session()
    asked = approve_for_session.asked

    async with Client(world.mcp_stdio(), elicitation_callback=approve_for_session) as client:
        for _ in range(3):
            result = await client.call_tool(world.write, NOTE)
            assert not result.is_error, world.text_of(result)
        other = await client.call_tool(world.write, {"path": "out/n.md", "text": "other"})
        assert not other.is_error
    # asked for the first call and for the call with other arguments; the repeats ran unasked
    assert len(asked) == 2 and '"text": "other"' in asked[1]
    assert _lines(world) == ["hello", "hello", "hello", "other"]
    approved = _events(world, "approval.approved")
    assert [e["scope"] for e in approved] == ["session", "session"]
    # the client's session ended with the server: both approvals ended with it
    ended = [e for e in _events(world, "approval.expired") if e.get("reason") == "session_ended"]
    assert sorted(e["approval"] for e in ended) == sorted(e["approval"] for e in approved)

    # a new session (a new server process) is asked again for the same exact call
    asked.clear()
    async with Client(world.mcp_stdio(), elicitation_callback=approve_for_session) as client:
        assert not (await client.call_tool(world.write, NOTE)).is_error
    assert len(asked) == 1


async def test_mcp_approve_once_is_not_reused_for_the_repeat(world):
    approve_once = Approver()

    async with Client(world.mcp_stdio(), elicitation_callback=approve_once) as client:
        for _ in range(2):
            assert not (await client.call_tool(world.write, NOTE)).is_error
    assert len(approve_once.asked) == 2  # the positive control: without for_session every call is asked
    assert [e["scope"] for e in _events(world, "approval.approved")] == ["once", "once"]


# --------------------------------------------------------------------------- two sessions, one call


async def _two_sessions_each_decide_their_own_request(world):
    from reyn_core.host import dispatch_tool

    registry = load(load_profile()).registry
    gate = registry.approvals

    def ctx(session):
        return ToolContext(
            surface="router", agent="writer", workspace=world.root, session=session, entry="router"
        )

    a = (await dispatch_tool(registry, world.write, NOTE, ctx("conv-A")))["error"]["approval"]
    # the positive control: the same session asking again names the same request
    assert (await dispatch_tool(registry, world.write, NOTE, ctx("conv-A")))["error"]["approval"] == a
    # the same call from another session gets its own request: B's user decides for B alone
    b = (await dispatch_tool(registry, world.write, NOTE, ctx("conv-B")))["error"]["approval"]
    assert b != a and gate.get(b).session == gate.session_digest("conv-B")
    gate.decide(b, approve=True, by="user:b", channel="user", for_session=True)
    ran = await dispatch_tool(registry, world.write, NOTE, ctx("conv-B"), approval=b)
    assert ran["status"] == "ok" and _lines(world) == ["hello"]
    again = await dispatch_tool(registry, world.write, NOTE, ctx("conv-B"))  # the scope is B's
    assert again["status"] == "ok" and _lines(world) == ["hello", "hello"]
    # A is not covered by B's decision: its own request still waits, and B's is refused to A
    waits = await dispatch_tool(registry, world.write, NOTE, ctx("conv-A"))
    assert waits["error"]["kind"] == "approval_required" and waits["error"]["approval"] == a
    refused = await dispatch_tool(registry, world.write, NOTE, ctx("conv-A"), approval=b)
    assert refused["error"]["reason"] == "session_differs" and _lines(world) == ["hello", "hello"]
    assert gate.get(a).status == "pending"


async def test_another_sessions_identical_call_gets_its_own_request_sqlite(world):
    await _two_sessions_each_decide_their_own_request(world)


async def test_another_sessions_identical_call_gets_its_own_request_postgres(
    world, postgres_server, monkeypatch
):
    text = world.profile.read_text().replace(
        'settings.file = "approvals.sqlite"',
        'backend = "postgres"\nsettings = { dsn_env = "REYN_TEST_APPROVALS_DSN" }',
    )
    world.profile.write_text(text)
    monkeypatch.setenv(
        "REYN_TEST_APPROVALS_DSN", postgres_server.dsn(schema=postgres_server.new_schema("ses"))
    )
    await _two_sessions_each_decide_their_own_request(world)
