"""Shared helpers for benchmark modules: timing with a baseline from the same run, and tables.

Timings are medians over many repetitions, with the garbage collector paused while measuring
(like ``timeit``); every figure is printed next to a baseline measured in the same process, so the
ratio means something even on a busy machine.
"""

from __future__ import annotations

import asyncio
import gc
import statistics
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any


def median_seconds(fn: Callable[[], Any], *, repeat: int = 31, number: int = 1, warmup: int = 3) -> float:
    """Median wall time of one call of ``fn`` (each sample times ``number`` calls)."""
    for _ in range(warmup):
        fn()
    samples = []
    enabled = gc.isenabled()
    gc.disable()
    try:
        for _ in range(repeat):
            start = time.perf_counter()
            for _ in range(number):
                fn()
            samples.append((time.perf_counter() - start) / number)
    finally:
        if enabled:
            gc.enable()
    return statistics.median(samples)


def median_seconds_async(
    make: Callable[[], Awaitable[Any]], *, repeat: int = 31, number: int = 200, warmup: int = 200
) -> float:
    """Median wall time of one ``await make()`` inside a running event loop."""

    async def sample() -> list[float]:
        for _ in range(warmup):
            await make()
        samples = []
        for _ in range(repeat):
            start = time.perf_counter()
            for _ in range(number):
                await make()
            samples.append((time.perf_counter() - start) / number)
        return samples

    enabled = gc.isenabled()
    gc.disable()
    try:
        return statistics.median(asyncio.run(sample()))
    finally:
        if enabled:
            gc.enable()


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A plain-text table with right-aligned numeric columns."""
    cells = [[str(h) for h in headers], *[[_fmt(c) for c in row] for row in rows]]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]

    def line(row: list[str]) -> str:
        return "  ".join(
            c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(row, widths, strict=True))
        )

    return "\n".join([line(cells[0]), "  ".join("-" * w for w in widths), *map(line, cells[1:])])


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:,.2f}"
    return str(value)
