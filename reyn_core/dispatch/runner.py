"""Running a handler: async handlers awaited, sync ones in a worker thread, under the tool's timeout,
with ``sys.exit()`` contained; a host may count a call's handler threads to their end
(``HandlerThreads``)."""

from __future__ import annotations

import contextlib
import contextvars
import inspect
import logging
import threading
from collections.abc import Awaitable, Callable, Iterator
from typing import TYPE_CHECKING, Any

from ..errors import ToolTimeout, describe_exception
from ..tool import ToolDefinition

if TYPE_CHECKING:
    import asyncio

    from ..calls import ToolCall


class HandlerThreads:
    """The worker threads the sync handlers of one call run in, for a host that counts the call
    until the last of them ends. A caller's cancellation (an MCP client's ``notifications/cancelled``)
    and a tool's timeout end the call for its caller at once, but a thread cannot be stopped: its
    handler runs on, holding what the call held. The calls dispatched inside ``counting()`` (this task
    and the tasks it starts) count their handlers' threads here; ``when_ended(callback)`` calls
    ``callback`` on the event loop once none runs (at once when none does). A handler whose call was
    cancelled before its thread took it never starts.

    The event loop the callbacks run on is the host's, recorded once (by ``counting()``, the first
    ``when_ended`` or the first dispatch, whichever first runs on a loop), never replaced where a
    handler is dispatched later: a sync handler may run ``asyncio.run(...)``
    dispatching another tool, on a loop of its own that is closed before the host's release is due.

    An async handler is counted the same way, from its start to its end: one that swallows its
    cancellation (or runs on past its timeout) runs on as a thread does.

    ``abandoned()`` names the calls whose handler still runs (in its thread, or as a coroutine), for
    a host that exits without waiting for them (``JsonlAuditLog.abandoned`` records each)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._running = 0
        self._runs: list[_ThreadRun] = []
        self._callbacks: list[Callable[[], None]] = []
        self._loop: asyncio.AbstractEventLoop | None = None

    @contextlib.contextmanager
    def counting(self) -> Iterator[HandlerThreads]:
        """Count the handler threads of the calls dispatched within."""
        self._host_loop()
        token = _COUNTING.set(self)
        try:
            yield self
        finally:
            _COUNTING.reset(token)

    @staticmethod
    def current() -> HandlerThreads | None:
        """The ``HandlerThreads`` counting the calls of this context (None when none does)."""
        return _COUNTING.get()

    @property
    def running(self) -> int:
        """How many of the call's handler threads run (or wait to run) now."""
        return self._running

    def when_ended(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` once no handler thread of the call runs: now, or on the event loop when
        the last one ends."""
        self._host_loop()
        with self._lock:
            if self._running:
                self._callbacks.append(callback)
                return
        callback()

    def _host_loop(self) -> None:
        """Record the running loop as the host's, once (the first call made in the host's code)."""
        if self._loop is None:
            import asyncio

            with contextlib.suppress(RuntimeError):  # no loop runs here: the next call records it
                self._loop = asyncio.get_running_loop()

    def abandoned(self) -> list[ToolCall]:
        """The calls (as their ``after`` hooks saw them) whose handler runs now (in its thread, or
        as a coroutine): what a host exiting without waiting for them abandons. A call dispatched
        without hooks has no such record and is not named."""
        with self._lock:
            return [r.call for r in self._runs if r.state == "running" and r.call is not None]

    def _wrap(self, fn: Callable[..., Any], call: ToolCall | None) -> tuple[Callable[..., Any], _ThreadRun]:
        # dispatched on the host's loop when none is recorded yet (its counting() and when_ended()
        # ran with no loop running): recorded here, else this thread's end had no loop to report to
        self._host_loop()
        run = _ThreadRun(self, call)
        with self._lock:
            self._running += 1
            self._runs.append(run)

        def counted(*args: Any, **kwargs: Any) -> Any:
            if not run.enter():  # its call was cancelled before a thread took it: never started
                return None
            try:
                return fn(*args, **kwargs)
            finally:
                run.end()

        return counted, run

    async def _counted(self, awaitable: Awaitable[Any], call: ToolCall | None) -> Any:
        """Await an async handler, counted (and named by ``abandoned()``) until it ends."""
        self._host_loop()
        run = _ThreadRun(self, call)
        run.state = "running"
        with self._lock:
            self._running += 1
            self._runs.append(run)
        try:
            return await awaitable
        finally:
            run.end()

    def _one_ended(self) -> None:
        with self._lock:
            self._running -= 1
            if self._running:
                return
            callbacks, self._callbacks = self._callbacks, []
        if not callbacks:
            return
        try:
            if self._loop is None:
                raise RuntimeError("no event loop was recorded")
            for callback in callbacks:
                self._loop.call_soon_threadsafe(callback)
        except RuntimeError as exc:  # the host's loop is closed (it stopped): said, not swallowed
            logging.getLogger("reyn_core.dispatch").warning(
                "a handler thread ended after its host's event loop (%s); %d release(s) not run",
                exc,
                len(callbacks),
            )


class _ThreadRun:
    """One handler's run in a thread: queued, then running, then ended — or dropped unrun."""

    __slots__ = ("call", "state", "threads")

    def __init__(self, threads: HandlerThreads, call: ToolCall | None) -> None:
        self.threads, self.state, self.call = threads, "queued", call

    def enter(self) -> bool:
        with self.threads._lock:
            if self.state == "dropped":
                return False
            self.state = "running"
            return True

    def end(self) -> None:
        with self.threads._lock:
            self.state = "ended"
            self.threads._runs.remove(self)
        self.threads._one_ended()

    def drop_if_queued(self) -> None:
        """Its caller waits no longer: a run no thread took yet will never start (it ends now)."""
        with self.threads._lock:
            if self.state != "queued":
                return
            self.state = "dropped"
            self.threads._runs.remove(self)
        self.threads._one_ended()


_COUNTING: contextvars.ContextVar[HandlerThreads | None] = contextvars.ContextVar(
    "reyn_handler_threads", default=None
)


class HandlerExit(Exception):
    """A handler called ``sys.exit()``: a tool may fail, but it may not stop the host."""


def describe(exc: BaseException) -> str:
    """A one-line description of what a handler raised."""
    return str(exc) if isinstance(exc, HandlerExit) else describe_exception(exc)


def handler_exit(exc: SystemExit) -> HandlerExit:
    """What a handler's ``sys.exit()`` becomes (raise it ``from None``)."""
    return HandlerExit(f"the handler called sys.exit({exc.code!r})")


async def _contain_exit(awaitable: Awaitable[Any]) -> Any:
    try:
        return await awaitable
    except SystemExit as exc:
        raise handler_exit(exc) from None


async def within(awaitable: Awaitable[Any], tool: ToolDefinition) -> Any:
    """Await ``awaitable`` under ``tool.timeout_s``; raise ``ToolTimeout`` when it runs over."""
    if tool.timeout_s is None:
        return await _contain_exit(awaitable)
    import asyncio

    # SystemExit must not cross a task boundary: the event loop would stop.
    task = asyncio.ensure_future(_contain_exit(awaitable))
    try:
        done, _ = await asyncio.wait({task}, timeout=tool.timeout_s)
    except asyncio.CancelledError:
        task.cancel()
        raise
    if not done:
        task.cancel()
        # A worker thread cannot be killed; its result is discarded when it finishes.
        raise ToolTimeout(
            f"tool {tool.name!r} did not finish within {tool.timeout_s:g} s and was stopped", tool=tool.name
        )
    return task.result()


def _in_daemon_thread(
    fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any], name: str
) -> asyncio.Future[Any]:
    """Run a sync handler that has a timeout in its own daemon thread.

    A thread cannot be killed, so a handler that hangs past its timeout keeps its thread; a daemon
    thread outside the loop's default executor means it can block neither the event loop's shutdown
    nor the interpreter's exit. Its late result is discarded.
    """
    import asyncio

    loop = asyncio.get_running_loop()
    future: asyncio.Future[Any] = loop.create_future()
    context = contextvars.copy_context()

    def deliver(ok: bool, value: Any) -> None:
        if not future.done():
            (future.set_result if ok else future.set_exception)(value)

    def target() -> None:
        try:
            outcome: tuple[bool, Any] = (True, context.run(fn, *args, **kwargs))
        except BaseException as exc:  # delivered to the awaiting call, SystemExit included
            outcome = (False, exc)
        try:
            loop.call_soon_threadsafe(deliver, *outcome)
        except RuntimeError:  # the loop is closed: nobody is waiting any more
            pass

    threading.Thread(target=target, name=f"reyn-tool-{name}", daemon=True).start()
    return future


async def run_handler(
    fn: Callable[..., Any],
    is_async: bool,
    tool: ToolDefinition,
    kwargs: dict[str, Any],
    call: ToolCall | None = None,
) -> Any:
    """Call ``fn(**kwargs)``: awaited when async, else in a worker thread; under the tool's timeout.
    ``call`` (the hooks' record of it, None without hooks) names the thread's call to a host
    counting it (``HandlerThreads.abandoned``).

    (The dispatcher awaits an async handler without a timeout, where no host counts it, itself,
    containing ``sys.exit()`` with ``handler_exit``: the common case, without this coroutine's
    frame.)"""
    threads = _COUNTING.get()
    if is_async:
        return await _awaited(fn(**kwargs), tool, threads, call)
    run = None
    if threads is not None:  # a host counts this call until its thread ends (HandlerThreads)
        fn, run = threads._wrap(fn, call)
    try:
        if tool.timeout_s is None:
            import asyncio

            result = await _contain_exit(asyncio.to_thread(fn, **kwargs))
        else:
            result = await within(_in_daemon_thread(fn, (), kwargs, tool.name), tool)
    finally:
        if run is not None:
            run.drop_if_queued()
    if inspect.isawaitable(result):  # a sync callable that returned a coroutine: counted as one
        result = await _awaited(result, tool, threads, call)
    return result


async def _awaited(
    awaitable: Awaitable[Any], tool: ToolDefinition, threads: HandlerThreads | None, call: ToolCall | None
) -> Any:
    """An async handler's awaitable under the tool's timeout, counted while a host counts its calls."""
    if threads is None:
        return await within(awaitable, tool)
    return await within(threads._counted(awaitable, call), tool)
