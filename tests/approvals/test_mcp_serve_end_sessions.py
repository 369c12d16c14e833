"""``reyn mcp serve`` at shutdown ends its clients' session approvals: against a real store that
cannot be reached it stops at the first failure (each try could cost a connect timeout) and says
how many sessions are left to their TTL; against a working store every session's approval ends."""

from __future__ import annotations

import logging

from reyn_tools_mcp.serve import ServedRegistry

from reyn_core import ToolContext
from reyn_core.host import load, load_profile

NOTE = {"path": "out/n.md", "text": "hello"}


def _served(world) -> ServedRegistry:
    registry = load(load_profile()).registry
    return ServedRegistry(registry, ToolContext(surface="router", workspace=world.root))


def test_an_unreachable_store_is_tried_once_at_shutdown(world, monkeypatch, caplog):
    from reyn_tools_memory.testing import free_port

    text = world.profile.read_text().replace(
        'settings.file = "approvals.sqlite"',
        'backend = "postgres"\nsettings = { dsn_env = "REYN_TEST_APPROVALS_DSN" }',
    )
    world.profile.write_text(text)
    monkeypatch.setenv("REYN_TEST_APPROVALS_DSN", f"postgresql://u@127.0.0.1:{free_port()}/approvals")
    served = _served(world)
    served._sessions.update(dict.fromkeys(f"http-s{i}" for i in range(5)))
    with caplog.at_level(logging.INFO):
        served.end_sessions()
    tries = [r for r in caplog.records if r.name == "reyn.remote.approvals.postgres"]
    assert len(tries) == 1  # one connect attempt, not five
    assert any("5 session(s)" in r.getMessage() for r in caplog.records)
    assert not served._sessions


async def test_positive_control_a_working_store_ends_every_session(world):
    from reyn_core.host import dispatch_tool

    served = _served(world)
    gate = served.registry.approvals
    approvals = []
    for session in ("http-a", "http-b"):
        ctx = ToolContext(surface="router", workspace=world.root, session=session, entry="router")
        approval = (await dispatch_tool(served.registry, world.write, NOTE, ctx))["error"]["approval"]
        gate.decide(approval, approve=True, by="user:t", channel="user", for_session=True)
        approvals.append(approval)
        served._sessions[session] = None
    served.end_sessions()
    assert [gate.get(a).reason for a in approvals] == ["session_ended", "session_ended"]
