"""What ``execute_tool`` spans cost a dispatched call (issue 27).

Three ways of calling the same async pydantic-model tool, timed in interleaved rounds (ratios taken
within each round, medians over rounds, as ``bench_dispatch``):

- ``untraced``: the dispatcher's body without the tracing test (``dispatcher._invoke``), i.e. the
  dispatcher as it was before spans existed;
- ``extra installed, tracing off``: ``invoke_tool`` with ``opentelemetry-api`` importable and tracing
  not turned on — target at most 1.05x ``untraced``;
- ``tracing on, no-op exporter``: the real SDK recording every span and handing it to an exporter that
  drops it (stated, no target).
"""

from __future__ import annotations

import argparse
import statistics
from collections.abc import Sequence
from typing import Any

from harness import median_seconds_async, table
from pydantic import BaseModel, Field

from reyn_core import ToolContext, tool
from reyn_core.dispatch import dispatcher
from reyn_core.dispatch.tracing import configure_tracing
from reyn_core.host import RegistryBuilder, invoke_tool

OFF_TARGET = 1.05
PAYLOAD = {"path": "notes/today.md", "limit": 20, "pattern": "TODO"}


class GrepArgs(BaseModel):
    path: str = Field(description="File to search")
    limit: int = Field(20, ge=1, le=1000, description="Most matches to return")
    pattern: str = Field(description="Text to find")


@tool()
async def grep_model(args: GrepArgs) -> int:
    """Search a file."""
    return args.limit + len(args.path) + len(args.pattern)


def _sdk_with_dropping_exporter() -> bool:
    try:
        from opentelemetry import trace
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult
    except ImportError:
        return False

    class Drop(SpanExporter):
        def export(self, spans: Sequence[Any]) -> SpanExportResult:
            return SpanExportResult.SUCCESS

    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(Drop()))
    trace.set_tracer_provider(provider)
    return True


def main(argv: list[str] | None = None) -> bool:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rounds", type=int, default=9, help="interleaved rounds (default 9)")
    options = parser.parse_args(argv)
    builder = RegistryBuilder()
    builder.register(grep_model)
    registry = builder.freeze()
    ctx = ToolContext(surface="router", agent="bench")
    sdk = _sdk_with_dropping_exporter()

    def untraced() -> Any:
        return dispatcher._invoke(registry, "grep_model", PAYLOAD, ctx)

    def public() -> Any:
        return invoke_tool(registry, "grep_model", PAYLOAD, ctx)

    rounds: list[dict[str, float]] = []
    for _ in range(options.rounds):
        times = {
            "untraced": median_seconds_async(untraced, repeat=7, number=500, warmup=100),
            "off": median_seconds_async(public, repeat=7, number=500, warmup=100),
        }
        if sdk:
            configure_tracing(True)
            times["on"] = median_seconds_async(public, repeat=7, number=500, warmup=100)
            configure_tracing(False)
        rounds.append(times)
    rows = []
    for key, label in (("off", "extra installed, tracing off"), ("on", "tracing on, no-op exporter")):
        if key in rounds[0]:
            rows.append(
                (
                    label,
                    statistics.median(r[key] for r in rounds) * 1e6,
                    statistics.median(r["untraced"] for r in rounds) * 1e6,
                    statistics.median(r[key] / r["untraced"] for r in rounds),
                )
            )
    print(
        f"invoke_tool against the untraced dispatcher body, medians of {options.rounds} interleaved rounds\n"
    )
    print(table(["call", "µs", "untraced µs", "ratio"], rows))
    ratio = rows[0][3]
    ok = ratio <= OFF_TARGET
    print(f"\ntarget: tracing off <= {OFF_TARGET:g}x untraced -> {ratio:.3f}x {'MET' if ok else 'MISSED'}")
    return ok


if __name__ == "__main__":
    import sys

    sys.exit(0 if main(sys.argv[1:]) else 1)
