"""The held-out split for tool search, and plain BM25 to compare against (issue 31).

Only the question sets ``bench_tool_search.QUESTION_SETS`` names are read (their questions, answers
and function documents; no other category of BFCL's data is opened). They are split two ways at
once, and a method is chosen on one part and reported on the other:

- by question set: ``TUNE_SETS`` (``simple_python``, ``simple_java``) to choose on, ``REPORT_SETS``
  (``live_simple`` — real users' requests —, ``multiple``, ``simple_javascript``) to report on;
- by tool: a tool name's half is the low bit of its SHA-256 (``half``), 0 to choose on, 1 to report on.

The tuning part is the questions of a tuning set whose right tool is in half 0, searched against
every tool of half 0 (met in any named set's files); the report part is the questions of a report set
whose right tool is in half 1, against every tool of half 1. No tool and no question is in both.
The report part is also scored against a larger pool — every tool of the named sets — whose
distractors include the tuning part's tools (its questions' right tools are still held out).

``plain_bm25`` is the baseline beside every figure: SQLite FTS5 ``bm25()`` over the same four field
texts, the default tokenizer (``unicode61``), no column weights, no stemming, no stop words; the
query's distinct words, each quoted, joined by OR.
"""

from __future__ import annotations

import functools
import hashlib
import json
import sqlite3
import zipfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import bench_tool_search as bfcl

TUNE_SETS = ("simple_python", "simple_java")
REPORT_SETS = ("live_simple", "multiple", "simple_javascript")
assert set(TUNE_SETS) | set(REPORT_SETS) == set(bfcl.QUESTION_SETS)
DEPTHS = (1, 5, 50)


def half(name: str) -> int:
    """Which half of the tools ``name`` falls in: 0 to choose on, 1 to report on."""
    return hashlib.sha256(name.encode()).digest()[-1] & 1


def document_parts(wheel: Path) -> dict[str, set[str]]:
    """Tool name → the named question sets whose function documents include it."""
    parts: dict[str, set[str]] = {}
    with zipfile.ZipFile(wheel) as zf:
        for part in bfcl.QUESTION_SETS:
            for entry in bfcl.jsonl(zf, f"bfcl_eval/data/BFCL_v4_{part}.json"):
                for fn in entry.get("function") or ():
                    if isinstance(fn, dict) and isinstance(fn.get("name"), str):
                        parts.setdefault(bfcl.tool_name(fn["name"]), set()).add(part)
    return parts


class Part(NamedTuple):
    label: str
    pool: list[str]  # tool names searched
    requests: list[bfcl.Request]  # own-document questions whose right tool is in the pool


class Split(NamedTuple):
    functions: dict[str, dict[str, Any]]
    tune: Part
    report: Part
    report_large: Part


def split(wheel: Path, *, swapped: bool = False) -> Split:
    """The split; ``swapped``: the second fold, roles exchanged (choose on the report sets' questions
    about half-0 tools, report on the tuning sets' questions about half-1 tools) — a check of the
    procedure, not what the shipped ranking was chosen on."""
    functions, requests = bfcl.load_bfcl(wheel, other_files=False)
    parts = document_parts(wheel)

    def part(label: str, sets: Sequence[str], side: int, pool: list[str] | None = None) -> Part:
        if pool is None:
            pool = sorted(n for n in parts if half(n) == side and n in functions)
        names = set(pool)
        rows = [
            r
            for r in requests
            if r.own_document and r.part in sets and half(r.tool) == side and r.tool in names
        ]
        return Part(label, pool, rows)

    every = sorted(n for n in parts if n in functions)
    tune_sets, report_sets = (REPORT_SETS, TUNE_SETS) if swapped else (TUNE_SETS, REPORT_SETS)
    return Split(
        functions,
        part("tune", tune_sets, 0),
        part("report", report_sets, 1),
        part("report, every named-set tool in the pool", report_sets, 1, every),
    )


def registry_tools(functions: dict[str, dict[str, Any]], names: list[str]) -> list[Any]:
    registry, _ = bfcl.build_registry(functions, names)
    return list(registry.tools())


