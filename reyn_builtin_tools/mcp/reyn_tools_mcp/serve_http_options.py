"""The options of ``reyn mcp serve --http``, checked fail closed: ``add_http_options`` declares them,
``http_options`` turns them into an ``HttpOptions`` or refuses them with an ``HttpOptionsError``
saying which and what to do.

- Loopback by default: a non-loopback bind needs a bearer token (``--auth-token-env VAR``), a
  wildcard bind (``0.0.0.0``, ``::``) also ``--allow-host``.
- The Host allow-list (and the Origins from it) follows the bind address (``bound_host_values``)
  plus each ``--allow-host``.
- Every bound (``--max-request-bytes``, ``--max-request-values``, ``--max-connections``,
  ``--max-sessions``, the timeouts, ``--shutdown-grace``) has a floor or must be finite and positive.
"""

from __future__ import annotations

import argparse
import ipaddress
import math
import os
import re
from dataclasses import dataclass

from .serve_stop import DEFAULT_SHUTDOWN_GRACE_S, grace_problem

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
