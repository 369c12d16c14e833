"""Per-call cost of one tool call, Reyn against its peers, in one run and one event loop.

The same async three-argument function (the one ``bench_core`` uses) is called, with the same
arguments as a dict:
- directly: ``await grep(**args)`` — the floor;
- Reyn: ``invoke_tool(registry, name, args, ctx)`` (lookup, gates, argument validation, call,
  outcome);
- LangChain: ``StructuredTool.from_function(coroutine=grep).ainvoke(args)`` (``langchain-core``);
- the mcp SDK: an ``MCPServer`` with the function as a tool and the SDK's ``Client`` connected to it
  in-process (memory streams; JSON-RPC, validation, result content) — ``client.call_tool``;
- pydantic-ai: a ``FunctionToolset`` with the function, called through the ``ToolManager`` an agent
  run uses (``handle_call`` of a ``ToolCallPart``: lookup, validation, call, retry bookkeeping),
  without a model round trip.
Peers that are not installed are skipped with a line saying how to install them (the core's
``bench`` extra has them all). Figures are medians of interleaved samples.
"""

from __future__ import annotations

import asyncio
import gc
import statistics
import time
from collections.abc import Awaitable, Callable
from typing import Any

ARGS = {"path": "notes/today.md", "limit": 20, "pattern": "TODO"}
SAMPLES, CALLS_PER_SAMPLE = 21, 200

Call = Callable[[], Awaitable[Any]]


async def grep(path: str, limit: int, pattern: str) -> int:
    """Count matches (async)."""
    return limit + len(path) + len(pattern)


async def reyn_peer() -> tuple[Call, str]:
    from reyn_core import ToolContext, tool
    from reyn_core.host import RegistryBuilder, invoke_tool

    builder = RegistryBuilder()
    builder.register(tool(cluster="bench", purity="read_only")(grep))
    registry = builder.freeze()
    ctx = ToolContext(surface="router", agent="bench")
    return (lambda: invoke_tool(registry, "grep", ARGS, ctx)), "reyn_core"


async def langchain_peer() -> tuple[Call, str]:
    from langchain_core.tools import StructuredTool

    lc = StructuredTool.from_function(coroutine=grep, name="grep", description="Count matches (async).")
    return (lambda: lc.ainvoke(ARGS)), "langchain-core"


async def pydantic_ai_peer() -> tuple[Call, str]:
    from pydantic_ai import RunContext
    from pydantic_ai.messages import ToolCallPart
    from pydantic_ai.models.test import TestModel
    from pydantic_ai.tool_manager import ToolManager
    from pydantic_ai.toolsets import FunctionToolset
    from pydantic_ai.usage import RunUsage

    ctx = RunContext(deps=None, model=TestModel(), usage=RunUsage())
    manager = await ToolManager(FunctionToolset([grep])).for_run_step(ctx)
    return (lambda: manager.handle_call(ToolCallPart("grep", ARGS))), "pydantic-ai-slim"


PEERS: dict[str, Callable[[], Awaitable[tuple[Call, str]]]] = {
    "Reyn invoke_tool": reyn_peer,
    "LangChain StructuredTool.ainvoke": langchain_peer,
    "pydantic-ai ToolManager.handle_call": pydantic_ai_peer,
}


async def sample(make: Call) -> float:
    start = time.perf_counter()
    for _ in range(CALLS_PER_SAMPLE):
        await make()
    return (time.perf_counter() - start) / CALLS_PER_SAMPLE


async def measure() -> tuple[dict[str, float], list[str]]:
    calls: dict[str, Call] = {"direct await grep(**args)": lambda: grep(**ARGS)}
    skipped: list[str] = []
    for label, build in PEERS.items():
        try:
            calls[label], _ = await build()
        except ImportError as exc:
            skipped.append(f"skipped {label}: {exc.name or exc} is not installed (pip install -e '.[bench]')")
    try:
        from mcp import Client
        from mcp.server import MCPServer
    except ImportError as exc:
        skipped.append(f"skipped mcp SDK in-process client: {exc.name or exc} is not installed")
        return await run(calls), skipped
    server = MCPServer("bench")
    server.tool()(grep)
    async with Client(server) as client:
        calls["mcp SDK Client.call_tool (in-process)"] = lambda: client.call_tool("grep", ARGS)
        return await run(calls), skipped


async def run(calls: dict[str, Call]) -> dict[str, float]:
    for make in calls.values():  # warm-up, and a check that each answers
        for _ in range(50):
            await make()
    samples: dict[str, list[float]] = {label: [] for label in calls}
    enabled = gc.isenabled()
    gc.disable()
    try:
        for _ in range(SAMPLES):
            for label, make in calls.items():
                samples[label].append(await sample(make))
    finally:
        if enabled:
            gc.enable()
    return {label: statistics.median(s) for label, s in samples.items()}


def main() -> None:
    results, skipped = asyncio.run(measure())
    floor = results["direct await grep(**args)"]
    print(
        f"one call of an async three-argument tool, dict arguments "
        f"(median of {SAMPLES} x {CALLS_PER_SAMPLE})\n"
    )
    print(f"  {'caller':<40} {'µs per call':>12} {'overhead µs':>12} {'x direct':>9}")
    for label, value in sorted(results.items(), key=lambda kv: kv[1]):
        print(f"  {label:<40} {value * 1e6:>12.2f} {(value - floor) * 1e6:>12.2f} {value / floor:>8.1f}x")
    for line in skipped:
        print(line)


if __name__ == "__main__":
    raise SystemExit(main())
