"""A call waiting for its user's answer (a deferred tool's result, an approval) is a running call,
against a real ``reyn mcp serve --http`` subprocess on 127.0.0.1: it keeps its ``--max-connections``
place after its client hangs up, until the answer comes or ``--answer-timeout`` passes — before,
five deferred calls whose clients hung up once asked all got 200 at a cap of 1 and waited, unbounded,
until shutdown. And an approval answered during the shutdown grace runs no tool."""

from __future__ import annotations

import asyncio
import copy
import json
import signal
from collections.abc import AsyncIterator
from typing import Any

import httpx

from .conftest import ServeWorld
from .test_serve_http_hangups import _call, a_quick_call
from .test_serve_http_limits import HEADERS, INIT, _session, wait_for


async def open_asking_session(http: httpx.AsyncClient, url: str) -> str:
    """A session whose client declares form elicitation (it can be asked mid-call)."""
    init = copy.deepcopy(INIT)
    init["params"]["capabilities"] = {"elicitation": {"form": {}}}
    opened = await http.post(url, json=init, headers=HEADERS)
    assert opened.status_code == 200, opened.text
    sid = opened.headers["mcp-session-id"]
    done = await http.post(
        url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=_session(sid)
    )
    assert done.status_code == 202
    return sid


async def messages(response: httpx.Response) -> AsyncIterator[dict[str, Any]]:
    """The messages of the call's event stream, in order (one reader for the whole stream)."""
    buffer = ""
    async for chunk in response.aiter_text():
        buffer += chunk
        *lines, buffer = buffer.replace("\r\n", "\n").split("\n")
        for line in lines:
            if line.startswith("data: "):
                yield json.loads(line[len("data: ") :])


async def next_message(stream: AsyncIterator[dict[str, Any]], wanted) -> dict[str, Any]:
    """The next message on ``stream`` that ``wanted`` accepts."""
    async for message in stream:
        if wanted(message):
            return message
    raise AssertionError("the stream ended before the message came")


def _asks(message: dict[str, Any]) -> bool:
    return message.get("method") == "elicitation/create"


async def hang_up_when_asked(http: httpx.AsyncClient, url: str, sid: str, tag: str) -> int:
    """Call ``probe_deferred(tag)``, wait until the server asks the user, then drop the connection."""
    async with http.stream("POST", url, json=_call(tag, "probe_deferred"), headers=_session(sid)) as response:
        if response.status_code == 200:
            await asyncio.wait_for(next_message(messages(response), _asks), 60)
        return response.status_code


async def answer(http: httpx.AsyncClient, url: str, sid: str, asked: dict[str, Any], content: dict) -> None:
    reply = {"jsonrpc": "2.0", "id": asked["id"], "result": {"action": "accept", "content": content}}
    posted = await http.post(url, json=reply, headers=_session(sid))
    assert posted.status_code in (200, 202), posted.text


async def ask_then_answer(
    http: httpx.AsyncClient, url: str, sid: str, call: dict[str, Any], content: dict, before=None
) -> dict[str, Any]:
    """Make ``call``, wait until the server asks the user, run ``before`` (if any), answer with
    ``content`` and return the call's result, all over the call's one stream."""
    async with http.stream("POST", url, json=call, headers=_session(sid)) as response:
        stream = messages(response)
        asked = await asyncio.wait_for(next_message(stream, _asks), 60)
        if before is not None:
            await before()
        await answer(http, url, sid, asked, content)
        return await asyncio.wait_for(next_message(stream, lambda m: m.get("id") == call["id"]), 60)


async def test_calls_waiting_for_an_answer_whose_clients_hung_up_keep_their_places(
    serve_world: ServeWorld,
) -> None:
    with serve_world.http("--max-connections", "2", "--answer-timeout", "15") as server:
        async with httpx.AsyncClient(timeout=60) as http:
            sid = await open_asking_session(http, server.url)
            hung = [await hang_up_when_asked(http, server.url, sid, t) for t in ("d0", "d1")]
            third = await hang_up_when_asked(http, server.url, sid, "d2")  # both still wait: refused
            quick = await a_quick_call(http, server.url, sid, "q0")  # likewise
            later = quick
            for _ in range(2400):  # their waits end at --answer-timeout, and the places with them
                if later.status_code != 503:
                    break
                await asyncio.sleep(0.05)
                later = await a_quick_call(http, server.url, sid, "q1")
    assert hung == [200, 200]
    assert third == 503
    assert quick.status_code == 503
    assert "2 requests or calls are running (--max-connections)" in quick.text
    assert later.status_code == 200 and '"q1"' in later.text


async def test_a_call_whose_client_answers_frees_its_place(serve_world: ServeWorld) -> None:
    # the control: the same call, its question answered and its result read, leaves the cap free
    with serve_world.http("--max-connections", "2", "--answer-timeout", "15") as server:
        async with httpx.AsyncClient(timeout=60) as http:
            sid = await open_asking_session(http, server.url)
            call = _call("d0", "probe_deferred")
            result = await ask_then_answer(http, server.url, sid, call, {"result": "forty-two"})
            quick = [await a_quick_call(http, server.url, sid, t) for t in ("q0", "q1")]
    assert "forty-two" in json.dumps(result) and not result["result"].get("isError")
    assert [q.status_code for q in quick] == [200, 200]


APPROVALS = """{base}
[approvals]
settings.file = "approvals.sqlite"

[[approvals.rules]]
tools = ["probe_wait"]
"""


async def approve_a_held_call(serve_world: ServeWorld, *, stop_first: bool) -> dict[str, Any]:
    """``probe_wait(a0)`` held by the approval policy; the user approves it (after SIGTERM if
    ``stop_first``, once the server waits for its running calls); the call's result."""
    serve_world.write_profile(APPROVALS.format(base=serve_world.root.joinpath("reyn.toml").read_text()))
    (serve_world.markers / "a0.go").touch()  # once started, it finishes at once
    with serve_world.http("--max-connections", "4", "--shutdown-grace", "30") as server:
        async with httpx.AsyncClient(timeout=60) as http:
            sid = await open_asking_session(http, server.url)

            async def stop() -> None:
                server.proc.send_signal(signal.SIGTERM)
                await wait_for(lambda: "stopping: waiting" in server.log.read_text(), "the shutdown")

            call = _call("a0", "probe_wait")
            before = stop if stop_first else None
            return await ask_then_answer(http, server.url, sid, call, {"approve": True}, before)


async def test_an_approval_answered_during_the_shutdown_grace_runs_nothing(serve_world: ServeWorld) -> None:
    result = await approve_a_held_call(serve_world, stop_first=True)
    assert result["result"]["isError"] is True
    assert "the server is shutting down; 'probe_wait' was not run" in json.dumps(result)
    assert not (serve_world.markers / "a0.started").exists()


async def test_an_approval_answered_while_serving_runs_the_call(serve_world: ServeWorld) -> None:
    # the control: the same approval, answered before any signal, runs the tool
    result = await approve_a_held_call(serve_world, stop_first=False)
    assert not result["result"].get("isError")
    assert (serve_world.markers / "a0.started").exists()


def test_an_answer_timeout_that_is_not_a_positive_number_is_refused(serve_world: ServeWorld) -> None:
    for bad in ("0", "-1", "nan", "inf"):
        proc = serve_world.reyn("mcp", "serve", "--answer-timeout", bad, timeout=120)
        assert proc.returncode == 2, (bad, proc.stderr)
        assert "--answer-timeout must be a finite positive number of seconds" in proc.stderr
