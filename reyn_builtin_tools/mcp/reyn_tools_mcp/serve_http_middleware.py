"""The ASGI layers ``reyn mcp serve --http`` puts around the SDK's transport: HTTP only, the
bearer-token guard and the count of requests being answered and calls running (the
``--max-connections`` bound and the shutdown wait)."""

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


class HttpOnly:
    """ASGI middleware, outermost: only ``http`` and ``lifespan`` scopes reach the app; any other
    (``websocket``, a kind a later server adds) is refused unanswered, never passed through. The
    server makes none (uvicorn runs with ``ws="none"``): this holds if that ever changes."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope.get("type") not in ("http", "lifespan"):
            log.warning("refused an ASGI %r connection: only HTTP is served", scope.get("type"))
            return
        await self.app(scope, receive, send)


class BearerTokenGuard:
    """ASGI middleware: every HTTP request needs ``Authorization: Bearer <token>``, else 401.

    The comparison is constant-time (``hmac.compare_digest`` on bytes) so the token cannot be
    guessed byte by byte from response times. Lifespan events pass through; nothing else does
    without the token.
    """

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self._expected = b"Bearer " + token.encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope.get("type") != "lifespan":
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
ANSWER_MAX_VALUES = 10_000
"""The most JSON values a body passing the cap as answers may hold (counted before it is parsed)."""
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
    answered gets 503 with ``Retry-After`` and is not handed to the server — except a message *about*
    a request the server already holds for the same session (``mcp-session-id``): the user's answer
    to a question the server asked (``expect_answer``; a call waiting for its user holds a place and
    its answer comes in a POST of its own, so at a cap of N, N calls waiting for answers would refuse
    their own answers), and the client's ``notifications/cancelled`` of one of its running calls
    (``hold``; else at the cap a client could not stop its own call). One rule: at the cap a body
    passes uncounted only when it is one JSON-RPC message (no batch) and that is a response (a result
    or an error, no method) to an id the server waits on for that session, at most one request at a
    time per id, or a cancellation of a request that session has running; it is read only when its
    session (``mcp-session-id``) has an id awaited or running, at most ``ANSWER_MAX_BYTES`` (and
    ``max_body``) within ``ANSWER_READ_S``, and no more of one session's bodies at once than that
    session holds ids (the rest are refused unread: one session's unfinished bodies never spend
    another's reads); anything else — a request, a batch, a POST without a session, an unknown id,
    another session's id, a larger or slower body — counts and is refused. A ``stateless`` server
    (each POST a session of its own) ties no message to a held request: none passes. The asks' ids are the
    server's own unguessable ones. A bearer token, when one is required, is checked before this
    layer (``BearerTokenGuard`` outside it): a request without it is refused before any body is read.
    And a stopping server waits for the count to reach zero (``answered``): a call that finished its
    work has finished only when its answer left — else a loaded machine closes the connection under
    a result that was about to be written.
    """

    def __init__(
        self,
        app: ASGIApp,
        limit: int | None = None,
        max_body: int = ANSWER_MAX_BYTES,
        stateless: bool = False,
    ) -> None:
        import asyncio

        self.app = app
        self.limit = limit
        self.max_answer_bytes = min(max_body, ANSWER_MAX_BYTES)
        # (session, id) the server waits on → an answer to it is in (the session: None when none)
        self._awaited: dict[tuple[str | None, str], bool] = {}
        self._held: dict[tuple[str | None, Any], int] = {}  # (session, request id) → calls running
        # sessions → their bodies being read at the cap as messages about their held requests
        self._reading: dict[str, int] = {}
        # stateless: each POST is a session of its own, so a message can be about no held request
        self.stateless = stateless
        self.refused = 0
        self._count = 0
        self._idle = asyncio.Event()
        self._idle.set()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope.get("type") != "http" or scope.get("method") == "GET":
            await self.app(scope, receive, send)
            return
        session = _session_id(scope)
        if self.limit is not None and self._count >= self.limit:
            about = await self._about_held(scope, receive, session)
            if about is not None:  # about requests this session has running: never refused
                await self._pass_about_held(scope, receive, send, session, *about)
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

        def hold(request_id: Any = None) -> Callable[[], None]:
            """A call starts under this request: the place is kept until the call ends too (and a
            cancellation of ``request_id`` from this session passes the cap meanwhile)."""
            nonlocal holders
            if not holders:  # the request is already gone: the running call takes a place again
                self._take()
            holders += 1
            key = (session, request_id)
            self._held[key] = self._held.get(key, 0) + 1

            def ended() -> None:
                if self._held.get(key, 0) <= 1:
                    self._held.pop(key, None)
                else:
                    self._held[key] -= 1
                let_go()

            return _once(ended)

        request_done = _once(let_go)

        async def send_then_release(message: Message) -> None:
            await send(message)
            if message.get("type") == "http.response.body" and not message.get("more_body", False):
                request_done()  # the answer has left in full: the request no longer holds the place

        scope[PLACE] = hold
        scope[ANSWERS] = lambda request_id: self.expect_answer(request_id, session)
        try:
            await self.app(scope, receive, send_then_release)
        finally:
            request_done()

    def expect_answer(self, request_id: str, session: str | None = None) -> Callable[[], None]:
        """The server sent a request (``request_id``, its own unguessable id) to ``session`` and waits
        for the answer: a body of responses to it from that session passes the cap until the
        returned function is called."""
        key = (session, request_id)
        self._awaited[key] = False
        return _once(lambda: self._awaited.pop(key, None))

    async def _about_held(
        self, scope: Scope, receive: Receive, session: str | None
    ) -> tuple[bytes, list[str]] | None:
        """The body and the answered ids when it is nothing but messages about requests held for
        ``session`` (read bounded in size, time and number); None otherwise (the request counts)."""
        import asyncio

        if session is None or self.stateless:
            return None  # no session to tie it to: nothing it could be about is held
        held = sum(1 for s, _ in self._awaited if s == session) + sum(
            1 for s, _ in self._held if s == session
        )
        if self._reading.get(session, 0) >= held:
            # none held for this session, or as many of its bodies being read as its ids held: this
            # one is not read (another session's unfinished bodies never spend this one's reads)
            return None
        for key, value in scope.get("headers", ()):
            if key.lower() == b"content-length" and not (
                value.isdigit() and int(value) <= self.max_answer_bytes
            ):
                return None  # said to be larger than answers may be: not read
        body = bytearray()
        self._reading[session] = self._reading.get(session, 0) + 1
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
        finally:
            if self._reading[session] <= 1:
                del self._reading[session]
            else:
                self._reading[session] -= 1
        about = _messages_about(bytes(body))
        if about is None:
            return None
        answers, cancelled = about
        if any(self._awaited.get((session, i)) is not False for i in answers):
            return None
        if any((session, i) not in self._held for i in cancelled):
            return None
        return bytes(body), answers

    async def _pass_about_held(
        self, scope: Scope, receive: Receive, send: Send, session: str | None, body: bytes, ids: list[str]
    ) -> None:
        for i in ids:
            self._awaited[(session, i)] = True
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
                if (session, i) in self._awaited:
                    self._awaited[(session, i)] = False

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


