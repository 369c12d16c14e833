"""A streamable-HTTP server's messages are bounded by ``max_message_bytes`` (servers/hostile_http_server.py,
raw HTTP on 127.0.0.1): one endless JSON body or one endless event is a transport fault — the call
fails at once naming the bound (not at its timeout, not after holding the endless bytes), the
connection is reopened on the next call, other servers keep working — while a body just under the
bound, and an event stream of many small events whose total is far over it, work."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlencode

import httpx2
import pytest
from local_server import free_port, stop, wait_listening

from reyn_core.host import dispatch_tool

from .test_mcp_degraded_servers import sessions

HOSTILE = Path(__file__).parent / "servers" / "hostile_http_server.py"
LIMIT = 64 * 1024  # the smallest max_message_bytes allowed
# long enough that a call still reading an endless body when it ends is plainly not "at once"
CALL_TIMEOUT_S = 30


@pytest.fixture
def hostile_url() -> Iterator[str]:
    """The hostile server on 127.0.0.1 (it exits by itself after its lifetime; killed at the end)."""
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, str(HOSTILE), str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        wait_listening(proc, port, timeout=30, what="the hostile HTTP MCP server")
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        stop(proc, timeout=10)


@pytest.fixture
def hostile(mcp_registry, mcp_settings, hostile_url, http_mcp_server):
    """A registry with the hostile server (``bad``) and the demo server over HTTP (``good``)."""
    servers = {"bad": {"url": hostile_url}, "good": {"url": http_mcp_server}}
    settings = mcp_settings(servers, call_timeout_s=CALL_TIMEOUT_S, max_message_bytes=LIMIT)
    return mcp_registry(settings), settings


async def call(reg, ctx, server: str, tool: str, arguments: dict | None = None) -> dict:
    args = {"server": server, "tool": tool, "arguments": arguments or {}}
    return await dispatch_tool(reg, "call_mcp_tool", args, ctx)


def text(env: dict) -> str:
    assert env["status"] == "ok", env
    return env["data"]["text"]


def fault(env: dict) -> str:
    """The message of a call that failed as a lost connection (never a timeout)."""
    assert env["status"] == "error", env
    assert env["error"]["kind"] == "execution_error", env
    return env["error"]["message"]


@pytest.mark.parametrize("tool", ["endless_json", "endless_event"])
async def test_an_endless_message_is_a_fault_naming_the_bound_and_the_next_call_reopens(
    hostile, ctx, tool
) -> None:
    reg, settings = hostile
    assert text(await call(reg, ctx, "bad", "fine")) == "ok"
    message = fault(await call(reg, ctx, "bad", tool))
    assert f"over {LIMIT} bytes (max_message_bytes)" in message and "was lost" in message
    assert text(await call(reg, ctx, "bad", "fine")) == "ok"
    assert sessions(settings, "bad") == 2


async def test_a_fault_of_one_server_leaves_the_others_working(hostile, ctx) -> None:
    reg, settings = hostile
    assert text(await call(reg, ctx, "good", "echo", {"text": "before"})) == "before"
    fault(await call(reg, ctx, "bad", "endless_json"))
    assert text(await call(reg, ctx, "good", "echo", {"text": "after"})) == "after"
    assert sessions(settings, "good") == 1


@pytest.mark.parametrize("tool", ["json_body", "sse_event"])
async def test_a_message_just_under_the_bound_is_read(hostile, ctx, tool) -> None:
    reg, settings = hostile
    got = text(await call(reg, ctx, "bad", tool, {"bytes": LIMIT - 16}))
    assert set(got) == {"x"} and len(got) > LIMIT - 200
    assert sessions(settings, "bad") == 1


@pytest.mark.parametrize("tool", ["json_body", "sse_event"])
async def test_a_message_just_over_the_bound_is_a_fault(hostile, ctx, tool) -> None:
    reg, _ = hostile
    assert f"over {LIMIT} bytes" in fault(await call(reg, ctx, "bad", tool, {"bytes": LIMIT + 16}))


async def test_a_compressed_body_is_refused_whatever_it_inflates_to(hostile, ctx) -> None:
    reg, _ = hostile
    message = fault(await call(reg, ctx, "bad", "gzip_json"))
    assert "compressed body (Content-Encoding: gzip)" in message and "identity" in message
    assert text(await call(reg, ctx, "bad", "fine")) == "ok"


async def test_many_small_events_over_the_bound_in_total_keep_the_answer_and_the_get_stream(
    hostile, ctx
) -> None:
    reg, settings = hostile
    many = text(await call(reg, ctx, "bad", "many_events", {"count": 4 * LIMIT // 1024}))
    assert many == "after many events"
    # the GET stream's events, far more than the bound in total, were all read on the same session
    assert int(text(await call(reg, ctx, "bad", "get_stream_sent"))) > 3 * LIMIT
    assert text(await call(reg, ctx, "bad", "fine")) == "ok"
    assert sessions(settings, "bad") == 1


async def test_an_endless_event_on_the_get_stream_closes_the_session_and_the_next_call_reopens(
    hostile, ctx
) -> None:
    from reyn_tools_mcp import pool

    reg, settings = hostile
    assert text(await call(reg, ctx, "bad", "fine")) == "ok"
    # the endless event comes on the GET stream after this answer: the answer may or may not be read
    await call(reg, ctx, "bad", "get_endless")
    pool, config = pool.get_pool(), settings.servers["bad"]
    deadline = time.monotonic() + CALL_TIMEOUT_S  # a bounded wait for the session to close
    while pool.connection_state("bad", config, {})["connected"] and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    assert not pool.connection_state("bad", config, {})["connected"]
    assert text(await call(reg, ctx, "bad", "fine")) == "ok"
    assert sessions(settings, "bad") == 2


async def test_an_endless_handshake_answer_fails_the_open_naming_the_bound(
    mcp_registry, mcp_settings, hostile_url, ctx
) -> None:
    servers = {"bad": {"url": hostile_url + "/endless-init"}}
    reg = mcp_registry(mcp_settings(servers, connect_timeout_s=CALL_TIMEOUT_S, max_message_bytes=LIMIT))
    message = fault(await call(reg, ctx, "bad", "fine"))
    assert "cannot open MCP server 'bad'" in message and f"over {LIMIT} bytes (max_message_bytes)" in message


# ------------------------------------------------------------------ which bodies count per event
# Only the event streams the SDK reads event by event (a 2xx answer to a GET or POST typed
# text/event-stream, in UTF-8) count per event; a redirect's body, an error page and the closing
# DELETE's answer are read whole by the SDK and count as one message whatever their type; an event
# stream in another charset (where the bytes "\n\n" end no line for the SDK's parser) is refused.

SSE = "text/event-stream"
BOUND_S = 30  # the old code read these bodies until the server gave up: a bounded wait, never a pass


def raw_url(base: str, status: str, kind: str, unit: str, count: int | None = None) -> str:
    query = {"status": status, "type": kind, "unit": unit} | ({"count": str(count)} if count else {})
    return f"{base}/raw?{urlencode(query)}"


async def read_all(method: str, url: str) -> list[str]:
    """Read a response whole, the way the SDK reads a redirect, an error or the DELETE's answer
    (``aread``) or an event stream (chunk by chunk); the faults told to the transport."""
    from reyn_tools_mcp.http_bounds import bounded_client

    faults: list[str] = []
    http = bounded_client({}, httpx2.Timeout(10.0), LIMIT, faults.append)
    async with http, http.stream(method, url) as response:
        async for _ in response.aiter_bytes():
            pass
    return faults


@pytest.mark.parametrize(
    ("method", "status", "kind"),
    [
        ("GET", "307 Temporary Redirect", SSE),  # the SDK drains a followed redirect with aread()
        ("POST", "308 Permanent Redirect", SSE),
        ("DELETE", "200 OK", SSE),  # the closing DELETE: request_within_origin reads it whole
        ("POST", "500 Internal Server Error", SSE),  # an error page, read whole for the log
    ],
)
async def test_small_events_in_a_body_read_whole_count_as_one_message(
    hostile_url, method, status, kind
) -> None:
    from reyn_tools_mcp.http_bounds import MessageTooLarge

    with pytest.raises(MessageTooLarge, match=f"over {LIMIT} bytes"):
        await asyncio.wait_for(read_all(method, raw_url(hostile_url, status, kind, "comment")), BOUND_S)


@pytest.mark.parametrize("method", ["GET", "POST"])
@pytest.mark.parametrize("charset", ["utf-16-le", "utf-32", "cp037", "no-such-codec"])
async def test_an_event_stream_in_another_charset_is_refused(hostile_url, method, charset) -> None:
    from reyn_tools_mcp.http_bounds import MessageTooLarge

    url = raw_url(hostile_url, "200 OK", f"{SSE}; charset={charset}", "utf16")
    with pytest.raises(MessageTooLarge, match=f"event stream in charset '{charset}'.*UTF-8") as caught:
        await asyncio.wait_for(read_all(method, url), BOUND_S)
    assert "UTF-8" in str(caught.value)


@pytest.mark.parametrize("charset", ["", "; charset=utf-8", '; charset="UTF8"'])
async def test_a_utf8_event_stream_of_many_small_events_is_read(hostile_url, charset) -> None:
    # positive control: a 2xx event stream in UTF-8, four times the bound in small events
    url = raw_url(hostile_url, "200 OK", SSE + charset, "comment", count=4 * LIMIT // 1000)
    assert await asyncio.wait_for(read_all("GET", url), BOUND_S) == []


async def test_a_small_redirect_body_is_read_and_followed(hostile, ctx) -> None:
    reg, settings = hostile
    assert text(await call(reg, ctx, "bad", "redirected", {"endless": False})) == "ok"
    assert sessions(settings, "bad") == 1


async def test_an_endless_redirect_body_of_small_events_is_a_fault_naming_the_bound(hostile, ctx) -> None:
    reg, settings = hostile
    message = fault(await call(reg, ctx, "bad", "redirected", {"endless": True}))
    assert f"over {LIMIT} bytes (max_message_bytes)" in message and "was lost" in message
    assert text(await call(reg, ctx, "bad", "fine")) == "ok"
    assert sessions(settings, "bad") == 2


async def test_a_utf16_event_stream_answer_is_refused_naming_the_charset(hostile, ctx) -> None:
    reg, settings = hostile
    message = fault(await call(reg, ctx, "bad", "utf16_events"))
    assert "event stream in charset 'utf-16-le'" in message and "was lost" in message
    assert text(await call(reg, ctx, "bad", "fine")) == "ok"
    assert sessions(settings, "bad") == 2


# ------------------------------------------------------------------ a fault while other calls run


async def test_a_fault_with_calls_in_flight_spares_the_next_session_and_keeps_its_words(hostile_url) -> None:
    """One call waits on the session, another one's answer is endless; the moment the fault is
    recorded two fresh calls start. The fresh ones run on a new session that the stale handlers
    leave alone (they discard only the session they ran on), the faulting call names the bound."""
    from reyn_tools_mcp.client import ServerConnection
    from reyn_tools_mcp.failures import McpConnectionError
    from reyn_tools_mcp.settings import ServerConfig

    conn = ServerConnection("bad", ServerConfig(url=hostile_url), 10.0, {})
    conn.max_message_bytes = LIMIT

    async def outcome(tool: str) -> str:
        try:
            result = await conn.call_tool(tool, {}, CALL_TIMEOUT_S)
        except McpConnectionError as exc:
            return f"lost: {exc}"
        return result.content[0].text  # type: ignore[union-attr]

    async def after_fault() -> list[str]:
        while conn.fault is None:  # bounded: the endless answer is cut at the bound
            await asyncio.sleep(0.001)
        return list(await asyncio.gather(outcome("fine"), outcome("slow")))

    async def endless() -> str:
        await asyncio.sleep(0)  # the hanging call has taken the open session (ensure's fast path)
        return await outcome("endless_json")

    try:
        assert await outcome("fine") == "ok"
        hanging = asyncio.ensure_future(outcome("hang"))
        endless, fresh = await asyncio.wait_for(asyncio.gather(endless(), after_fault()), 60)
        assert endless.startswith("lost: ") and f"over {LIMIT} bytes (max_message_bytes)" in endless
        assert fresh == ["ok", "ok"]
        assert (await asyncio.wait_for(hanging, 60)).startswith("lost: ")
        assert await outcome("fine") == "ok"
        assert conn.opened == 2
    finally:
        await conn.close()
