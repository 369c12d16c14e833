"""Tool search: rank the tools a caller may be offered against a request in plain words.

The ranking is SQLite FTS5's ``bm25`` (the standard library's ``sqlite3``) over three columns — the
tool's name split into words (``read_file``, ``readFile`` → ``read file``), its description, and its
parameters' names and descriptions — with the ``porter`` stemmer. Nothing here decides what a caller
may see: the candidates are ``registry.visible(surface, ctx)``, the same gate evaluation the
renderers and the dispatcher use, and the index is built over exactly those tools (kept per frozen
registry and visible set), so a hidden tool cannot even shift bm25's word statistics.

``search_tool_definition`` is the model-facing ``find_tools`` tool built on it (a host tool, run
through the one dispatcher like any other), and ``with_search_tool`` the registry that adds it;
``reyn_core.deferral`` decides when it is offered.
"""

from __future__ import annotations

import re
import threading
import weakref
from collections import OrderedDict
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .context import ToolContext
from .errors import ToolError
from .tool import ToolDefinition, ToolGates, ToolOrigin

if TYPE_CHECKING:
    import sqlite3

    from .registry import ToolRegistry

DEFAULT_SEARCH_TOOL = "find_tools"
DEFAULT_LIMIT = 5
MAX_LIMIT = 20
MAX_QUERY_CHARS = 500
MAX_QUERY_TERMS = 32
# Column weights for bm25 (name, description, parameters): a word in the name says more about what
# the tool does than the same word in a parameter's description.
BM25_WEIGHTS = (3.0, 1.0, 1.0)
_FIELDS = ("name", "description", "parameters")
_MAX_TEXT = 4000  # characters indexed per column: a huge description cannot dominate memory
_MARK_OPEN, _MARK_CLOSE = "\x02", "\x03"

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_WORD = re.compile(r"[^\W_]+")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


# Words that say nothing about which tool is meant ("what is the weather in the city of X"): in a
# query they only add noise to bm25's scores. Numbers likewise (argument values, not intents).
_STOP_WORDS = frozenset(
    "a an the of for to in on at by with from and or is are was be been it its this that these those "
    "i me my we our you your he she they them their what which who whom how when where why "
    "can could would should will shall do does did please there here as into about than then so "
    "if also just some any all each".split()
)


def name_words(name: str) -> str:
    """``name`` as space-separated words: snake_case, kebab-case, dotted and camelCase split
    (``getHTTPResponse_v2`` → ``get HTTP Response v2``)."""
    return " ".join(_WORD.findall(_CAMEL.sub(" ", name)))


def query_terms(query: str) -> tuple[str, ...]:
    """The distinct words of ``query`` (lower-cased, identifiers split like tool names), at most
    ``MAX_QUERY_TERMS``."""
    words = _WORD.findall(_CAMEL.sub(" ", query[:MAX_QUERY_CHARS]))
    kept = [w.lower() for w in words if len(w) <= 64 and w.lower() not in _STOP_WORDS and not w.isdigit()]
    return tuple(dict.fromkeys(kept))[:MAX_QUERY_TERMS]


def _clean(text: str) -> str:
    return _CONTROL.sub(" ", text)[:_MAX_TEXT]


def _parameter_text(schema: Any, depth: int = 0) -> list[str]:
    """Property names (split into words) and descriptions of a JSON Schema, nested up to 3 levels."""
    out: list[str] = []
    if not isinstance(schema, Mapping) or depth > 3:
        return out
    props = schema.get("properties")
    if isinstance(props, Mapping):
        for key, sub in props.items():
            out.append(name_words(str(key)))
            if isinstance(sub, Mapping):
                if isinstance(sub.get("description"), str):
                    out.append(sub["description"])
                out.extend(_parameter_text(sub, depth + 1))
                out.extend(_parameter_text(sub.get("items"), depth + 1))
    return out


