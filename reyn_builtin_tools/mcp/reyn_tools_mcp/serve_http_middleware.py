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
ANSWERS = "reyn.answers"
"""The ASGI scope key under which ``InFlightRequests`` leaves its ``expect_answer`` (``answer_expected``)."""
ANSWER_MAX_BYTES = 256 * 1024
"""The largest body that may pass the cap as answers (never more than ``--max-request-bytes``)."""
ANSWER_READ_S = 10.0
"""How long a body that may be answers is read for, at the cap, before it is refused."""


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
    answered gets 503 with ``Retry-After`` and is not handed to the server — except the user's
    answers the server is waiting for (``expect_answer``): a call waiting for its user holds a place,
    and its answer comes in a POST of its own, so at a cap of N, N calls waiting for answers would
    refuse their own answers. At the cap a body is let through uncounted only when it is nothing but
    JSON-RPC responses (a result or an error, no method) to ids the server is waiting on, at most one
    request at a time per id, at most ``ANSWER_MAX_BYTES`` (and ``max_body``) read within
    ``ANSWER_READ_S``; anything else — a request, a mixed batch, an unknown id, a larger or slower
    body — counts and is refused. The ids are the server's own unguessable ones. And a stopping server
    waits for the count to reach zero (``answered``): a call that finished its work has finished only
    when its answer left — else a loaded machine closes the connection under a result that was about
    to be written.
    """

    def __init__(self, app: ASGIApp, limit: int | None = None, max_body: int = ANSWER_MAX_BYTES) -> None:
        import asyncio

        self.app = app
        self.limit = limit
        self.max_answer_bytes = min(max_body, ANSWER_MAX_BYTES)
        self._awaited: dict[str, bool] = {}  # an id the server waits on → an answer to it is in
        self.refused = 0
        self._count = 0
        self._idle = asyncio.Event()
        self._idle.set()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope.get("type") != "http" or scope.get("method") == "GET":
            await self.app(scope, receive, send)
            return
        if self.limit is not None and self._count >= self.limit:
            answers = await self._answers(scope, receive) if self._awaited else None
            if answers is not None:  # the user's answers to what the server asked: never refused
                await self._pass_answers(scope, receive, send, *answers)
                return
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
        scope[ANSWERS] = self.expect_answer
        try:
            await self.app(scope, receive, send_then_release)
        finally:
            request_done()

    def expect_answer(self, request_id: str) -> Callable[[], None]:
        """The server sent a request (``request_id``, its own unguessable id) and waits for the
        answer: a body of responses to it passes the cap until the returned function is called."""
        self._awaited[request_id] = False
        return _once(lambda: self._awaited.pop(request_id, None))

    async def _answers(self, scope: Scope, receive: Receive) -> tuple[bytes, list[str]] | None:
        """The body and its ids when it is nothing but responses to awaited ids, none of them being
        answered now (read bounded in size and time); None otherwise (the request counts)."""
        import asyncio

        for key, value in scope.get("headers", ()):
            if key.lower() == b"content-length" and not (
                value.isdigit() and int(value) <= self.max_answer_bytes
            ):
                return None  # said to be larger than answers may be: not read
        body = bytearray()
        try:
            async with asyncio.timeout(ANSWER_READ_S):
                while True:
                    message = await receive()
                    if message.get("type") != "http.request":
                        return None
                    body += message.get("body", b"")
                    if len(body) > self.max_answer_bytes:
                        return None
                    if not message.get("more_body", False):
                        break
        except TimeoutError:
            return None
        ids = _response_ids(bytes(body))
        if ids is None or any(self._awaited.get(i) is not False for i in ids):
            return None
        return bytes(body), ids

    async def _pass_answers(
        self, scope: Scope, receive: Receive, send: Send, body: bytes, ids: list[str]
    ) -> None:
        for i in ids:
            self._awaited[i] = True
        replayed = False

        async def receive_again() -> Message:
            nonlocal replayed
            if replayed:
                return await receive()
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}

        try:
            await self.app(scope, receive_again, send)
        finally:
            for i in ids:
                if i in self._awaited:
                    self._awaited[i] = False

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


def _response_ids(body: bytes) -> list[str] | None:
    """The ids of ``body`` when it is one JSON-RPC response or a batch of nothing else (each a
    ``result`` or an ``error``, no ``method``, a string id, no id twice); None otherwise."""
    import json

    try:
        decoded = json.loads(body)
    except (ValueError, RecursionError):
        return None
    items = decoded if isinstance(decoded, list) else [decoded]
    ids = []
    for item in items:
        if (
            not isinstance(item, dict)
            or item.get("jsonrpc") != "2.0"
            or "method" in item
            or ("result" in item) == ("error" in item)
            or not isinstance(item.get("id"), str)
            or not set(item) <= {"jsonrpc", "id", "result", "error"}
        ):
            return None
        ids.append(item["id"])
    return ids if ids and len(set(ids)) == len(ids) else None


def answer_expected(request: Any) -> Callable[[str], Callable[[], None]] | None:
    """``InFlightRequests.expect_answer`` of the HTTP request a call came through (None when it came
    through no such request: stdio, in process): the server is about to ask its client under an id
    of its own and wait for the answer."""
    scope = getattr(getattr(request, "request", None), "scope", None)
    expect = scope.get(ANSWERS) if isinstance(scope, dict) else None
    return expect if callable(expect) else None


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


__all__ = [
    "ASGIApp",
    "BearerTokenGuard",
    "InFlightRequests",
    "answer_expected",
    "hold_place",
    "plain_response",
]
