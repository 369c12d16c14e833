"""``reyn mcp serve`` answers each ``tools/list`` with the gates asked for that request: a tool whose
own ``available(ctx)`` refuses (or was late) at one request is listed at the next once it admits,
and gone again when it refuses — nothing computed at start-up is replayed. The per-call argument
schema lookup (``input_schema``) comes from the registry's definition, whatever a listing showed.
The real SDK ``Client`` connected in-process to the server ``build_server`` makes."""

from __future__ import annotations

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
