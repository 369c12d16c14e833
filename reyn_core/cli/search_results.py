"""What ``reyn tools search`` shows of the search tool's answer: the hits the router's deferral reads
(``deferral.search_hits``), as JSON rows or a table. ``[surfaces.router.defer] search_tool`` may name
any loaded tool; an answer of another shape is a clear error, not a crash."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..deferral import search_hits
from .loading import table

RESULT_SHAPE = '{"tools": [{"name": ..., "summary": ..., "matched": ...}, ...]}'


def search_rows(data: object, deferred: Mapping[str, str], search_tool: str) -> list[dict[str, Any]]:
    """The hits of ``data`` with why each is deferred (None: it is in the array); ``ValueError``
    naming what the tool answered when ``data`` is not a search result."""
    hits = search_hits(data)
    if hits is None:
        raise ValueError(
            f"the search tool {search_tool!r} answered {_kind(data)}, not a search result "
            f"({RESULT_SHAPE}, as the search pack's find_tools answers)"
        )
    return [{**h, "deferred": deferred.get(h["name"])} for h in hits]


def search_table(rows: list[dict[str, Any]]) -> str:
    """The rows as a table: a hit without ``summary`` or ``matched`` shows them empty."""
    cells = [
        [r["name"], r["deferred"] or "-", _line(r.get("summary"))[:60], _matched(r.get("matched"))]
        for r in rows
    ]
    return table(cells, ["NAME", "DEFERRED", "SUMMARY", "MATCHED"])


def _kind(data: object) -> str:
    if isinstance(data, Mapping):
        keys = sorted(str(k) for k in data)[:5]
        return f"an object with keys {keys}" if keys else "an empty object"
    return "null" if data is None else f"a {type(data).__name__}"


def _line(value: object) -> str:
    return "" if value is None else " ".join(str(value).split())


def _matched(matched: object) -> str:
    """find_tools' ``{field: [words]}`` as ``field: a, b; field: c``; another form as its text."""
    if not isinstance(matched, Mapping):
        return _line(matched)[:60]
    return "; ".join(
        f"{field}: {', '.join(map(str, words)) if isinstance(words, list) else _line(words)}"
        for field, words in matched.items()
    )
