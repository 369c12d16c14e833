"""A search backend's body is a peer's JSON text (issue 24): its JSON values are counted before it
is parsed (``MAX_RESPONSE_VALUES``: parsing costs per value, not per byte), and it is read with
JSON's numbers only. A real SearXNG-format server on 127.0.0.1."""

from __future__ import annotations

import json

from reyn_tools_web.search import MAX_RESPONSE_VALUES
from reyn_tools_web.settings import WebSettings

from reyn_core.host import dispatch_tool

HIT = {"title": "Hit", "url": "https://a.example/1", "content": "one"}
BIG_BYTES = 8_000_000  # the byte bound, far above every body here: only the value bound can refuse


def settings(url: str) -> WebSettings:
    return WebSettings.model_validate(
        {"search": {"backend": "searxng", "searxng": {"url": url}, "max_bytes": BIG_BYTES}}
    )


def raw_route(body: bytes, send):
    return lambda h: send(h, 200, body, "application/json")


async def search(web_registry, ctx, serve, send, body: bytes) -> dict:
    assert len(body) < BIG_BYTES
    server = serve(lambda port: {"/search": raw_route(body, send)})
    return await dispatch_tool(web_registry(settings(server.base)), "web_search", {"query": "q"}, ctx)


async def test_a_body_of_more_values_than_the_bound_is_refused_unread(web_registry, ctx, serve, send) -> None:
    # ~1M values in ~2.7 MB, well within the byte bound
    body = json.dumps({"results": [HIT] + [{"a": 1}] * 330_000}, separators=(",", ":")).encode()
    env = await search(web_registry, ctx, serve, send, body)
    assert env["status"] == "error" and env["error"]["kind"] == "execution_error", env
    assert f"more than {MAX_RESPONSE_VALUES} JSON values" in env["error"]["message"]


async def test_a_body_within_the_bound_is_read_however_many_bytes(web_registry, ctx, serve, send) -> None:
    # the positive control: as many bytes, few values (a long snippet is cut, not refused)
    long = dict(HIT, content="x" * 2_700_000)
    body = json.dumps({"results": [long] + [{"a": 1}] * 1_000}).encode()
    env = await search(web_registry, ctx, serve, send, body)
    assert env["status"] == "ok", env
    assert env["data"]["results"][0]["url"] == HIT["url"]


async def test_a_body_holding_nan_is_not_json(web_registry, ctx, serve, send) -> None:
    body = json.dumps({"results": [HIT], "score": float("nan")}).encode()
    assert b"NaN" in body
    env = await search(web_registry, ctx, serve, send, body)
    assert env["status"] == "error" and "did not answer with JSON" in env["error"]["message"], env