class PlainBM25:
    """The baseline: FTS5 ``bm25()`` with the default tokenizer, no weights, no stemming."""

    def __init__(self, tools: Sequence[Any]) -> None:
        from reyn_tools_search.ranking import Ranking, field_texts

        plain = Ranking()  # the original four texts, whatever DEFAULT_RANKING adds (enum values)
        self._names = [t.name for t in tools]
        self._conn = sqlite3.connect(":memory:")
        self._conn.execute("CREATE VIRTUAL TABLE t USING fts5(name, description, param_names, param_text)")
        self._conn.executemany(
            "INSERT INTO t(rowid, name, description, param_names, param_text) VALUES (?, ?, ?, ?, ?)",
            ((i, *field_texts(tool, plain)) for i, tool in enumerate(tools)),
        )

    def search(self, query: str, limit: int) -> list[str]:
        import re

        words = dict.fromkeys(w.lower() for w in re.findall(r"[^\W_]+", query))
        if not words:
            return []
        match = " OR ".join(f'"{w}"' for w in words)
        rows = self._conn.execute(
            "SELECT rowid FROM t WHERE t MATCH ? ORDER BY bm25(t), rowid LIMIT ?", (match, limit)
        ).fetchall()
        return [self._names[r] for (r,) in rows]


def mrr(requests: Sequence[bfcl.Request], search: Callable[[str], list[str]]) -> float:
    """Mean reciprocal rank of the right tool in the top ``max(DEPTHS)`` (0 when not there)."""
    total = 0.0
    for r in requests:
        names = search(r.text)
        total += 1.0 / (names.index(r.tool) + 1) if r.tool in names else 0.0
    return total / max(1, len(requests))


def recall(requests: Sequence[bfcl.Request], search: Callable[[str], list[str]]) -> dict[int, float]:
    """recall@k for each k of ``DEPTHS``: the share of requests whose right tool is in the top k."""
    found = [(r.tool, search(r.text)) for r in requests]
    return {k: sum(tool in names[:k] for tool, names in found) / max(1, len(found)) for k in DEPTHS}


def method_search(
    tools: Sequence[Any], ranking: Any = None, *, semantic: bool = False
) -> Callable[[str], list[str]]:
    """The pack's own index over ``tools`` (with ``semantic``: its optional semantic ranking, as
    ``[plugins.search.settings] semantic = true`` runs it)."""
    from reyn_tools_search.index import ToolIndex, cut_query, query_terms
    from reyn_tools_search.ranking import DEFAULT_RANKING

    chosen = ranking or DEFAULT_RANKING
    index = ToolIndex(tools, chosen, vectors={} if semantic else None)
    names = [t.name for t in tools]
    depth = max(DEPTHS)
    if index.semantic is not None:
        fused = index.semantic
        return lambda q: [
            names[i] for i in fused.rank(index._scorer.scores(query_terms(q, chosen)), cut_query(q), depth)
        ]
    # the index's own ranking, without building the hits' "matched" words (not scored)
    return lambda q: [names[i] for i in index._scorer.rank(query_terms(q, chosen), depth)]


def plain_search(tools: Sequence[Any]) -> Callable[[str], list[str]]:
    plain = PlainBM25(tools)
    return lambda q: plain.search(q, max(DEPTHS))


def describe(part: Part) -> str:
    return f"{part.label}: {len(part.requests)} questions, {len(part.pool)} tools"


if __name__ == "__main__":
    wheel = bfcl.fetch_wheel()
    assert wheel is not None
    s = split(wheel)
    print(json.dumps({p.label: [len(p.pool), len(p.requests)] for p in (s.tune, s.report, s.report_large)}))


# --------------------------------------------------------------------------- the semantic candidate


# Chosen by tune_semantic.py on the tuning part (mean reciprocal rank): 0.25, name + description.
SEMANTIC_WEIGHT, SEMANTIC_FIELDS = 0.25, "nd"


def wordllama() -> Any | None:
    """WordLlama's 256-dimension model from the files inside its wheel (no download: the library
    looks for its tokenizer in a folder its wheel does not have, so its own package folder is passed
    as the cache), or None when ``wordllama`` is not installed."""
    try:
        import wordllama as wl
    except ImportError:
        return None
    root = Path(wl.__file__).parent
    return wl.WordLlama.load(dim=256, cache_dir=root, disable_download=True)


