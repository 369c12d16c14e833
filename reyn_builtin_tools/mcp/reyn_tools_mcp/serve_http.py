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
"""

from __future__ import annotations

import argparse
import contextlib
import ipaddress
import logging
import math
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, NoReturn

from .serve_http_middleware import ASGIApp, BearerTokenGuard, HttpOnly, InFlightRequests
from .serve_http_protocol import capped_protocol
from .serve_http_values import RequestValueBound
from .serve_stop import (
    DEFAULT_SHUTDOWN_GRACE_S,
    StopSignals,
    closed,
    grace_problem,
    run_until_stopped,
    wait_for_calls,
)

log = logging.getLogger("reyn.mcp.serve")

DEFAULT_MAX_REQUEST_BYTES = 4 * 1024 * 1024
MIN_REQUEST_BYTES = 1024
DEFAULT_MAX_REQUEST_VALUES = 200_000  # as the mcp pack's max_message_values (docs/decisions.md)
MIN_REQUEST_VALUES = 1000
DEFAULT_MAX_CONNECTIONS = 256
DEFAULT_MAX_SESSIONS = 256
DEFAULT_SESSION_IDLE_TIMEOUT_S = 1800.0
DEFAULT_HEADER_TIMEOUT_S = 10.0
DEFAULT_SEND_TIMEOUT_S = 10.0
MIN_TOKEN_LENGTH = 16
MCP_PATH = "/mcp"


class HttpOptionsError(ValueError):
    """The HTTP options are unusable or unsafe; the message says which and what to do."""


@dataclass(frozen=True)
class HttpOptions:
    """A checked HTTP configuration (see ``http_options``)."""

    host: str
    port: int
    token: str | None
    allowed_hosts: tuple[str, ...]
    allowed_origins: tuple[str, ...]
    max_request_bytes: int = DEFAULT_MAX_REQUEST_BYTES
    max_request_values: int = DEFAULT_MAX_REQUEST_VALUES
    max_connections: int = DEFAULT_MAX_CONNECTIONS
    max_sessions: int = DEFAULT_MAX_SESSIONS
    session_idle_timeout_s: float = DEFAULT_SESSION_IDLE_TIMEOUT_S
    shutdown_grace_s: float = DEFAULT_SHUTDOWN_GRACE_S
    header_timeout_s: float = DEFAULT_HEADER_TIMEOUT_S
    send_timeout_s: float = DEFAULT_SEND_TIMEOUT_S
    stateless: bool = False
    json_response: bool = False

    @property
    def url(self) -> str:
        """Where clients connect."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}{MCP_PATH}"


