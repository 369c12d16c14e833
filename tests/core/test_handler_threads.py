"""``HandlerThreads``: a host counts a call until its sync handler's thread ends. A caller's
cancellation and a tool's timeout end the call for its caller at once, but a thread cannot be
stopped — the count keeps it until the handler returns (the control: then ``when_ended`` fires). A
call cancelled before a thread took its handler never starts it."""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from registry_kit import frozen_registry

from reyn_core import ToolContext, tool
from reyn_core.host import HandlerThreads, RegistryBuilder, dispatch_tool

GO = threading.Event()
ENTERED = threading.Event()
RAN: list[str] = []


@tool(purity="read_only")
def blocks() -> str:
    """Block this worker thread until the test says go."""
    ENTERED.set()
    GO.wait(60)
    RAN.append("blocks")
    return "done"


@tool(purity="read_only", timeout_s=0.2)
def blocks_past_its_timeout() -> str:
    """Block past this tool's own timeout."""
    ENTERED.set()
    GO.wait(60)
    RAN.append("blocks_past_its_timeout")
    return "late"


@tool(purity="read_only")
def quick() -> str:
    """Return at once."""
    RAN.append("quick")
    return "quick"


FROZEN: list[object] = []


@tool(purity="read_only")
def nests() -> str:
    """Dispatch another tool on an event loop of this thread's own, then block until go."""
    inner = asyncio.run(dispatch_tool(FROZEN[0], "quick", {}, ToolContext()))  # type: ignore[arg-type]
    ENTERED.set()
    GO.wait(60)
    RAN.append("nests")
    return inner["data"]


@pytest.fixture
def registry():
    GO.clear()
    ENTERED.clear()
    RAN.clear()
    builder = RegistryBuilder()
    for definition in (blocks, blocks_past_its_timeout, quick, nests):
        builder.register(definition)
    yield builder.freeze()
    GO.set()


async def _ended_after(threads: HandlerThreads) -> asyncio.Future[None]:
    ended: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    threads.when_ended(lambda: ended.done() or ended.set_result(None))
    return ended


# "nests": a handler that dispatched another tool on a loop its thread opened and closed; the host's
# release must still come on the host's loop (before, it was sent to the closed inner loop and lost)
@pytest.mark.parametrize(("name", "ran"), [("blocks", ["blocks"]), ("nests", ["quick", "nests"])])
async def test_a_cancelled_call_counts_until_its_thread_ends(registry, name: str, ran: list[str]) -> None:
    FROZEN[:] = [registry]
    threads = HandlerThreads()
    with threads.counting():
        task = asyncio.ensure_future(dispatch_tool(registry, name, {}, ToolContext()))
    await asyncio.to_thread(ENTERED.wait, 30)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    ended = await _ended_after(threads)
    assert threads.running == 1 and not ended.done()  # the handler still runs in its thread
    GO.set()
    await asyncio.wait_for(ended, 30)  # the control: its end is seen
    assert threads.running == 0 and RAN == ran


async def test_a_timed_out_call_counts_until_its_thread_ends(registry) -> None:
    threads = HandlerThreads()
    with threads.counting():
        envelope = await dispatch_tool(registry, "blocks_past_its_timeout", {}, ToolContext())
    assert envelope["error"]["kind"] == "timeout"
    ended = await _ended_after(threads)
    assert threads.running == 1 and not ended.done()
    GO.set()
    await asyncio.wait_for(ended, 30)
    assert threads.running == 0


async def test_a_call_that_returns_has_no_thread_left(registry) -> None:
    threads = HandlerThreads()
    with threads.counting():
        envelope = await dispatch_tool(registry, "quick", {}, ToolContext())
    ended = await _ended_after(threads)
    assert envelope["data"] == "quick" and threads.running == 0 and ended.done()


async def test_a_call_cancelled_before_its_thread_took_it_never_starts(registry) -> None:
    # one worker, kept busy: the quick handler waits in the executor's queue when its call is cancelled
    loop = asyncio.get_running_loop()
    loop.set_default_executor(ThreadPoolExecutor(1))
    hold = threading.Event()
    busy = loop.run_in_executor(None, hold.wait, 60)
    threads = HandlerThreads()
    try:
        with threads.counting():
            task = asyncio.ensure_future(dispatch_tool(registry, "quick", {}, ToolContext()))
        for _ in range(500):  # until the call has handed its handler to the executor
            if threads.running:
                break
            await asyncio.sleep(0.01)
        assert threads.running == 1
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        ended = await _ended_after(threads)
        assert ended.done() and threads.running == 0  # dropped unrun: nothing to wait for
    finally:
        hold.set()
        await busy
    await loop.run_in_executor(None, lambda: None)  # the queue has been worked through
    assert RAN == []


# The host entered counting() and called when_ended() with no loop running: the first dispatch, on
# the host's loop, records it (before, nothing was recorded and the release was dropped, logged).
# The control: the host that entered counting() on its running loop gets its release as well.
@pytest.mark.parametrize("counting_on_the_loop", [False, True])
def test_a_host_counting_before_its_loop_runs_gets_its_release(registry, counting_on_the_loop: bool) -> None:
    threads = HandlerThreads()
    released = threading.Event()
    loop = asyncio.new_event_loop()

    async def dispatched() -> asyncio.Task:
        with threads.counting():
            return asyncio.ensure_future(dispatch_tool(registry, "blocks", {}, ToolContext()))

    try:
        if counting_on_the_loop:
            task = loop.run_until_complete(dispatched())
        else:
            with threads.counting():  # no loop runs here
                task = loop.create_task(dispatch_tool(registry, "blocks", {}, ToolContext()))
        loop.run_until_complete(asyncio.to_thread(ENTERED.wait, 30))
        threads.when_ended(released.set)  # no loop runs here either: queued for the thread's end
        assert threads.running == 1 and not released.is_set()
        GO.set()
        loop.run_until_complete(task)
        loop.run_until_complete(asyncio.to_thread(released.wait, 30))  # the loop runs the release
    finally:
        loop.close()
    assert released.is_set() and threads.running == 0


