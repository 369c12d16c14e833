"""``reyn mcp serve --http HOST:PORT``: streamable HTTP at ``/mcp``, fail closed.

- Loopback by default. A non-loopback bind is refused unless a bearer token is configured
  (``--auth-token-env VAR``); a wildcard bind (``0.0.0.0``, ``::``) also needs ``--allow-host``.
- With a token, every request needs ``Authorization: Bearer <token>`` (constant-time compare), else
  401 — whatever the address.
- ``Host`` (and a browser's ``Origin``) must name this server: DNS rebinding protection from the
  SDK's transport security, with an allow-list computed from the bind address and ``--allow-host``.
- Request bodies are bounded (``--max-request-bytes``, 413; ``--max-request-values`` JSON values,
  413, counted before they are parsed: ``serve_http_values``), requests being answered and calls
  running too (``--max-connections``, 503: a call counts until it ends, even once its client hung
  up, and a cancelled one until its tool's thread ends; the user's answers to what the server asked
  are not refused; the sessions' standing streams are not counted: ``--max-sessions`` bounds them), sessions
  (``--max-sessions``, 503) and their idle time (``--session-idle-timeout``), and tool calls run
  at most ``--max-concurrent-calls`` at once.
  Open connections are capped at the sum of both plus ``CONNECTION_MARGIN``: one beyond is closed
  before a byte of it is read (headers or not), and one whose request (head and body) is not
  complete within ``--header-timeout`` (after it opened, or after its previous response) is closed,
  and one whose client takes none of its waiting answer within ``--send-timeout``.
- Only HTTP is served: a websocket upgrade is answered as the plain HTTP request it is (token
  first), and any other kind of ASGI connection is refused.
- SIGTERM/SIGINT: the stop both transports share (``serve_stop``): new calls are refused, running
  calls get ``--shutdown-grace`` seconds, then the server closes and cancels the rest; a call whose
  sync tool's thread still runs then is abandoned and the process exits ``EXIT_ABANDONED``.

The options are declared and checked in ``serve_http_options``; this module builds the app from
them and runs it.
"""

from __future__ import annotations

import contextlib
import logging
import math
from collections.abc import Iterator
from typing import Any, NoReturn

from .serve_http_middleware import ASGIApp, BearerTokenGuard, HttpOnly, InFlightRequests
from .serve_http_options import MCP_PATH, HttpOptions
from .serve_http_protocol import capped_protocol
from .serve_http_values import RequestValueBound
from .serve_stop import StopSignals, closed, run_until_stopped, wait_for_calls

log = logging.getLogger("reyn.mcp.serve")


def build_http_app(server: Any, options: HttpOptions) -> tuple[ASGIApp, InFlightRequests]:
    """The ASGI app and its count of requests and calls: the SDK's streamable HTTP transport at
    ``/mcp`` with transport security (Host and Origin allow-lists, body limit), inside the count
    (``--max-connections``), inside the bearer-token guard when a token is configured — so a
    request without the token is refused before the count reads any of its body — inside
    ``HttpOnly``, outermost: no other kind of connection than HTTP reaches any of them."""
    from mcp.server.transport_security import TransportSecuritySettings

    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=list(options.allowed_hosts),
        allowed_origins=list(options.allowed_origins),
    )
    app: ASGIApp = server.streamable_http_app(
        streamable_http_path=MCP_PATH,
        transport_security=security,
        max_request_body_size=options.max_request_bytes,
        host=options.host,
        stateless_http=options.stateless,
        json_response=options.json_response,
        max_sessions=options.max_sessions,
        session_idle_timeout=options.session_idle_timeout_s,
    )
    app = RequestValueBound(app, options.max_request_values, options.max_request_bytes)
    in_flight = InFlightRequests(
        app, limit=options.max_connections, max_body=options.max_request_bytes, stateless=options.stateless
    )
    return HttpOnly(BearerTokenGuard(in_flight, options.token) if options.token else in_flight), in_flight


GRACEFUL_CLOSE_S = 1
"""How long the server's close waits for open connections to end before cancelling what they run."""

