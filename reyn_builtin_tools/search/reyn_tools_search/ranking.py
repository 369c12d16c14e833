"""The ranking behind tool search: BM25F over a tool's fields.

Pure Python, standard library only. A tool is four fields — its name split into words
(``getUserOrders``, ``get_user_orders`` → ``get user orders``), its description, its parameters'
names (split the same way) and their descriptions. BM25F (Robertson & Zaragoza) adds a word's
weighted, length-normalised counts over the fields before saturating them, so a word in the name
and again in the description is not counted as two independent pieces of evidence. A re-rank adds
to the best tools the share of their name's words the request says (``name_cover``).

Options measured and left off by ``DEFAULT_RANKING``: pseudo-relevance feedback (the words that best
characterise the first pass's top tools — the registry's own vocabulary — added with a small weight
before ranking again), dropping stop words, parameters' enum values and adjacent word pairs; none
improved held-out figures (``benchmarks/tune_candidates.py``; docs/large-registries.md).

``Ranking`` holds the parameters; ``DEFAULT_RANKING`` was chosen on one part of the benchmark's data
and measured on another (``benchmarks/tool_search_split.py``; docs/large-registries.md). Everything
a query touches is computed when the index is built: a search is a sum over the postings of its
words (frequent words as whole columns).
"""

from __future__ import annotations

import heapq
import math
import re
from array import array
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import pairwise
from operator import add
from typing import Any

from reyn_core import ToolDefinition

FIELDS = ("name", "description", "param_names", "param_text")
MAX_TEXT = 4000  # characters indexed per field: a huge description cannot dominate memory or time

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_WORD = re.compile(r"[^\W_]+")

# Words that say nothing about which tool is meant ("what is the weather in the city of X").
STOP_WORDS = frozenset(
    "a an the of for to in on at by with from and or is are was be been it its this that these those "
    "i me my we our you your he she they them their what which who whom how when where why "
    "can could would should will shall do does did please there here as into about than then so "
    "if also just some any all each".split()
)


@dataclass(frozen=True, slots=True)
class Ranking:
    """BM25F and feedback parameters. ``weights`` are per field of ``FIELDS``; ``stem`` strips
    plural and verb endings (``stem``); ``feedback_docs`` / ``feedback_terms`` / ``feedback_weight``
    configure pseudo-relevance feedback (0 docs: none); ``name_cover`` adds, to each of the best
    ``RERANK`` tools, that share of the best score times the share of its name's words the query
    says (``get_user_orders`` for "orders of a user": 2 of 3); ``enum_values`` indexes the string
    values of parameters' ``enum`` lists with their descriptions; ``pairs`` weighs word pairs (two
    adjacent words of the request found adjacent in a field, ``current weather``) against single
    words (0: none); ``split_identifiers`` (on by default) also splits camelCase (``getUserOrders``)
    into words (off: only ``_``, ``.``, ``-`` and other non-word characters separate words)."""

    k1: float = 1.2
    b: float = 0.75
    weights: tuple[float, float, float, float] = (1.0, 1.0, 1.0, 1.0)
    stem: bool = False
    stop_words: bool = True
    feedback_docs: int = 0
    feedback_terms: int = 0
    feedback_weight: float = 0.0
    name_cover: float = 0.0
    enum_values: bool = False
    pairs: float = 0.0
    split_identifiers: bool = True


# Chosen by ``benchmarks/tune_tool_search.py`` on the tuning part of the split only (feedback lost
# there at every setting tried, so it is off); figures on the held-out part: docs/large-registries.md.
DEFAULT_RANKING = Ranking(
    k1=2.2, b=0.9, weights=(2.0, 1.0, 1.0, 1.0), stem=True, stop_words=False, name_cover=0.2
)
RERANK = 50


def split_words(text: str) -> list[str]:
    """The words of ``text`` as written: identifiers split (``getHTTPResponse_v2`` →
    ``get``, ``HTTP``, ``Response``, ``v2``)."""
    return _WORD.findall(_CAMEL.sub(" ", text))


