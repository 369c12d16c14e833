"""The SQL both memory stores share, written once with the driver's placeholder (``?`` for sqlite3,
``%s`` for psycopg): the entry columns, the listing of one layer and the in-place update."""

from __future__ import annotations

from typing import Any

from .backend import Layer, MemoryEntry

# The columns of a ``MemoryEntry``, in its field order; a listing reads NULL for the body.
COLUMNS = "layer, agent, slug, name, description, type, body, created_at, updated_at"
SUMMARY_COLUMNS = "layer, agent, slug, name, description, type, NULL, created_at, updated_at"
UPDATE_COLUMNS = ("name", "description", "type", "body", "updated_at")


def entries_query(
    table: str, layer: Layer, agent: str, type: str | None, limit: int | None, placeholder: str
) -> tuple[str, list[object]]:
    """The SELECT and parameters of ``MemoryBackend.entries``: one layer's entries without bodies, of
    one type if given, by slug."""
    sql = f"SELECT {SUMMARY_COLUMNS} FROM {table} WHERE layer = {placeholder} AND agent = {placeholder}"
    params: list[object] = [layer, agent]
    if type is not None:
        sql += f" AND type = {placeholder}"
        params.append(type)
    sql += " ORDER BY slug"
    if limit is not None:
        sql += f" LIMIT {placeholder}"
        params.append(limit)
    return sql, params


def update_statement(e: MemoryEntry, updated: str, placeholder: str) -> tuple[str, tuple[Any, ...]]:
    """The SET and WHERE clauses and parameters that overwrite entry ``e`` in place. ``created_at`` is
    written only when the entry carries one (an import), else kept."""
    columns = [*UPDATE_COLUMNS, *(("created_at",) if e.created else ())]
    sets = ", ".join(f"{c} = {placeholder}" for c in columns)
    where = " AND ".join(f"{c} = {placeholder}" for c in ("layer", "agent", "slug"))
    params = (e.name, e.description, e.type, e.body, updated, *((e.created,) if e.created else ()))
    return f"SET {sets} WHERE {where}", (*params, e.layer, e.agent, e.slug)