async def test_a_timed_out_calls_running_thread_is_named_abandoned_and_audited(registry, tmp_path) -> None:
    import json

    from reyn_core.host import JsonlAuditLog

    audit = JsonlAuditLog(tmp_path / "audit.jsonl")
    builder = RegistryBuilder(hooks=audit.hooks())
    builder.register(blocks_past_its_timeout)
    audited = builder.freeze()
    threads = HandlerThreads()
    with threads.counting():
        envelope = await dispatch_tool(audited, "blocks_past_its_timeout", {}, ToolContext())
    assert envelope["error"]["kind"] == "timeout"
    [call] = threads.abandoned()  # its thread runs on: a host exiting now abandons this call
    await asyncio.to_thread(audit.abandoned, call)
    ended, event = (json.loads(line) for line in (tmp_path / "audit.jsonl").read_text().splitlines())
    assert (ended["status"], event["event"]) == ("timeout", "call.abandoned")
    assert {k: event[k] for k in ("tool", "definition_sha256", "args_sha256")} == {
        k: ended[k] for k in ("tool", "definition_sha256", "args_sha256")
    }
    ended_seen = await _ended_after(threads)
    GO.set()
    await asyncio.wait_for(ended_seen, 30)
    assert threads.abandoned() == []  # the control: once its thread ended, nothing is abandoned


async def _stubborn(ignore_cancel: bool) -> str:
    """Wait until the test says go; swallow a cancellation when ``ignore_cancel``."""
    ENTERED.set()
    while not GO.is_set():
        try:
            await asyncio.sleep(0.01)
        except asyncio.CancelledError:
            if not ignore_cancel:
                raise
    return "done"


@tool(purity="read_only")
async def stubborn(ignore_cancel: bool = True) -> str:
    """``_stubborn`` as an async tool."""
    return await _stubborn(ignore_cancel)


def _counted_call(tmp_path, handler: Any, ignore_cancel: bool) -> tuple[HandlerThreads, asyncio.Future[Any]]:
    """A call of ``handler`` alone in a registry with an audit log (hooks: calls are named), GO and
    ENTERED reset, started as a task under a fresh ``HandlerThreads``'s count (the task keeps the
    context it was started in, so the count follows the call to its end)."""
    from reyn_core.host import JsonlAuditLog

    GO.clear()
    ENTERED.clear()
    registry = frozen_registry([handler], hooks=JsonlAuditLog(tmp_path / "audit.jsonl").hooks())
    threads = HandlerThreads()
    with threads.counting():
        arguments = {"ignore_cancel": ignore_cancel}
        task = asyncio.ensure_future(dispatch_tool(registry, handler.name, arguments, ToolContext()))
    return threads, task


@pytest.mark.parametrize("ignore_cancel", [True, False])
async def test_an_async_handler_swallowing_its_cancellation_counts_and_is_named_abandoned(
    tmp_path, ignore_cancel: bool
) -> None:
    # one rule for threads and async handlers: one that runs on after its call was cancelled is still
    # running (before, nothing counted it: a host exiting abandoned it unnamed, unaudited); the
    # control: one that lets its cancellation end it leaves nothing running
    threads, task = _counted_call(tmp_path, stubborn, ignore_cancel)
    await asyncio.to_thread(ENTERED.wait, 30)
    task.cancel()
    if not ignore_cancel:
        with pytest.raises(asyncio.CancelledError):
            await task
        assert threads.running == 0 and threads.abandoned() == []
        return
    try:
        assert not task.done() and threads.running == 1
        assert [call.tool.name for call in threads.abandoned()] == ["stubborn"]
    finally:
        GO.set()  # a failed assertion must not leave the handler (which ignores cancellation) waiting
    await asyncio.wait_for(task, 30)
    assert threads.running == 0 and threads.abandoned() == []


@tool(purity="read_only", timeout_s=0.2)
def returns_a_stubborn_coroutine(ignore_cancel: bool = True) -> Any:
    """A sync callable whose result is a coroutine (awaited by the dispatcher under the timeout)."""
    return _stubborn(ignore_cancel)


@pytest.mark.parametrize("ignore_cancel", [True, False])
async def test_a_coroutine_a_sync_handler_returns_is_counted_like_an_async_handler(
    tmp_path, ignore_cancel: bool
) -> None:
    # the same rule for the coroutine a sync callable returns: past its timeout, one that swallows the
    # cancellation runs on, counted and named (before: its thread's count had ended, so a host saw
    # nothing running); the control: one that lets the timeout end it leaves nothing running
    threads, task = _counted_call(tmp_path, returns_a_stubborn_coroutine, ignore_cancel)
    envelope = await task
    assert envelope["error"]["kind"] == "timeout" and ENTERED.is_set()
    try:
        if ignore_cancel:
            assert threads.running == 1
            assert [call.tool.name for call in threads.abandoned()] == ["returns_a_stubborn_coroutine"]
        else:
            assert threads.running == 0 and threads.abandoned() == []
    finally:
        GO.set()
