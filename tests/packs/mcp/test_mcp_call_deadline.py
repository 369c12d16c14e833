"""One deadline per upstream call (issue 24, review of the call timeout): what a call waits on — the
handshake of a new server, its requests — comes out of the one budget it started with, and the
error says which step was waiting; ``close`` never waits behind a handshake; a healthy HTTP server
that never answers the closing ``DELETE`` holds the close ``DELETE_WAIT_S``, not the owner's
``GRACEFUL_CLOSE_S``; and the HTTP timeout path is the stdio one. Real servers: the ``stubborn``
stdio server (servers/stdio_hazards_server.py, its handshake slowed by ``HAZARDS_SLOW_INIT``) and
the raw-asyncio HTTP server (servers/hostile_http_server.py: ``hang`` never answers, a URL ending
in ``/silent-delete`` never answers the ``DELETE``). No assertion on time: each asserts the state
when the call failed (which step was still pending) and the error's words."""

from __future__ import annotations

import asyncio
import logging

import pytest

from reyn_core.host import dispatch_tool

from .test_mcp_call_timeout import running, servers_of, stubborn
from .test_mcp_degraded_servers import err
from .test_mcp_http_message_bound import hostile_url  # noqa: F401 (a fixture)

SLOW_INIT_S = "6"  # the stubborn server's handshake: far longer than the call's timeout below
T = 1


def text(result) -> str:
    return result.content[0].text


async def test_a_handshake_has_its_own_bound_not_the_calls(tmp_path) -> None:
    """A new server's handshake (6 s) longer than the call's timeout (1 s) is bounded by
    ``connect_timeout_s`` (20 s), not by the call: the call's time starts after it, so the first call
    to a slow-starting server is answered (a timeout counting the start would fail every first call
    to it). The control: with ``connect_timeout_s`` shorter than the handshake, the call fails with
    the handshake's own words and nothing opened."""
    from reyn_tools_mcp.client import McpConnectionError, ServerConnection
    from reyn_tools_mcp.settings import ServerConfig

    config = ServerConfig.model_validate(stubborn(tmp_path / "slow", HAZARDS_SLOW_INIT=SLOW_INIT_S))
    conn = ServerConnection("stubborn", config, 20.0, {})
    try:
        (tmp_path / "slow").mkdir()
        pid = int(text(await conn.call_tool("pid", {}, T)))
        assert [pid] == servers_of(tmp_path / "slow") and conn.opened == 1
    finally:
        await conn.close()
    short = ServerConnection(
        "stubborn",
        ServerConfig.model_validate(stubborn(tmp_path / "short", HAZARDS_SLOW_INIT=SLOW_INIT_S)),
        1.0,
        {},
    )
    try:
        (tmp_path / "short").mkdir()
        with pytest.raises(McpConnectionError) as raised:
            await short.call_tool("pid", {}, 60)
        assert "did not finish its handshake within connect_timeout_s=1 s" in str(raised.value)
        assert short.opened == 0
    finally:
        await short.close()


async def test_through_the_dispatcher_the_listing_and_the_call_share_the_deadline(
    mcp_registry, mcp_settings, ctx, tmp_path
) -> None:
    """``call_mcp_tool`` lists the server's tools, then calls: one deadline for both. Each answers
    after 0.6 s, so each fits the call's timeout (1 s) alone but not both: the call fails, naming
    the ``tools/call`` that was waiting. Before, the listing and the call each had the whole
    timeout and the call was answered. The control: with a timeout of 5 s the same call answers."""
    slow = {"HAZARDS_SLOW_LIST": "0.6", "HAZARDS_SLOW_PID": "0.6"}
    for timeout, expected in ((T, "timeout"), (5, "ok")):
        (tmp_path / str(timeout)).mkdir()
        settings = mcp_settings({"slow": stubborn(tmp_path / str(timeout), **slow)}, call_timeout_s=timeout)
        reg = mcp_registry(settings)
        env = await dispatch_tool(reg, "call_mcp_tool", {"server": "slow", "tool": "pid"}, ctx)
        if expected == "ok":
            assert env["status"] == "ok", env
        else:
            kind, message = err(env)
            assert kind == "timeout" and f"did not answer tools/call 'pid' within {T} s" in message, message


