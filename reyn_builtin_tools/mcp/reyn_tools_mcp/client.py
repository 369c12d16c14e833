"""MCP sessions: opened lazily, reused, closed cleanly, reopened after a server dies.

Sessions live on the session pool's loop (``pool``). Each session's async context is entered and
exited by one task, its connection's *owner*: it opens the transport and the ``ClientSession``,
waits to be told to stop, and closes both.

One deadline per call (``deadline``): what a call waits on — the old server's stop, each request,
the ``ping`` telling a lost connection — comes out of the budget it started with; out of time, it
fails by its timeout naming the step that was waiting. A new server's handshake has its own bound,
``connect_timeout_s``, and is left out of the call's budget. A call that times out, or whose
connection breaks, lets go of that connection: its owner is stopped in the background (for stdio,
the server process), and the next call opens a fresh one once the old has stopped (one server per
connection at a time). A request runs as a task that is cancelled, not awaited, at its time: its
cancellation may itself wait on the server (the SDK's ``notifications/cancelled``). What is let go
(``_closing``) is awaited before the next owner starts and at ``close``. A server let go of because
it failed, or still in its handshake, is stopped hard (``let_go.Hurry``); only a healthy session's
close is graceful, its HTTP ``DELETE`` bounded (``http_client``).

The handshake is the owner's, bounded by ``connect_timeout_s`` (a timer lets go of the owner and
fails its waiters); the calls waiting for it wait that long at most. The connection's lock is held
only while the next owner waits for the old to stop, and ``close`` does not take it: it never waits
behind a handshake.

A JSON-RPC error answer keeps the connection — including code -32000, which the SDK also uses for
"connection closed": that code counts as a lost connection only if a ping fails too. A message the
SDK cannot parse is a transport fault (``session_faults``): the session closes and the waiting
request fails at once with it. Every failure is worded by ``failures`` (the server's stderr and
messages go to the operator's log only); a ``NullHandler`` on the ``mcp`` logger keeps the SDK's
tracebacks off stderr when the host configured no logging. Imports the ``mcp`` SDK.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, TypeVar

import mcp_types
from mcp import ClientSession
from mcp.shared.exceptions import MCPError
from opentelemetry import context as otel_context  # a dependency of the mcp SDK

from . import failures
from .deadline import Deadline
from .failures import McpConnectionError
from .http_client import http_transport
from .let_go import Hurry, LetGo, retrieve, stop_owner
from .lines import LineSplitter
from .results import ServedListing
from .sandbox import widen_hint
from .session_faults import SessionFault, SessionFaults
from .settings import DEFAULT_MAX_MESSAGE_BYTES, DEFAULT_MAX_MESSAGE_VALUES, ServerConfig
from .stderr_tail import StderrTail
from .stdio_transport import ServerRequests, StdioSpawn, stdio_transport

T = TypeVar("T")

logging.getLogger("mcp").addHandler(logging.NullHandler())
PING_TIMEOUT_S = 5.0


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
        self._ready: asyncio.Future[ClientSession] | None = None  # the current owner's handshake
        self._closed = False
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
            argv = [c.command, *c.args]
            try:
                spawn = StdioSpawn.confined(self.name, self.config, argv, c.env, c.cwd, self.protected)
            except RuntimeError as exc:
                raise McpConnectionError(self.config.redact(str(exc))) from None
            lines, requests = self.lines, self.requests = (
                LineSplitter(self.max_message_bytes, self.max_message_values),
                ServerRequests(),
            )
            return self._stderr.feeding(lambda errlog: stdio_transport(spawn, errlog, lines, requests, hurry))
        bounds = (self.max_message_bytes, self.max_message_values)
        return http_transport(
            str(c.url), c.headers, self.connect_timeout_s, bounds, on_fault, hurry, self._closing
        )

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
                if not ready.done():  # else given up on (connect_timeout_s, close): being stopped
                    if self._stop is stop:
                        self.session, self.tools = session, None
                        self.opened += 1
                    ready.set_result(session)
                await stop.wait()
        except BaseException as exc:  # includes the owner's own cancellation at shutdown
            if not ready.done():
                if fault.words is not None or not isinstance(exc, asyncio.CancelledError):
                    ready.set_exception(McpConnectionError(self._describe_failure(exc, fault)))
                else:
                    ready.cancel()  # let go of (close, shutdown): its waiters hear it is closed
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

    async def ensure(self, deadline: Deadline, what: str) -> ClientSession:
        """The open session, once the current owner's handshake is done — or a new owner's, started
        once every owner let go of has stopped (within ``deadline``, the call's, else
        ``McpCallTimeout`` naming that step). The handshake is bounded by ``connect_timeout_s`` and
        left out of ``deadline`` (module docstring)."""
        while True:
            ready = self._ready
            if ready is None or not self._usable():
                ready = await self._start_owner(deadline, what)
            if not ready.done():  # the handshake: bounded by connect_timeout_s (_handshake_late)
                started = time.monotonic()
                await asyncio.wait({ready})
                deadline.exclude(time.monotonic() - started)
            if ready.cancelled() or self._closed:
                raise McpConnectionError(f"the connection to MCP server {self.name!r} was closed")
            if ready.exception() is None:
                return ready.result()
            if self._ready is ready:
                self._let_go()  # its owner failed: stopped, and awaited by the next open
            raise McpConnectionError(str(ready.exception())) from None

    def _usable(self) -> bool:
        """Whether the current owner may still serve calls: running, its handshake not failed, no
        fault recorded (a session with one is closing: the next call opens a new one)."""
        ready, owner = self._ready, self._owner
        failed = ready is not None and ready.done() and (ready.cancelled() or ready.exception() is not None)
        return owner is not None and not owner.done() and not failed and self._fault.words is None

    async def _start_owner(self, deadline: Deadline, what: str) -> asyncio.Future[ClientSession]:
        """Start the next owner once every owner let go of has stopped (one server process per
        connection at a time); its handshake, bounded by ``connect_timeout_s`` (``_handshake_late``)."""
        async with self._lock:  # one caller starts it; the others wait for its handshake
            if self._ready is not None and self._usable():
                return self._ready
            self._let_go()
            try:  # (a spent deadline with nothing pending is no wait: wait_for(…, 0) would time out)
                if self._closing.pending:
                    await asyncio.wait_for(self._closing.settled(), deadline.left())
            except asyncio.TimeoutError:
                step = "its previous server was still being stopped (the next call opens a new one)"
                raise failures.not_sent(self.name, what, deadline.timeout_s, step) from None
            if self._closed:
                raise McpConnectionError(f"the connection to MCP server {self.name!r} was closed")
            loop = asyncio.get_running_loop()
            ready = self._ready = loop.create_future()
            ready.add_done_callback(retrieve)
            late = loop.call_later(self.connect_timeout_s, self._handshake_late, ready)
            ready.add_done_callback(lambda _: late.cancel())
            self._fault = SessionFault()
            self._stop = asyncio.Event()
            self._hurry = Hurry()
            self._hurries.add(self._hurry)
            run = self._run_owner(ready, self._stop, self._fault, self._hurry, otel_context.get_current())
            # The owner outlives this call: it starts from an empty context, not the caller's (whose
            # span would otherwise parent whatever the session does later).
            self._owner = contextvars.Context().run(loop.create_task, run, name=f"mcp-owner-{self.name}")
            return ready

    def _handshake_late(self, ready: asyncio.Future[ClientSession]) -> None:
        """``connect_timeout_s`` has passed since ``ready``'s owner started: if its handshake is not
        done, its waiters fail now and the owner is let go of (stopped hard, in the background)."""
        if ready.done():
            return
        hint, stderr = self._grants_hint(), self.stderr_text()
        ready.set_exception(failures.handshake_late(self.name, self.connect_timeout_s, hint, stderr))
        if self._ready is ready:
            self._let_go()

    def _let_go(self, session: ClientSession | None = None, *, failed: bool = True) -> None:
        """Let go of the current owner (with ``session``: only if that is still the current session —
        a call that failed on an old session never closes the one after it), stopped in the
        background: its session closed once it holds one, else cancelled (``stop_owner``); its
        server stopped hard unless it is let go of healthy and open (not ``failed``: a close)."""
        if session is not None and self.session is not session:
            return
        owner, stop, ready = self._owner, self._stop, self._ready
        graceful = self.session is not None
        if owner is not None and (failed or not graceful):
            self._hurry.now()
        self._owner = self._stop = self._ready = self.session = self.tools = None
        if ready is not None and not ready.done():
            ready.cancel()  # its waiters hear it was closed, whether or not its owner ever ran
        if owner is not None:
            self._closing.start(stop_owner(owner, stop if graceful else None))

    async def close(self) -> None:
        """Close for good (shutdown); returns once every server of this connection has stopped. It
        never waits behind an open in progress (the lock): a handshake is let go of at once."""
        self._closed = True
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

    async def _request(
        self, fn: Callable[[ClientSession], Awaitable[T]], timeout: float | Deadline, what: str
    ) -> T:
        deadline = Deadline.of(timeout)
        session = await self.ensure(deadline, what)
        try:
            result = await self._closing.within(fn(session), deadline.left())
        except asyncio.TimeoutError:
            self._let_go(session)
            raise failures.not_answered(self.name, what, deadline.timeout_s) from None
        except MCPError as exc:
            # -32000 is also a code a server may answer with: only a dead session means a lost connection
            # a recorded fault (e.g. an answer over max_message_bytes, cut) lost the connection too
            fault = self._faults.of(session)
            if fault.words is not None or (
                exc.code == mcp_types.CONNECTION_CLOSED and not await self._alive(session, deadline)
            ):
                self._let_go(session)
                raise McpConnectionError(self._lost(what, None, fault)) from None
            # the server's message is its own text (it may echo its environment): the log gets it
            raise failures.answered_error(self.name, what, exc.code, exc.message, exc.data) from None
        except (asyncio.CancelledError, KeyboardInterrupt):
            raise
        except Exception as exc:
            # e.g. the SDK refusing a result that does not match the tool's outputSchema: the answer
            # is unusable, the connection is not. Only a session that stopped answering is dropped.
            if await self._alive(session, deadline):
                raise failures.unusable_answer(self.name, what, exc) from None
            self._let_go(session)
            raise McpConnectionError(self._lost(what, exc, self._faults.of(session))) from None
        fault = self._faults.of(session)
        if fault.words is not None:  # answered after a fault of its session: its connection is lost
            self._let_go(session)
            raise McpConnectionError(self._lost(what, None, fault))
        return result

    async def _alive(self, session: ClientSession, deadline: Deadline) -> bool:
        """Whether ``session`` still answers: no recorded fault, the owner running, and a ping answered
        within ``PING_TIMEOUT_S`` and the call's ``deadline`` (any answer but -32000 counts: a server
        without ping support is still connected; no answer in time: the session is let go of)."""
        if (
            self._faults.of(session).words is not None
            or self.session is not session
            or self._owner is None
            or self._owner.done()
        ):
            return False
        try:
            await self._closing.within(session.send_ping(), min(PING_TIMEOUT_S, deadline.left()))
        except MCPError as exc:
            return exc.code != mcp_types.CONNECTION_CLOSED
        except Exception:
            return False
        return True

    def _lost(self, what: str, exc: BaseException | None, fault: SessionFault) -> str:
        return fault.lost(self.name, what, exc, hint=self._grants_hint(), stderr=self.stderr_text())

    async def list_tools(
        self, timeout: float | Deadline, *, refresh: bool = False
    ) -> dict[str, mcp_types.Tool]:
        """The server's tools by name (every page), cached per session unless ``refresh``; within
        ``timeout`` (seconds from now, or the deadline of the call this listing is part of)."""
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

        tools = await self._request(fetch, timeout, "tools/list")
        self.tools = tools
        return tools

    async def call_tool(
        self, tool: str, arguments: dict[str, Any], timeout: float | Deadline
    ) -> mcp_types.CallToolResult:
        """``tools/call``, within ``timeout`` (as ``list_tools``); the caller has checked ``tool`` and
        ``arguments`` against the listing."""
        return await self._request(lambda s: s.call_tool(tool, arguments), timeout, f"tools/call {tool!r}")
