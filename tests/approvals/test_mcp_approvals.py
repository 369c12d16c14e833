"""``reyn mcp serve`` with approvals, spawned from the real ``reyn`` and driven by the MCP SDK's
``Client``: a client that declares elicitation is asked to approve the exact call (and the call runs
only then, once); a client that does not is refused with a message naming the policy, and an
operator's approval then lets the same call run."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from mcp import Client

from .elicitation import Approver

REYN = str(Path(sys.executable).parent / "reyn")
ARGS = {"path": "out/m.md", "text": "via mcp"}


def _marker(world) -> str | None:
    path = world.root / "out/m.md"
    return path.read_text() if path.exists() else None


def _nothing_ran(world) -> None:
    assert _marker(world) is None  # asked before anything ran


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_a_client_with_elicitation_approves_the_exact_call_and_it_runs_once(world, mode):
    approve = Approver(check=lambda params: _nothing_ran(world))
    asked = approve.asked

    async with Client(world.mcp_stdio(), elicitation_callback=approve, mode=mode) as client:
        result = await client.call_tool(world.write, ARGS)
    assert not result.is_error, world.text_of(result)
    assert _marker(world) == "via mcp\n"
    assert len(asked) == 1 and '"text": "via mcp"' in asked[0] and world.pid in asked[0]
    assert "It can touch: no sandbox: it runs in the host process" in asked[0]
    events = [e for e in world.audit_events() if "event" in e]
    assert [e["event"] for e in events] == ["approval.requested", "approval.approved", "approval.executed"]
    assert events[0]["entry"] == "mcp" and events[1]["by"].startswith("user:mcp client")


async def test_a_client_user_who_declines_gets_a_refusal_and_nothing_runs(world):
    decline = Approver({"approve": False, "reason": "not in prod"})

    async with Client(world.mcp_stdio(), elicitation_callback=decline) as client:
        result = await client.call_tool(world.write, ARGS)
    assert result.is_error and "not in prod" in world.text_of(result)
    assert _marker(world) is None


async def test_a_client_without_elicitation_is_refused_naming_the_policy_until_an_operator_approves(world):
    async with Client(world.mcp_stdio()) as client:
        refused = await client.call_tool(world.write, ARGS)
        assert refused.is_error and "[[approvals.rules]] #1" in world.text_of(refused)
        assert "does not declare elicitation" in world.text_of(refused)
        assert _marker(world) is None
        _, [pending] = world.reyn_json("approvals", "list")
        assert world.reyn("approvals", "approve", pending["id"]).returncode == 0
        ran = await client.call_tool(world.write, ARGS)  # the same call, approved by the operator
    assert not ran.is_error, world.text_of(ran)
    assert _marker(world) == "via mcp\n"


async def test_a_rule_only_operators_decide_is_not_put_to_the_client_user(world):
    world.write_profile(extra='approvers = ["operator"]\n')
    approve = Approver()

    async with Client(world.mcp_stdio(), elicitation_callback=approve) as client:
        refused = await client.call_tool(world.write, ARGS)
    assert refused.is_error and "only an operator may approve it" in world.text_of(refused)
    assert approve.asked == [] and _marker(world) is None