class _TokenlearnStatic:
    """``tokenlearn-static-model``'s Model2Vec-style 10k-word, 64-dimension int8 model (its files
    inside its wheel, encoded by the package's Rust extension), with WordLlama's ``embed`` shape."""

    def __init__(self, module: Any) -> None:
        self._get = module.get_embeddings

    def embed(self, texts: list[str], norm: bool = True) -> Any:
        import numpy as np

        m = np.asarray(self._get(list(texts)), dtype=np.float32).reshape(len(texts), -1)
        if norm:
            m /= np.maximum(np.linalg.norm(m, axis=1, keepdims=True), 1e-9)
        return m


@functools.lru_cache(maxsize=1)
def static_models() -> dict[str, Any]:
    """The installed static-embedding candidates by label (each model's files inside its wheel)."""
    models: dict[str, Any] = {}
    model = wordllama()
    if model is not None:
        models["WordLlama"] = model
    try:
        import static_model
    except ImportError:
        return models
    models["tokenlearn-static"] = _TokenlearnStatic(static_model)
    return models


def semantic_text(tool: Any, fields: str) -> str:
    from reyn_tools_search.ranking import field_texts

    name, description, param_names, _ = field_texts(tool)
    parts = {"nd": (name, description), "ndp": (name, description, param_names)}[fields]
    return ". ".join(p for p in parts if p)


def fused_search(
    tools: Sequence[Any], model: Any, *, weight: float, fields: str, k: int = 60, mode: str = "rank"
) -> Callable[[str], list[str]]:
    """Reyn's ranking fused with the embedding's cosine ranking (top 50 of each). ``mode`` "rank":
    reciprocal rank, ``1/(k + rank) + weight/(k + rank_embedding)``; "score": the BM25F score over
    the query's best score plus ``weight`` times the cosine. ``weight`` 0 is Reyn's ranking alone."""
    return Fusion(tools, model, fields).search(mode, weight, k)


DEPTH = max(DEPTHS)


class Fusion:
    """BM25F (``DEFAULT_RANKING``) fused with a static embedding's cosine over the top ``DEPTH`` of
    each (``search(mode, weight)``: ``fused_search``'s rule), each query's lexical scores and cosines
    computed once and shared by every weight (``cv_tool_search.py`` tries many)."""

    def __init__(self, tools: Sequence[Any], model: Any, fields: str) -> None:
        import numpy as np
        from reyn_tools_search.index import ToolIndex, query_terms
        from reyn_tools_search.ranking import DEFAULT_RANKING

        self._np, self._terms, self._ranking = np, query_terms, DEFAULT_RANKING
        self.names = [t.name for t in tools]
        self.index = ToolIndex(tools, DEFAULT_RANKING)
        self.model = model
        self.matrix = model.embed([semantic_text(t, fields) for t in tools], norm=True)
        self._cache: dict[str, tuple[Any, list[int], Any, list[int]]] = {}

    def _parts(self, query: str) -> tuple[Any, list[int], Any, list[int]]:
        np = self._np
        got = self._cache.get(query)
        if got is None:
            scores = self.index._scorer.scores(self._terms(query, self._ranking)) or [0.0] * len(self.names)
            lexical = np.asarray(scores)
            first = [int(i) for i in np.argsort(-lexical, kind="stable")[:DEPTH] if lexical[i] > 0]
            sims = self.matrix @ self.model.embed([query], norm=True)[0]
            second = [int(i) for i in np.argsort(-sims, kind="stable")[:DEPTH]]
            got = self._cache[query] = (lexical, first, sims, second)
        return got

    def search(self, mode: str, weight: float, k: int = 60) -> Callable[[str], list[str]]:
        def run(query: str) -> list[str]:
            lexical, first, sims, second = self._parts(query)
            score: dict[int, float] = {}
            if mode == "rank":
                for rank, i in enumerate(first):
                    score[i] = score.get(i, 0.0) + 1.0 / (k + rank + 1)
                for rank, i in enumerate(second):
                    score[i] = score.get(i, 0.0) + weight / (k + rank + 1)
            else:
                top = float(lexical.max()) or 1.0
                for i in set(first) | set(second):
                    score[i] = float(lexical[i]) / top + weight * float(sims[i])
            ordered = sorted(score, key=lambda i: (-score[i], self.names[i]))
            return [self.names[i] for i in ordered[:DEPTH]]

        return run