def stem(word: str) -> str:
    """A light, predictable suffix stripper for lower-cased words: plurals, ``-ing``, ``-ed`` and a
    final ``e`` (``images``/``image`` → ``imag``, ``resizing``/``resized``/``resizes`` → ``resiz``,
    ``addresses`` → ``address``). Words under 4 letters and words with digits are kept."""
    if len(word) < 4 or not word.isalpha():
        return word
    if word.endswith("ies") and len(word) > 4:
        word = word[:-3] + "y"
    elif word.endswith(("ss", "us", "is")):
        pass
    elif word.endswith(("ches", "shes", "sses", "xes", "zes")):
        word = word[:-2]
    elif word.endswith("s"):
        word = word[:-1]
    if word.endswith("ing") and len(word) >= 6:
        word = word[:-3]
    elif word.endswith("ed") and len(word) >= 5:
        word = word[:-2]
    if len(word) >= 4 and word[-1] == word[-2] and word[-1] not in "aeiouls":
        word = word[:-1]  # running → runn → run
    return word[:-1] if word.endswith("e") and len(word) > 4 else word


_stem = lru_cache(maxsize=1 << 16)(stem)  # the same few thousand words come back all the time


def term(word: str, ranking: Ranking) -> str:
    """The index term of one lower-cased word under ``ranking``."""
    return _stem(word) if ranking.stem else word


def terms(text: str, ranking: Ranking) -> list[str]:
    """The index terms of ``text``: its words, lower-cased, stemmed when ``ranking.stem``."""
    split = _CAMEL.sub(" ", text) if ranking.split_identifiers else text
    words = _WORD.findall(split.lower())  # lower-cased after the split: same words
    if any(len(w) > 64 for w in words):
        words = [w for w in words if len(w) <= 64]
    return list(map(_stem, words)) if ranking.stem else words


def query_terms(query: str, ranking: Ranking = DEFAULT_RANKING) -> tuple[str, ...]:
    """The distinct terms of ``query``, stop words and bare numbers dropped when
    ``ranking.stop_words`` (numbers are argument values, not intents)."""
    split = _CAMEL.sub(" ", query) if ranking.split_identifiers else query
    words = [w for w in _WORD.findall(split.lower()) if len(w) <= 64]
    if ranking.stop_words:
        words = [w for w in words if w not in STOP_WORDS and not w.isdigit()]
    kept = [_stem(w) for w in words] if ranking.stem else words
    return tuple(dict.fromkeys(kept))


def _parameter_text(
    schema: Any, names: list[str], texts: list[str], ranking: Ranking, depth: int = 0
) -> None:
    """Property names (split into words) and descriptions of a JSON Schema, nested up to 3 levels,
    with the string values of each ``enum`` when ``ranking.enum_values``."""
    if not isinstance(schema, Mapping) or depth > 3:
        return
    props = schema.get("properties")
    if isinstance(props, Mapping):
        for key, sub in props.items():
            names.append(" ".join(split_words(str(key))) if ranking.split_identifiers else str(key))
            if isinstance(sub, Mapping):
                if isinstance(sub.get("description"), str):
                    texts.append(sub["description"])
                values = sub.get("enum")
                if ranking.enum_values and isinstance(values, list):
                    texts.extend(v for v in values[:64] if isinstance(v, str))
                _parameter_text(sub, names, texts, ranking, depth + 1)
                _parameter_text(sub.get("items"), names, texts, ranking, depth + 1)


def field_texts(tool: ToolDefinition, ranking: Ranking = DEFAULT_RANKING) -> tuple[str, str, str, str]:
    """The four indexed fields of ``tool`` under ``ranking``, each cut to ``MAX_TEXT`` characters."""
    names: list[str] = []
    texts: list[str] = []
    _parameter_text(tool.parameters, names, texts, ranking)
    name = " ".join(split_words(tool.name)) if ranking.split_identifiers else tool.name
    fields = (name, tool.description, " ".join(names), " ".join(texts))
    return tuple(f[:MAX_TEXT] for f in fields)  # type: ignore[return-value]


# One tool as the index reads it: per field, its terms with their counts and its length in terms.
Analysis = tuple[tuple[Mapping[str, int], int], ...]


def analyse(fields: Sequence[str], ranking: Ranking = DEFAULT_RANKING) -> Analysis:
    """The ``Analysis`` of one tool's field texts (what ``Scorer`` needs; reusable across indexes
    over different sets of tools, since it reads nothing of the other tools)."""
    out = []
    for text in fields:
        words = terms(text, ranking)
        counts = Counter(words)
        if ranking.pairs:
            counts.update(_pair(a, b) for a, b in pairwise(words))  # the field's length stays its words'
        out.append((counts, len(words)))
    return tuple(out)


def _pair(first: str, second: str) -> str:
    """The index term of two adjacent words (a space never occurs inside a word)."""
    return f"{first} {second}"


