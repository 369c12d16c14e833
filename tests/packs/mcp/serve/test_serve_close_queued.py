"""A call waiting for a ``--max-concurrent-calls`` slot when the server starts stopping runs no tool
(review of the merge 6b9be97): the check is where a tool starts, under the slot, not only where a
call arrives. In process, the real ``ServedRegistry``; an Event, not a timer, orders the calls."""

from __future__ import annotations

import asyncio

import pytest
from reyn_tools_mcp.serve import ServedRegistry

from reyn_core import ToolContext, ToolDefinition
from reyn_core.host import RegistryBuilder

SCHEMA = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}


def served_with_one_slot(started: list[str], release: asyncio.Event) -> ServedRegistry:
    async def held(text: str) -> str:
        started.append(text)
        await release.wait()
        return text

    builder = RegistryBuilder()
    builder.register(ToolDefinition(name="held", description="Held.", parameters=SCHEMA, handler=held))
    return ServedRegistry(builder.freeze(), ToolContext(surface="router", agent="mcp"), 1)


async def first_holds_the_slot_second_waits(
    served: ServedRegistry, started: list[str]
) -> tuple[asyncio.Task[object], asyncio.Task[object]]:
    first = asyncio.create_task(served.call("held", {"text": "first"}))
    while started != ["first"]:
        await asyncio.sleep(0.01)
    second = asyncio.create_task(served.call("held", {"text": "second"}))
    for _ in range(20):  # let the second call reach the slot it waits for
        await asyncio.sleep(0)
    return first, second


@pytest.mark.parametrize("stops", [True, False], ids=["server-stops", "control-no-stop"])
def test_a_call_waiting_for_a_slot_runs_no_tool_once_the_server_stops(stops: bool) -> None:
    # control (no stop): the same two calls; the second runs once the first ends
    async def run() -> None:
        started: list[str] = []
        release = asyncio.Event()
        served = served_with_one_slot(started, release)
        first, second = await first_holds_the_slot_second_waits(served, started)
        if stops:
            served.close()
        release.set()
        answered_first, answered_second = await asyncio.gather(first, second)
        assert not answered_first.is_error  # the running call finishes either way
        if stops:
            assert answered_second.is_error and "shutting down" in answered_second.content[0].text
            assert started == ["first"]  # the queued call's tool never started
        else:
            assert not answered_second.is_error and started == ["first", "second"]

    asyncio.run(run())
