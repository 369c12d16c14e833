"""What a running tool reports (``ctx.report_progress``, ``ctx.log``) reaches a RouterLoop's or a
PhaseRunner's host as ``tool_progress`` / ``tool_log`` events, between the call's start and its
result, through the real litellm client against the scripted local model server."""

from __future__ import annotations

import asyncio
import io
import threading
from typing import Any

import pytest
from registry_kit import frozen_registry

from reyn_core import ToolContext, tool
from reyn_core.host import ToolRegistry, ToolReport
from reyn_loops import EVENT_KINDS, PhaseRunner, RouterLoop, SurfaceEvent, Transcript
from reyn_loops.testing.scripted_server import ScriptedReply as R
from reyn_loops.testing.scripted_server import tool_results

from .conftest import MODEL
from .test_phase_runner import reply


@tool(cluster="survey", purity="read_only")
async def survey(pages: int, ctx: ToolContext) -> dict[str, int]:
    """Read the pages one by one, reporting progress (async handler)."""
    ctx.log("debug", "starting", pages=pages)
    for page in range(1, pages + 1):
        await asyncio.sleep(0)
        ctx.report_progress(page, pages, f"page {page}")
    ctx.log("info", "all pages read")
    return {"pages": pages}


@tool(cluster="survey", purity="read_only")
def survey_sync(pages: int, ctx: ToolContext) -> dict[str, Any]:
    """The same from a sync handler, which runs in a worker thread."""
    for page in range(1, pages + 1):
        ctx.report_progress(page, pages)
    ctx.log("warning", "done in a thread")
    return {"pages": pages, "main_thread": threading.current_thread() is threading.main_thread()}


@tool(cluster="survey", purity="read_only")
async def flood(count: int, ctx: ToolContext) -> int:
    """Report ``count`` times without ever yielding to the loop."""
    for i in range(count):
        ctx.report_progress(i + 1, count)
    return count


@tool(cluster="survey", purity="read_only")
def bad_report(ctx: ToolContext) -> str:
    """Report a progress above its total (the context refuses it)."""
    ctx.report_progress(5, 3)
    return "unreachable"


@pytest.fixture
def registry() -> ToolRegistry:
    return frozen_registry((survey, survey_sync, flood, bad_report))


class Collected(list[ToolReport]):
    """A reporter that keeps what it is given (a context's reporter before the loop adds its own)."""

    def report(self, event: ToolReport) -> None:
        self.append(event)


def of_call(events: list[SurfaceEvent], call_id: str) -> list[SurfaceEvent]:
    return [e for e in events if e.data.get("id") == call_id]


def test_the_report_kinds_are_event_kinds():
    assert {"tool_progress", "tool_log"} <= set(EVENT_KINDS)


async def test_router_host_gets_progress_and_logs_between_call_and_result(registry, tmp_path, scripted):
    server, client = scripted(R.calls(("survey", {"pages": 3}), ("survey_sync", {"pages": 2})), R.text("ok"))
    events: list[SurfaceEvent] = []
    ctx = ToolContext(surface="router", workspace=tmp_path)
    result = await RouterLoop(registry, model=MODEL, ctx=ctx, client=client, on_event=events.append).run("go")
    assert result.status == "done"
    assert tool_results(server.requests[1].body)["call_1_0"] == {"status": "ok", "data": {"pages": 3}}

    first = of_call(events, "call_1_0")
    assert [e.kind for e in first] == ["tool_call"] + ["tool_log"] + ["tool_progress"] * 3 + [
        "tool_log",
        "tool_result",
    ]
    progress = [e.data for e in first if e.kind == "tool_progress"]
    assert [(p["done"], p["total"], p["message"]) for p in progress] == [
        (1.0, 3.0, "page 1"),
        (2.0, 3.0, "page 2"),
        (3.0, 3.0, "page 3"),
    ]
    assert all(p["tool"] == "survey" for p in progress)
    logs = [e.data for e in first if e.kind == "tool_log"]
    assert logs == [
        {"tool": "survey", "id": "call_1_0", "level": "debug", "message": "starting", "data": {"pages": 3}},
        {"tool": "survey", "id": "call_1_0", "level": "info", "message": "all pages read", "data": {}},
    ]

    second = of_call(events, "call_1_1")  # reported from a worker thread, delivered on the loop
    assert [e.kind for e in second] == [
        "tool_call",
        "tool_progress",
        "tool_progress",
        "tool_log",
        "tool_result",
    ]
    assert second[-1].data["envelope"]["data"]["main_thread"] is False