def search_text(tool: ToolDefinition) -> tuple[str, str, str]:
    """The three indexed columns of ``tool``: name words, description, parameter words."""
    name = f"{name_words(tool.name)} {tool.name}"
    params = " ".join(_parameter_text(tool.parameters))
    return _clean(name), _clean(tool.description), _clean(params)


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
    """An FTS5 index over a fixed list of tools (in-memory SQLite; safe from several threads)."""

    def __init__(self, tools: Iterable[ToolDefinition]) -> None:
        import sqlite3

        self._tools = tuple(tools)
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection = sqlite3.connect(":memory:", check_same_thread=False)
        try:
            self._conn.execute(
                "CREATE VIRTUAL TABLE tools USING fts5(name, description, parameters, "
                "tokenize = 'porter unicode61')"
            )
        except sqlite3.OperationalError as exc:  # a Python built against SQLite without FTS5
            raise ToolError(f"tool search needs SQLite with FTS5, which this Python lacks: {exc}") from None
        self._conn.executemany(
            "INSERT INTO tools(rowid, name, description, parameters) VALUES (?, ?, ?, ?)",
            ((i, *search_text(t)) for i, t in enumerate(self._tools)),
        )
        self._conn.commit()

    def __len__(self) -> int:
        return len(self._tools)

    def search(self, query: str, *, allowed: Collection[str], limit: int = DEFAULT_LIMIT) -> list[ToolMatch]:
        """The best ``limit`` tools named in ``allowed`` for ``query``, best first (ties by name).

        Every word of the query is a separate, quoted term joined by OR, so no FTS5 syntax in the
        query is ever interpreted. A query without any word returns nothing.
        """
        terms = query_terms(query)
        if not terms or limit < 1:
            return []
        match = " OR ".join(f'"{t}"' for t in terms)
        weights = ", ".join(str(w) for w in BM25_WEIGHTS)
        with self._lock:
            ranked = self._conn.execute(
                f"SELECT rowid FROM tools WHERE tools MATCH ? ORDER BY bm25(tools, {weights}), rowid",
                (match,),
            ).fetchall()
            rows = [r for (r,) in ranked if self._tools[r].name in allowed][:limit]
            marks = self._highlights(match, rows)
        return [
            ToolMatch(self._tools[r].name, _brief(self._tools[r].summary), marks.get(r, {})) for r in rows
        ]

    def _highlights(self, match: str, rows: Sequence[int]) -> dict[int, dict[str, tuple[str, ...]]]:
        if not rows:
            return {}
        columns = ", ".join(f"highlight(tools, {i}, char(2), char(3))" for i in range(len(_FIELDS)))
        marked = self._conn.execute(
            f"SELECT rowid, {columns} FROM tools WHERE tools MATCH ? "
            f"AND rowid IN ({', '.join('?' * len(rows))})",
            (match, *rows),
        ).fetchall()
        out: dict[int, dict[str, tuple[str, ...]]] = {}
        for rowid, *texts in marked:
            found: dict[str, tuple[str, ...]] = {}
            for field, text in zip(_FIELDS, texts, strict=True):
                words = re.findall(f"{_MARK_OPEN}(.*?){_MARK_CLOSE}", text or "", flags=re.S)
                unique = tuple(dict.fromkeys(w.lower() for w in words))[:8]
                if unique:
                    found[field] = unique
            out[rowid] = found
        return out


def _brief(summary: str, limit: int = 300) -> str:
    """A search result's summary: whole when short, else cut after its last full sentence within
    ``limit`` (an ellipsis only when no sentence ends there), so the model never reads half a one."""
    if len(summary) <= limit:
        return summary
    head = summary[:limit]
    end = max(head.rfind(". "), head.rfind("! "), head.rfind("? "))
    return head[: end + 1] if end > 0 else head.rstrip() + "…"


_INDEXES: weakref.WeakKeyDictionary[ToolRegistry, OrderedDict[frozenset[str], ToolIndex]] = (
    weakref.WeakKeyDictionary()
)
_INDEX_LOCK = threading.Lock()
_INDEXES_PER_REGISTRY = 16


def tool_index(registry: ToolRegistry, visible: Collection[str]) -> ToolIndex:
    """The search index over exactly the ``visible`` tools of ``registry``.

    The index holds nothing else, so bm25's word statistics (how rare a word is, how long a
    document is) come only from tools this caller may be offered: a hidden tool cannot even nudge
    the ranking. Indexes are kept per frozen registry and visible set (the most recent few); a
    registry still being built gets a fresh index each time, since its tools may change.
    """
    names = frozenset(visible)
    tools = [t for t in registry.tools() if t.name in names]
    if not registry.frozen:
        return ToolIndex(tools)
    with _INDEX_LOCK:
        per_registry = _INDEXES.setdefault(registry, OrderedDict())
        index = per_registry.get(names)
        if index is not None:
            per_registry.move_to_end(names)
            return index
    index = ToolIndex(tools)  # built outside the lock: other searches are not held up
    with _INDEX_LOCK:
        per_registry = _INDEXES.setdefault(registry, OrderedDict())
        per_registry[names] = index
        while len(per_registry) > _INDEXES_PER_REGISTRY:
            per_registry.popitem(last=False)
    return index


