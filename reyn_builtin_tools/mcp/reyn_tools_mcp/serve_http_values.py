"""``reyn mcp serve --http``: a request body bounded in JSON values (``--max-request-values``), counted
as it is read and before the SDK parses it — parsing costs per value, not per byte, so a body of tiny
values under ``--max-request-bytes`` would cost the server hundreds of MB and a stalled loop.

``RequestValueBound`` wraps the SDK's app (inside the count of requests, ``InFlightRequests``): it
reads the body, counting each part (``reyn_core.host.JsonValueCount``, linear, strings skipped); over
the bound the request is answered 413 naming it, logged, and the SDK never sees it; else the body is
handed on as read. It holds at most ``--max-request-bytes`` and one part: past that it stops and
hands on what it read, and the SDK's own body limit answers 413. A body that is not UTF-8 JSON (the
SDK parses bytes, detecting UTF-16 and UTF-32, where the count read UTF-8; or one with a byte order
mark) is answered 415 naming what it is, from its first bytes, and the SDK never sees it either.
"""

from __future__ import annotations

import logging
from typing import Any

from reyn_core.host import JsonValueCount, NotUtf8Json

from .serve_http_middleware import ASGIApp, Message, Receive, Scope, Send, plain_response

log = logging.getLogger("reyn.mcp.serve")


class RequestValueBound:
    """ASGI middleware: an HTTP request body of more than ``limit`` JSON values is answered 413; a body
    over ``max_body`` bytes is left to the SDK's limit (module docstring)."""

    def __init__(self, app: ASGIApp, limit: int, max_body: int) -> None:
        self.app = app
        self.limit = limit
        self.max_body = max_body

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope.get("type") != "http":
            await self.app(scope, receive, send)
            return
        read: list[Message] = []
        count, size = JsonValueCount(), 0
        while True:
            message = await receive()
            read.append(message)
            if message.get("type") != "http.request":
                break
            body = message.get("body", b"")
            size += len(body)
            try:
                over = count.add(body) > self.limit
            except NotUtf8Json as exc:
                await _refuse(send, 415, f"the request body is {exc}, and was refused unparsed")
                return
            if over:
                what = (
                    f"a request body of over {self.limit} JSON values (--max-request-values) "
                    "was refused unparsed"
                )
                await _refuse(send, 413, what)
                return
            if not message.get("more_body", False) or size > self.max_body:
                break

        async def replay() -> Any:
            return read.pop(0) if read else await receive()

        await self.app(scope, replay, send)


async def _refuse(send: Send, status: int, what: str) -> None:
    log.warning("%s", what)
    await plain_response(send, status, what.encode(), [])


__all__ = ["RequestValueBound"]
