"""A search backend's failure reaches the model in Reyn's words only (issue 21): a backend on
127.0.0.1 that echoes the API key — in every encoding — in an error body, in a non-JSON answer, or
in a broken HTTP status line (which httpx quotes in its exception) never puts a form of it in the
envelope; the operator's log has the backend's text; the next call to a working backend succeeds."""

from __future__ import annotations

import json

import pytest
from reyn_tools_web.settings import WebSettings

from reyn_core.host import dispatch_tool

BRAVE_OK = {"web": {"results": [{"title": "ok", "url": "https://b.example/1", "description": "d"}]}}


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch, secret_forms) -> None:
    monkeypatch.setenv("REYN_TEST_BRAVE_KEY", secret_forms.token)


def brave(endpoint: str) -> WebSettings:
    return WebSettings.model_validate(
        {
            "search": {
                "backend": "brave",
                "brave": {"endpoint": endpoint, "api_key_env": "REYN_TEST_BRAVE_KEY"},
            }
        }
    )


def _echo_body(status: int, send, secret_forms):
    def route(h) -> None:
        key = h.headers.get("X-Subscription-Token", "")
        assert key == secret_forms.token  # the backend did get the key
        body = "invalid key " + key + "\n" + "\n".join(f"{k}={v}" for k, v in secret_forms.forms.items())
        send(h, status, body.encode(), "text/plain")

    return route


def _broken_status_line(secret_forms):
    def route(h) -> None:
        h.wfile.write(f"HTTP/1.1 {secret_forms.forms['base64']} {secret_forms.token}\r\n\r\n".encode())
        h.wfile.flush()

    return route


@pytest.mark.parametrize("case", ["401 error body", "200 non-JSON body", "broken status line"])
async def test_a_backend_echoing_the_key_never_reaches_the_model(
    web_registry, ctx, serve, send, json_route, operator_log, secret_forms, case
) -> None:
    routes = {
        "401 error body": _echo_body(401, send, secret_forms),
        "200 non-JSON body": _echo_body(200, send, secret_forms),
        "broken status line": _broken_status_line(secret_forms),
    }
    server = serve(lambda port: {"/bad": routes[case], "/good": json_route(BRAVE_OK)})
    envelope = await dispatch_tool(
        web_registry(brave(f"{server.base}/bad")), "web_search", {"query": "q"}, ctx
    )
    assert envelope["status"] == "error" and envelope["error"]["kind"] == "execution_error"
    message = json.dumps(envelope, ensure_ascii=False)
    secret_forms.assert_absent(message)
    assert "the brave search backend" in message and "reyn.remote.web.search, ref " in message
    log = operator_log.text()
    assert secret_forms.token in log  # positive control: the backend's own text is for the operator
    if case != "broken status line":
        secret_forms.assert_logged(log)
    good = await dispatch_tool(web_registry(brave(f"{server.base}/good")), "web_search", {"query": "q"}, ctx)
    assert good["status"] == "ok" and good["data"]["results"][0]["title"] == "ok"
