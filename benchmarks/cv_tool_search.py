"""Tool search chosen by a pre-registered cross-validation, then scored once held out (issue 31).

The protocol is docs/decisions.md, "Tool search: a pre-registered selection by cross-validation";
this file carries it out and changes nothing of it.

**Development data** (what selection reads): every own-document question of the five question sets
``bench_tool_search.QUESTION_SETS`` names whose right tool is in half 0 (``tool_search_split.half``),
searched among every half-0 tool. **Held out:** the report part of ``tool_search_split`` (the report
sets' questions about half-1 tools, among every half-1 tool; and the same questions among every
named-set tool); it is read only with ``--heldout``.

**Cells:** question set x tool fold (five folds by ``sha256("fold:" + name)``, so every question
about one tool is in one fold). For each candidate, the rank of the right tool (top 50) is computed
once per development question and setting. A question's cross-validated rank is its rank under the
setting chosen — best mean reciprocal rank, ties to the first listed — on the questions of the
*other* question sets *and* the other tool folds. **The pick** is the candidate with the highest
pooled cross-validated recall@5 (ties: higher cross-validated MRR, then the earlier candidate); its
setting for the held-out run is chosen the same way on every development question.

``python benchmarks/cv_tool_search.py`` prints the selection; ``--heldout`` then scores the pick once
on the held-out part, with plain BM25 (FTS5) and the shipped ``DEFAULT_RANKING`` beside it.
"""

from __future__ import annotations

import hashlib
import sys
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import bench_tool_search as bfcl
import numpy as np
import tool_search_split as sp
from reyn_tools_search.ranking import DEFAULT_RANKING, Ranking

DEPTH = sp.DEPTH
FOLDS = 5
Search = Callable[[str], list[str]]


def fold(name: str) -> int:
    """The tool fold of ``name`` (independent of ``sp.half``, which uses the digest's last byte)."""
    return hashlib.sha256(b"fold:" + name.encode()).digest()[0] % FOLDS


class Candidate(NamedTuple):
    label: str
    settings: list[Any]
    make: Callable[[Sequence[Any], Any, dict[Any, Any]], Search]  # (tools, setting, per-pool cache)


def _plain(tools: Sequence[Any], setting: Any, cache: dict[Any, Any]) -> Search:
    return sp.plain_search(tools)


def _ranking(tools: Sequence[Any], setting: Ranking, cache: dict[Any, Any]) -> Search:
    return sp.method_search(tools, setting)


def _fused(model_label: str, mode: str) -> Callable[[Sequence[Any], Any, dict[Any, Any]], Search]:
    def make(tools: Sequence[Any], setting: tuple[float, str], cache: dict[Any, Any]) -> Search:
        weight, fields = setting
        key = (model_label, fields)
        if key not in cache:
            cache[key] = sp.Fusion(tools, sp.static_models()[model_label], fields)
        return cache[key].search(mode, weight)

    return make


def candidates() -> list[Candidate]:
    """The pre-registered candidates, in tie-break order (docs/decisions.md)."""
    import dataclasses

    inc = DEFAULT_RANKING
    feedback = [dataclasses.replace(inc)] + [
        dataclasses.replace(inc, feedback_docs=d, feedback_terms=t, feedback_weight=w)
        for d in (2, 3, 5, 10)
        for t in (5, 10, 20)
        for w in (0.1, 0.2, 0.3, 0.5)
    ]
    found = [
        Candidate("plain BM25 (FTS5)", [None], _plain),
        Candidate("DEFAULT_RANKING (incumbent)", [inc], _ranking),
        Candidate("feedback (RM3-style)", feedback, _ranking),
    ]
    grid = [(w, f) for f in ("nd", "ndp") for w in (0.1, 0.25, 0.5, 1.0, 2.0)]
    models = sp.static_models()
    for label in ("WordLlama", "tokenlearn-static"):
        if label not in models:
            print(f"  ({label} is not installed: its candidates are left out)")
            continue
        found.append(Candidate(f"{label}, score fusion", grid, _fused(label, "score")))
        if label == "WordLlama":
            found.append(Candidate(f"{label}, rank fusion", grid, _fused(label, "rank")))
    return found


def ranks(requests: Sequence[bfcl.Request], search: Search) -> np.ndarray:
    """The 1-based rank of each request's right tool in the top ``DEPTH`` (0: not there)."""
    out = np.zeros(len(requests), dtype=np.int32)
    for j, r in enumerate(requests):
        names = search(r.text)
        out[j] = names.index(r.tool) + 1 if r.tool in names else 0
    return out


def mrr(r: np.ndarray) -> float:
    return float(np.where(r > 0, 1.0 / np.maximum(r, 1), 0.0).mean()) if len(r) else 0.0