def _once(action: Callable[[], object]) -> Callable[[], None]:
    done = False

    def run() -> None:
        nonlocal done
        if not done:
            done = True
            action()

    return run


def _session_id(scope: Scope) -> str | None:
    for key, value in scope.get("headers", ()):
        if key.lower() == b"mcp-session-id":
            return bytes(value).decode("latin-1")
    return None


_CANCELLED = "notifications/cancelled"


def _messages_about(body: bytes) -> tuple[list[str], list[Any]] | None:
    """When ``body`` is one JSON-RPC message (not a batch: the SDK serves none, it answers one with
    400), either a response (a ``result`` or an ``error``, no ``method``, a string id) or a
    ``notifications/cancelled`` naming a ``requestId`` (a string or an integer): the response's id
    and the cancelled id (one of the two lists holds one id). None for anything else."""
    from reyn_core.host import read_json

    # over ANSWER_MAX_VALUES (TooManyJsonValues), not UTF-8 JSON (NotUtf8Json: ``RequestValueBound``
    # words it), NaN or Infinity (NotJsonNumber): all ValueErrors, none of them an answer
    try:
        item = read_json(body, ANSWER_MAX_VALUES)
    except (ValueError, RecursionError):
        return None
    if not isinstance(item, dict) or item.get("jsonrpc") != "2.0":
        return None
    if item.get("method") == _CANCELLED and set(item) <= {"jsonrpc", "method", "params"}:
        params = item.get("params")
        target = params.get("requestId") if isinstance(params, dict) else None
        if (
            not isinstance(params, dict)
            or not set(params) <= {"requestId", "reason"}
            or not isinstance(params.get("reason", ""), str)
            or isinstance(target, bool)
            or not isinstance(target, (str, int))
        ):
            return None
        return [], [target]
    if (
        "method" in item
        or ("result" in item) == ("error" in item)
        or not isinstance(item.get("id"), str)
        or not set(item) <= {"jsonrpc", "id", "result", "error"}
    ):
        return None
    return [item["id"]], []


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
    return hold(getattr(request, "request_id", None)) if callable(hold) else None


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
    "HttpOnly",
    "InFlightRequests",
    "answer_expected",
    "hold_place",
    "plain_response",
]