def add_http_options(p: argparse.ArgumentParser) -> None:
    """The HTTP options of ``reyn mcp serve`` (and ``--max-request-bytes``, which bounds both
    transports' requests: an HTTP body, a stdio line)."""
    p.add_argument(
        "--max-request-bytes",
        type=int,
        default=DEFAULT_MAX_REQUEST_BYTES,
        metavar="N",
        help="largest request: an HTTP body, else 413; a stdin line, else a JSON-RPC error -32600 and "
        f"the line is skipped (default {DEFAULT_MAX_REQUEST_BYTES}; at least {MIN_REQUEST_BYTES})",
    )
    p.add_argument(
        "--max-request-values",
        type=int,
        default=DEFAULT_MAX_REQUEST_VALUES,
        metavar="N",
        help="most JSON values (scalars, containers, keys) in a request, counted before it is parsed: "
        "an HTTP body, else 413; a stdin line, else a JSON-RPC error -32600 and the line is skipped "
        f"(default {DEFAULT_MAX_REQUEST_VALUES}; at least {MIN_REQUEST_VALUES})",
    )
    g = p.add_argument_group("streamable HTTP (--http)")
    g.add_argument(
        "--auth-token-env",
        metavar="VAR",
        help="require 'Authorization: Bearer <token>', the token read from this environment variable "
        f"(at least {MIN_TOKEN_LENGTH} characters); needed for a non-loopback bind",
    )
    g.add_argument(
        "--allow-host",
        action="append",
        default=[],
        metavar="NAME[:PORT]",
        help="another Host header value to accept (e.g. the name clients or a proxy use); repeatable",
    )
    g.add_argument(
        "--max-connections",
        type=int,
        default=DEFAULT_MAX_CONNECTIONS,
        help="requests being answered and tool calls running at once (a call counts until it ends, "
        "even if its client hung up), else 503; the sessions' standing "
        f"GET streams are not counted (--max-sessions bounds them) (default {DEFAULT_MAX_CONNECTIONS})",
    )
    g.add_argument(
        "--max-sessions",
        type=int,
        metavar="N",
        help=f"open sessions (each may hold one standing GET stream); a new session over it gets 503 "
        f"(default {DEFAULT_MAX_SESSIONS}; not with --stateless)",
    )
    g.add_argument(
        "--session-idle-timeout",
        type=float,
        metavar="SECONDS",
        help="close a session after this long without a request in flight or an open standing stream; its "
        f"client must initialize again (default {DEFAULT_SESSION_IDLE_TIMEOUT_S:g}; not with --stateless)",
    )
    g.add_argument(
        "--header-timeout",
        type=float,
        default=DEFAULT_HEADER_TIMEOUT_S,
        metavar="SECONDS",
        help="close a connection whose request (its head and its body) is not complete this "
        "long after it opened or after its previous response "
        f"(default {DEFAULT_HEADER_TIMEOUT_S:g})",
    )
    g.add_argument(
        "--send-timeout",
        type=float,
        default=DEFAULT_SEND_TIMEOUT_S,
        metavar="SECONDS",
        help="close a connection whose client takes none of the answer waiting for it for this long "
        "(its request's place under --max-connections is then free) "
        f"(default {DEFAULT_SEND_TIMEOUT_S:g})",
    )
    g.add_argument(
        "--stateless",
        action="store_true",
        help="keep no session between requests, so any instance behind a load balancer can answer any "
        "request (no standing stream; a deferred tool's answer must come back to the same instance)",
    )
    g.add_argument(
        "--json-response",
        action="store_true",
        help="answer each request with one JSON body instead of an event stream (for proxies that "
        "buffer; progress and log notifications are then not delivered)",
    )


def split_host_port(value: str) -> tuple[str, int]:
    """``HOST:PORT`` (``[v6]:PORT`` for IPv6) → host, port."""
    host, sep, port_text = value.rpartition(":")
    if not sep or not host or not port_text.isdigit():
        raise HttpOptionsError(f"--http {value!r}: expected HOST:PORT, e.g. 127.0.0.1:8765 or [::1]:8765")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    elif ":" in host:
        raise HttpOptionsError(f"--http {value!r}: write an IPv6 address in brackets, e.g. [::1]:8765")
    port = int(port_text)
    if not 1 <= port <= 65535:
        raise HttpOptionsError(f"--http {value!r}: the port must be 1-65535")
    return host, port


def is_loopback(host: str) -> bool:
    """``localhost`` or a loopback address."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _is_wildcard(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_unspecified
    except ValueError:
        return False


# the names a client of the machine's usual loopback may write; any of them reaches these binds
_USUAL_LOOPBACK = ("localhost", "127.0.0.1", "::1")


def bound_host_values(host: str, port: int) -> list[str]:
    """The Host header values that name the bound address: the address itself (as a client writes it
    in a URL: ``[v6]:port``, canonical form), and for the usual loopback (``localhost``, 127.0.0.1,
    ::1) each of the three names. The allow-list follows the bind, so every address accepted as a
    bind is one its own clients can reach (``127.0.0.2`` is 127.0.0.2, not 127.0.0.1). A wildcard
    bind names no host: ``--allow-host`` does."""
    if _is_wildcard(host):
        return []
    try:
        canonical = ipaddress.ip_address(host).compressed
    except ValueError:
        canonical = host.lower()
    names = [canonical]
    if canonical in _USUAL_LOOPBACK:
        names += [n for n in _USUAL_LOOPBACK if n != canonical]
    return list(dict.fromkeys(f"[{n}]:{port}" if ":" in n else f"{n}:{port}" for n in names))


def _host_values(name: str, port: int) -> list[str]:
    """Host header values an ``--allow-host`` entry admits: as given with a port, else with this
    server's port and bare (a proxy in front on 80/443 sends no port)."""
    if re.fullmatch(r"\[[^\]]+\]:\d+|[^:\[\]]+:\d+", name):
        return [name]
    bare = name.strip("[]")
    shown = f"[{bare}]" if ":" in bare else bare
    return [f"{shown}:{port}", shown]


