"""The user's answer to a question the server asked passes ``--max-connections``, against a real
``reyn mcp serve --http`` subprocess on 127.0.0.1: a call waiting for its user's answer holds a
place, and the answer is a POST of its own — before, at a cap of N, N calls waiting for answers
refused their own answers (503) and waited out ``--answer-timeout``. Fail closed: only a body that is
nothing but responses to ids the server waits on passes; a made-up id, a request dressed as a
response, a mixed batch or an oversized body counts, and is refused at the cap (the genuine answer,
the control, passes in the same setup)."""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Any

import httpx
import pytest

from .conftest import ServeWorld
from .test_serve_http_answer_waits import _asks, messages, next_message, open_asking_session
from .test_serve_http_hangups import _call
from .test_serve_http_limits import _session


def _reply(request_id: Any, result: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "result": {"action": "accept", "content": {"result": result}}}


async def test_calls_waiting_for_answers_at_the_cap_get_their_answers(serve_world: ServeWorld) -> None:
    with serve_world.http("--max-connections", "2", "--answer-timeout", "120") as server:
        async with httpx.AsyncClient(timeout=120) as http, contextlib.AsyncExitStack() as stack:
            sid = await open_asking_session(http, server.url)
            streams, asked = [], []
            for tag in ("d0", "d1"):  # two calls waiting for their user: the cap of 2 is full
                call = _call(tag, "probe_deferred")
                response = await stack.enter_async_context(
                    http.stream("POST", server.url, json=call, headers=_session(sid))
                )
                stream = messages(response)
                asked.append(await asyncio.wait_for(next_message(stream, _asks), 60))
                streams.append((call, stream))
            posted = [
                await http.post(server.url, json=_reply(a["id"], f"answer-{i}"), headers=_session(sid))
                for i, a in enumerate(asked)
            ]
            results = [
                await asyncio.wait_for(next_message(s, lambda m, c=c: m.get("id") == c["id"]), 60)
                for c, s in streams
            ]
    assert [p.status_code for p in posted] == [202, 202], [p.text for p in posted]
    for i, result in enumerate(results):
        assert not result["result"].get("isError") and f"answer-{i}" in json.dumps(result)


def _dressed(asked: dict[str, Any]) -> list[Any]:
    """Bodies that are not only answers to what the server asked."""
    genuine = _reply(asked["id"], "x")
    request = {
        "jsonrpc": "2.0",
        "id": "r1",
        "method": "tools/call",
        "params": {"name": "probe_echo", "arguments": {"text": "x"}},
    }
    return [
        _reply("reyn-ask-made-up", "x"),  # an id the server does not wait on
        _reply(7, "x"),  # the SDK's own kind of id
        {**genuine, "method": "tools/call", "params": request["params"]},  # a request dressed as one
        [genuine, request],  # a mixed batch
        [genuine, genuine],  # the same id twice
        _reply(asked["id"], "x" * 300_000),  # larger than an answer may be at the cap
    ]


@pytest.mark.parametrize("case", range(7))
async def test_only_the_genuine_answer_passes_the_cap(serve_world: ServeWorld, case: int) -> None:
    with serve_world.http("--max-connections", "1", "--answer-timeout", "120") as server:
        async with httpx.AsyncClient(timeout=120) as http:
            sid = await open_asking_session(http, server.url)
            call = _call("d0", "probe_deferred")
            async with http.stream("POST", server.url, json=call, headers=_session(sid)) as response:
                stream = messages(response)
                asked = await asyncio.wait_for(next_message(stream, _asks), 60)
                bodies = _dressed(asked)
                body = bodies[case] if case < len(bodies) else _reply(asked["id"], "forty-two")
                posted = await http.post(server.url, json=body, headers=_session(sid))
                if case == len(bodies):  # the control: the genuine answer, and the call finishes
                    result = await asyncio.wait_for(
                        next_message(stream, lambda m: m.get("id") == call["id"]), 60
                    )
    assert asked["id"].startswith("reyn-ask-")
    if case < len(bodies):
        assert posted.status_code == 503, (case, posted.text)
        assert "1 requests or calls are running (--max-connections)" in posted.text
    else:
        assert posted.status_code == 202, posted.text
        assert not result["result"].get("isError") and "forty-two" in json.dumps(result)
