"""Choose the semantic candidate's fusion (weight, embedded fields) on the tuning part only.

``python benchmarks/tune_semantic.py`` (needs ``wordllama`` installed; skips otherwise) prints the mean
reciprocal rank and recall of each setting on the tuning part of ``tool_search_split`` and the one
chosen. The held-out figures are printed by ``bench_tool_search.py`` with that choice.
"""

from __future__ import annotations

import sys

import bench_tool_search as bfcl
import tool_search_split as sp


def main() -> int:
    wheel = bfcl.fetch_wheel()
    model = sp.wordllama()
    if wheel is None or model is None:
        print("skipped: wordllama is not installed")
        return 0
    s = sp.split(wheel)
    tools = sp.registry_tools(s.functions, s.tune.pool)
    best: tuple[float, float, str] | None = None
    for fields in ("nd", "ndp"):
        for weight in (0.0, 0.25, 0.5, 1.0, 2.0):
            search = sp.fused_search(tools, model, weight=weight, fields=fields)
            r = sp.recall(s.tune.requests, search)
            m = sp.mrr(s.tune.requests, search)
            print(f"fields={fields} weight={weight}: mrr {m:.3f} r@1 {r[1]:.3f} r@5 {r[5]:.3f}", flush=True)
            if best is None or m > best[0]:
                best = (m, weight, fields)
    assert best is not None
    print(f"chosen: weight={best[1]} fields={best[2]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
