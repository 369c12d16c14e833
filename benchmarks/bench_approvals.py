"""Approvals (issue 26): what the check costs a call it does not hold, and what one approved call
costs end to end (request, decision, consumption) against a real SQLite file — no target, a profile.

Rows: a registry without approvals; the same with an ``[approvals]`` policy that selects another tool
(the call pays one attribute read and one rule scan); and one held call's whole cycle: the first
dispatch (``approval_required``: expiry sweep, a pending row), ``decide`` (approved), and the second
dispatch that consumes it and runs the handler.
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

from reyn_core import ToolContext, tool
from reyn_core.host import (
    ApprovalGate,
    ApprovalPolicy,
    ApprovalRule,
    RegistryBuilder,
    SqliteApprovalStore,
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
        plain, held = _registry(None), _registry(gate)
        ctx = ToolContext(surface="router", agent="bench", workspace=Path(tmp))
        without = median_seconds_async(lambda: dispatch_tool(plain, "look", {"n": 1}, ctx), repeat=9)
        unselected = median_seconds_async(lambda: dispatch_tool(held, "look", {"n": 1}, ctx), repeat=9)

        async def cycles() -> list[float]:
            samples = []
            for i in range(options.cycles):
                start = time.perf_counter()
                first = await dispatch_tool(held, "change", {"n": i}, ctx)
                approval = first["error"]["approval"]
                await asyncio.to_thread(gate.decide, approval, approve=True, by="bench", channel="operator")
                ran = await dispatch_tool(held, "change", {"n": i}, ctx, approval=approval)
                assert ran["status"] == "ok", ran
                samples.append(time.perf_counter() - start)
            return samples

        cycle = statistics.median(asyncio.run(cycles()))
    print("approvals: the check on a call it does not hold, and one held call's whole cycle (SQLite)\n")
    print(
        table(
            ["call", "µs"],
            [
                ("dispatch_tool, registry without approvals", without * 1e6),
                ("dispatch_tool, policy present, tool not selected", unselected * 1e6),
                ("held call: request + approve + consume and run", cycle * 1e6),
            ],
        )
    )
    return True


if __name__ == "__main__":
    import sys

    sys.exit(0 if main() else 1)
