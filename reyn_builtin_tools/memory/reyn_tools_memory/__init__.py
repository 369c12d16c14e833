"""Reyn memory pack: durable shared and per-agent memory entries, in an embedded SQLite store (the
default) or a PostgreSQL server shared by many hosts (``reyn-tools-memory[postgres]``).

Tools (router and phase surfaces, cluster ``memory``): ``list_memory``, ``read_memory_body``,
``remember_shared``, ``remember_agent``, ``forget_memory``. CLI: ``reyn memory export|import``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .settings import MemorySettings
from .slugs import slug_problem

if TYPE_CHECKING:
    from .backend import (
        MEMORY_TYPES,
        MemoryBackend,
        MemoryBackendMissing,
        MemoryEntry,
        MemoryStoreError,
        MemoryStoreUnavailable,
        PutResult,
        open_store,
    )
    from .postgres import PostgresStore
    from .store import SCHEMA_VERSION, MemoryStore

# The stores (sqlite3, psycopg) are imported on first use: loading the plugin imports this package
# first, listing or rendering the tools never opens a store, and psycopg is imported only when the
# postgres backend is used.
_LAZY = {
    "MEMORY_TYPES": "backend",
    "MemoryBackend": "backend",
    "MemoryBackendMissing": "backend",
    "MemoryEntry": "backend",
    "MemoryStoreError": "backend",
    "MemoryStoreUnavailable": "backend",
    "PutResult": "backend",
    "open_store": "backend",
    "SCHEMA_VERSION": "store",
    "MemoryStore": "store",
    "PostgresStore": "postgres",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


__all__ = [
    "MEMORY_TYPES",
    "SCHEMA_VERSION",
    "MemoryBackend",
    "MemoryBackendMissing",
    "MemoryEntry",
    "MemorySettings",
    "MemoryStore",
    "MemoryStoreError",
    "MemoryStoreUnavailable",
    "PostgresStore",
    "PutResult",
    "open_store",
    "slug_problem",
]
