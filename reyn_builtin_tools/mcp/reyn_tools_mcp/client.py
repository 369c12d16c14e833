"""MCP sessions: opened lazily, reused, closed cleanly, reopened after a server dies.

All sessions live on one background event loop in a daemon thread (``SessionPool``), so they
outlive the event loop of any single caller (a test, a request, a sync host) and each session's
async context is entered and exited by the same task: every server connection has an *owner task*
that opens the transport and the ``ClientSession``, waits to be told to stop, and closes both.
Callers on any loop submit work to the pool loop and await the result.

A call that times out, or whose connection breaks, lets go of that connection: its owner is
stopped in the background (for stdio that stops the server process), and the next call opens a
fresh one once the old owner has stopped. Every wait on a server is bounded and nothing waits on a
server past its bound: a request (``tools/list``, ``tools/call``, a ``ping``) runs as a task that is
cancelled, not awaited, when its time is up — its cancellation may itself wait on the server (the
SDK's courtesy ``notifications/cancelled``, behind a writer the server does not read). So a timeout
is reported at its time whatever the server does; what is let go (``_closing``) is awaited before
the next owner starts (within that call's own timeout) and at ``close``. A server let go of because
it failed is stopped hard (``let_go.Hurry``: no graceful close, no ``DELETE``), so the next call
does not inherit its grace; only a healthy connection's close is graceful. At shutdown the pool's
budget is a bound: once it has run out, every server still running is killed and every task on
the pool loop cancelled (their ``finally`` blocks run) before the loop stops.

A JSON-RPC error answer keeps the connection — including code -32000, which the SDK also uses for
"connection closed": that code counts as a lost connection only if a ping on the same session fails
too.

A handshake that does not finish within ``connect_timeout_s`` cancels its owner (nothing to close
gracefully yet), in the background too. A message the SDK cannot parse (e.g. a schema nested
deeper than the JSON parser allows) is a transport fault (``session_faults``): the connection
records a diagnostic and closes, so the waiting request fails at once with it instead of hanging to
its timeout. Every failure is worded by ``failures`` (Reyn's words; the server's stderr and
messages go to the operator's log only).
The SDK reports such faults with ``logger.exception``; a ``NullHandler`` on the ``mcp`` logger
keeps those tracebacks off stderr when the host has configured no logging (records still propagate
to a host's handlers).
Imports the ``mcp`` SDK: only handlers and ``reyn mcp`` import this.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import contextvars
import hashlib
import json
import logging
import threading
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from typing import Any, TypeVar

import mcp_types
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from opentelemetry import context as otel_context  # a dependency of the mcp SDK
from pydantic import ConfigDict

from reyn_core import secret_paths
from reyn_sandbox import StopPipe

from . import failures
from .let_go import Hurry, LetGo, retrieve, stop_owner
from .lines import LineSplitter
from .sandbox import confined_command, refuse_roots, widen_hint
from .session_faults import SessionFault, SessionFaults
from .settings import DEFAULT_MAX_MESSAGE_BYTES, DEFAULT_MAX_MESSAGE_VALUES, ServerConfig
from .stderr_tail import StderrTail
from .stdio_transport import ServerRequests, StdioSpawn, stdio_transport

T = TypeVar("T")

logging.getLogger("mcp").addHandler(logging.NullHandler())
PING_TIMEOUT_S = 5.0
END_HARD_S = 3.0  # a shutdown out of time: for the killed servers' tasks to run their finally blocks


class ServedTool(mcp_types.Tool):
    """A listed tool that keeps every field the server sent — unknown ones included — so that what
    is pinned (``snapshot.served_sha256``) is the whole served object, not the SDK's known fields.
    (The SDK's own ``list_tools`` still runs when it validates a result against an output schema.)"""

    model_config = ConfigDict(extra="allow")


class ServedListing(mcp_types.ListToolsResult):
    """A ``tools/list`` page of ``ServedTool``."""

    tools: list[ServedTool]  # type: ignore[assignment]


class McpServerError(Exception):
    """The server answered a request with a JSON-RPC error (the connection is kept)."""


class McpConnectionError(Exception):
    """The server could not be reached, or the connection broke (it is reopened on the next call)."""


class McpCallTimeout(Exception):
    """The server did not answer in time (the connection is discarded and reopened next call)."""


def config_fingerprint(name: str, config: ServerConfig, protected: Mapping[str, str]) -> str:
    """Identity of a connection: same name, same configuration and same host files (``protected``,
    which its roots were checked against, the secret marks included) share one session."""
    marked = secret_paths(protected).folded
    text = json.dumps([name, config.model_dump(mode="json"), dict(protected), marked], sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


class ServerConnection:
    """One server's session, owned by a task on the pool loop. Use only from the pool loop."""

    def __init__(
        self, name: str, config: ServerConfig, connect_timeout_s: float, protected: Mapping[str, str]
    ) -> None:
        self.name = name
        self.config = config
        self.protected = dict(protected)  # the host's own files: no write root may cover them
        self.connect_timeout_s = connect_timeout_s
        self.session: ClientSession | None = None
        self.tools: dict[str, mcp_types.Tool] | None = None
        self.opened = 0  # how many sessions were opened (1 + reconnects)
        self._owner: asyncio.Task[None] | None = None
        self._stop: asyncio.Event | None = None
        self._hurry = Hurry()  # the current owner's
        self._hurries: set[Hurry] = set()  # every owner's not yet finished, let go of or not
        self._lock = asyncio.Lock()
        self._fault = SessionFault()  # the current owner's session's
        self._faults = SessionFaults()  # every open session's: a call is worded by the one it ran on
        self._closing = LetGo()  # owners being stopped, requests being cancelled, in the background
        self._stderr = StderrTail()  # every stdio start's stderr, drained from a pipe of its own
        self.max_message_bytes = DEFAULT_MAX_MESSAGE_BYTES  # the largest message read (the settings')
        self.max_message_values = DEFAULT_MAX_MESSAGE_VALUES  # the most JSON values in one (the same)
        self.lines: LineSplitter | None = None  # the current stdio start's stdout splitter
        self.requests: ServerRequests | None = None  # its server→client requests awaiting answers

    # ------------------------------------------------------------------ lifecycle

    def _transport(
        self, on_fault: Callable[[str], None], hurry: Hurry
    ) -> contextlib.AbstractAsyncContextManager[Any]:
        # the only place ${VAR} values are expanded: the spawn / the HTTP request
        try:
            c = self.config.resolved()
        except ValueError as exc:  # our own message: which ${VAR} is not set (never a value)
            raise McpConnectionError(f"MCP server {self.name!r}: {exc}") from None
        if c.command is not None:
            # confined: started on a stop pipe of its own, so the host's death ends the sandbox
            stop = StopPipe() if self.config.sandbox != "off" else None
            try:
                fd = stop.launcher_fd if stop is not None else None
                argv = confined_command(
                    self.name, self.config, c.command, c.args, c.env, c.cwd, self.protected, stop_fd=fd
                )
            except RuntimeError as exc:
                if stop is not None:
                    stop.close()  # nothing was started
                raise McpConnectionError(self.config.redact(str(exc))) from None
            spawn = StdioSpawn(argv, c.env, c.cwd, stop)
            lines, requests = self.lines, self.requests = (
                LineSplitter(self.max_message_bytes, self.max_message_values),
                ServerRequests(),
            )
            return self._stderr.feeding(lambda errlog: stdio_transport(spawn, errlog, lines, requests, hurry))
        bounds = (self.max_message_bytes, self.max_message_values)
        http = http_client(c.headers, self.connect_timeout_s, bounds, on_fault)
        # a failed server's client is closed: the session's DELETE at its close fails at once
        hurry.when(lambda: self._closing.start(http.aclose()))
        # the SDK's own event limit is off: the client's transport bounds every byte (http_bounds)
        sdk = streamable_http_client(str(c.url), http_client=http, max_sse_event_size=None)
        return _owning_client(http, sdk)

    @property
    def fault(self) -> str | None:
        """The current session's transport fault, in Reyn's words (None: none)."""
        return self._fault.words

    async def _run_owner(
        self,
        ready: asyncio.Future[ClientSession],
        stop: asyncio.Event,
        fault: SessionFault,
        hurry: Hurry,
        caller: otel_context.Context,
    ) -> None:
        def on_fault(words: str, raw: str = "") -> None:
            # a transport fault: Reyn's ``words`` for the model, ``raw`` for the operator's log; its
            # session keeps them for the calls still waiting on it, but an owner already being
            # stopped (no longer ``self._stop``'s) has no say on the next session
            if fault.record(words, raw) and self._stop is stop:
                hurry.now()  # a failed server: no graceful close
                if ready.done():
                    stop.set()  # the owner closes the session: waiting requests fail at once
                elif self._owner is not None:
                    self._owner.cancel()  # still in the handshake: nothing to close gracefully

        async def on_message(message: Any) -> None:
            # the SDK hands transport faults (an unparsable line, a broken stream) to this handler
            # (an over-long stdio line, an unparsable message; an HTTP message over the bound is told
            # to on_fault by the client's transport itself)
            if isinstance(message, Exception):
                on_fault(failures.fault(message), failures.raw_text(message, ""))

        try:
            async with contextlib.AsyncExitStack() as stack:
                read, write = (await stack.enter_async_context(self._transport(on_fault, hurry)))[:2]
                session = await stack.enter_async_context(
                    ClientSession(read, write, message_handler=on_message)
                )
                # The handshake is the opening call's work: traced under its span (the SDK injects
                # ``traceparent``); the rest of the session's life belongs to no call.
                token = otel_context.attach(caller)
                try:
                    await session.initialize()
                finally:
                    otel_context.detach(token)
                self._faults.opened(session, fault)
                if not ready.done():
                    ready.set_result(session)
                await stop.wait()
        except BaseException as exc:  # includes the owner's own cancellation at shutdown
            if not ready.done():
                if fault.words is not None or not isinstance(exc, asyncio.CancelledError):
                    ready.set_exception(McpConnectionError(self._describe_failure(exc, fault)))
                else:
                    ready.cancel()  # the waiter gave up (timeout, shutdown): nobody to tell
            if isinstance(exc, asyncio.CancelledError) and fault.words is None:
                raise
        finally:
            self._hurries.discard(hurry)
            if self._stop is stop:  # an owner let go of has no say on the session after it
                self.session = None
                self.tools = None

    def _describe_failure(self, exc: BaseException, fault: SessionFault) -> str:
        why = fault.words or failures.reason(exc)
        return failures.report(
            self.name,
            f"cannot open MCP server {self.name!r} ({self.config.source()}): {why}" + self._grants_hint(),
            fault.raw + "\n" + failures.raw_text(exc, self.stderr_text()),
        )

    def _grants_hint(self) -> str:
        """For a stdio server: the sandbox grants it ran with and the keys that widen them."""
        return widen_hint(self.name, self.config) if self.config.command is not None else ""

    def stderr_text(self, limit: int = 8_000) -> str:
        """The last ``limit`` characters the server wrote to stderr (stdio servers): for the
        operator's log only — a server's stderr never reaches a model (see ``failures``)."""
        return self._stderr.text(limit)

    async def ensure(self, wait_s: float | None = None) -> ClientSession:
        """The open session, opening one if needed (once every owner let go of has stopped: within
        ``wait_s``, the call's own timeout, else ``McpCallTimeout``)."""
        async with self._lock:
            # a session with a recorded fault is closing (its owner was told to stop): open a new one
            if (
                self.session is not None
                and self._fault.words is None
                and self._owner is not None
                and not self._owner.done()
            ):
                return self.session
            self._let_go()
            try:  # one server process per connection at a time
                await asyncio.wait_for(self._closing.settled(), wait_s)
            except asyncio.TimeoutError:
                raise McpCallTimeout(
                    f"the previous server of MCP server {self.name!r} did not stop within {wait_s:g} s; "
                    "a new one will be opened on the next call"
                ) from None
            loop = asyncio.get_running_loop()
            ready: asyncio.Future[ClientSession] = loop.create_future()
            ready.add_done_callback(retrieve)
            self._fault = SessionFault()
            self._stop = asyncio.Event()
            self._hurry = Hurry()
            self._hurries.add(self._hurry)
            run = self._run_owner(ready, self._stop, self._fault, self._hurry, otel_context.get_current())
            # The owner outlives this call: it starts from an empty context, not the caller's (whose
            # span would otherwise parent whatever the session does later).
            self._owner = contextvars.Context().run(loop.create_task, run, name=f"mcp-owner-{self.name}")
            try:
                session = await asyncio.wait_for(asyncio.shield(ready), self.connect_timeout_s)
            except asyncio.TimeoutError:
                ready.cancel()
                self._let_go()  # the caller hears at connect_timeout_s; the owner is cancelled meanwhile
                raise McpConnectionError(
                    failures.report(
                        self.name,
                        f"MCP server {self.name!r} did not finish its handshake within "
                        f"connect_timeout_s={self.connect_timeout_s:g} s; it was stopped"
                        + self._grants_hint(),
                        failures.raw_text(None, self.stderr_text()),
                    )
                ) from None
            except McpConnectionError:
                self._let_go()
                raise
            self.session = session
            self.tools = None
            self.opened += 1
            return session

    def _let_go(self, session: ClientSession | None = None, *, failed: bool = True) -> None:
        """Let go of the current owner (with ``session``: only if that is still the current session —
        a call that failed on an old session never closes the one after it), stopped in the
        background: its session closed once it holds one, else cancelled (``stop_owner``); its
        server stopped hard unless it is let go of healthy (not ``failed``: a close)."""
        if session is not None and self.session is not session:
            return
        owner, stop = self._owner, self._stop
        if failed and owner is not None:
            self._hurry.now()
        graceful = self.session is not None
        self._owner = self._stop = self.session = self.tools = None
        if owner is not None:
            self._closing.start(stop_owner(owner, stop if graceful else None))

    async def close(self) -> None:
        """Close for good (shutdown); returns once every server of this connection has stopped."""
        async with self._lock:  # not in the middle of an open
            self._let_go(failed=self._fault.words is not None)
        await self._closing.settled()

    @property
    def stopping(self) -> bool:
        """Whether a server let go of (or a request cancelled) is still being stopped."""
        return self._closing.pending

    def kill(self) -> None:
        """A shutdown out of time: every server of this connection still running is killed now."""
        for hurry in list(self._hurries):
            hurry.kill()

    # ------------------------------------------------------------------ requests

    async def _request(self, fn: Callable[[ClientSession], Awaitable[T]], timeout_s: float, what: str) -> T:
        session = await self.ensure(timeout_s)
        try:
            result = await self._closing.within(fn(session), timeout_s)
        except asyncio.TimeoutError:
            self._let_go(session)
            raise McpCallTimeout(
                f"MCP server {self.name!r} did not answer {what} within {timeout_s:g} s; "
                "the connection was closed and will be reopened on the next call"
            ) from None
        except MCPError as exc:
            # -32000 is also a code a server may answer with: only a dead session means a lost connection
            # a recorded fault (e.g. an answer over max_message_bytes, cut) lost the connection too
            fault = self._faults.of(session)
            if fault.words is not None or (
                exc.code == mcp_types.CONNECTION_CLOSED and not await self._alive(session)
            ):
                self._let_go(session)
                raise McpConnectionError(self._lost(what, None, fault)) from None
            # the server's message is its own text (it may echo its environment): the log gets it
            raise McpServerError(
                failures.report(
                    self.name,
                    f"MCP server {self.name!r} answered {what} with {failures.json_rpc_code(exc.code)}",
                    f"error {exc.code}: {exc.message}"
                    + (f"\ndata: {exc.data!r}" if exc.data is not None else ""),
                )
            ) from None
        except (asyncio.CancelledError, KeyboardInterrupt):
            raise
        except Exception as exc:
            # e.g. the SDK refusing a result that does not match the tool's outputSchema: the answer
            # is unusable, the connection is not. Only a session that stopped answering is dropped.
            if await self._alive(session):
                raise McpServerError(
                    failures.report(
                        self.name,
                        f"the answer of MCP server {self.name!r} to {what} could not be used "
                        f"({failures.reason(exc)}); the connection is kept",
                        failures.raw_text(exc, ""),
                    )
                ) from None
            self._let_go(session)
            raise McpConnectionError(self._lost(what, exc, self._faults.of(session))) from None
        fault = self._faults.of(session)
        if fault.words is not None:  # answered after a fault of its session: its connection is lost
            self._let_go(session)
            raise McpConnectionError(self._lost(what, None, fault))
        return result

    async def _alive(self, session: ClientSession) -> bool:
        """Whether ``session`` still answers: no recorded fault, the owner running, and a ping answered
        within ``PING_TIMEOUT_S`` (any answer but -32000 counts: a server without ping support is
        still connected)."""
        if (
            self._faults.of(session).words is not None
            or self.session is not session
            or self._owner is None
            or self._owner.done()
        ):
            return False
        try:
            await self._closing.within(session.send_ping(), PING_TIMEOUT_S)
        except MCPError as exc:
            return exc.code != mcp_types.CONNECTION_CLOSED
        except Exception:
            return False
        return True

    def _lost(self, what: str, exc: BaseException | None, fault: SessionFault) -> str:
        return fault.lost(self.name, what, exc, hint=self._grants_hint(), stderr=self.stderr_text())

    async def list_tools(self, timeout_s: float, *, refresh: bool = False) -> dict[str, mcp_types.Tool]:
        """The server's tools by name (every page), cached per session unless ``refresh``."""
        if self.tools is not None and not refresh and self.session is not None:
            return self.tools

        async def fetch(session: ClientSession) -> dict[str, mcp_types.Tool]:
            tools: dict[str, mcp_types.Tool] = {}
            cursor: str | None = None
            for _page in range(100):
                params = mcp_types.PaginatedRequestParams(cursor=cursor) if cursor else None
                # every field the server sent is kept (ServedTool): the rug-pull pin hashes them all
                request = mcp_types.ListToolsRequest(params=params)
                result = await session.send_request(request, ServedListing)
                for t in result.tools:
                    tools[t.name] = t
                cursor = result.next_cursor
                if not cursor:
                    break
            return tools

        tools = await self._request(fetch, timeout_s, "tools/list")
        self.tools = tools
        return tools

    async def call_tool(
        self, tool: str, arguments: dict[str, Any], timeout_s: float
    ) -> mcp_types.CallToolResult:
        """``tools/call``; the caller has checked ``tool`` and ``arguments`` against the listing."""
        return await self._request(lambda s: s.call_tool(tool, arguments), timeout_s, f"tools/call {tool!r}")


def http_client(
    headers: dict[str, str],
    connect_timeout_s: float,
    bounds: tuple[int, int],
    on_fault: Callable[[str], None],
) -> Any:
    """The HTTP client of a streamable-HTTP server: every response bounded per message in bytes and
    JSON values (``http_bounds``: over either is a fault, told to ``on_fault``), no environment
    proxies or ``.netrc``, explicit timeouts (the read timeout is long: the server may hold its
    event stream open; each request is bounded by the call timeout anyway), no redirect following
    (the SDK follows same-origin redirects itself)."""
    import httpx2

    from .http_bounds import bounded_client

    timeout = httpx2.Timeout(connect=connect_timeout_s, read=300.0, write=30.0, pool=30.0)
    return bounded_client(headers, timeout, bounds[0], on_fault, values=bounds[1])


@contextlib.asynccontextmanager
async def _owning_client(http: Any, transport: contextlib.AbstractAsyncContextManager[Any]) -> Any:
    async with http, transport as streams:
        yield streams


class SessionPool:
    """Every open MCP connection of this process, on one background loop (see module docstring)."""

    def __init__(self) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="reyn-mcp-sessions", daemon=True)
        self._thread.start()
        self._connections: dict[str, ServerConnection] = {}
        self._closed = False

    def _submit(self, coro: Coroutine[Any, Any, T]) -> asyncio.Future[T]:
        if self._closed:
            coro.close()
            raise McpConnectionError("the MCP session pool is shut down")
        return asyncio.wrap_future(asyncio.run_coroutine_threadsafe(coro, self._loop))

    async def run(
        self,
        fn: Callable[[ServerConnection], Awaitable[T]],
        name: str,
        config: ServerConfig,
        connect_timeout_s: float,
        protected: Mapping[str, str],
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
        max_message_values: int = DEFAULT_MAX_MESSAGE_VALUES,
    ) -> T:
        """Run ``fn(connection)`` on the pool loop and await it from the caller's loop; ``protected``:
        the host's own files (the call's ``ToolContext.host_files``), which a stdio server's roots
        may not expose: ``ToolDenied`` naming the file before anything starts."""
        if config.command is not None:
            try:
                cwd = config.resolved().cwd
            except ValueError:
                pass  # the connection reports the unset ${VAR}; confined_command checks the real cwd
            else:
                refuse_roots(name, config, cwd, protected)

        async def job() -> T:
            key = config_fingerprint(name, config, protected)
            conn = self._connections.get(key)
            if conn is None:
                conn = ServerConnection(name, config, connect_timeout_s, protected)
                self._connections[key] = conn
            conn.max_message_bytes = max_message_bytes  # read when a session opens
            conn.max_message_values = max_message_values
            return await fn(conn)

        return await self._submit(job())

    def connection_state(
        self, name: str, config: ServerConfig, protected: Mapping[str, str]
    ) -> dict[str, Any]:
        """``{"connected": bool, "sessions_opened": int}`` (read without touching the loop)."""
        conn = self._connections.get(config_fingerprint(name, config, protected))
        return {
            "connected": bool(conn and conn.session is not None),
            "sessions_opened": conn.opened if conn else 0,
        }

    def close(self, timeout_s: float = 15.0) -> None:
        """Close every session (each by its owner task), then stop the loop. Idempotent; blocking."""
        if self._closed:
            return
        self._closed = True

        connections = list(self._connections.values())

        async def close_all() -> None:
            await asyncio.gather(*(c.close() for c in connections), return_exceptions=True)

        async def end_hard() -> None:
            # what the budget did not see end is ended now: every server killed, every task on the
            # loop cancelled and given END_HARD_S to run its finally blocks (a transport's reaps
            # its killed server), so nothing outlives the host's shutdown
            for conn in connections:
                conn.kill()
            tasks = asyncio.all_tasks() - {asyncio.current_task()}
            for task in tasks:
                task.cancel()
            if tasks:
                await asyncio.wait(tasks, timeout=END_HARD_S)
            for conn in connections:
                conn.kill()  # a server started meanwhile by a task that ignored its cancellation

        if self._thread.is_alive():
            with contextlib.suppress(Exception):
                asyncio.run_coroutine_threadsafe(close_all(), self._loop).result(timeout_s)
            with contextlib.suppress(Exception):
                asyncio.run_coroutine_threadsafe(end_hard(), self._loop).result(END_HARD_S + 1.0)
            self._connections.clear()
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(END_HARD_S)
        if not self._thread.is_alive():
            self._loop.close()


_POOL: SessionPool | None = None
_POOL_LOCK = threading.Lock()


def get_pool() -> SessionPool:
    """The process-wide pool, started on first use and closed at interpreter exit."""
    global _POOL
    with _POOL_LOCK:
        if _POOL is None or _POOL._closed:
            _POOL = SessionPool()
            atexit.register(_POOL.close)
        return _POOL


def shutdown() -> None:
    """Close every MCP session of this process now (hosts call this at shutdown; also atexit)."""
    global _POOL
    with _POOL_LOCK:
        pool, _POOL = _POOL, None
    if pool is not None:
        pool.close()