def at(r: np.ndarray, k: int) -> float:
    return float(((r > 0) & (r <= k)).mean()) if len(r) else 0.0


def best_setting(table: np.ndarray, mask: np.ndarray) -> int:
    """The setting (row of ``table``) with the best MRR on the masked questions; ties: the first."""
    scores = [mrr(row[mask]) for row in table]
    return int(np.argmax(scores))  # argmax returns the first of equal maxima


def cross_validate(table: np.ndarray, sets: np.ndarray, folds: np.ndarray) -> np.ndarray:
    """Each question's rank under the setting chosen on the other sets' and other folds' questions."""
    out = np.zeros(table.shape[1], dtype=np.int32)
    for q in np.unique(sets):
        for t in range(FOLDS):
            cell = (sets == q) & (folds == t)
            if not cell.any():
                continue
            train = (sets != q) & (folds != t)
            out[cell] = table[best_setting(table, train), cell]
    return out


def main() -> int:
    wheel = bfcl.fetch_wheel()
    if wheel is None:
        return 0
    functions, requests = bfcl.load_bfcl(wheel, other_files=False)
    parts = sp.document_parts(wheel)
    pool = sorted(n for n in parts if sp.half(n) == 0 and n in functions)
    tools = sp.registry_tools(functions, pool)
    names = {t.name for t in tools}
    dev = [r for r in requests if r.own_document and sp.half(r.tool) == 0 and r.tool in names]
    sets = np.array([r.part for r in dev])
    folds = np.array([fold(r.tool) for r in dev])
    print(
        f"development: {len(dev)} questions, {len(tools)} half-0 tools; "
        f"cells: question set x {FOLDS} tool folds"
    )
    for part in bfcl.QUESTION_SETS:
        print(f"  {part}: {int((sets == part).sum())} questions")
    results: list[tuple[Candidate, np.ndarray, Any]] = []
    cache: dict[Any, Any] = {}
    print(
        f"\n  {'candidate':<30} {'cv r@1':>7} {'cv r@5':>7} {'cv r@50':>8} {'cv mrr':>7}   setting on all dev"
    )
    for cand in candidates():
        table = np.stack([ranks(dev, cand.make(tools, s, cache)) for s in cand.settings])
        cv = cross_validate(table, sets, folds)
        final = cand.settings[best_setting(table, np.ones(len(dev), dtype=bool))]
        results.append((cand, cv, final))
        print(
            f"  {cand.label:<30} {at(cv, 1):>7.3f} {at(cv, 5):>7.3f} {at(cv, 50):>8.3f} {mrr(cv):>7.3f}   "
            f"{describe(final)}",
            flush=True,
        )
    order = sorted(range(len(results)), key=lambda i: (-at(results[i][1], 5), -mrr(results[i][1]), i))
    pick, cv, final = results[order[0]]
    print(f"\npick: {pick.label}, setting {describe(final)}")
    print(
        "  cross-validated recall@5 per question set: "
        + ", ".join(f"{part} {at(cv[sets == part], 5):.3f}" for part in bfcl.QUESTION_SETS)
    )
    if "--heldout" in sys.argv:
        heldout(functions, wheel, pick, final)
    return 0


def describe(setting: Any) -> str:
    if setting is None:
        return "-"
    if isinstance(setting, Ranking):
        diff = {k: getattr(setting, k) for k in ("feedback_docs", "feedback_terms", "feedback_weight")}
        return "as incumbent" if setting == DEFAULT_RANKING else str(diff)
    weight, fields = setting
    return (
        f"w {weight}, fields {'name+description' if fields == 'nd' else 'name+description+parameter names'}"
    )


def heldout(functions: dict[str, Any], wheel: Any, pick: Candidate, final: Any) -> None:
    """The pick, scored once on the held-out part, plain BM25 and the incumbent beside it."""
    s = sp.split(wheel)
    print("\nheld out, scored once (the pick's setting was chosen on the development questions only)")
    print(f"  {'method':<34} {'questions':>9} {'tools':>6} {'r@1':>6} {'r@5':>6} {'r@50':>6}")
    rows = [("plain BM25 (FTS5)", None, _plain), ("DEFAULT_RANKING (shipped)", DEFAULT_RANKING, _ranking)]
    rows.append((f"pick: {pick.label}", final, pick.make))
    for part in (s.report, s.report_large):
        tools = sp.registry_tools(s.functions, part.pool)
        cache: dict[Any, Any] = {}
        for label, setting, make in rows:
            r = ranks(part.requests, make(tools, setting, cache))
            print(
                f"  {label:<34} {len(part.requests):>9} {len(tools):>6} "
                f"{at(r, 1):>6.3f} {at(r, 5):>6.3f} {at(r, 50):>6.3f}",
                flush=True,
            )


if __name__ == "__main__":
    sys.exit(main())
