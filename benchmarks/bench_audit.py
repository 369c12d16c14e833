"""The JSONL audit log under load: 2,000 concurrent calls per round, with and without ``[audit] log``.

For each round the wall time and the longest gap between two turns of a ticker task (how long the
event loop was unable to run anything else) are measured. Before the audit writer moved off the
loop (hardening issue 11), each call did mkdir/open/write/close on the loop thread and a round
stalled the loop 2.1-2.4 s (0.3 s without the log). What remains on the loop is CPU work per call
(the line's JSON and argument hash, two futures), no file I/O. Target: the longest stall with the
log stays within 4x the stall without it (measured on a shared 2-core machine: 0.16 s without,
0.54 s with; the synchronous writer it replaced: 0.25 s / 1.23 s in the same run).

Run: ``python benchmarks/bench_audit.py [--rounds N] [--calls N]`` or ``main()`` from benchmarks/run.py.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import table

from reyn_core import ToolContext, tool
from reyn_core.host import JsonlAuditLog, RegistryBuilder, ToolCallHooks, ToolRegistry, dispatch_tool


@tool(cluster="bench", purity="read_only")
async def echo(n: int) -> int:
    """Return n."""
    return n


def _registry(log: JsonlAuditLog | None) -> ToolRegistry:
    builder = RegistryBuilder(hooks=log.hooks() if log else ToolCallHooks())
    builder.register(echo)
    return builder.freeze()


async def _round(registry: ToolRegistry, calls: int) -> tuple[float, float]:
    ctx = ToolContext(surface="router", agent="bench")
    stop = asyncio.Event()
    worst = 0.0

    async def ticker() -> None:
        nonlocal worst
        last = time.perf_counter()
        while not stop.is_set():
            await asyncio.sleep(0.001)
            now = time.perf_counter()
            worst = max(worst, now - last)
            last = now

    task = asyncio.ensure_future(ticker())
    start = time.perf_counter()
    await asyncio.gather(*(dispatch_tool(registry, "echo", {"n": i}, ctx) for i in range(calls)))
    wall = time.perf_counter() - start
    stop.set()
    await task
    return wall, worst


def main(argv: list[str] | None = None) -> bool:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--calls", type=int, default=2000)
    args = parser.parse_args(argv if argv is not None else sys.argv[1:])
    rows = []
    stalls: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for label, log in (
            ("no audit log", None),
            ("audit log", JsonlAuditLog(Path(tmp) / "a" / "audit.jsonl")),
        ):
            registry = _registry(log)
            results = [asyncio.run(_round(registry, args.calls)) for _ in range(args.rounds)]
            walls, worsts = [r[0] for r in results], [r[1] for r in results]
            stalls[label] = statistics.median(worsts)
            rows.append(
                [
                    label,
                    args.calls,
                    f"{statistics.median(walls):.3f}",
                    f"{stalls[label]:.3f}",
                    f"{max(worsts):.3f}",
                ]
            )
    print(table(["case", "calls/round", "median wall s", "median worst stall s", "max worst stall s"], rows))
    ok = stalls["audit log"] <= 4 * max(stalls["no audit log"], 0.01)
    print(f"target (stall with log <= 4x without): {'met' if ok else 'MISSED'}")
    return ok


if __name__ == "__main__":
    sys.exit(0 if main() else 1)
