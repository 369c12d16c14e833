"""Scale curves: how Reyn's costs grow with the number of tools and of installed distributions.

For 10 / 100 / 1,000 / 10,000 tools (each with its own realistic four-property schema, so no check
result is shared between tools):
- load: ``load(Profile(), host_tools=...)`` (every load-time check runs, on every load: nothing
  stored answers for a check);
- render: ``render_router`` of every tool;
- dispatch: one ``invoke_tool`` of one tool (lookup by name, gates, argument validation, call);
- resident memory per registered tool (``tracemalloc``: what the frozen registry keeps, and again
  after one render has filled the render caches).
For 10 / 100 / 1,000 installed distributions with a ``reyn.plugins`` entry point (written as
``.dist-info`` folders on a path of their own): ``discover`` (metadata only, nothing imported).

Each figure is also given per item, and the growth from the second-largest to the largest size is
named: "linear or better" when the per-item cost rises by at most 25% over a tenfold size, else
"super-linear". With matplotlib installed (the core's ``bench`` extra) the curves are drawn to
docs/performance-scale.svg (deterministic output: same figures, same bytes).
"""

from __future__ import annotations

import gc
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

from harness import median_seconds_async, table

TOOL_SIZES = (10, 100, 1_000, 10_000)
DIST_SIZES = (10, 100, 1_000)
SVG = Path(__file__).resolve().parent.parent / "docs" / "performance-scale.svg"
LINEAR_SLACK = 1.25  # per-item cost may rise this much over a tenfold size and still count as linear


def definitions(n: int) -> list[Any]:
    from reyn_core import ToolDefinition

    async def handler(**kw: Any) -> int:
        return len(kw)

    return [
        ToolDefinition(
            name=f"tool_{i:05d}",
            description=f"Tool number {i}: reads a resource and returns a summary of at most `limit` items.",
            cluster=f"cluster_{i % 10}",
            purity="read_only",
            handler=handler,
            parameters={
                "type": "object",
                "properties": {
                    "path": {
                        "type": "string",
                        "description": f"Resource path for tool {i}, workspace-relative",
                    },
                    "limit": {"type": "integer", "minimum": 1, "maximum": 1000, "default": 50},
                    "mode": {"type": "string", "enum": ["summary", "full", "headers"], "default": "summary"},
                    "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 10},
                },
                "required": ["path"],
                "additionalProperties": False,
            },
        )
        for i in range(n)
    ]


def timed(fn: Callable[[], Any], repeat: int) -> float:
    """Fastest of ``repeat`` calls in seconds, GC paused during each: the least noisy estimate on a
    shared machine (as ``timeit`` advises), and what a growth curve needs."""
    samples = []
    for _ in range(repeat):
        gc.collect()
        gc.disable()
        try:
            start = time.perf_counter()
            fn()
            samples.append(time.perf_counter() - start)
        finally:
            gc.enable()
    return min(samples)


def measure_tools(n: int) -> dict[str, float]:
    from reyn_core import ToolContext
    from reyn_core.host import Profile, invoke_tool, load, render_router

    tools = definitions(n)
    repeat = 5 if n <= 1_000 else 3
    result = load(Profile(), host_tools=tools)
    assert len(result.registry) == n, result.report
    registry = result.registry
    ctx = ToolContext(surface="router", agent="bench")
    out = {
        "load": timed(lambda: load(Profile(), host_tools=tools), repeat),
        "render": timed(lambda: render_router(registry, ctx), repeat * 3),
    }
    name = f"tool_{n // 2:05d}"
    args = {"path": "notes/today.md", "limit": 20}
    out["dispatch (per call)"] = median_seconds_async(
        lambda: invoke_tool(registry, name, args, ctx), number=100
    )
    return out


def memory_per_tool(n: int) -> tuple[float, float]:
    """Bytes per tool the frozen registry keeps; and after one router render (render caches)."""
    from reyn_core import ToolContext
    from reyn_core.host import RegistryBuilder, render_router

    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        builder = RegistryBuilder()
        for d in definitions(n):
            builder.register(d)
        registry = builder.freeze()
        del builder
        gc.collect()
        frozen = tracemalloc.get_traced_memory()[0] - before
        render_router(registry, ToolContext(surface="router", agent="bench"))
        gc.collect()
        rendered = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    return frozen / n, rendered / n


def write_distributions(site: Path, n: int) -> None:
    for i in range(n):
        info = site / f"rbench_dist_{i:04d}-1.0.dist-info"
        info.mkdir(parents=True)
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: rbench-dist-{i:04d}\nVersion: 1.0\n")
        (info / "entry_points.txt").write_text(
            f"[reyn.plugins]\nrbench_{i:04d} = rbench_dist_{i:04d}.plugin\n"
        )


