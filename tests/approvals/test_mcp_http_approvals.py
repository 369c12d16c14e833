"""Approvals over ``reyn mcp serve --http`` (streamable HTTP on 127.0.0.1), driven by the real SDK
``Client``: a client that declares elicitation is asked before anything runs and the call runs once;
"for this session" covers the repeats of that HTTP session only and ends when the server stops; a
client without elicitation is refused naming the policy until an operator approves; and a stateless
server, whose calls belong to no session, never offers "for this session"."""

from __future__ import annotations

import contextlib
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import mcp_types as types
from local_server import free_port, stop, wait_listening
from mcp import Client

from .elicitation import Approver

REYN = str(Path(sys.executable).parent / "reyn")
NOTE = {"path": "out/h.md", "text": "over http"}


@contextlib.contextmanager
def _http(world, *args: str) -> Iterator[str]:
    """``reyn mcp serve --http`` for the world's profile until the block ends (SIGTERM, bounded)."""
    text = world.profile.read_text()
    if '"mcp"]' not in text:
        world.profile.write_text(
            text.replace(f'enable = ["{world.pid}"]', f'enable = ["{world.pid}", "mcp"]')
        )
    port = free_port()
    log = world.root.parent / f"serve-{port}.log"
    with open(log, "w") as err:
        proc = subprocess.Popen(
            [REYN, "mcp", "serve", "--http", f"127.0.0.1:{port}", *args],
            cwd=world.root,
            env=world.env(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=err,
        )
    try:
        wait_listening(proc, port, log=log, what="reyn mcp serve --http")
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        stop(proc)


def _asked_before_the_call_ran(world, approver: Approver) -> None:
    assert len(_lines(world)) == len(approver.asked) - 1


def _lines(world) -> list[str]:
    path = world.root / "out/h.md"
    return path.read_text().splitlines() if path.exists() else []


def _events(world, name):
    return [e for e in world.audit_events() if e.get("event") == name]


async def test_over_http_a_client_with_elicitation_approves_the_exact_call_and_it_runs_once(world):
    approve = Approver(check=lambda params: _asked_before_the_call_ran(world, approve))

    with _http(world) as url:
        async with Client(url, elicitation_callback=approve) as client:
            result = await client.call_tool(world.write, NOTE)
            assert not result.is_error, world.text_of(result)
            other = await client.call_tool(world.write, {"path": "out/h.md", "text": "again"})
            assert not other.is_error  # a new call with other arguments: asked again, approved
    asked = approve.asked
    assert len(asked) == 2 and '"text": "over http"' in asked[0] and "It can touch:" in asked[0]
    assert _lines(world) == ["over http", "again"]
    events = [e["event"] for e in world.audit_events() if "event" in e]
    assert events.count("approval.executed") == 2 and events.count("approval.approved") == 2
    assert {e["entry"] for e in _events(world, "approval.requested")} == {"mcp"}


async def test_over_http_for_this_session_covers_that_session_only_and_ends_with_the_server(world):
    for_session = Approver.for_session()

    with _http(world) as url:
        async with Client(url, elicitation_callback=for_session, mode="legacy") as client:
            for _ in range(3):
                assert not (await client.call_tool(world.write, NOTE)).is_error
        assert len(for_session.asked) == 1 and _lines(world) == ["over http"] * 3
        async with Client(url, elicitation_callback=for_session, mode="legacy") as other:  # another session
            assert not (await other.call_tool(world.write, NOTE)).is_error
        assert len(for_session.asked) == 2
    approved = _events(world, "approval.approved")
    assert [e["scope"] for e in approved] == ["session", "session"]
    assert approved[0]["session"] != approved[1]["session"]
    ended = [e for e in _events(world, "approval.expired") if e.get("reason") == "session_ended"]
    assert sorted(e["approval"] for e in ended) == sorted(e["approval"] for e in approved)


async def test_over_http_a_client_without_elicitation_is_refused_until_an_operator_approves(world):
    with _http(world) as url:
        async with Client(url) as client:
            refused = await client.call_tool(world.write, NOTE)
            assert refused.is_error and "does not declare elicitation" in world.text_of(refused)
            assert "[[approvals.rules]]" in world.text_of(refused) and _lines(world) == []
            [pending] = _events(world, "approval.requested")
            done = world.reyn("approvals", "approve", pending["approval"], "--by", "ops")
            assert done.returncode == 0, done.stderr
            ran = await client.call_tool(world.write, NOTE)
            assert not ran.is_error, world.text_of(ran)
            again = await client.call_tool(world.write, NOTE)  # approved once: the repeat waits again
            assert again.is_error and _lines(world) == ["over http"]


async def test_a_stateless_server_never_offers_for_this_session(world):
    approve = Approver()

    with _http(world, "--stateless") as url:
        async with Client(url, elicitation_callback=approve) as client:
            result = await client.call_tool(world.write, NOTE)
    if approve.schemas:  # the client was asked: no session, so no "for this session"
        assert "for_session" not in approve.schemas[0]["properties"]
        assert not result.is_error and _lines(world) == ["over http"]
    else:  # a stateless server cannot ask mid-call: refused, naming the policy, nothing ran
        assert result.is_error and _lines(world) == []


def _forging_client(url: str, callback):
    """A real SDK client whose every request carries a forged ``Mcp-Session-Id`` header."""
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    http = httpx2.AsyncClient(headers={"Mcp-Session-Id": "forged-shared-id"}, timeout=60)
    return Client(streamable_http_client(url, http_client=http), elicitation_callback=callback, mode="legacy")


async def test_a_forged_session_header_on_a_stateless_server_names_no_session(world):
    for_session = Approver.for_session(offered=False)

    with _http(world, "--stateless") as url:
        async with _forging_client(url, for_session) as client:
            await client.call_tool(world.write, NOTE)
    [requested] = _events(world, "approval.requested")
    code, shown = world.reyn_json("approvals", "show", requested["approval"])
    # the stateless server checks no session header: the call belongs to no session
    assert code == 0 and shown["session"] is None and shown["request"]["session"] is False
    assert all("for_session" not in s["properties"] for s in for_session.schemas)
    assert all(e.get("scope") != "session" for e in _events(world, "approval.approved"))


async def test_positive_control_a_stateful_servers_checked_session_is_used(world):
    async def never(ctx, params):
        return types.ElicitResult(action="decline", content={})

    with _http(world) as url:
        async with Client(url, elicitation_callback=never, mode="legacy") as client:
            await client.call_tool(world.write, NOTE)
    [requested] = _events(world, "approval.requested")
    code, shown = world.reyn_json("approvals", "show", requested["approval"])
    assert code == 0 and shown["session"] is not None and shown["request"]["session"] is True


async def test_over_http_an_operator_approval_for_one_client_does_not_run_another_clients_call(world):
    # Client A (no elicitation) is refused and an operator approves A's request. Client B, another
    # HTTP session, makes the identical call first: it must not take A's approval (it gets a
    # request of its own), and A's call then runs once by it. (Clients on the sessionless protocol
    # have no session to tell apart: a documented limit.)
    with _http(world) as url:
        async with Client(url, mode="legacy") as a, Client(url, mode="legacy") as b:
            assert (await a.call_tool(world.write, NOTE)).is_error
            [asked] = _events(world, "approval.requested")
            done = world.reyn("approvals", "approve", asked["approval"], "--by", "ops")
            assert done.returncode == 0, done.stderr
            taken = await b.call_tool(world.write, NOTE)
            assert taken.is_error and _lines(world) == [], world.text_of(taken)
            assert asked["approval"] not in world.text_of(taken)  # B's own request
            ran = await a.call_tool(world.write, NOTE)  # positive control: A's call runs, once
            assert not ran.is_error, world.text_of(ran)
    assert _lines(world) == ["over http"]
    [executed] = _events(world, "approval.executed")
    assert executed["approval"] == asked["approval"]
