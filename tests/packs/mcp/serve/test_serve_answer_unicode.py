"""A client's answer holding text UTF-8 cannot carry (JSON's ``"\\ud800"``, a lone surrogate once
parsed) is refused with a clear message, and the server serves on: the answer to a deferred call's
question (``_answer``) and to an approval question (``_approval_answer``), on the 2026-07-28 retry
path, whose request body the SDK parses with ``json.loads`` (which keeps the lone surrogate). Before,
the deferred call's "result" was the answer itself, sent back as text UTF-8 cannot carry: that
response never came. The real ``reyn mcp serve --http`` and the real SDK client; the user's answer
carries a marker its HTTP transport writes as ``\\ud800`` (the SDK's own writer cannot write one).
The control: the same answer with ordinary non-ASCII text."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx2
import mcp_types as types
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from .conftest import MODERN, ServeWorld
from .test_serve_answer_timeout_retry import APPROVALS

MARK = "LONE-SURROGATE-HERE"
FINE = "café 😀"


class _LoneSurrogateWriter(httpx2.AsyncHTTPTransport):
    """Sends each request with ``MARK`` written as the JSON escape ``\\ud800``."""

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        body = await request.aread()
        if MARK.encode() in body:
            headers = [(k, v) for k, v in request.headers.raw if k.lower() != b"content-length"]
            body = body.replace(MARK.encode(), b"\\ud800")
            request = httpx2.Request(request.method, request.url, headers=headers, content=body)
        return await super().handle_async_request(request)


def _text(result: Any) -> str:
    return "".join(getattr(c, "text", "") for c in result.content)


async def _call(url: str, tool: str, arguments: dict[str, Any], content: dict[str, Any]) -> Any:
    async def answer(ctx: Any, params: Any) -> types.ElicitResult:
        return types.ElicitResult(action="accept", content=content)

    http = httpx2.AsyncClient(transport=_LoneSurrogateWriter(), timeout=httpx2.Timeout(60))
    async with (
        http,
        Client(
            streamable_http_client(url, http_client=http), mode=MODERN, elicitation_callback=answer
        ) as client,
    ):
        result = await asyncio.wait_for(client.call_tool(tool, arguments), 120)
        after = await asyncio.wait_for(client.call_tool("probe_echo", {"text": "still here"}), 60)
    assert not after.is_error and after.structured_content["text"] == "still here"  # serves on
    return result


async def test_an_answer_to_a_deferred_call_holding_a_lone_surrogate_is_refused(
    serve_world: ServeWorld,
) -> None:
    with serve_world.http() as server:
        bad = await _call(server.url, "probe_deferred", {"question": "ship it?"}, {"result": f"a{MARK}"})
        assert bad.is_error, _text(bad)
        assert "answer for tool 'probe_deferred' holds text UTF-8 cannot carry" in _text(bad)
        assert "at /result; the answer was refused" in _text(bad)
        # the control: ordinary non-ASCII text is the call's result
        good = await _call(server.url, "probe_deferred", {"question": "ship it?"}, {"result": FINE})
        assert not good.is_error and good.structured_content == {"result": FINE}


async def test_an_approval_answer_holding_a_lone_surrogate_is_refused_and_runs_nothing(
    serve_world: ServeWorld,
) -> None:
    serve_world.write_profile(APPROVALS.format(base=serve_world.root.joinpath("reyn.toml").read_text()))
    (serve_world.markers / "t0.go").touch()  # once started, it finishes at once
    refusal = {"approve": False, "reason": f"no{MARK}"}
    with serve_world.http() as server:
        bad = await _call(server.url, "probe_wait", {"tag": "t0"}, refusal)
        assert bad.is_error and "answer for tool 'probe_wait' holds text UTF-8 cannot carry" in _text(bad)
        assert "at /reason; the answer was refused" in _text(bad)
        assert not (serve_world.markers / "t0.started").exists()
        # the control: an approval with ordinary text runs the call
        good = await _call(server.url, "probe_wait", {"tag": "t0"}, {"approve": True, "reason": FINE})
        assert not good.is_error, _text(good)
        assert (serve_world.markers / "t0.started").exists()
