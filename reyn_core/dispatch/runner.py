"""Running a handler: async handlers awaited, sync ones in a worker thread, under the tool's timeout,
with ``sys.exit()`` contained."""

from __future__ import annotations

import contextvars
import inspect
import threading
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from ..errors import ToolTimeout, describe_exception
from ..tool import ToolDefinition

if TYPE_CHECKING:
    import asyncio


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
    fn: Callable[..., Any], is_async: bool, tool: ToolDefinition, kwargs: dict[str, Any]
) -> Any:
    """Call ``fn(**kwargs)``: awaited when async, else in a worker thread; under the tool's timeout.

    (The dispatcher awaits an async handler without a timeout itself, containing ``sys.exit()`` with
    ``handler_exit``: the common case, without this coroutine's frame.)"""
    if is_async:
        return await within(fn(**kwargs), tool)
    if tool.timeout_s is None:
        import asyncio

        result = await _contain_exit(asyncio.to_thread(fn, **kwargs))
    else:
        result = await within(_in_daemon_thread(fn, (), kwargs, tool.name), tool)
    if inspect.isawaitable(result):  # a sync callable that returned a coroutine
        result = await within(result, tool)
    return result
