"""The search index: rank the tools a caller may be offered against a request in plain words.

The ranking (``ranking``) is BM25F over four fields of each tool — its name split into words
(``read_file``, ``readFile`` → ``read file``), its description, its parameters' names and their
descriptions — in pure Python, no dependency (``ranking``: its parameters, chosen on one part of
the benchmark's data and measured on another, and the options tried, such as pseudo-relevance
feedback). Nothing here decides what a caller may see: the candidates are
``registry.visible(surface, ctx)``, the same gate evaluation the renderers and the dispatcher use,
and the index is built over exactly those tools (owned by the frozen snapshot, per visible set), so
a hidden tool cannot even shift the word statistics.

``tools.find_tools`` is the model-facing tool built on it (a plugin tool, run through the one
dispatcher like any other); the core's deferral (``reyn_core.host.ToolDeferral``) decides when it is
offered.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from reyn_core import ToolContext, ToolDefinition

from .ranking import (
    DEFAULT_RANKING,
    FIELDS,
    STOP_WORDS,
    Analysis,
    Ranking,
    Scorer,
    analyse,
    field_texts,
    split_words,
    term,
)
from .ranking import query_terms as _ranking_terms

if TYPE_CHECKING:
    from reyn_core.host import ToolRegistry

    from .semantic import SemanticRanking

DEFAULT_LIMIT = 5
MAX_LIMIT = 20
MAX_QUERY_CHARS = 500
MAX_QUERY_TERMS = 32
# Indexes a snapshot keeps (one per visible set; ~9 MB for 2,000 tools): a host whose callers see
# many different sets rebuilds the least recently used.
INDEXES_KEPT = 8
# What a hit's "matched" reports, per field the model reads: the parameter fields are shown as one.
_SHOWN = {
    "name": "name",
    "description": "description",
    "param_names": "parameters",
    "param_text": "parameters",
}


def name_words(name: str) -> str:
    """``name`` as space-separated words: snake_case, kebab-case, dotted and camelCase split
    (``getHTTPResponse_v2`` → ``get HTTP Response v2``)."""
    return " ".join(split_words(name))


def cut_query(query: str) -> str:
    """The part of ``query`` a search reads: its first ``MAX_QUERY_CHARS`` characters, ending before
    a word the cut would split. A model that pastes a whole request gets a search on its start,
    never an error: the same rule for ``search_tools``, ``find_tools`` and ``reyn tools search``."""
    if len(query) <= MAX_QUERY_CHARS:
        return query
    head = query[:MAX_QUERY_CHARS]
    if query[MAX_QUERY_CHARS].isalnum() and head[-1].isalnum():
        cut = max(head.rfind(c) for c in " \t\n")
        head = head[:cut] if cut > 0 else head
    return head


def query_terms(query: str, ranking: Ranking = DEFAULT_RANKING) -> tuple[str, ...]:
    """The distinct terms of ``cut_query(query)`` as ``ranking`` reads them (lower-cased,
    identifiers split like tool names, stemmed; stop words and bare numbers dropped only when
    ``ranking.stop_words``), at most ``MAX_QUERY_TERMS``."""
    return _ranking_terms(cut_query(query), ranking)[:MAX_QUERY_TERMS]


@dataclass(frozen=True, slots=True)
class ToolMatch:
    """One search hit: the tool's name, its one-line summary and the words that matched, by field
    (``name``, ``description``, ``parameters``)."""

    name: str
    summary: str
    matched: Mapping[str, tuple[str, ...]]

    def to_json(self) -> dict[str, Any]:
        """``{"name", "summary", "matched": {field: [words]}}`` (what the model receives)."""
        return {
            "name": self.name,
            "summary": self.summary,
            "matched": {k: list(v) for k, v in self.matched.items()},
        }


class ToolIndex:
    """A search index over a fixed list of tools (read-only once built; safe from several threads)."""

    def __init__(
        self,
        tools: Iterable[ToolDefinition],
        ranking: Ranking = DEFAULT_RANKING,
        *,
        analysed: dict[str, tuple[tuple[str, ...], Analysis]] | None = None,
        vectors: dict[str, Any] | None = None,
    ) -> None:
        """``analysed``: a cache of each tool's fields and ``Analysis`` by name, shared by the indexes
        of one snapshot (filled here as tools are met), so an index over another visible set of the
        same snapshot does not split and count the same texts again. ``vectors`` (the same kind of
        cache, of embeddings): rank semantically too (``semantic.SemanticRanking``), which imports
        the optional model."""
        self._tools = tuple(tools)
        cache = analysed if analysed is not None else {}
        prepared = []
        for tool in self._tools:
            entry = cache.get(tool.name)
            if entry is None:
                fields = field_texts(tool, ranking)
                entry = cache[tool.name] = (fields, analyse(fields, ranking))
            prepared.append(entry)
        self._fields = [fields for fields, _ in prepared]
        self._scorer = Scorer([analysis for _, analysis in prepared], ranking)
        self.ranking = ranking
        self.semantic: SemanticRanking | None = None
        if vectors is not None:
            from .semantic import SemanticRanking

            self.semantic = SemanticRanking(self._tools, vectors)

    def __len__(self) -> int:
        return len(self._tools)

    def search(
        self, query: str, *, allowed: Collection[str] | None = None, limit: int = DEFAULT_LIMIT
    ) -> list[ToolMatch]:
        """The best ``limit`` tools (of those named in ``allowed``, when given) for ``query``, best
        first (ties by name). A query without any word returns nothing."""
        words = query_terms(query, self.ranking)
        if not words or limit < 1:
            return []
        wanted = limit if allowed is None else len(self._tools)
        if self.semantic is None:
            rows = self._scorer.rank(words, wanted)
        else:
            rows = self.semantic.rank(self._scorer.scores(words), cut_query(query), wanted)
        if allowed is not None:
            rows = [r for r in rows if self._tools[r].name in allowed]
        return [self._match(r, set(words)) for r in rows[:limit]]

    def _match(self, row: int, words: set[str]) -> ToolMatch:
        """The hit for ``row``: per shown field, the query's words as the tool writes them (words like
        "the" rank but are not shown: they tell the model nothing)."""
        found: dict[str, list[str]] = {}
        for field, text in zip(FIELDS, self._fields[row], strict=True):
            for word in split_words(text):
                low = word.lower()
                if low not in STOP_WORDS and term(low, self.ranking) in words:
                    shown = found.setdefault(_SHOWN[field], [])
                    if low not in shown and len(shown) < 8:
                        shown.append(low)
        tool = self._tools[row]
        return ToolMatch(tool.name, _brief(tool.summary), {k: tuple(v) for k, v in found.items()})


def _brief(summary: str, limit: int = 300) -> str:
    """A search result's summary: whole when short, else cut after its last full sentence within
    ``limit`` (an ellipsis only when no sentence ends there), so the model never reads half a one."""
    if len(summary) <= limit:
        return summary
    head = summary[:limit]
    end = max(head.rfind(". "), head.rfind("! "), head.rfind("? "))
    return head[: end + 1] if end > 0 else head.rstrip() + "…"


def tool_index(registry: ToolRegistry, visible: Collection[str], *, semantic: bool = False) -> ToolIndex:
    """The search index over exactly the tools of ``registry`` named in ``visible``
    (``registry.visible_names``' answer for the caller), owned by the snapshot, per visible set
    (and per ``semantic``: with it, the index also ranks by the optional embedding).

    The index holds nothing else, so the word statistics (how rare a word is, how long a document
    is) come only from tools this caller may be offered: a hidden tool cannot even nudge the ranking.
    """
    names = visible if type(visible) is frozenset else frozenset(visible)
    # each tool's fields, split and counted once per snapshot, whatever set it is indexed in
    analysed: dict[str, tuple[tuple[str, ...], Analysis]] = registry.derived(
        "tool_search.analysis", DEFAULT_RANKING, dict
    )

    vectors: dict[str, Any] | None = None
    if semantic:
        from .semantic import MODEL

        vectors = registry.derived("tool_search.vectors", MODEL, dict)  # each tool embedded once

    def build() -> ToolIndex:
        tools = (t for t in registry.tools() if t.name in names)
        return ToolIndex(tools, analysed=analysed, vectors=vectors)

    return registry.derived("tool_search.index", (names, semantic), build, keep=INDEXES_KEPT)


def search_tools(
    registry: ToolRegistry,
    query: str,
    ctx: ToolContext,
    *,
    limit: int = DEFAULT_LIMIT,
    exclude: Iterable[str] = (),
    semantic: bool = False,
) -> list[ToolMatch]:
    """Rank, for ``query``, the tools the gates would offer on ``ctx.surface`` in ``ctx`` (with
    ``semantic``, BM25F fused with the optional static embedding: ``semantic.py``).

    The candidates are exactly ``registry.visible(ctx.surface, ctx, exclude=exclude)``: a tool that a
    gate hides (role, operator, call or runtime layer) is never returned, whatever the query, and
    is not in the index the ranking is computed over. Only the first ``MAX_QUERY_CHARS`` characters
    of ``query`` are read (``cut_query``).
    """
    visible = registry.visible_names(ctx.surface, ctx, exclude=exclude)
    if not visible:
        return []
    return tool_index(registry, visible, semantic=semantic).search(query, limit=limit)
