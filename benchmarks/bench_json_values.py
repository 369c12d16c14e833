"""The value bound on a peer's JSON (issue 24, invariant 6): what a message of tiny values costs the
host when it is parsed (before: only the byte bound) and when it is counted and refused (after), each
case in a fresh process (its peak RSS is its own) — a profile, no target.

Rows: an upstream MCP notification of ``{"a":1}`` cells of 16 MiB (``max_message_bytes``) and of
4 MiB (serve's ``--max-request-bytes``), parsed as the stdio transport parses it (pydantic's
``validate_json``); a message at the default ``max_message_values`` (the worst that is still parsed);
and the count itself on 16 MiB of adversarial text (``values_within`` at the default bound: the
flood; adjacent strings full of commas, which force the string-skipping pass; 16 MiB of quotes).
"""

from __future__ import annotations

import json
import subprocess
import sys

CASE = r"""
import resource, sys, time
import mcp_types
from reyn_core.host import values_within
from reyn_tools_mcp.settings import DEFAULT_MAX_MESSAGE_VALUES as BOUND

kind, size = sys.argv[1], int(sys.argv[2])
head = b'{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":['
if kind == "cells":
    line = head + b'{"a":1},' * (size // 8) + b'{}]}}'
elif kind == "adjacent":
    line = b'",,,,,,"' * (size // 8)
else:
    line = b'"' * size
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
start = time.perf_counter()
within = values_within(line, BOUND)
counted = time.perf_counter() - start
parsed = 0.0
if sys.argv[3] == "parse":
    start = time.perf_counter()
    mcp_types.jsonrpc_message_adapter.validate_json(line, by_name=False)
    parsed = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - base
print(f"{within} {counted * 1000:.0f} {parsed * 1000:.0f} {peak // 1024}")
"""


def run(kind: str, size: int, parse: bool) -> list[str]:
    out = subprocess.run(
        [sys.executable, "-c", CASE, kind, str(size), "parse" if parse else "count"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    return out


def main() -> None:
    from reyn_tools_mcp.settings import DEFAULT_MAX_MESSAGE_VALUES as BOUND

    mib = 1024 * 1024
    at_bound = (BOUND // 3 - 20) * 8  # cells of three values each, just under the bound
    rows = [
        ("16 MiB of cells, parsed (before)", "cells", 16 * mib, True),
        ("4 MiB of cells, parsed (before)", "cells", 4 * mib, True),
        (f"cells at the bound ({BOUND} values), counted + parsed", "cells", at_bound, True),
        ("16 MiB of cells, counted and refused (after)", "cells", 16 * mib, False),
        ("16 MiB of adjacent comma strings, counted", "adjacent", 16 * mib, False),
        ("16 MiB of quotes, counted", "quotes", 16 * mib, False),
    ]
    print("| case | within the bound | count ms | parse ms | peak RSS growth MB |")
    print("|---|---|---|---|---|")
    for name, kind, size, parse in rows:
        within, counted, parsed, peak = run(kind, size, parse)
        print(f"| {name} | {within} | {counted} | {parsed if parse else '-'} | {peak} |")
    print(json.dumps({"load": open("/proc/loadavg").read().split()[:3]}))


if __name__ == "__main__":
    main()
