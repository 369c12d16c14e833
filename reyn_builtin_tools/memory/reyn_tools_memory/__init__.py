"""Reyn memory pack: durable shared and per-agent memory entries, in an embedded SQLite store (the
default) or a PostgreSQL server shared by many hosts (``reyn-tools-memory[postgres]``).

Tools (router and phase surfaces, cluster ``memory``): ``list_memory``, ``read_memory_body``,
``remember_shared``, ``remember_agent``, ``forget_memory``. CLI: ``reyn memory export|import``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from reyn_core import lazy_exports

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
__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        ".backend": (
            "MEMORY_TYPES",
            "MemoryBackend",
            "MemoryBackendMissing",
            "MemoryEntry",
            "MemoryStoreError",
            "MemoryStoreUnavailable",
            "PutResult",
            "open_store",
        ),
        ".store": ("SCHEMA_VERSION", "MemoryStore"),
        ".postgres": ("PostgresStore",),
    },
    globals(),
)

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