async def test_reports_still_reach_the_reporter_the_loop_was_given(registry, tmp_path, scripted):
    _, client = scripted(R.calls(("survey", {"pages": 2})), R.text("ok"))
    outer = Collected()
    events: list[SurfaceEvent] = []
    ctx = ToolContext(surface="router", workspace=tmp_path).with_reporter(outer)
    await RouterLoop(registry, model=MODEL, ctx=ctx, client=client, on_event=events.append).run("go")
    assert [type(e).__name__ for e in outer] == ["ToolLog", "Progress", "Progress", "ToolLog"]
    assert len([e for e in events if e.kind in ("tool_progress", "tool_log")]) == 4


async def test_without_a_listener_the_reports_go_where_they_went_before(registry, tmp_path, scripted):
    _, client = scripted(R.calls(("survey", {"pages": 2})), R.text("ok"))
    outer = Collected()
    ctx = ToolContext(surface="router", workspace=tmp_path).with_reporter(outer)
    result = await RouterLoop(registry, model=MODEL, ctx=ctx, client=client).run("go")
    assert result.status == "done" and len(outer) == 4


async def test_a_flood_of_reports_is_bounded_and_the_call_still_answers(registry, tmp_path, scripted):
    server, client = scripted(R.calls(("flood", {"count": 50_000})), R.text("ok"))
    events: list[SurfaceEvent] = []
    ctx = ToolContext(surface="router", workspace=tmp_path)
    result = await RouterLoop(registry, model=MODEL, ctx=ctx, client=client, on_event=events.append).run("go")
    assert result.status == "done"
    assert tool_results(server.requests[1].body)["call_1_0"] == {"status": "ok", "data": 50_000}
    progress = [e.data["done"] for e in events if e.kind == "tool_progress"]
    assert progress == [float(i) for i in range(1, 257)]  # the first 256 waiting, in order; the rest dropped


async def test_a_bad_report_is_the_tools_error_and_the_loop_goes_on(registry, tmp_path, scripted):
    server, client = scripted(R.calls(("bad_report", {}), ("survey", {"pages": 1})), R.text("ok"))
    events: list[SurfaceEvent] = []
    ctx = ToolContext(surface="router", workspace=tmp_path)
    result = await RouterLoop(registry, model=MODEL, ctx=ctx, client=client, on_event=events.append).run("go")
    assert result.status == "done"
    results = tool_results(server.requests[1].body)
    assert results["call_1_0"]["status"] == "error"
    assert "report_progress(done=5) is above total=3" in results["call_1_0"]["error"]["message"]
    assert results["call_1_1"]["status"] == "ok"
    assert [e.kind for e in of_call(events, "call_1_0")] == ["tool_call", "tool_result"]


async def test_phase_host_gets_an_ops_progress_and_logs(registry, tmp_path, scripted):
    _, client = scripted(
        reply("finish", ops=[{"kind": "survey", "pages": 2}]),
        reply("finish", artifact={"type": "summary", "data": {}}),
    )
    events: list[SurfaceEvent] = []
    ctx = ToolContext(surface="phase", workspace=tmp_path)
    runner = PhaseRunner(
        registry,
        model=MODEL,
        ctx=ctx,
        client=client,
        name="read",
        allowed_ops=["survey"],
        on_event=events.append,
    )
    result = await runner.run("read two pages")
    assert result.status == "finish"
    around = [e for e in events if e.kind in ("op", "tool_progress", "tool_log", "op_result")]
    assert [e.kind for e in around] == [
        "op",
        "tool_log",
        "tool_progress",
        "tool_progress",
        "tool_log",
        "op_result",
    ]
    assert {e.data["op"] for e in around} == {"survey"}
    assert [e.data["done"] for e in around if e.kind == "tool_progress"] == [1.0, 2.0]


def test_the_transcript_shows_progress_and_logs():
    out = io.StringIO()
    show = Transcript(out)
    show(SurfaceEvent("tool_progress", {"tool": "survey", "done": 2.0, "total": 3.0, "message": "page 2"}))
    show(SurfaceEvent("tool_progress", {"tool": "survey", "done": 7.0, "total": None, "message": None}))
    show(SurfaceEvent("tool_log", {"tool": "survey", "level": "info", "message": "all pages read"}))
    assert out.getvalue().splitlines() == [
        "    … survey: 2/3 page 2",
        "    … survey: 7",
        "    · survey info: all pages read",
    ]
