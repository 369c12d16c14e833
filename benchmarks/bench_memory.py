"""Memory pack: writes/s and reads/s of the SQLite and the PostgreSQL backend, in the same run.

``python benchmarks/bench_memory.py [--writes N] [--processes P] [--json]``

Both stores are real and durable as configured by default: SQLite with WAL and ``synchronous=FULL``
on a file in a temporary folder; PostgreSQL 127.0.0.1 with ``fsync=on`` in a throwaway cluster this
script starts (``reyn_tools_memory.testing.TemporaryPostgres``). Measured through the store API
(``put`` = one committed transaction, ``get`` = one entry with its body, ``entries`` = one listing of
50 entries without bodies): one process, then ``P`` processes writing at once (aggregate writes/s).
The figures are machine-dependent; docs/packs/memory.md quotes one run.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any


def _store(spec: dict[str, str]) -> Any:
    from reyn_tools_memory import MemoryStore, PostgresStore

    if spec["backend"] == "sqlite":
        return MemoryStore(spec["path"])
    return PostgresStore(spec["dsn"])


def _write(spec: dict[str, str], prefix: str, count: int) -> float:
    store = _store(spec)
    body = "a memory entry body of a typical size\n" * 12
    start = time.perf_counter()
    for i in range(count):
        store.put(
            "shared",
            "",
            f"{prefix}-{i:06d}",
            name=f"entry {i}",
            description="bench",
            type="project",
            body=body,
        )
    return time.perf_counter() - start


def _write_proc(args: tuple[dict[str, str], str, int]) -> float:
    return _write(*args)


def _warm(spec: dict[str, str]) -> None:
    _store(spec).schema_version()  # imports and (PostgreSQL) the pool: not part of the timing


def bench_backend(spec: dict[str, str], writes: int, processes: int) -> dict[str, float]:
    """writes/s (1 process and P processes), get/s and list/s of one store."""
    store = _store(spec)
    store.schema_version()  # create it (and, for PostgreSQL, warm the pool) outside the timing
    one = _write(spec, "solo", writes)
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(processes) as pool:
        pool.map(_warm, [spec] * processes, chunksize=1)
        start = time.perf_counter()
        pool.map(_write_proc, [(spec, f"p{n}", writes) for n in range(processes)], chunksize=1)
        many = time.perf_counter() - start
    reads = writes
    start = time.perf_counter()
    for i in range(reads):
        store.get("shared", "", f"solo-{i % writes:06d}")
    get_s = time.perf_counter() - start
    start = time.perf_counter()
    for _ in range(reads // 5):
        store.entries("shared", "", limit=50)
    list_s = time.perf_counter() - start
    return {
        "writes_per_s_1_process": writes / one,
        f"writes_per_s_{processes}_processes": processes * writes / many,
        "gets_per_s": reads / get_s,
        "lists_per_s": (reads // 5) / list_s,
    }


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--writes", type=int, default=500, help="writes per process (default 500)")
    parser.add_argument("--processes", type=int, default=4, help="concurrent writer processes (default 4)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    from reyn_tools_memory.testing import PostgresUnavailable, TemporaryPostgres

    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="reyn-bench-memory-") as tmp:
        results["sqlite"] = bench_backend(
            {"backend": "sqlite", "path": str(Path(tmp) / "m.db")}, args.writes, args.processes
        )
        try:
            with TemporaryPostgres(fsync=True) as pg:
                results["postgres"] = bench_backend(
                    {"backend": "postgres", "dsn": pg.dsn()}, args.writes, args.processes
                )
                from reyn_tools_memory.postgres import close_all

                close_all()
        except PostgresUnavailable as exc:
            results["postgres"] = {"skipped": str(exc)}
    if args.json:
        print(json.dumps(results, indent=2))
        return results
    print(f"memory stores, {args.writes} writes per process, {os.cpu_count()} CPU(s)\n")
    keys = list(results["sqlite"])
    print(f"  {'':28} {'sqlite':>10} {'postgres':>10}")
    for key in keys:
        pg = results["postgres"].get(key)
        print(f"  {key:28} {results['sqlite'][key]:>10,.0f} {pg if pg is None else format(pg, ',.0f'):>10}")
    return results


if __name__ == "__main__":
    main()
