"""``reyn mcp serve --http --stateless``: two instances behind a plain per-request round-robin proxy
on 127.0.0.1 serve one SDK client on both protocol generations; without ``--stateless`` the
handshake protocol's session lives in one instance and the client fails (the control)."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from .conftest import MODERN, ServeWorld, call_over_http, free_port

HOP_BY_HOP = {"host", "connection", "keep-alive", "transfer-encoding", "te", "upgrade", "content-length"}


class RoundRobinProxy:
    """An ASGI app sending each request to the next upstream in turn (streaming the answer back)."""

    def __init__(self, upstreams: list[str]) -> None:
        self.upstreams = upstreams
        self.turn = itertools.cycle(range(len(upstreams)))
        self.served = [0] * len(upstreams)
        self.client = httpx.AsyncClient(timeout=60)

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while (await receive())["type"] != "lifespan.shutdown":
                await send({"type": "lifespan.startup.complete"})
            await send({"type": "lifespan.shutdown.complete"})
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        index = next(self.turn)
        self.served[index] += 1
        headers = [
            (k.decode(), v.decode()) for k, v in scope["headers"] if k.decode().lower() not in HOP_BY_HOP
        ]
        request = self.client.build_request(
            scope["method"], self.upstreams[index], headers=headers, content=body
        )
        response = await self.client.send(request, stream=True)
        try:
            await send(
                {
                    "type": "http.response.start",
                    "status": response.status_code,
                    "headers": [
                        (k.encode(), v.encode())
                        for k, v in response.headers.items()
                        if k.lower() not in HOP_BY_HOP
                    ],
                }
            )
            async for chunk in response.aiter_raw():
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
            await send({"type": "http.response.body", "body": b""})
        finally:
            await response.aclose()


@contextlib.asynccontextmanager
async def proxy_to(upstreams: list[str]) -> AsyncIterator[tuple[str, RoundRobinProxy]]:
    import uvicorn

    app = RoundRobinProxy(upstreams)
    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on")
    )
    task = asyncio.ensure_future(server.serve())
    try:
        for _ in range(200):
            if server.started:
                break
            await asyncio.sleep(0.05)
        assert server.started, "the proxy did not start"
        yield f"http://127.0.0.1:{port}/mcp", app
    finally:
        server.should_exit = True
        await asyncio.wait_for(task, 30)
        await app.client.aclose()


async def _session(url: str, mode: str) -> tuple[list[str], list[Any], list[float]]:
    heard: list[float] = []

    async def progress(done: float, total: float | None, message: str | None) -> None:
        heard.append(done)

    async with Client(streamable_http_client(url), mode=mode) as client:
        names = [t.name for t in (await client.list_tools()).tools]
        results = [await client.call_tool("probe_echo", {"text": f"t{i}"}) for i in range(4)]
        results.append(await client.call_tool("probe_progress", {"steps": 2}, progress_callback=progress))
    return names, results, heard


@pytest.mark.parametrize("mode", ["legacy", MODERN])
async def test_two_stateless_instances_behind_round_robin_serve_one_client(
    serve_world: ServeWorld, mode: str
) -> None:
    with serve_world.http("--stateless") as one, serve_world.http("--stateless") as two:
        async with proxy_to([one.url, two.url]) as (url, proxy):
            names, results, heard = await _session(url, mode)
    assert "probe_echo" in names
    assert [r.structured_content["text"] for r in results[:4]] == ["t0", "t1", "t2", "t3"]
    assert not results[4].is_error and results[4].structured_content == {"steps": 2}
    assert heard == [1.0, 2.0]  # progress rides each POST's own response stream
    assert min(proxy.served) >= 3  # both instances really answered


async def test_json_responses_serve_the_same_client_without_notifications(serve_world: ServeWorld) -> None:
    args = ("--stateless", "--json-response")
    with serve_world.http(*args) as one, serve_world.http(*args) as two:
        async with proxy_to([one.url, two.url]) as (url, proxy):
            names, results, heard = await _session(url, "legacy")
    assert "probe_echo" in names and all(not r.is_error for r in results)
    assert heard == []  # one JSON body per request: nowhere to put a notification
    assert min(proxy.served) >= 3


async def test_without_stateless_the_handshake_session_is_lost_behind_round_robin(
    serve_world: ServeWorld,
) -> None:
    with serve_world.http() as one, serve_world.http() as two:
        async with proxy_to([one.url, two.url]) as (url, _proxy):
            with pytest.raises(Exception):  # noqa: B017 - the SDK surfaces it as a transport or MCP error
                await asyncio.wait_for(_session(url, "legacy"), 60)


async def call_via_two_instances(
    world: ServeWorld, sticky: bool, elicitation: Any, tool: str, arguments: dict[str, Any]
) -> Any:
    """One 2026-07-28 call through a round-robin proxy: to two stateless instances, or (``sticky``)
    twice to the same one."""
    with world.http("--stateless") as one, world.http("--stateless") as two:
        upstreams = [one.url, one.url] if sticky else [one.url, two.url]
        async with proxy_to(upstreams) as (url, _proxy):
            return await call_over_http(url, tool, arguments, elicitation)


@pytest.mark.parametrize("sticky", [True, False])
async def test_a_deferred_answer_needs_the_instance_that_issued_its_request_state(
    serve_world: ServeWorld, sticky: bool
) -> None:
    # On 2026-07-28 a deferred call returns input_required with a one-time requestState kept in the
    # issuing instance's memory; the retry carrying the answer is the next request, so round robin
    # sends it to the other instance, which refuses it. The control: both go to one instance.
    import mcp_types as types

    async def answer(ctx: Any, params: Any) -> types.ElicitResult:
        return types.ElicitResult(action="accept", content={"result": "done by a person"})

    result = await call_via_two_instances(
        serve_world, sticky, answer, "probe_deferred", {"question": "ship it?"}
    )
    if sticky:
        assert not result.is_error and result.structured_content == {"result": "done by a person"}
    else:
        assert result.is_error
        text = "".join(getattr(c, "text", "") for c in result.content)
        assert "unknown or expired requestState" in text


@pytest.mark.parametrize("sticky", [True, False])
async def test_an_approval_answered_at_another_instance_is_asked_again_and_nothing_runs(
    serve_world: ServeWorld, sticky: bool
) -> None:
    # On 2026-07-28 a held call returns input_required with a requestState kept in the instance that
    # asked; its retry through round robin reaches the other instance, which does not know it: the
    # call is held and asked again there (and so on), never run. The control: one instance, it runs.
    import mcp_types as types

    serve_world.write_profile(
        BASE_PROFILE_WITH_APPROVALS.format(base=serve_world.root.joinpath("reyn.toml").read_text())
    )
    asked: list[str] = []

    async def approve(ctx: Any, params: Any) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"approve": True})

    try:
        result = await call_via_two_instances(serve_world, sticky, approve, "probe_raise", {"detail": "ran"})
    except Exception as exc:  # the SDK gives up after its rounds
        result = exc
    lines = serve_world.audit_lines()
    statuses = [r["status"] for r in lines if r.get("tool") == "probe_raise" and "event" not in r]
    if sticky:
        assert len(asked) == 1 and statuses.count("execution_error") == 1  # approved once, ran once
    else:
        assert len(asked) >= 2  # asked again at the other instance
        assert "execution_error" not in statuses  # and it never ran
        assert isinstance(result, Exception) or result.is_error


BASE_PROFILE_WITH_APPROVALS = """{base}
[approvals]
settings.file = "approvals.sqlite"

[[approvals.rules]]
tools = ["probe_raise"]
"""
