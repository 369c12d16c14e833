"""The session pool: every MCP connection of this process, on one background event loop.

All sessions live on one event loop in a daemon thread (``SessionPool``), so they outlive the event
loop of any single caller (a test, a request, a sync host); callers on any loop submit work to the
pool loop and await the result (``run``). A connection's identity is its configuration and the
host files its roots were checked against (``config_fingerprint``). At shutdown the pool's budget
is a bound: once it has run out, every server still running is killed and every task on the pool
loop cancelled (their ``finally`` blocks run) before the loop stops. Imports the ``mcp`` SDK (through
``client``): only handlers and ``reyn mcp`` import this.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import hashlib
import json
import threading
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from typing import Any, TypeVar

from reyn_core import secret_paths

from .client import ServerConnection
from .failures import McpConnectionError
from .sandbox import refuse_roots
from .settings import DEFAULT_MAX_MESSAGE_BYTES, DEFAULT_MAX_MESSAGE_VALUES, ServerConfig

T = TypeVar("T")

END_HARD_S = 3.0  # a shutdown out of time: for the killed servers' tasks to run their finally blocks


def config_fingerprint(name: str, config: ServerConfig, protected: Mapping[str, str]) -> str:
    """Identity of a connection: same name, same configuration and same host files (``protected``,
    which its roots were checked against, the secret marks included) share one session."""
    marked = secret_paths(protected).folded
    text = json.dumps([name, config.model_dump(mode="json"), dict(protected), marked], sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


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


def existing_pool() -> SessionPool | None:
    """The process-wide pool if one is running (None: no session was ever opened, or shut down)."""
    return _POOL


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
