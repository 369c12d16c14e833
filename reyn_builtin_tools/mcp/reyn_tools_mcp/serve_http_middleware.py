"""The ASGI layers ``reyn mcp serve --http`` puts around the SDK's transport: the bearer-token guard
and the count of requests being answered and calls running (the ``--max-connections`` bound and the
shutdown wait)."""

from __future__ import annotations

import hmac
import logging
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

log = logging.getLogger("reyn.mcp.serve")

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


class BearerTokenGuard:
    """ASGI middleware: every HTTP request needs ``Authorization: Bearer <token>``, else 401.

    The comparison is constant-time (``hmac.compare_digest`` on bytes) so the token cannot be
    guessed byte by byte from response times. Lifespan events pass through.
    """

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self._expected = b"Bearer " + token.encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope.get("type") == "http":
            given = b""
            for key, value in scope.get("headers", ()):
                if key.lower() == b"authorization":
                    given = bytes(value)
                    break
            if not hmac.compare_digest(given, self._expected):
                await plain_response(
                    send, 401, b"missing or wrong bearer token", [(b"www-authenticate", b"Bearer")]
                )
                return
        await self.app(scope, receive, send)


PLACE = "reyn.place"
"""The ASGI scope key under which ``InFlightRequests`` leaves a request's ``hold`` (``hold_place``)."""


class InFlightRequests:
    """ASGI middleware counting the places taken: a request whose response is not yet sent — it holds
    one HTTP connection while it is answered — and a tool call still running, whether or not its
    request is still open (``hold_place``: the SDK does not cancel a call whose client hung up, so a
    count of open requests alone let one client run any number of calls at a cap of 1). One count:
    a call holds its request's place (a request ended under a running call takes one again). The
    ``GET`` requests are not counted: a session's standing event stream lasts as long as the session
    (the SDK allows one per session, so ``--max-sessions`` bounds them) and every other ``GET`` is
    refused at once.

    A request stops counting when the last part of its response is handed to the connection (the
    body message without ``more_body``), in the same step, or when the server's handling of it ends
    without one. Not when the ASGI call returns: the SDK's streamed answer returns a moment after its
    last byte left, and the client, which has its answer, may send its next request in that moment
    (on a loaded machine it did, and met its own previous request's place).

    Two uses. ``limit`` (``--max-connections``): a request arriving while ``limit`` are being
    answered gets 503 with ``Retry-After`` and is not handed to the server. And a stopping server
    waits for the count to reach zero (``answered``): a call that finished its work has finished only
    when its answer left — else a loaded machine closes the connection under a result that was about
    to be written.
    """

    def __init__(self, app: ASGIApp, limit: int | None = None) -> None:
        import asyncio

        self.app = app
        self.limit = limit
        self.refused = 0
        self._count = 0
        self._idle = asyncio.Event()
        self._idle.set()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope.get("type") != "http" or scope.get("method") == "GET":
            await self.app(scope, receive, send)
            return
        if self.limit is not None and self._count >= self.limit:
            self.refused += 1
            if self.refused == 1 or self.refused % 1000 == 0:
                log.warning(
                    "refused %d request(s): %d requests or calls already running (--max-connections)",
                    self.refused,
                    self.limit,
                )
            message = f"server busy: {self.limit} requests or calls are running (--max-connections); retry"
            await plain_response(send, 503, message.encode(), [(b"retry-after", b"1")])
            return
        holders = 1  # the request; one more for each call started under it (hold_place)
        self._take()

        def let_go() -> None:
            nonlocal holders
            holders -= 1
            if not holders:
                self._give()

        def hold() -> Callable[[], None]:
            """A call starts under this request: the place is kept until the call ends too."""
            nonlocal holders
            if not holders:  # the request is already gone: the running call takes a place again
                self._take()
            holders += 1
            return _once(let_go)

        request_done = _once(let_go)

        async def send_then_release(message: Message) -> None:
            await send(message)
            if message.get("type") == "http.response.body" and not message.get("more_body", False):
                request_done()  # the answer has left in full: the request no longer holds the place

        scope[PLACE] = hold
        try:
            await self.app(scope, receive, send_then_release)
        finally:
            request_done()

    def _take(self) -> None:
        self._count += 1
        self._idle.clear()

    def _give(self) -> None:
        self._count -= 1
        if not self._count:
            self._idle.set()

    async def answered(self) -> None:
        """Wait until every counted request has its response sent and every counted call has ended."""
        await self._idle.wait()


def _once(action: Callable[[], None]) -> Callable[[], None]:
    done = False

    def run() -> None:
        nonlocal done
        if not done:
            done = True
            action()

    return run


def hold_place(request: Any) -> Callable[[], None] | None:
    """A tool call starts: keep the place its HTTP request took under ``InFlightRequests`` until the
    returned function is called (when the call ends), even if the request ends first. ``request`` is
    the SDK's request context; None when the call came through no such request (stdio, in process)."""
    scope = getattr(getattr(request, "request", None), "scope", None)
    hold = scope.get(PLACE) if isinstance(scope, dict) else None
    return hold() if callable(hold) else None


async def plain_response(send: Send, status: int, body: bytes, headers: list[tuple[bytes, bytes]]) -> None:
    """A short ``text/plain`` response (the refusals of these layers)."""
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"text/plain; charset=utf-8"), *headers],
        }
    )
    await send({"type": "http.response.body", "body": body})


__all__ = ["ASGIApp", "BearerTokenGuard", "InFlightRequests", "hold_place", "plain_response"]
