"""``reyn mcp serve`` against a bare MCP SDK server serving the same function, in the same run.

1. Per ``tools/call``, in-memory transport (the SDK ``Client`` connected to the server object):
   the Reyn-served tool (gates, validation, dispatcher, envelope → result) vs a low-level SDK
   ``Server`` whose ``tools/call`` awaits the same async function directly. Target: ≤ 1.2x.
   The same with a sync function is reported: Reyn runs a sync handler in a worker thread so it
   cannot block the event loop; the bare server calls it inline (blocking every other request).
   Reyn lists the tool with an output schema (its typed result), and the SDK client validates every
   structured result against a declared output schema (Python ``jsonschema``, on the client's
   side): so the bare server is measured twice, declaring no output schema, and listing Reyn's own
   ``tools/list`` entry (the same work for the client). The module's verdict stays the stricter one.
2. Per ``tools/call`` over stdio (real subprocesses): ``reyn mcp serve`` vs a bare SDK server script.
3. Spawn → ``tools/list`` answered over stdio: ``reyn mcp serve`` (profile load, discovery,
   provenance, registration) vs the bare SDK server script. Reported, no target.
4. Server CPU per ``tools/call`` over streamable HTTP (real subprocesses on 127.0.0.1, the SDK
   client on each protocol generation: the ``initialize`` handshake and 2026-07-28): ``reyn mcp
   serve --http`` vs a bare SDK server (uvicorn, the SDK's own app), both with the SDK's default
   middleware. The server's user + system CPU time (``/proc/PID/stat``) over the calls, per call —
   what an operator pays per call, independent of the client's own cost. Target: ≤ 1.2x.

Run: ``python benchmarks/bench_mcp_serve.py [--calls N]`` or ``main()`` from benchmarks/run.py.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "plugins"))  # the shared test kit
from harness import table
from local_server import free_port, wait_listening
from site_plugin import install_site_plugin

TARGET_PER_CALL = 1.2
BIN = Path(sys.executable).parent

BARE_SERVER = textwrap.dedent(
    """
    import anyio, json
    import mcp_types as types
    from mcp.server.lowlevel import Server
    from mcp.server.stdio import stdio_server

    async def word_count(text):
        return {"words": len(text.split())}

    TOOL = types.Tool(name="word_count", description="Count the words in a text.",
        input_schema={"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]})

    async def on_list(ctx, params):
        return types.ListToolsResult(tools=[TOOL])

    async def on_call(ctx, params):
        data = await word_count(**(params.arguments or {}))
        return types.CallToolResult(
            content=[types.TextContent(text=json.dumps(data))], structured_content=data
        )

    server = Server("bare", on_list_tools=on_list, on_call_tool=on_call)

    async def main():
        async with stdio_server() as (r, w):
            await server.run(r, w, server.create_initialization_options())

    anyio.run(main)
    """
)

PLUGIN = textwrap.dedent(
    """
    from reyn_core import hookimpl, tool

    REYN_API = 1

    @tool(cluster="bench", purity="read_only")
    async def word_count(text: str) -> dict:
        \"\"\"Count the words in a text.\"\"\"
        return {"words": len(text.split())}

    @hookimpl
    def reyn_register_tools(register, settings):
        register(word_count)
    """
)


BARE_HTTP_SERVER = BARE_SERVER.replace(
    "from mcp.server.stdio import stdio_server", "import sys, uvicorn"
).split("async def main():")[0] + textwrap.dedent(
    """
    app = server.streamable_http_app(streamable_http_path="/mcp", host="127.0.0.1")
    uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning", access_log=False)
    """
)
MODERN = "2026-07-28"


def word_count(text: str) -> dict[str, int]:
    """Count the words in a text."""
    return {"words": len(text.split())}


async def word_count_async(text: str) -> dict[str, int]:
    """Count the words in a text."""
    return {"words": len(text.split())}


def bare_server(is_async: bool = True, served: Any = None) -> Any:
    """The low-level SDK server. ``served``: the ``Tool`` entry to list instead of the schema-less
    one — Reyn's own ``tools/list`` entry, output schema included, so that the client does the same
    work on both sides (it validates every structured result against a declared output schema)."""
    import json

    import mcp_types as types
    from mcp.server.lowlevel import Server

    tool = served or types.Tool(
        name="word_count",
        description="Count the words in a text.",
        input_schema={"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
    )

    async def on_list(ctx: Any, params: Any) -> Any:
        return types.ListToolsResult(tools=[tool])

    async def on_call(ctx: Any, params: Any) -> Any:
        arguments = params.arguments or {}
        data = await word_count_async(**arguments) if is_async else word_count(**arguments)
        return types.CallToolResult(
            content=[types.TextContent(text=json.dumps(data))], structured_content=data
        )

    server = Server("bare", on_list_tools=on_list, on_call_tool=on_call)
    server.middleware = []
    return server


def reyn_server(is_async: bool = True) -> Any:
    from reyn_tools_mcp.serve import ServedRegistry, build_server

    from reyn_core import ToolContext, tool
    from reyn_core.host import RegistryBuilder

    builder = RegistryBuilder()
    fn = word_count_async if is_async else word_count
    builder.register(tool(purity="read_only", name="word_count")(fn))
    served = ServedRegistry(builder.freeze(), ToolContext(surface="router", agent="bench"))
    server = build_server(served)
    server.middleware = []  # both without the SDK's OpenTelemetry middleware
    return server


async def per_call(client: Any, calls: int) -> float:
    """Median seconds per sequential tools/call over 7 rounds of ``calls`` calls."""
    for _ in range(50):
        await client.call_tool("word_count", {"text": "one two three"})
    rounds = []
    for _ in range(7):
        start = time.perf_counter()
        for _ in range(calls):
            result = await client.call_tool("word_count", {"text": "one two three"})
        rounds.append((time.perf_counter() - start) / calls)
        assert not result.is_error and result.structured_content == {"words": 3}
    return statistics.median(rounds)


async def in_memory(calls: int, is_async: bool) -> tuple[float, float, float]:
    """Seconds per call: the schema-less bare server, the bare server listing Reyn's own entry
    (the same declaration), and Reyn."""
    from mcp import Client

    async with Client(reyn_server(is_async)) as client:
        [served] = (await client.list_tools()).tools
    out = []
    for server in (bare_server(is_async), bare_server(is_async, served), reyn_server(is_async)):
        async with Client(server) as client:
            out.append(await per_call(client, calls))
    return out[0], out[1], out[2]


def _setup(root: Path) -> tuple[Any, Any]:
    from mcp import StdioServerParameters

    site = root / "site"
    ws = root / "ws"
    ws.mkdir()
    install_site_plugin(site, "bench_wc", PLUGIN)  # as an installer lays it out, RECORD included
    (ws / "reyn.toml").write_text('[plugins]\nenable = ["bench_wc", "mcp"]\n')
    (root / "bare.py").write_text(BARE_SERVER)
    import os

    env = {k: v for k, v in os.environ.items() if not k.startswith("REYN_")}
    env.update(PYTHONPATH=str(site), REYN_CACHE_DIR=str(root / "cache"))
    bare = StdioServerParameters(command=sys.executable, args=[str(root / "bare.py")], env=env)
    reyn = StdioServerParameters(command=str(BIN / "reyn"), args=["mcp", "serve"], cwd=str(ws), env=env)
    return bare, reyn


async def spawn_to_list(params: Any, repeat: int) -> float:
    from mcp import Client

    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        async with Client(params, mode="legacy") as client:
            tools = (await client.list_tools()).tools
            samples.append(time.perf_counter() - start)
        assert [t.name for t in tools] == ["word_count"]
    return statistics.median(samples)


async def over_stdio(calls: int, repeat: int) -> dict[str, tuple[float, float]]:
    from mcp import Client

    with tempfile.TemporaryDirectory() as tmp:
        bare, reyn = _setup(Path(tmp))
        call_times = []
        for params in (bare, reyn):
            async with Client(params, mode="legacy") as client:
                call_times.append(await per_call(client, calls))
        spawn = [await spawn_to_list(p, repeat) for p in (bare, reyn)]
    return {"call": (call_times[0], call_times[1]), "spawn": (spawn[0], spawn[1])}


def _cpu_seconds(pid: int) -> float:
    """User + system CPU time of process ``pid`` so far."""
    import os

    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def server_cpu_per_call(
    argv: list[str], cwd: Path, env: dict[str, str], port: int, calls: int
) -> dict[str, float]:
    """Server CPU seconds per sequential tools/call, per protocol generation, for one server process."""
    import subprocess

    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
    try:
        wait_listening(proc, port, what="the HTTP server")
        out = {}
        for mode in ("legacy", MODERN):
            async with Client(streamable_http_client(f"http://127.0.0.1:{port}/mcp"), mode=mode) as client:
                await client.list_tools()
                for _ in range(50):
                    await client.call_tool("word_count", {"text": "one two three"})
                before = _cpu_seconds(proc.pid)
                for _ in range(calls):
                    result = await client.call_tool("word_count", {"text": "one two three"})
                out[mode] = (_cpu_seconds(proc.pid) - before) / calls
                assert not result.is_error and result.structured_content == {"words": 3}
        return out
    finally:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


async def over_http(calls: int) -> dict[str, tuple[float, float]]:
    """``{protocol: (bare server CPU/call, reyn server CPU/call)}``."""
    import os

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        _setup(root)
        (root / "bare_http.py").write_text(BARE_HTTP_SERVER)
        env = {k: v for k, v in os.environ.items() if not k.startswith("REYN_")}
        env.update(PYTHONPATH=str(root / "site"), REYN_CACHE_DIR=str(root / "cache"))
        port = free_port()
        bare = await server_cpu_per_call(
            [sys.executable, str(root / "bare_http.py"), str(port)], root, env, port, calls
        )
        port = free_port()
        reyn = await server_cpu_per_call(
            [str(BIN / "reyn"), "mcp", "serve", "--http", f"127.0.0.1:{port}"], root / "ws", env, port, calls
        )
    return {mode: (bare[mode], reyn[mode]) for mode in bare}


def main() -> bool:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=300, help="calls per round (default 300)")
    parser.add_argument("--http-calls", type=int, default=2000, help="HTTP calls per protocol (default 2000)")
    parser.add_argument("--spawns", type=int, default=5, help="spawns per server (default 5)")
    args = parser.parse_args()
    bare_mem, typed_mem, reyn_mem = asyncio.run(in_memory(args.calls, is_async=True))
    bare_sync, _, reyn_sync = asyncio.run(in_memory(args.calls, is_async=False))
    stdio = asyncio.run(over_stdio(args.calls, args.spawns))
    http = asyncio.run(over_http(args.http_calls))
    rows = [
        [
            "tools/call, in-memory",
            bare_mem * 1e6,
            reyn_mem * 1e6,
            reyn_mem / bare_mem,
            f"≤ {TARGET_PER_CALL}x",
        ],
        [
            "tools/call, in-memory, same tools/list entry",
            typed_mem * 1e6,
            reyn_mem * 1e6,
            reyn_mem / typed_mem,
            f"≤ {TARGET_PER_CALL}x",
        ],
        [
            "tools/call, in-memory, sync fn",
            bare_sync * 1e6,
            reyn_sync * 1e6,
            reyn_sync / bare_sync,
            "reported",
        ],
        [
            "tools/call, stdio",
            stdio["call"][0] * 1e6,
            stdio["call"][1] * 1e6,
            stdio["call"][1] / stdio["call"][0],
            f"≤ {TARGET_PER_CALL}x",
        ],
        [
            "spawn → tools/list, stdio",
            stdio["spawn"][0] * 1e6,
            stdio["spawn"][1] * 1e6,
            stdio["spawn"][1] / stdio["spawn"][0],
            "reported",
        ],
    ]
    for mode, (bare_cpu, reyn_cpu) in http.items():
        label = "handshake" if mode == "legacy" else mode
        rows.append(
            [
                f"server CPU per tools/call, HTTP, {label}",
                bare_cpu * 1e6,
                reyn_cpu * 1e6,
                reyn_cpu / bare_cpu,
                f"≤ {TARGET_PER_CALL}x",
            ]
        )
    print(table(["measure", "bare SDK µs", "reyn µs", "ratio", "target"], rows))
    met = reyn_mem / bare_mem <= TARGET_PER_CALL
    like_met = reyn_mem / typed_mem <= TARGET_PER_CALL
    http_met = all(r / b <= TARGET_PER_CALL for b, r in http.values())
    verdict = "met" if met else "MISSED"
    print(f"\nper-call target (in-memory) against a bare server declaring no output schema: {verdict}")
    print(
        f"per-call target (in-memory) against a bare server listing the same entry (the client validates "
        f"each result against its output schema on both sides): {'met' if like_met else 'MISSED'}"
    )
    print(f"server CPU per call over HTTP, both protocols: {'met' if http_met else 'MISSED'}")
    return met and http_met


if __name__ == "__main__":
    sys.exit(0 if main() else 1)
