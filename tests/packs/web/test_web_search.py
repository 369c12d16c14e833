"""web_search with a SearXNG-format and a Brave-format stub on 127.0.0.1."""

from __future__ import annotations

import pytest
from reyn_tools_web import diagnostics
from reyn_tools_web.settings import WebSettings

from reyn_core.host import dispatch_tool, render_router

SEARX = {
    "results": [
        {"title": "First &amp; best", "url": "https://a.example/1", "content": "snippet <b>one</b>"},
        {"title": "Second", "url": "https://a.example/2", "content": "two"},
        {"title": "No url"},
        {"title": "Third", "url": "https://a.example/3", "content": "three"},
    ]
}
BRAVE = {
    "web": {
        "results": [
            {
                "title": "Brave <strong>hit</strong>",
                "url": "https://b.example/1",
                "description": "desc <strong>x</strong>",
            },
            {"title": "Other", "url": "https://b.example/2", "description": "y"},
        ]
    }
}


def searx_settings(url: str, **extra: object) -> WebSettings:
    return WebSettings.model_validate({"search": {"backend": "searxng", "searxng": {"url": url}, **extra}})


def brave_settings(endpoint: str) -> WebSettings:
    return WebSettings.model_validate(
        {
            "search": {
                "backend": "brave",
                "brave": {"endpoint": endpoint, "api_key_env": "REYN_TEST_BRAVE_KEY"},
            }
        }
    )


async def test_no_backend_means_unavailable_with_how_to_configure(web_registry, ctx) -> None:
    reg = web_registry(WebSettings())
    assert "web_search" not in [t["function"]["name"] for t in render_router(reg, ctx)]
    env = await dispatch_tool(reg, "web_search", {"query": "x"}, ctx)
    assert env["error"]["kind"] == "gate_refused"
    assert 'backend = "searxng"' in env["error"]["message"]


def test_diagnostics_say_how_to_configure() -> None:
    found = {d["code"]: d for d in diagnostics(WebSettings())}
    assert found["RW001"]["tool"] == "web_fetch" and "enabled = true" in found["RW001"]["hint"]
    assert found["RW002"]["severity"] == "warning" and "searxng" in found["RW002"]["hint"]
    assert (
        diagnostics(
            {"fetch": {"enabled": True}, "search": {"backend": "searxng", "searxng": {"url": "http://x"}}}
        )
        == []
    )


async def test_searxng_results_are_normalised(web_registry, ctx, serve, json_route) -> None:
    server = serve(lambda port: {"/search": json_route(SEARX)})
    env = await dispatch_tool(
        web_registry(searx_settings(server.base)),
        "web_search",
        {"query": "reyn tools", "max_results": 2},
        ctx,
    )
    assert env["status"] == "ok", env
    assert env["data"]["backend"] == "searxng"
    assert env["data"]["results"] == [
        {"title": "First & best", "url": "https://a.example/1", "snippet": "snippet one"},
        {"title": "Second", "url": "https://a.example/2", "snippet": "two"},
    ]
    assert server.seen[0]["query"] == {"q": ["reyn tools"], "format": ["json"]}


async def test_brave_results_use_the_key_from_the_environment(
    web_registry, ctx, serve, json_route, monkeypatch
) -> None:
    monkeypatch.setenv("REYN_TEST_BRAVE_KEY", "k-123")

    def check(h) -> int:
        return 200 if h.headers.get("X-Subscription-Token") == "k-123" else 401

    server = serve(lambda port: {"/res/v1/web/search": json_route(BRAVE, check)})
    reg = web_registry(brave_settings(f"{server.base}/res/v1/web/search"))
    env = await dispatch_tool(reg, "web_search", {"query": "q"}, ctx)
    assert env["status"] == "ok", env
    assert env["data"]["results"][0] == {
        "title": "Brave hit",
        "url": "https://b.example/1",
        "snippet": "desc x",
    }
    assert server.seen[0]["query"]["count"] == ["5"]


async def test_brave_without_key_is_unavailable(web_registry, ctx, monkeypatch) -> None:
    monkeypatch.delenv("REYN_TEST_BRAVE_KEY", raising=False)
    env = await dispatch_tool(
        web_registry(brave_settings("http://127.0.0.1:9/x")), "web_search", {"query": "q"}, ctx
    )
    assert env["error"]["kind"] == "gate_refused" and "$REYN_TEST_BRAVE_KEY" in env["error"]["message"]


async def test_backend_http_error_is_reported(web_registry, ctx, serve, json_route, monkeypatch) -> None:
    monkeypatch.setenv("REYN_TEST_BRAVE_KEY", "wrong")
    server = serve(lambda port: {"/s": json_route(BRAVE, lambda h: 401)})
    env = await dispatch_tool(
        web_registry(brave_settings(f"{server.base}/s")), "web_search", {"query": "q"}, ctx
    )
    assert env["error"]["kind"] == "execution_error" and "HTTP 401" in env["error"]["message"]


@pytest.mark.parametrize("payload", [["not", "a", "dict"], {"results": "nope"}])
async def test_malformed_backend_answer_is_an_error(web_registry, ctx, serve, json_route, payload) -> None:
    server = serve(lambda port: {"/search": json_route(payload)})
    env = await dispatch_tool(web_registry(searx_settings(server.base)), "web_search", {"query": "q"}, ctx)
    assert env["error"]["kind"] == "execution_error" and "'results'" in env["error"]["message"]


async def test_non_json_answer_is_an_error(web_registry, ctx, serve) -> None:
    def route(h) -> None:
        h.send_response(200)
        h.send_header("Content-Length", "4")
        h.end_headers()
        h.wfile.write(b"<ht>")

    server = serve(lambda port: {"/search": route})
    env = await dispatch_tool(web_registry(searx_settings(server.base)), "web_search", {"query": "q"}, ctx)
    assert "did not answer with JSON" in env["error"]["message"]


async def test_unreachable_backend_is_an_error_not_a_crash(web_registry, ctx, serve) -> None:
    server = serve(lambda port: {})
    base = server.base
    server.__exit__(None, None, None)
    env = await dispatch_tool(
        web_registry(searx_settings(base, timeout_s=3)), "web_search", {"query": "q"}, ctx
    )
    assert env["status"] == "error" and env["error"]["kind"] in ("execution_error", "timeout")


@pytest.mark.parametrize("args", [{"query": ""}, {"query": "q", "max_results": 50}, {}])
async def test_bad_search_arguments_are_rejected(web_registry, ctx, args) -> None:
    env = await dispatch_tool(web_registry(searx_settings("http://127.0.0.1:9")), "web_search", args, ctx)
    assert env["error"]["kind"] == "invalid_arguments"