def search_tools(
    registry: ToolRegistry,
    query: str,
    ctx: ToolContext,
    *,
    limit: int = DEFAULT_LIMIT,
    exclude: Iterable[str] = (),
) -> list[ToolMatch]:
    """Rank, for ``query``, the tools the gates would offer on ``ctx.surface`` in ``ctx``.

    The candidates are exactly ``registry.visible(ctx.surface, ctx, exclude=exclude)``: a tool that a
    gate hides (role, operator, call or runtime layer) is never returned, whatever the query, and
    is not in the index the ranking is computed over.
    """
    visible = {t.name for t in registry.visible(ctx.surface, ctx, exclude=exclude)}
    if not visible:
        return []
    return tool_index(registry, visible).search(query, allowed=visible, limit=limit)


SEARCH_TOOL_DESCRIPTION = (
    "Search for tools that are not in your tool list. More tools are installed than are listed; "
    "describe in a few words what you need to do (e.g. 'convert currency', 'read a csv file') and "
    "the best matches are returned with a one-line summary and the words that matched. Tools found "
    "are added to your tool list from your next turn; you may also call one directly by its exact name."
)


def search_tool_definition(source: ToolRegistry, name: str = DEFAULT_SEARCH_TOOL) -> ToolDefinition:
    """The model-facing search tool over ``source``'s tools: a host tool (router surface only,
    read-only) whose handler runs ``search_tools`` with the caller's context, as the dispatcher
    passes it — so it ranks what this caller may be offered and nothing else."""

    def find_tools(query: str, limit: int = DEFAULT_LIMIT, ctx: ToolContext | None = None) -> dict[str, Any]:
        call_ctx = ctx if ctx is not None else ToolContext(surface="router")
        hits = search_tools(source, query, call_ctx, limit=limit, exclude=(name,))
        if not hits:
            note = "no tool matched; try other or fewer words"
        else:
            note = "these tools are in your tool list from your next turn; call one by its name"
        return {"tools": [h.to_json() for h in hits], "note": note}

    return ToolDefinition(
        name=name,
        description=SEARCH_TOOL_DESCRIPTION,
        parameters={
            "type": "object",
            "properties": {
                "query": {
                    "type": "string",
                    "minLength": 1,
                    "maxLength": MAX_QUERY_CHARS,
                    "description": "What you want to do, in a few words.",
                },
                "limit": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": MAX_LIMIT,
                    "default": DEFAULT_LIMIT,
                    "description": "How many tools to return (default 5).",
                },
            },
            "required": ["query"],
            "additionalProperties": False,
        },
        handler=find_tools,
        gates=ToolGates(router="allow", phase="deny"),
        cluster="tool_search",
        purity="read_only",
        timeout_s=30.0,
        origin=ToolOrigin(kind="host"),
    )


# --------------------------------------------------------------------------- the search registry

# Weak both ways: a search registry's tool refers to its source, so a strong value would keep every
# source (the weak key) alive for ever; held weakly, the pair lives as long as a caller holds either.
_SEARCH_REGISTRIES: weakref.WeakKeyDictionary[
    ToolRegistry, weakref.WeakValueDictionary[str, ToolRegistry]
] = weakref.WeakKeyDictionary()
_SEARCH_LOCK = threading.Lock()


def with_search_tool(registry: ToolRegistry, name: str = DEFAULT_SEARCH_TOOL) -> ToolRegistry:
    """A frozen registry with every tool of ``registry`` (same definitions, origins, original names,
    settings, operator policy and call hooks) plus the search tool ``name`` over ``registry``.

    The tools are not re-checked (``registry`` already checked them; their recorded warnings are
    kept). Raises ``ToolRegistrationError`` (RT004) when ``name`` collides with a registered tool.
    """
    if registry.frozen:
        with _SEARCH_LOCK:
            per_name = _SEARCH_REGISTRIES.get(registry)
            cached = per_name.get(name) if per_name is not None else None
        if cached is not None:
            return cached
    from .registry import RegistryBuilder
    from .schema import check_tool_schema

    checked = {id(t.parameters): registry.warnings(t.name) for t in registry.tools()}

    def schema_check(parameters: Any, **kwargs: Any) -> list[Any]:
        known = checked.get(id(parameters))
        return list(known) if known is not None else check_tool_schema(parameters, **kwargs)

    builder = RegistryBuilder(
        operator=registry.operator,
        settings=registry.plugin_settings,
        hooks=registry.hooks,
        schema_check=schema_check,
        approvals=registry.approvals,
    )
    for tool in registry.tools():
        original = registry.original_name(tool.name)
        builder.register(tool, origin=tool.origin, original_name=original if original != tool.name else None)
    builder.register(search_tool_definition(registry, name))
    snapshot = builder.freeze()
    if registry.frozen:
        with _SEARCH_LOCK:
            _SEARCH_REGISTRIES.setdefault(registry, weakref.WeakValueDictionary())[name] = snapshot
    return snapshot
