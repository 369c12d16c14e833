"""``ctx.report_progress`` / ``ctx.log``: checked even when nobody listens, a no-op without a
reporter, and delivered in order, before the call's result, through ``QueuedReporter`` — from async
handlers and from sync ones (which run in a worker thread)."""

from __future__ import annotations

import asyncio
import dataclasses
import threading

import pytest

from reyn_core import ToolContext, tool
from reyn_core.host import Progress, QueuedReporter, RegistryBuilder, ToolLog, ToolReport, dispatch_tool


@tool(cluster="work", purity="read_only")
async def work_async(steps: int, ctx: ToolContext) -> int:
    """Work in steps, reporting each."""
    for i in range(1, steps + 1):
        await asyncio.sleep(0)
        ctx.report_progress(i, steps, f"step {i}")
    ctx.log("info", "done", steps=steps)
    return steps


@tool(cluster="work", purity="read_only")
def work_sync(steps: int, ctx: ToolContext) -> str:
    """Work in steps from a thread, reporting each."""
    for i in range(1, steps + 1):
        ctx.report_progress(i, steps)
    ctx.log("warning", "done")
    return threading.current_thread().name


def _registry():  # type: ignore[no-untyped-def]
    builder = RegistryBuilder()
    builder.register(work_async)
    builder.register(work_sync)
    return builder.freeze()


async def test_a_reporting_handler_with_no_listener_works() -> None:
    registry = _registry()
    assert ToolContext().reporter is None
    assert await dispatch_tool(registry, "work_async", {"steps": 3}, ToolContext()) == {
        "status": "ok",
        "data": 3,
    }
    envelope = await dispatch_tool(registry, "work_sync", {"steps": 3}, ToolContext())
    assert envelope["status"] == "ok"


def test_without_a_reporter_reporting_is_a_no_op_but_still_checked() -> None:
    ctx = ToolContext()
    ctx.report_progress(1, 2, "half")
    ctx.log("debug", "fine", n=1)
    with pytest.raises(TypeError, match="done"):
        ctx.report_progress("1")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="finite"):
        ctx.report_progress(float("nan"))
    with pytest.raises(ValueError, match="above total"):
        ctx.report_progress(3, 2)
    with pytest.raises(ValueError, match="at least 0"):
        ctx.report_progress(-1)
    with pytest.raises(TypeError, match="done"):
        ctx.report_progress(True)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="use one of debug, info"):
        ctx.log("verbose", "x")
    with pytest.raises(TypeError, match="message"):
        ctx.log("info", 42)  # type: ignore[arg-type]


def test_a_long_message_is_cut_to_the_bound() -> None:
    heard: list[ToolReport] = []

    class Listener:
        def report(self, event: ToolReport) -> None:
            heard.append(event)

    ctx = ToolContext(reporter=Listener())
    ctx.report_progress(1, message="x" * 100_000)
    assert isinstance(heard[0], Progress) and heard[0].message is not None
    assert len(heard[0].message) == 2000


def test_the_reporter_is_kept_by_context_copies_and_left_out_of_data() -> None:
    class Listener:
        def report(self, event: ToolReport) -> None:
            pass

    listener = Listener()
    ctx = ToolContext().with_reporter(listener)
    assert ctx.with_settings({"a": 1}).reporter is listener
    assert ctx.with_surface("mcp").reporter is listener
    # a context rebuilt from its data fields, as across a process boundary, has no reporter
    data = {f.name: getattr(ctx, f.name) for f in dataclasses.fields(ctx) if f.name != "reporter"}
    assert ToolContext(**data).reporter is None


@pytest.mark.parametrize("name", ["work_async", "work_sync"])
async def test_reports_arrive_in_order_before_the_result(name: str) -> None:
    heard: list[ToolReport] = []

    async def sink(event: ToolReport) -> None:
        await asyncio.sleep(0.001)  # a slow client: delivery must still finish before the result
        heard.append(event)

    reporter = QueuedReporter(sink, tool=name)
    envelope = await dispatch_tool(_registry(), name, {"steps": 5}, ToolContext().with_reporter(reporter))
    await reporter.drain()
    assert envelope["status"] == "ok"
    progress = [e for e in heard if isinstance(e, Progress)]
    assert [p.done for p in progress] == [1, 2, 3, 4, 5]
    assert all(p.total == 5 and p.tool == name for p in progress)
    assert isinstance(heard[-1], ToolLog) and heard[-1].message == "done" and heard[-1].tool == name
    if name == "work_sync":
        assert envelope["data"] != threading.current_thread().name  # it did run in another thread


async def test_a_flood_of_reports_is_bounded_and_the_call_still_answers() -> None:
    delivered: list[ToolReport] = []

    async def sink(event: ToolReport) -> None:
        await asyncio.sleep(0)
        delivered.append(event)

    reporter = QueuedReporter(sink, limit=10)
    ctx = ToolContext().with_reporter(reporter)
    for i in range(10_000):
        ctx.report_progress(i)
    await reporter.drain()
    assert len(delivered) <= 11 and reporter.dropped >= 9_989
    ctx.report_progress(1)  # after drain: dropped, no error
    assert len(delivered) <= 11


async def test_a_failing_sink_loses_its_event_not_the_call() -> None:
    async def sink(event: ToolReport) -> None:
        raise RuntimeError("client went away")

    reporter = QueuedReporter(sink)
    envelope = await dispatch_tool(
        _registry(), "work_async", {"steps": 2}, ToolContext().with_reporter(reporter)
    )
    await reporter.drain()
    assert envelope == {"status": "ok", "data": 2}