async def test_close_does_not_wait_behind_a_handshake(tmp_path) -> None:
    """``close`` while a call waits for a handshake (6 s): the handshake is let go of at once (the
    server stopped hard) and the waiting call fails naming the close. Before, ``close`` waited on
    the connection's lock behind the handshake, up to connect_timeout_s, and then closed the
    session that had opened meanwhile (``opened`` was 1). Positive control: a connection whose
    handshake is done closes gracefully (its server sees its stdin end)."""
    from reyn_tools_mcp.client import ServerConnection
    from reyn_tools_mcp.failures import McpConnectionError
    from reyn_tools_mcp.settings import ServerConfig

    config = ServerConfig.model_validate(stubborn(tmp_path / "slow", HAZARDS_SLOW_INIT=SLOW_INIT_S))
    (tmp_path / "slow").mkdir()
    conn = ServerConnection("stubborn", config, 20.0, {})
    call = asyncio.ensure_future(conn.call_tool("pid", {}, 20))
    while not servers_of(tmp_path / "slow"):  # the server is started: its handshake is under way
        await asyncio.sleep(0.05)
    await conn.close()
    with pytest.raises(McpConnectionError) as raised:
        await call
    assert "was closed" in str(raised.value)
    assert conn.opened == 0  # closed before its handshake could finish
    assert servers_of(tmp_path / "slow") == []

    fine = ServerConnection("fine", ServerConfig.model_validate(stubborn(tmp_path)), 20.0, {})
    pid = int(text(await fine.call_tool("pid", {}, 20)))
    await fine.close()
    assert not running(pid)
    assert (tmp_path / str(pid)).read_text().split() == ["eof"]  # closed gracefully


async def test_an_http_call_times_out_at_its_time_and_the_next_call_reopens(hostile_url) -> None:  # noqa: F811
    """The HTTP timeout path: ``hang`` is never answered; the call fails by its timeout while the
    let-go connection is still being closed in the background (not awaited), with the request's
    words. Positive control: the same server answers ``fine`` before, and after on a fresh
    session."""
    from reyn_tools_mcp.client import ServerConnection
    from reyn_tools_mcp.failures import McpCallTimeout
    from reyn_tools_mcp.settings import ServerConfig

    conn = ServerConnection("hostile", ServerConfig.model_validate({"url": hostile_url}), 20.0, {})
    try:
        assert text(await conn.call_tool("fine", {}, 20)) == "ok"
        with pytest.raises(McpCallTimeout) as raised:
            await conn.call_tool("hang", {}, T)
        assert conn.stopping  # reported before the let-go session had finished closing
        assert f"did not answer tools/call 'hang' within {T} s" in str(raised.value)
        assert text(await conn.call_tool("fine", {}, 20)) == "ok"
        assert conn.opened == 2
    finally:
        await conn.close()


@pytest.mark.parametrize("silent", [True, False])
async def test_a_silent_delete_ends_by_its_own_bound(hostile_url, caplog, silent: bool) -> None:  # noqa: F811
    """A healthy HTTP server that never answers the session's closing ``DELETE``: the ``DELETE``
    fails by its own bound (``DELETE_WAIT_S``) and the owner ends by itself — the SDK logs the
    failed termination with the bound's words. Before, nothing bounded the ``DELETE`` but the
    owner's ``GRACEFUL_CLOSE_S`` (10 s), after which the owner was cancelled (no such record).
    Positive control: at a URL where the ``DELETE`` is answered, the close logs no failure."""
    from reyn_tools_mcp.client import ServerConnection
    from reyn_tools_mcp.http_client import DELETE_WAIT_S
    from reyn_tools_mcp.settings import ServerConfig

    url = hostile_url + ("/silent-delete" if silent else "")
    conn = ServerConnection("hostile", ServerConfig.model_validate({"url": url}), 20.0, {})
    assert text(await conn.call_tool("fine", {}, 20)) == "ok"
    with caplog.at_level(logging.WARNING, logger="mcp"):
        await conn.close()
    failed = [r.getMessage() for r in caplog.records if "Session termination failed" in r.getMessage()]
    if silent:
        assert failed == [
            f"Session termination failed: the server did not answer the session's DELETE within "
            f"{DELETE_WAIT_S:g} s"
        ]
    else:
        assert failed == []