CONNECTION_MARGIN = 16
"""Open connections allowed beyond ``--max-connections`` + ``--max-sessions`` (idle keep-alive ones)."""


def open_connection_cap(options: HttpOptions) -> int:
    """The most connections open at once; a new one beyond is closed at once, before any byte is read."""
    return options.max_connections + options.max_sessions + CONNECTION_MARGIN


def serve_http(server: Any, served: Any, options: HttpOptions) -> NoReturn:
    """Run the HTTP server until SIGTERM/SIGINT, then stop as ``serve_stop`` says, and exit."""
    log.info(
        "listening on %s (%s)",
        options.url,
        "bearer token required" if options.token else "loopback, no token",
    )
    # a stateless server's calls belong to no session: it never checks an Mcp-Session-Id header
    served.transport = "http-stateless" if options.stateless else "http"

    async def serving() -> int:
        return 0 if await run_until_signalled(server, served, options) else 2

    run_until_stopped(served, serving())  # exits (the status: 0, 2 when it could not start, or 3)


async def _serve(http: Any) -> None:
    """uvicorn's serve, without its ``sys.exit(1)`` when it cannot start (a port in use): that ends
    the event loop from inside a task (asyncio re-raises ``SystemExit``) before the stop could say
    why; here the server has not started, and ``run_until_signalled`` says so (exit 2)."""
    with contextlib.suppress(SystemExit):
        await http.serve()


async def run_until_signalled(server: Any, served: Any, options: HttpOptions) -> bool:
    """Serve until SIGTERM/SIGINT. Then new calls are refused, running calls get
    ``shutdown_grace_s`` to finish (a second signal stops waiting), and whatever still runs is
    cancelled when the server closes (``serve_stop``). Returns whether the server started."""
    import asyncio

    import uvicorn

    class _Server(uvicorn.Server):
        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:  # the signals are ours (below)
            yield

    app, in_flight = build_http_app(server, options)
    config = uvicorn.Config(
        app,
        host=options.host,
        port=options.port,
        log_level="warning",
        access_log=False,
        lifespan="on",
        # No limit_concurrency: uvicorn's counts open connections (idle keep-alive ones and the
        # sessions' standing streams too), so 48 clients hit a cap of 64, and it answers 503 only
        # once a request's headers are in, so header-less sockets are never refused.
        # InFlightRequests bounds the requests being answered, the SDK the sessions, and
        # capped_protocol the open connections (closed at once beyond, before any byte is read).
        http=capped_protocol(open_connection_cap(options), options.header_timeout_s, options.send_timeout_s),
        # no websocket protocol: an upgrade request is served as the plain HTTP request it is, so
        # the token and every other layer see it (with one, it reached the app unchecked)
        ws="none",
        # the --header-timeout deadline (capped_protocol) is the only close of an idle connection:
        # uvicorn's keep-alive timeout (5 s by default, httpx's own idle expiry too, so a client
        # reusing a connection raced its close) comes after it
        timeout_keep_alive=math.ceil(options.header_timeout_s) + 1,
        timeout_graceful_shutdown=GRACEFUL_CLOSE_S,
        server_header=False,
    )
    http = _Server(config)
    with StopSignals().installed() as signals:
        serving = asyncio.ensure_future(_serve(http))
        waiting = asyncio.ensure_future(signals.stop.wait())
        try:
            await asyncio.wait({serving, waiting}, return_when=asyncio.FIRST_COMPLETED)
            if signals.stop.is_set():
                drained = _drained_and_answered(served, in_flight)
                await wait_for_calls(
                    served, options.shutdown_grace_s, signals.hurry, "signal received", drained
                )
                http.should_exit = True
                # the close's own part first: uvicorn waits that long for open connections to end
                await closed(served, serving, GRACEFUL_CLOSE_S + options.shutdown_grace_s, signals)
            await serving
        finally:
            waiting.cancel()
    return bool(http.started)


async def _drained_and_answered(served: Any, in_flight: InFlightRequests) -> None:
    """No call runs and every answer has been sent (a refused late call's too)."""
    await served.drained()
    await in_flight.answered()
