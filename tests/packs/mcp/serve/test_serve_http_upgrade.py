"""Only HTTP is served, against a real ``reyn mcp serve --http`` subprocess on 127.0.0.1 and a raw
socket: a websocket upgrade request without the bearer token gets 401, as any request does, and with
it the answer the same request gets without the upgrade headers (the MCP transport's, never
``101 Switching Protocols``) — before, uvicorn switched it to its websocket protocol, which handed a
``websocket`` scope past the token check (it let every kind but ``http`` through) to the app, which
refused it (403). And the outermost layer refuses every kind of connection but HTTP (and the
server's lifespan) without passing it on."""

from __future__ import annotations

import asyncio

from .conftest import ServeWorld
from .test_serve_http_unread_at_cap import TOKEN, _first_line_or_close, _raw

UPGRADE = (
    "Connection: Upgrade",
    "Upgrade: websocket",
    "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==",
    "Sec-WebSocket-Version: 13",
)


def _get(port: int, *extra: str) -> bytes:
    lines = ["GET /mcp HTTP/1.1", f"Host: 127.0.0.1:{port}", *extra]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


async def _status(port: int, request: bytes) -> bytes:
    reader, writer = await _raw(port, request)
    status = await _first_line_or_close(reader)
    writer.close()
    return status


async def test_an_upgrade_without_the_token_gets_401(serve_world: ServeWorld) -> None:
    with serve_world.http("--auth-token-env", "TOK", TOK=TOKEN) as server:
        status = await _status(server.port, _get(server.port, *UPGRADE))
    assert status.startswith(b"HTTP/1.1 401"), status  # (before: 403, from the app past the check)


async def test_an_upgrade_with_the_token_is_answered_as_plain_http(serve_world: ServeWorld) -> None:
    auth = f"Authorization: Bearer {TOKEN}"
    with serve_world.http("--auth-token-env", "TOK", TOK=TOKEN) as server:
        upgraded = await _status(server.port, _get(server.port, auth, *UPGRADE))
        plain = await _status(server.port, _get(server.port, auth))  # the control: no upgrade
    assert upgraded == plain and plain.startswith(b"HTTP/1.1 4"), (upgraded, plain)


async def test_upgrade_requests_are_logged_a_line_per_thousand(serve_world: ServeWorld) -> None:
    # before: uvicorn's two warnings per request, one advising to install a websocket library
    auth = f"Authorization: Bearer {TOKEN}"
    with serve_world.http("--auth-token-env", "TOK", TOK=TOKEN) as server:
        for _ in range(5):
            assert (await _status(server.port, _get(server.port, auth, *UPGRADE))).startswith(b"HTTP/1.1 4")
        log = server.log.read_text()
    assert log.count("answered 1 upgrade request(s) as plain HTTP (no websocket is served)") == 1, log
    assert "upgrade request(s)" in log and "uvicorn[standard]" not in log and "Unsupported" not in log, log


async def test_only_http_and_lifespan_pass_the_outermost_layer() -> None:
    from reyn_tools_mcp.serve_http_middleware import HttpOnly

    reached: list[str] = []

    async def app(scope, receive, send) -> None:
        reached.append(scope["type"])

    async def receive() -> dict:
        return {"type": "websocket.connect"}

    async def send(message) -> None:
        raise AssertionError(f"nothing is sent: {message}")

    guarded = HttpOnly(app)
    for kind in ("websocket", "webtransport", "http", "lifespan"):
        await asyncio.wait_for(guarded({"type": kind}, receive, send), 5)
    assert reached == ["http", "lifespan"]
