"""``reyn mcp serve`` answers each ``tools/list`` with the gates asked for that request: a tool whose
own ``available(ctx)`` refuses (or was late) at one request is listed at the next once it admits,
and gone again when it refuses — nothing computed at start-up is replayed. The per-call argument
schema lookup (``input_schema``) comes from the registry's definition, whatever a listing showed.
The real SDK ``Client`` connected in-process to the server ``build_server`` makes."""

from __future__ import annotations

import asyncio
import threading

import mcp_types as types
from mcp import Client
from reyn_tools_mcp.serve import ServedRegistry, build_server

from reyn_core import ToolContext, ToolDefinition
from reyn_core.host import RegistryBuilder

SCHEMA = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}


def _served(check) -> ServedRegistry:
    builder = RegistryBuilder()
    builder.register(
        ToolDefinition(
            name="gated", description="Gated.", parameters=SCHEMA, handler=lambda text: text, available=check
        )
    )
    builder.register(
        ToolDefinition(name="plain", description="Plain.", parameters=SCHEMA, handler=lambda text: text)
    )
    return ServedRegistry(builder.freeze(), ToolContext(surface="router", agent="mcp"))


async def test_tools_list_follows_the_check_between_requests() -> None:
    admit = threading.Event()
    served = _served(lambda ctx: admit.is_set())
    async with Client(build_server(served)) as client:
        first = [t.name for t in (await client.list_tools()).tools]
        refused = await client.call_tool("gated", {"text": "hi"})
        admit.set()
        second = [t.name for t in (await client.list_tools()).tools]
        called = await client.call_tool("gated", {"text": "hi"})
        admit.clear()
        third = [t.name for t in (await client.list_tools()).tools]
    assert first == ["plain"] and third == ["plain"]
    assert second == ["gated", "plain"]  # control: admitted at this request, listed
    assert refused.is_error and not called.is_error
    assert isinstance(called.content[0], types.TextContent) and called.content[0].text == "hi"


async def test_a_check_late_at_start_does_not_hide_its_tool_for_good() -> None:
    """The first ask is late (its check waits on an Event past the deadline); a later request, once
    the check answers in time, lists the tool."""
    release, first_ask = threading.Event(), threading.Event()

    def cold_then_quick(ctx: ToolContext) -> bool:
        if not first_ask.is_set():
            first_ask.set()
            release.wait(30)
        return True

    served = _served(cold_then_quick)
    try:
        async with Client(build_server(served)) as client:
            late = [t.name for t in (await client.list_tools()).tools]
            release.set()
            for _ in range(300):  # until the late ask has returned (then asked anew)
                later = [t.name for t in (await client.list_tools()).tools]
                if later == ["gated", "plain"]:
                    break
    finally:
        release.set()
    assert late == ["plain"] and later == ["gated", "plain"]


def test_the_input_schema_comes_from_the_registry_not_a_listing() -> None:
    served = _served(lambda ctx: False)
    assert [t.name for t in served.tools(True)] == ["plain"]
    assert served.input_schema("gated") == served.input_schema("plain") != None  # noqa: E711
    assert served.input_schema("gated")["required"] == ["text"]
    assert served.input_schema("missing") is None and served.input_schema(3) is None  # type: ignore[arg-type]


def test_the_input_schema_runs_no_enricher_and_keeps_nothing() -> None:
    """A hidden tool's schema enricher (plugin code) is never run for ``input_schema``: it answers
    the registered ``parameters``, the same on every lookup. Control: a listing of a tool it can see
    still shows the enriched schema."""
    ran: list[str | None] = []

    def enrich(params: dict, ctx: ToolContext) -> dict:
        ran.append(ctx.agent)
        params["properties"]["text"] = {"type": "string", "enum": [f"e{len(ran)}"]}
        return params

    builder = RegistryBuilder()
    for name, check in (("hidden", lambda ctx: False), ("shown", lambda ctx: True)):
        builder.register(
            ToolDefinition(
                name=name,
                description="E.",
                parameters=SCHEMA,
                handler=lambda text: text,
                available=check,
                schema_enricher=enrich,
            )
        )
    served = ServedRegistry(builder.freeze(), ToolContext(surface="router", agent="mcp"))
    assert served.input_schema("hidden") == served.input_schema("hidden") == SCHEMA and ran == []
    listed = served.tools(True)
    assert [t.name for t in listed] == ["shown"] and ran == ["mcp"]
    assert listed[0].input_schema["properties"]["text"]["enum"] == ["e1"]  # control
    assert served.input_schema("shown") == SCHEMA


async def test_a_call_is_not_starved_by_listings_waiting_on_slow_checks(monkeypatch) -> None:
    """40 tools/list wait on a check that answers only when released (the deadline made long, so
    only the release ends them): they wait in the server's own listing threads, and a call of a
    plain tool — whose handler runs in asyncio's default executor — completes meanwhile. Control:
    once released, every listing answers with the gated tool."""
    from reyn_core import own_check

    monkeypatch.setattr(own_check, "CHECK_DEADLINE_S", 120.0)
    release, asked, slow_now = threading.Event(), threading.Event(), threading.Event()

    def slow(ctx: ToolContext) -> bool:
        if slow_now.is_set():
            asked.set()
            return release.wait(120)
        return True

    served = _served(slow)
    try:
        async with Client(build_server(served)) as client:
            await client.list_tools()  # the SDK client lists once itself, for the tools' output schemas
            slow_now.set()
            lists = [asyncio.create_task(client.list_tools()) for _ in range(40)]
            assert await asyncio.to_thread(asked.wait, 60)
            called = await asyncio.wait_for(client.call_tool("plain", {"text": "hi"}), 60)
            assert not called.is_error and not any(task.done() for task in lists)
            release.set()
            listed = await asyncio.gather(*lists)
    finally:
        release.set()
    assert [[t.name for t in r.tools] for r in listed] == [["gated", "plain"]] * 40
