"""Work an MCP connection lets go of: stopped or cancelled in the background, never awaited by the
call that gave up on it, and awaited where it must be — before the connection's next owner starts
(one server process per connection at a time) and at its close (nothing left behind).

Why: stopping what waits on a server can itself wait on that server. A cancelled request sends the
SDK's courtesy ``notifications/cancelled`` (up to 5 s behind a writer the server does not read); a
session's graceful close flushes, closes the server's stdin and gives it time to exit. A caller
that awaited either heard of its timeout that much later (an 8 s call timeout was reported at
15.6 s). So every wait on a server is ``within`` its bound and reported at it, and what is let go
runs on: each of those steps is bounded by itself (the SDK's write bound, ``stop_owner``'s, the
stdio transport's close).

A server let go of *because it failed* (a timeout, a transport fault, a broken handshake) gets no
graceful close (``Hurry``): a stdio server's stdin is closed and it is stopped at once (the stop
byte; unconfined, ``SIGKILL`` to its group), an HTTP server's client is closed (no ``DELETE`` to
wait for). So what the next call waits for before it opens a new server is quick, and that wait is
bounded by the call's own timeout anyway. Only the close of a healthy connection is graceful.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

T = TypeVar("T")

GRACEFUL_CLOSE_S = 10.0  # an owner told to stop closes its session within this, or is cancelled


class LetGo:
    """The work one connection let go of and that has not finished yet."""

    def __init__(self) -> None:
        self._running: set[asyncio.Future[Any]] = set()

    def start(self, work: Awaitable[Any]) -> None:
        """Run ``work`` on, awaited by nobody but ``settled``."""
        task = asyncio.ensure_future(work)
        task.add_done_callback(retrieve)
        self._running = {t for t in self._running if not t.done()} | {task}

    async def within(self, work: Awaitable[T], timeout_s: float) -> T:
        """``work``'s outcome if it ends within ``timeout_s``, else ``TimeoutError`` at that time; the
        work is then cancelled and let go of (``start``), not awaited. A caller cancelled meanwhile
        lets go of it too."""
        task = asyncio.ensure_future(work)
        try:
            done, _ = await asyncio.wait({task}, timeout=timeout_s)
        finally:
            if not task.done():
                task.cancel()
                self.start(task)
        if not done:
            raise asyncio.TimeoutError
        return task.result()

    @property
    def pending(self) -> bool:
        """Whether some work let go of has not finished yet."""
        return any(not t.done() for t in self._running)

    async def settled(self) -> None:
        """Wait until everything let go of has finished (each piece is bounded by itself)."""
        while running := {t for t in self._running if not t.done()}:
            await asyncio.wait(running)


class Hurry:
    """Whether one owner's server is to be stopped hard — let go of because it failed, or at a
    shutdown out of time — and how: its transport registers each step with ``when``."""

    __slots__ = ("_kills", "_steps", "urgent")

    def __init__(self) -> None:
        self.urgent = False
        self._steps: list[Callable[[], None]] = []
        self._kills: list[Callable[[], None]] = []

    def when(self, step: Callable[[], None], kill: Callable[[], None] | None = None) -> None:
        """``step`` runs at ``now`` (at once if it already came); ``kill`` at ``kill``."""
        self._steps.append(step)
        if kill is not None:
            self._kills.append(kill)
        if self.urgent:
            step()

    def now(self) -> None:
        """Stop hard from here on: every step registered, once."""
        if not self.urgent:
            self.urgent = True
            for step in self._steps:
                step()

    def kill(self) -> None:
        """The last resort (a shutdown out of time): ``now``, then every ``kill`` (``SIGKILL``)."""
        self.now()
        for kill in self._kills:
            kill()


async def stop_owner(owner: asyncio.Task[None], stop: asyncio.Event | None) -> None:
    """Let a session's ``owner`` close it (``stop`` set, ``GRACEFUL_CLOSE_S`` at most), or cancel
    it (``stop`` None: an owner still in its handshake, which would never see the signal)."""
    if stop is not None:
        stop.set()
        try:
            await asyncio.wait_for(asyncio.shield(owner), GRACEFUL_CLOSE_S)
            return
        except (asyncio.TimeoutError, Exception):
            pass
    owner.cancel()
    with contextlib.suppress(BaseException):
        await owner


def retrieve(future: asyncio.Future[Any]) -> None:
    """Mark a future's exception as seen (no "exception was never retrieved" on stderr)."""
    if not future.cancelled():
        future.exception()