def measure_discovery(n: int, tmp: Path) -> float:
    from reyn_core.loading.step2_discovery.discovery import discover

    site = tmp / f"site-{n}"
    write_distributions(site, n)
    found = discover(path=[str(site)])
    assert len(found.plugins) == n, len(found.plugins)
    return timed(lambda: discover(path=[str(site)]), 7)


def growth(per_item: list[float]) -> str:
    """How the per-item cost moves from the second-largest to the largest size (tenfold)."""
    rise = per_item[-1] / per_item[-2]
    verdict = "linear or better" if rise <= LINEAR_SLACK else "SUPER-LINEAR"
    return f"{verdict} (per-item cost x{rise:.2f} over the last tenfold)"


def plot(curves: dict[str, tuple[tuple[int, ...], list[float]]], memory: dict[str, list[float]]) -> str:
    try:
        import matplotlib
    except ImportError:
        return "skipped the plot: matplotlib is not installed (pip install -e '.[bench]')"
    matplotlib.use("svg")
    import matplotlib.pyplot as plt

    matplotlib.rcParams["svg.hashsalt"] = "reyn-bench"  # stable ids: same figures, same file
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2))
    for label, (sizes, values) in curves.items():
        left.plot(sizes, [v * 1e6 for v in values], marker="o", label=label)
    left.set_xscale("log")
    left.set_yscale("log")
    left.set_xlabel("tools (discovery: installed distributions)")
    left.set_ylabel("µs per tool / per distribution / per call")
    left.set_title("Cost per item (flat = linear growth)")
    left.grid(True, which="both", alpha=0.3)
    left.legend(fontsize=8)
    for label, values in memory.items():
        right.plot(TOOL_SIZES, [v / 1024 for v in values], marker="o", label=label)
    right.set_xscale("log")
    right.set_xlabel("tools")
    right.set_ylabel("KiB per registered tool")
    right.set_title("Resident memory per tool (tracemalloc)")
    right.set_ylim(bottom=0)
    right.grid(True, which="both", alpha=0.3)
    right.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(SVG, format="svg", metadata={"Date": None})
    plt.close(fig)
    return f"plot written to {SVG.relative_to(SVG.parent.parent)}"


def main() -> bool:
    rows_by_size: dict[int, dict[str, float]] = {}
    with tempfile.TemporaryDirectory(prefix="reyn-bench-scale-") as raw:
        tmp = Path(raw)
        for n in TOOL_SIZES:
            rows_by_size[n] = measure_tools(n)
        discovery = {n: measure_discovery(n, tmp) for n in DIST_SIZES}
    memory = {n: memory_per_tool(n) for n in TOOL_SIZES}

    labels = list(rows_by_size[TOOL_SIZES[0]])
    print("time, fastest of 3-5 runs (ms; per tool in µs)\n")
    rows = []
    for n in TOOL_SIZES:
        r = rows_by_size[n]
        rows.append(
            (
                f"{n:,}",
                *(
                    f"{r[k] * 1e3:,.2f} ({r[k] / n * 1e6:,.1f})"
                    if k != "dispatch (per call)"
                    else f"{r[k] * 1e6:,.1f} µs"
                    for k in labels
                ),
            )
        )
    print(table(["tools", *labels], rows))
    print()
    print(
        table(
            ["installed distributions", "discover ms", "per distribution µs"],
            [(f"{n:,}", discovery[n] * 1e3, discovery[n] / n * 1e6) for n in DIST_SIZES],
        )
    )
    print()
    print(
        table(
            ["tools", "KiB per tool (frozen)", "KiB per tool (after a render)"],
            [(f"{n:,}", memory[n][0] / 1024, memory[n][1] / 1024) for n in TOOL_SIZES],
        )
    )
    curves: dict[str, tuple[tuple[int, ...], list[float]]] = {}
    for k in labels:
        per = [rows_by_size[n][k] / (1 if k == "dispatch (per call)" else n) for n in TOOL_SIZES]
        curves[k] = (TOOL_SIZES, per)
    curves["discovery"] = (DIST_SIZES, [discovery[n] / n for n in DIST_SIZES])
    print("\ngrowth, from the second-largest to the largest size:")
    ok = True
    for k, (_, per) in curves.items():
        verdict = growth(per)
        ok = ok and not verdict.startswith("SUPER")
        print(f"  {k:<22} {verdict}")
    mem = {
        "frozen registry": [memory[n][0] for n in TOOL_SIZES],
        "after one render": [memory[n][1] for n in TOOL_SIZES],
    }
    for k, per in mem.items():
        verdict = growth(per)
        ok = ok and not verdict.startswith("SUPER")
        print(f"  memory, {k:<14} {verdict}")
    print("\n" + plot(curves, mem))
    return ok


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    raise SystemExit(0 if main() else 1)