def http_options(args: argparse.Namespace) -> HttpOptions:
    """Check the HTTP options; ``HttpOptionsError`` when they are unusable or unsafe (fail closed)."""
    host, port = split_host_port(args.http)
    token = None
    if args.auth_token_env:
        token = os.environ.get(args.auth_token_env)
        if not token:
            raise HttpOptionsError(f"--auth-token-env names {args.auth_token_env!r}, which is not set")
        if len(token) < MIN_TOKEN_LENGTH or token != token.strip():
            raise HttpOptionsError(
                f"the token in ${args.auth_token_env} must be at least {MIN_TOKEN_LENGTH} characters "
                "without surrounding blanks"
            )
    if not is_loopback(host) and token is None:
        raise HttpOptionsError(
            f"refusing to serve on {host} (not a loopback address) without a bearer token: "
            "pass --auth-token-env VAR with a token in that variable, or bind 127.0.0.1"
        )
    if _is_wildcard(host) and not args.allow_host:
        raise HttpOptionsError(
            f"binding {host} accepts every address, so the Host header clients send cannot be guessed: "
            "pass --allow-host NAME (the name clients connect to), or bind one address"
        )
    for name, minimum in (
        ("--max-request-bytes", MIN_REQUEST_BYTES),
        ("--max-request-values", MIN_REQUEST_VALUES),
        ("--max-connections", 1),
        ("--max-sessions", 1),
    ):
        value = getattr(args, name[2:].replace("-", "_"), None)
        if value is not None and value < minimum:
            raise HttpOptionsError(f"{name} must be at least {minimum}")
    stateless = bool(getattr(args, "stateless", False))
    max_sessions = getattr(args, "max_sessions", None)
    idle = getattr(args, "session_idle_timeout", None)
    if stateless and (max_sessions is not None or idle is not None):
        raise HttpOptionsError(
            "--max-sessions and --session-idle-timeout bound sessions, and --stateless keeps none: "
            "drop them, or serve without --stateless"
        )
    if idle is not None and not (math.isfinite(idle) and idle > 0):
        raise HttpOptionsError("--session-idle-timeout must be a positive number of seconds")
    if (problem := grace_problem(args.shutdown_grace)) is not None:
        raise HttpOptionsError(problem)
    header_timeout = getattr(args, "header_timeout", DEFAULT_HEADER_TIMEOUT_S)
    send_timeout = getattr(args, "send_timeout", DEFAULT_SEND_TIMEOUT_S)
    for name, value in (("--header-timeout", header_timeout), ("--send-timeout", send_timeout)):
        if not (math.isfinite(value) and value > 0):
            raise HttpOptionsError(f"{name} must be a positive number of seconds")
    hosts = bound_host_values(host, port)
    for name in args.allow_host:
        hosts += _host_values(name, port)
    hosts = list(dict.fromkeys(hosts))
    origins = [f"{scheme}://{h}" for h in hosts for scheme in ("http", "https")]
    return HttpOptions(
        host=host,
        port=port,
        token=token,
        allowed_hosts=tuple(hosts),
        allowed_origins=tuple(origins),
        max_request_bytes=args.max_request_bytes,
        max_request_values=getattr(args, "max_request_values", DEFAULT_MAX_REQUEST_VALUES),
        max_connections=args.max_connections,
        max_sessions=DEFAULT_MAX_SESSIONS if max_sessions is None else max_sessions,
        session_idle_timeout_s=DEFAULT_SESSION_IDLE_TIMEOUT_S if idle is None else idle,
        shutdown_grace_s=args.shutdown_grace,
        header_timeout_s=header_timeout,
        send_timeout_s=send_timeout,
        stateless=stateless,
        json_response=bool(getattr(args, "json_response", False)),
    )


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
