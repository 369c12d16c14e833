"""Dispatch cost of a pydantic-model tool (issue 15): ``invoke_tool`` against calling the tool as
directly as possible — ``await impl(**Args.model_validate(payload).model_dump())`` — in the same run.

Target: an async three-argument pydantic-model tool at most 1.5x the direct call. A sync tool is
shown too: it pays a worker-thread hop per call (a sync handler may block the event loop).

The direct call and every case are timed in interleaved rounds (direct, then each case, round after
round); a ratio is taken within each round and the table shows medians over the rounds, so a busy
moment on a shared machine moves both sides of a ratio. ``--json`` prints the per-round figures (for
comparing two trees round by round).
"""

from __future__ import annotations

import argparse
import functools
import json
import statistics
from dataclasses import replace
from typing import Any

from harness import median_seconds_async, table
from pydantic import BaseModel, Field

from reyn_core import ToolContext, tool
from reyn_core.host import RegistryBuilder, invoke_tool

RATIO_TARGET = 1.5
PAYLOAD = {"path": "notes/today.md", "limit": 20, "pattern": "TODO"}


class GrepArgs(BaseModel):
    path: str = Field(description="File to search")
    limit: int = Field(20, ge=1, le=1000, description="Most matches to return")
    pattern: str = Field(description="Text to find")


async def grep_impl(path: str, limit: int, pattern: str) -> int:
    return limit + len(path) + len(pattern)


def grep_sync_impl(path: str, limit: int, pattern: str) -> int:
    return limit + len(path) + len(pattern)


@tool(name="grep_model", cluster="bench", purity="read_only")
async def grep_model(args: GrepArgs) -> int:
    """Count matches (a pydantic-model async tool)."""
    return await grep_impl(args.path, args.limit, args.pattern)


@tool(name="grep_sync", cluster="bench", purity="read_only")
def grep_sync(args: GrepArgs) -> int:
    """Count matches (a sync tool: a worker thread per call)."""
    return grep_sync_impl(args.path, args.limit, args.pattern)


def main(argv: list[str] | None = None) -> bool:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rounds", type=int, default=9, help="interleaved rounds (default 9)")
    parser.add_argument("--json", action="store_true", help="print the per-round figures as JSON")
    options = parser.parse_args(argv)
    builder = RegistryBuilder()
    builder.register(grep_model)
    builder.register(grep_sync)
    # The same tool with a registered schema that differs from its model's (a hand-edited schema):
    # it takes the full path, schema validator then pydantic, as every tool did before issue 15.
    builder.register(
        replace(grep_model, name="grep_full", parameters={**grep_model.parameters, "description": "edited"})
    )
    registry = builder.freeze()
    ctx = ToolContext(surface="router", agent="bench")
    text = json.dumps(PAYLOAD)

    async def direct() -> Any:
        return await grep_impl(**GrepArgs.model_validate(PAYLOAD).model_dump())

    async def direct_sync() -> Any:
        return grep_sync_impl(**GrepArgs.model_validate(PAYLOAD).model_dump())

    cases = [
        ("async model tool, invoke_tool(dict)", "grep_model", PAYLOAD, "direct", 500),
        ("async model tool, invoke_tool(JSON text)", "grep_model", text, "direct", 500),
        ("same, full path (schema + pydantic), dict", "grep_full", PAYLOAD, "direct", 500),
        ("sync tool (worker thread), invoke_tool(dict)", "grep_sync", PAYLOAD, "direct_sync", 50),
    ]
    baselines = {"direct": direct, "direct_sync": direct_sync}
    rounds: list[dict[str, float]] = []
    for _ in range(options.rounds):
        times = {
            key: median_seconds_async(fn, repeat=7, number=500, warmup=100) for key, fn in baselines.items()
        }
        for label, name, payload, _, number in cases:
            # ``partial``, not a lambda: the direct call is timed without a Python wrapper frame, so
            # invoke_tool is timed without one too
            times[label] = median_seconds_async(
                functools.partial(invoke_tool, registry, name, payload, ctx),
                repeat=7,
                number=number,
                warmup=number,
            )
        rounds.append(times)
    if options.json:
        print(json.dumps({"rounds": rounds, "cases": [(c[0], c[3]) for c in cases]}))

    def median(values: Any) -> float:
        return statistics.median(values)

    rows = []
    for label, _, _, base, _ in cases:
        rows.append(
            (
                label,
                median(r[label] for r in rounds) * 1e6,
                median(r[base] for r in rounds) * 1e6,
                median(r[label] / r[base] for r in rounds),
                # on a loaded machine the fastest round of each side is the least disturbed one
                min(r[label] for r in rounds) / min(r[base] for r in rounds),
            )
        )
    ratio = rows[0][3]
    print(
        "invoke_tool against the direct call `impl(**Args.model_validate(payload).model_dump())`, "
        f"medians of {options.rounds} interleaved rounds\n"
    )
    print(table(["call", "µs", "direct µs", "ratio", "ratio of minima"], rows))
    ok = ratio <= RATIO_TARGET
    print(
        f"\ntarget: async model tool <= {RATIO_TARGET:g}x direct -> {ratio:.2f}x {'MET' if ok else 'MISSED'}"
    )
    return ok


if __name__ == "__main__":
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parent))
    raise SystemExit(0 if main() else 1)
