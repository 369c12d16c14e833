"""A tool talking while it works: progress and log events, and the host's listener for them.

A handler reports through its context (``ctx.report_progress(3, 10, "page 3")``,
``ctx.log("info", "fetched")``); the context hands each event, checked and bounded, to its
``reporter`` — the host's listener — or drops it when there is none. A reporter is data-free from the
context's point of view (an optional field), so a context that crosses a process boundary simply has
none, and reporting stays a no-op there.

``report`` is called from wherever the handler runs: on the event loop for an async handler, in a
worker thread for a sync one. ``QueuedReporter`` is the one way a host turns those calls into
ordered, bounded, awaited deliveries on its loop (an MCP notification, a loop event, a terminal
line) and makes sure every event reported before the handler returned is delivered before the
call's result (``await reporter.drain()``).
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol, get_args

from .unicode_text import describe_lone_surrogate, escape_lone_surrogates, lone_surrogate_at

if TYPE_CHECKING:
    import asyncio
    import logging

LogLevel = Literal["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]
# The syslog levels of RFC 5424, least severe first (as MCP's ``notifications/message`` uses them).
LOG_LEVELS: tuple[str, ...] = get_args(LogLevel)
MAX_MESSAGE_CHARS = 2000
MAX_PENDING_REPORTS = 256


def _log() -> logging.Logger:
    # Imported on a delivery failure only: loading and rendering never log, and `logging` (with
    # `traceback`, `threading`, `string`) is ~4 ms of every `import reyn_core` (issue 23).
    import logging

    return logging.getLogger("reyn.reporting")


@dataclass(frozen=True, slots=True)
class Progress:
    """``done`` units of work out of ``total`` (None when the total is unknown), with an optional
    one-line ``message``. ``tool`` is the reporting tool's name when the host knows it."""

    done: float
    total: float | None = None
    message: str | None = None
    tool: str | None = None


@dataclass(frozen=True, slots=True)
class ToolLog:
    """One log entry of a tool: a syslog ``level``, a ``message`` and optional JSON ``data``."""

    level: LogLevel
    message: str
    data: Mapping[str, Any] = field(default_factory=dict)
    tool: str | None = None


ToolReport = Progress | ToolLog


class Reporter(Protocol):
    """The host's listener for a call's reports. ``report`` must not block and must be safe to call
    from any thread (a sync handler runs in a worker thread)."""

    def report(self, event: ToolReport) -> None: ...


def _bounded(message: Any, what: str) -> str:
    """A report's message: a string, bounded, its lone surrogates (text UTF-8 cannot carry, which
    would break the host's delivery) shown as their escapes."""
    if not isinstance(message, str):
        raise TypeError(f"{what} must be a string, not {type(message).__name__}")
    message = escape_lone_surrogates(message)
    return message if len(message) <= MAX_MESSAGE_CHARS else message[: MAX_MESSAGE_CHARS - 1] + "…"


def _number(value: Any, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise TypeError(f"{what} must be a finite number, not {value!r:.40}")
    if value < 0:
        raise ValueError(f"{what} must be at least 0, not {value!r}")
    return float(value)


def progress_event(done: Any, total: Any = None, message: Any = None) -> Progress:
    """A checked ``Progress``: numbers finite and not negative, ``done`` not above ``total``, the
    message a string of at most ``MAX_MESSAGE_CHARS``. Raises ``TypeError``/``ValueError`` saying
    which argument was wrong."""
    d = _number(done, "report_progress(done=...)")
    t = None if total is None else _number(total, "report_progress(total=...)")
    if t is not None and d > t:
        raise ValueError(f"report_progress(done={done!r}) is above total={total!r}")
    m = None if message is None else _bounded(message, "report_progress(message=...)")
    return Progress(d, t, m)


def log_event(level: Any, message: Any, data: Mapping[str, Any]) -> ToolLog:
    """A checked ``ToolLog``: a known level, a bounded string message, data without text UTF-8
    cannot carry (``ValueError`` naming where: data is not rewritten)."""
    if level not in LOG_LEVELS:
        raise ValueError(f"log(level={level!r}): use one of {', '.join(LOG_LEVELS)}")
    data = dict(data)
    if data and (found := lone_surrogate_at(data)) is not None:
        raise ValueError(
            f"log(...) data holds text UTF-8 cannot carry (a lone surrogate) {describe_lone_surrogate(found)}"
        )
    return ToolLog(level, _bounded(message, "log(message=...)"), data)


class QueuedReporter:
    """A reporter bound to the running event loop: events reported from any thread are delivered to
    ``sink`` one at a time, in the order reported, on that loop.

    At most ``limit`` events wait; more are dropped (and counted in ``dropped``) so a tool that
    reports in a tight loop cannot grow the host's memory or stall its call. ``drain()`` waits until
    every event reported so far is delivered and stops accepting new ones; a sink that raises loses
    that one event (logged), never the call.
    """

    def __init__(
        self,
        sink: Callable[[ToolReport], Awaitable[None]],
        *,
        tool: str | None = None,
        limit: int = MAX_PENDING_REPORTS,
    ) -> None:
        import asyncio  # only a host that listens needs it (a load imports this module, not asyncio)

        self._sink = sink
        self._tool = tool
        self._limit = limit
        self._loop = asyncio.get_running_loop()
        self._queue: asyncio.Queue[ToolReport] = asyncio.Queue()
        self._pump: asyncio.Task[None] | None = None
        self._closed = False
        self.dropped = 0

    def report(self, event: ToolReport) -> None:
        """Queue ``event`` for delivery (thread-safe, never blocks)."""
        import asyncio

        try:
            here = asyncio.get_running_loop() is self._loop
        except RuntimeError:
            here = False
        if here:
            self._put(event)
        else:
            try:
                self._loop.call_soon_threadsafe(self._put, event)
            except RuntimeError:  # the loop is closed: the call is over
                pass

    def _put(self, event: ToolReport) -> None:
        if self._closed:
            return
        if self._queue.qsize() >= self._limit:
            self.dropped += 1
            return
        if self._tool is not None and event.tool is None:
            from dataclasses import replace

            event = replace(event, tool=self._tool)
        self._queue.put_nowait(event)
        if self._pump is None:
            self._pump = self._loop.create_task(self._deliver())

    async def _deliver(self) -> None:
        while True:
            event = await self._queue.get()
            try:
                await self._sink(event)
            except Exception:
                _log().exception("a tool report could not be delivered")
            finally:
                self._queue.task_done()

    async def drain(self) -> None:
        """Deliver what was reported, then stop: later reports are dropped."""
        # Reports a worker thread made before the handler returned were scheduled on the loop before
        # the handler's result (call_soon_threadsafe is FIFO), so they are queued by now.
        self._closed = True
        if self._pump is None:
            return
        try:
            await self._queue.join()
        finally:
            self._pump.cancel()
        if self.dropped:
            _log().warning(
                "%d reports of %s were dropped (more than %d waiting)", self.dropped, self._tool, self._limit
            )


__all__ = [
    "LOG_LEVELS",
    "LogLevel",
    "Progress",
    "QueuedReporter",
    "Reporter",
    "ToolLog",
    "ToolReport",
    "log_event",
    "progress_event",
]
