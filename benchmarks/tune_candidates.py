"""Each candidate of issue 31, chosen on the tuning part and then scored once on the held-out part.

``python benchmarks/tune_candidates.py`` takes the current ``DEFAULT_RANKING`` as the incumbent and,
per candidate, picks the candidate's setting by the mean reciprocal rank on the tuning part of
``tool_search_split`` (tuning question sets x half 0 of the tools) — a mechanical argmax that never
reads the report part. Only then is each chosen setting scored on the report part (report question
sets x half 1 of the tools, and the same questions against every named-set tool), plain BM25 beside
each figure. Candidates:

- identifier splitting (camelCase / snake_case / dotted names) — measured by switching it off;
- parameter enum values indexed with the parameters' descriptions;
- word pairs (two adjacent request words adjacent in a field), weight chosen;
- pseudo-relevance feedback from the registry's own vocabulary (RM3-style), documents/terms/weight;
- BM25F field weights, k1 and b learned again by coordinate ascent with the options above;
- with ``--semantic``: each installed static embedding whose model ships inside its wheel
  (WordLlama; tokenlearn-static-model, Model2Vec-style) fused with the incumbent by reciprocal rank
  and by score, weight and embedded fields chosen.
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable, Iterable
from typing import Any

import bench_tool_search as bfcl
import tool_search_split as sp
from reyn_tools_search.ranking import DEFAULT_RANKING, Ranking

Search = Callable[[str], list[str]]


def choose(label: str, tools: list[Any], requests: list[Any], trials: Iterable[Any], make: Callable) -> Any:
    """The trial with the best mean reciprocal rank on the tuning part (ties: the first tried)."""
    best: tuple[float, Any] | None = None
    for trial in trials:
        m = sp.mrr(requests, make(tools, trial))
        if best is None or m > best[0]:
            best = (m, trial)
    assert best is not None
    print(f"  {label:<28} tuning mrr {best[0]:.3f}  chosen {describe(best[1])}", flush=True)
    return best[1]


def describe(trial: Any) -> str:
    if isinstance(trial, Ranking):
        d = DEFAULT_RANKING
        diff = {f.name: getattr(trial, f.name) for f in dataclasses.fields(trial)}
        return str({k: v for k, v in diff.items() if v != getattr(d, k)} or "as incumbent")
    return str(trial)


def ranked(tools: list[Any], ranking: Ranking) -> Search:
    return sp.method_search(tools, ranking)


def ascent(tools: list[Any], requests: list[Any], start: Ranking) -> Ranking:
    """Coordinate ascent from ``start`` on the tuning part's mean reciprocal rank."""
    grid: dict[str, list[Any]] = {
        "k1": [0.9, 1.2, 1.6, 2.2, 3.0],
        "b": [0.5, 0.75, 0.9],
        "w0": [1.0, 2.0, 3.0],
        "w2": [0.5, 1.0, 2.0],
        "w3": [0.25, 0.5, 1.0],
        "pairs": [0.0, 0.25, 0.5, 1.0],
        "enum_values": [False, True],
        "name_cover": [0.0, 0.1, 0.2, 0.4],
    }

    def build(r: Ranking, key: str, v: Any) -> Ranking:
        if key.startswith("w"):
            w = list(r.weights)
            w[int(key[1])] = v
            return dataclasses.replace(r, weights=tuple(w))
        return dataclasses.replace(r, **{key: v})

    current, best = start, sp.mrr(requests, ranked(tools, start))
    for _ in range(3):
        changed = False
        for key, values in grid.items():
            for v in values:
                trial = build(current, key, v)
                m = sp.mrr(requests, ranked(tools, trial))
                if m > best:
                    current, best, changed = trial, m, True
        if not changed:
            break
    label = "field weights, k1, b (joint)"
    print(f"  {label:<28} tuning mrr {best:.3f}  chosen {describe(current)}", flush=True)
    return current


def fused(tools: list[Any], trial: tuple[str, str, float, str]) -> Search:
    name, mode, weight, fields = trial
    return sp.fused_search(tools, sp.static_models()[name], weight=weight, fields=fields, mode=mode)


def main() -> int:
    wheel = bfcl.fetch_wheel()
    if wheel is None:
        return 0
    s = sp.split(wheel)
    tune_tools = sp.registry_tools(s.functions, s.tune.pool)
    req = s.tune.requests
    print(f"choosing on the tuning part only ({sp.describe(s.tune)})")
    inc = DEFAULT_RANKING
    R = dataclasses.replace
    chosen: dict[str, Any] = {"incumbent (DEFAULT_RANKING)": inc}
    chosen["identifier splitting off"] = R(inc, split_identifiers=False)
    enums = [R(inc, enum_values=v) for v in (False, True)]
    chosen["enum values"] = choose("enum values", tune_tools, req, enums, ranked)
    chosen["word pairs"] = choose(
        "word pairs", tune_tools, req, [R(inc, pairs=w) for w in (0.0, 0.1, 0.25, 0.5, 1.0)], ranked
    )
    feedback = [R(inc)] + [
        R(inc, feedback_docs=d, feedback_terms=t, feedback_weight=w)
        for d in (2, 3, 5, 10)
        for t in (5, 10, 20)
        for w in (0.1, 0.2, 0.3, 0.5)
    ]
    chosen["feedback (RM3-style)"] = choose("feedback (RM3-style)", tune_tools, req, feedback, ranked)
    chosen["field weights, k1, b (joint)"] = ascent(tune_tools, req, inc)
    models = sp.static_models() if "--semantic" in sys.argv else {}
    for name in models:
        for mode in ("rank", "score"):
            trials = [(name, mode, w, f) for f in ("nd", "ndp") for w in (0.0, 0.1, 0.25, 0.5, 1.0)]
            chosen[f"{name} fused ({mode})"] = choose(
                f"{name} fused ({mode})", tune_tools, req, trials, fused
            )

    print("\nheld-out, scored once after every choice above")
    print(f"  {'candidate':<30} {'pool':>5} {'r@1':>6} {'r@5':>6} {'r@50':>6}   plain BM25 r@1 r@5 r@50")
    for part in (s.report, s.report_large):
        tools = sp.registry_tools(s.functions, part.pool)
        plain = sp.recall(part.requests, sp.plain_search(tools))
        p = f"{plain[1]:.3f} {plain[5]:.3f} {plain[50]:.3f}"
        for label, trial in chosen.items():
            if isinstance(trial, Ranking):
                search = ranked(tools, trial)
            else:
                search = fused(tools, trial)
            r = sp.recall(part.requests, search)
            print(f"  {label:<30} {len(tools):>5} {r[1]:>6.3f} {r[5]:>6.3f} {r[50]:>6.3f}   {p}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
