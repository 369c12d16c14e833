"""Choose tool search's ranking parameters on the tuning part of the split, and only there.

``python benchmarks/tune_tool_search.py`` prints plain BM25 and the candidates on the tuning part
(``tool_search_split``: tuning question sets x half 0 of the tools) and the parameters chosen by
coordinate ascent on the mean reciprocal rank (recall@5 and recall@1 are
saturated on this part and would not tell candidates apart). The report part is never read here; its
figures come from ``bench_tool_search.py`` with the chosen ``DEFAULT_RANKING``.
"""

from __future__ import annotations

import dataclasses
import sys

import bench_tool_search as bfcl
import tool_search_split as sp

GRID: dict[str, list] = {
    "k1": [0.6, 0.9, 1.2, 1.6, 2.2],
    "b": [0.3, 0.5, 0.75, 0.9],
    "w_name": [1.0, 2.0, 3.0, 5.0],
    "w_param_names": [0.0, 0.5, 1.0, 2.0],
    "w_param_text": [0.0, 0.25, 0.5, 1.0],
    "stem": [False, True],
    "stop_words": [False, True],
    "feedback_docs": [0, 2, 3, 5],
    "feedback_terms": [3, 5, 10, 20],
    "feedback_weight": [0.1, 0.2, 0.3, 0.5],
    "name_cover": [0.0, 0.1, 0.2, 0.4],
}


def ranking_of(p: dict):
    from reyn_tools_search.ranking import Ranking

    weights = (p["w_name"], 1.0, p["w_param_names"], p["w_param_text"])
    kept = {k: v for k, v in p.items() if not k.startswith("w_")}
    return Ranking(weights=weights, **kept)


def main() -> int:
    wheel = bfcl.fetch_wheel()
    if wheel is None:
        return 0
    s = sp.split(wheel, swapped="--swapped" in sys.argv)
    part = s.tune
    tools = sp.registry_tools(s.functions, part.pool)
    print(sp.describe(part))
    base = sp.recall(part.requests, sp.plain_search(tools))
    print(f"plain BM25: r@1 {base[1]:.3f} r@5 {base[5]:.3f} r@50 {base[50]:.3f}")

    def score(p: dict) -> tuple[float, float, float]:
        search = sp.method_search(tools, ranking_of(p))
        r = sp.recall(part.requests, search)
        return sp.mrr(part.requests, search), r[5], r[1]

    current = {
        "k1": 1.2,
        "b": 0.75,
        "w_name": 1.0,
        "w_param_names": 1.0,
        "w_param_text": 1.0,
        "stem": False,
        "stop_words": False,
        "feedback_docs": 0,
        "feedback_terms": 5,
        "feedback_weight": 0.3,
        "name_cover": 0.0,
    }
    best = score(current)
    print(f"BM25F, all weights 1: mrr {best[0]:.3f} r@5 {best[1]:.3f} r@1 {best[2]:.3f}")
    for sweep in range(3):
        changed = False
        for key, values in GRID.items():
            for v in values:
                trial = dict(current, **{key: v})
                got = score(trial)
                if got > best:
                    best, current, changed = got, trial, True
                    print(
                        f"  sweep {sweep} {key}={v}: mrr {got[0]:.3f} r@5 {got[1]:.3f} r@1 {got[2]:.3f}",
                        flush=True,
                    )
        if not changed:
            break
    print("chosen:", dataclasses.asdict(ranking_of(current)))
    print(
        f"tuning part: r@5 {best[1]:.3f} r@1 {best[2]:.3f} (plain BM25 r@5 {base[5]:.3f} r@1 {base[1]:.3f})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