class Scorer:
    """BM25F over a fixed list of analysed documents (``analyse``), with the options of ``Ranking``."""

    def __init__(self, docs: Sequence[Analysis], ranking: Ranking = DEFAULT_RANKING) -> None:
        self.ranking = ranking
        n = len(docs)
        avg = [max(1.0, sum(d[f][1] for d in docs) / max(1, n)) for f in range(len(FIELDS))]
        weighted: list[dict[str, float]] = []
        df: Counter[str] = Counter()
        weights, b = ranking.weights, ranking.b
        for doc in docs:
            tf: dict[str, float] = {}
            for f, (counts, length) in enumerate(doc):
                w = weights[f]
                if not w or not length:
                    continue
                norm = w / (1.0 - b + b * length / avg[f])
                for term, count in counts.items():
                    tf[term] = tf[term] + count * norm if term in tf else count * norm
            weighted.append(tf)
            df.update(tf.keys())
        k1 = ranking.k1
        self._postings: dict[str, dict[int, float]] = {t: {} for t in df}
        self.doc_terms: list[dict[str, float]] = []
        self.name_terms = [frozenset(t for t in doc[0][0] if " " not in t) for doc in docs]
        idf = {t: math.log(1.0 + (n - d + 0.5) / (d + 0.5)) for t, d in df.items()}
        postings = self._postings
        for i, tf in enumerate(weighted):
            contrib: dict[str, float] = {}
            for term, value in tf.items():
                c = contrib[term] = idf[term] * value / (k1 + value)
                postings[term][i] = c
            if ranking.feedback_docs:
                self.doc_terms.append(contrib)  # what feedback reads of its first hits
        # A word in more than 1/16 of the tools is summed as a whole column (C speed, no per-tool
        # Python step); the others, by their few postings.
        self.n = n
        self._dense: dict[str, array[float]] = {}
        for t, p in self._postings.items():
            if len(p) * 16 > n:
                column = self._dense[t] = array("d", bytes(8 * n))
                for i, c in p.items():
                    column[i] = c

    def _score(self, weighted_terms: Iterable[tuple[str, float]]) -> list[float]:
        """Every document's score for the (term, weight) pairs: the rare terms' few postings added
        one by one, then the frequent terms' columns summed in one pass."""
        acc = [0.0] * self.n
        columns: list[Iterable[float]] = []
        for term, qw in weighted_terms:
            column = self._dense.get(term)
            if column is not None:
                columns.append(column if qw == 1.0 else [qw * c for c in column])
                continue
            for doc, c in self._postings.get(term, {}).items():
                acc[doc] += qw * c
        if columns:
            acc = list(map(sum, zip(acc, *columns, strict=True)))
        return acc

    def rank(self, query: Sequence[str], limit: int) -> list[int]:
        """The indexes of the best ``limit`` documents for the query terms, best first (ties: lower
        index first). Documents that share no term with the query (or its feedback) are left out."""
        return _best(self.scores(query), limit)

    def scores(self, query: Sequence[str]) -> list[float]:
        """Every document's score for the query terms (0: no term shared)."""
        r = self.ranking
        weighted = [(t, 1.0) for t in query]
        if r.pairs:
            weighted += [(_pair(a, b), r.pairs) for a, b in pairwise(query)]
        acc = self._score(weighted)
        if r.feedback_docs and r.feedback_terms and r.feedback_weight:
            top = _best(acc, r.feedback_docs)
            pool: dict[str, float] = {}
            for d in top:
                for term, c in self.doc_terms[d].items():
                    pool[term] = pool.get(term, 0.0) + c
            seen = set(query)
            extra = heapq.nlargest(
                r.feedback_terms, (t for t in pool if t not in seen), key=lambda t: (pool[t], t)
            )
            if extra:
                scale = r.feedback_weight / pool[extra[0]]
                acc = list(map(add, acc, self._score((t, pool[t] * scale) for t in extra)))
        if r.name_cover:
            query_set = set(query)
            best = _best(acc, RERANK)
            if best:
                bonus = r.name_cover * acc[best[0]]
                for d in best:
                    name = self.name_terms[d]
                    if name:
                        acc[d] += bonus * len(name & query_set) / len(name)
        return acc


def _best(scores: list[float], limit: int) -> list[int]:
    """The indexes of the ``limit`` highest positive scores, highest first, ties by index."""
    if limit < 1:
        return []
    hits = [i for i, v in enumerate(scores) if v > 0.0] if len(scores) <= 4 * limit else None
    if hits is None:
        cut = heapq.nlargest(limit, scores)[-1]
        hits = [i for i, v in enumerate(scores) if v >= cut and v > 0.0]
    hits.sort(key=scores.__getitem__, reverse=True)  # stable: equal scores keep index order
    return hits[:limit]
