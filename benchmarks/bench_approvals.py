"""Approvals (issue 26): what the check costs a call it does not hold, and what one approved call
costs end to end (request, decision, consumption) against a real SQLite file — no target, a profile.

Rows: a registry without approvals; the same with an ``[approvals]`` policy that selects another tool
(the call pays one attribute read and one rule scan); and one held call's whole cycle: the first
dispatch (``approval_required``: expiry sweep, a pending row), ``decide`` (approved), and the second
dispatch that consumes it and runs the handler — against the SQLite store and, side by side in the
same run, against the PostgreSQL store (reyn-approvals-postgres) on a local server this script starts
(skipped, and said so, without server binaries).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from harness import median_seconds_async, table

from reyn_approvals_sqlite import SqliteApprovalStore
from reyn_core import ToolContext, tool
from reyn_core.host import (
    ApprovalGate,
    ApprovalPolicy,
    ApprovalRule,
    RegistryBuilder,
    dispatch_tool,
    installation_key,
)


@tool(purity="read_only")
async def look(n: int) -> int:
    """A read the policy does not select."""
    return n


@tool(purity="side_effect")
async def change(n: int) -> int:
    """A write the policy holds."""
    return n


def _registry(gate: Any) -> Any:
    builder = RegistryBuilder(approvals=gate)
    builder.register(look)
    builder.register(change)
    return builder.freeze()


def main(argv: list[str] | None = None) -> bool:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--cycles", type=int, default=200, help="held calls approved and run (default 200)")
    options = parser.parse_args(argv)
    from reyn_core.dispatch import argument_hash

    key = installation_key()
    with tempfile.TemporaryDirectory() as tmp:
        store = SqliteApprovalStore(Path(tmp) / "approvals.sqlite")
        policy = ApprovalPolicy(rules=(ApprovalRule(purity=frozenset({"side_effect"})),))
        gate = ApprovalGate(policy, store, hasher=lambda v: argument_hash(v, key=key))
        plain, held = _registry(None), _registry(gate)  # held: the SQLite store
        ctx = ToolContext(surface="router", agent="bench", workspace=Path(tmp))
        without = median_seconds_async(lambda: dispatch_tool(plain, "look", {"n": 1}, ctx), repeat=9)
        unselected = median_seconds_async(lambda: dispatch_tool(held, "look", {"n": 1}, ctx), repeat=9)

        async def cycles(gate: ApprovalGate) -> list[float]:
            registry = _registry(gate)
            samples = []
            for i in range(options.cycles):
                start = time.perf_counter()
                first = await dispatch_tool(registry, "change", {"n": i}, ctx)
                approval = first["error"]["approval"]
                await asyncio.to_thread(gate.decide, approval, approve=True, by="bench", channel="operator")
                ran = await dispatch_tool(registry, "change", {"n": i}, ctx, approval=approval)
                assert ran["status"] == "ok", ran
                samples.append(time.perf_counter() - start)
            return samples

        cycle = statistics.median(asyncio.run(cycles(gate)))
        pg_cycle, pg_note = _postgres_cycle(policy, key, cycles)
    print("approvals: the check on a call it does not hold, and one held call's whole cycle\n")
    rows = [
        ("dispatch_tool, registry without approvals", without * 1e6),
        ("dispatch_tool, policy present, tool not selected", unselected * 1e6),
        ("held call: request + approve + consume and run (SQLite)", cycle * 1e6),
    ]
    if pg_cycle is not None:
        rows.append(("held call: request + approve + consume and run (PostgreSQL, local)", pg_cycle * 1e6))
    print(table(["call", "µs"], rows))
    if pg_note:
        print(f"\n{pg_note}")
    return True


def _postgres_cycle(policy: Any, key: bytes, cycles: Any) -> tuple[float | None, str]:
    """The held call's median cycle against a PostgreSQL server started here (None and why, when
    this machine has no server binaries or the store's distribution is not installed)."""
    from reyn_core.dispatch import argument_hash

    try:
        from reyn_tools_memory.testing import PostgresUnavailable, TemporaryPostgres

        from reyn_approvals_postgres import PostgresApprovalStore
    except ImportError as exc:
        return None, f"PostgreSQL row skipped: {exc}"
    try:
        server = TemporaryPostgres(fsync=True).start()
    except PostgresUnavailable as exc:
        return None, f"PostgreSQL row skipped: {exc}"
    try:
        store = PostgresApprovalStore(server.dsn(schema=server.new_schema("bench")))
        gate = ApprovalGate(policy, store, hasher=lambda v: argument_hash(v, key=key))
        median = statistics.median(asyncio.run(cycles(gate)))
        store.disconnect()
        return (
            median,
            "PostgreSQL: a local server over TCP on 127.0.0.1 (fsync on), one connection per process",
        )
    finally:
        server.remove()


if __name__ == "__main__":
    import sys

    sys.exit(0 if main() else 1)
