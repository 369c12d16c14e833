"""At ``--max-connections``, a POST that is only messages about a request the server already holds
for the same session passes the cap; anything else counts. Against a real ``reyn mcp serve --http``
subprocess on 127.0.0.1: a client cancels its own running call at the cap (before, the
``notifications/cancelled`` got 503 and the call ran on, holding its place), while a cancellation of
a request id no call of that session runs is refused; and an answer to a question the server asked
one session is refused from another session (before, any session could answer another's ask past
the cap). The controls: the genuine cancellation stops the call, the genuine answer finishes it."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx

from .conftest import ServeWorld
from .test_serve_http_answer_waits import _asks, messages, next_message, open_asking_session
from .test_serve_http_answers_at_cap import _reply
from .test_serve_http_hangups import _call
from .test_serve_http_limits import _session, wait_for
from .test_serve_http_slow_body import two_sessions

BOUND = 60


def _cancel(request_id: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": request_id}}


async def test_a_client_cancels_its_own_call_at_the_cap(serve_world: ServeWorld) -> None:
    markers = serve_world.markers
    async with two_sessions(serve_world, "--max-connections", "1") as (server, http, mine, other):
        call = {
            "jsonrpc": "2.0",
            "id": "w-call",
            "method": "tools/call",
            "params": {"name": "probe_wait", "arguments": {"tag": "w0"}},
        }
        async with http.stream("POST", server.url, json=call, headers=_session(mine)):
            await wait_for(lambda: (markers / "w0.started").exists(), "w0 running")
            unknown = await http.post(server.url, json=_cancel("no-such-call"), headers=_session(mine))
            foreign = await http.post(server.url, json=_cancel("w-call"), headers=_session(other))
            still_running = not (markers / "w0.cancelled").exists()
            own = await http.post(server.url, json=_cancel("w-call"), headers=_session(mine))
            await wait_for(lambda: (markers / "w0.cancelled").exists(), "w0 cancelled")
    assert unknown.status_code == 503 and foreign.status_code == 503, (unknown.text, foreign.text)
    assert still_running
    assert own.status_code == 202, own.text  # the control: its own cancellation passes and stops it
    assert not (markers / "w0.finished").exists()


async def test_another_sessions_answer_is_refused_at_the_cap(serve_world: ServeWorld) -> None:
    with serve_world.http("--max-connections", "1", "--answer-timeout", "120") as server:
        async with httpx.AsyncClient(timeout=BOUND) as http:
            asked_session = await open_asking_session(http, server.url)
            other = await open_asking_session(http, server.url)
            call = _call("d0", "probe_deferred")
            async with http.stream(
                "POST", server.url, json=call, headers=_session(asked_session)
            ) as response:
                stream = messages(response)
                asked = await asyncio.wait_for(next_message(stream, _asks), BOUND)
                foreign = await http.post(
                    server.url, json=_reply(asked["id"], "from-other"), headers=_session(other)
                )
                own = await http.post(
                    server.url, json=_reply(asked["id"], "from-own"), headers=_session(asked_session)
                )
                result = await asyncio.wait_for(
                    next_message(stream, lambda m: m.get("id") == call["id"]), BOUND
                )
    assert foreign.status_code == 503, foreign.text
    assert own.status_code == 202, own.text  # the control: the asked session's answer passes
    assert "from-own" in json.dumps(result) and "from-other" not in json.dumps(result)
