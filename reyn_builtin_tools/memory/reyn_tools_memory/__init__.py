"""Reyn memory pack: durable shared and per-agent memory entries, in an embedded SQLite store (the
default) or a PostgreSQL server shared by many hosts (``reyn-tools-memory[postgres]``).

Tools (router and phase surfaces, cluster ``memory``): ``list_memory``, ``read_memory_body``,
``remember_shared``, ``remember_agent``, ``forget_memory``. CLI: ``reyn memory export|import``.
"""

from __future__ import annotations

import importlib
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
    )
    from .opening import open_store
    from .postgres import PostgresStore
    from .store import SCHEMA_VERSION, MemoryStore

# The stores (sqlite3, psycopg) are imported on first use: loading the plugin imports this package
# first, listing or rendering the tools never opens a store, and psycopg is imported only when the
# postgres backend is used.
_MODULES = {
    ".backend": (
        "MEMORY_TYPES",
        "MemoryBackend",
        "MemoryBackendMissing",
        "MemoryEntry",
        "MemoryStoreError",
        "MemoryStoreUnavailable",
        "PutResult",
    ),
    ".opening": ("open_store",),
    ".store": ("SCHEMA_VERSION", "MemoryStore"),
    ".postgres": ("PostgresStore",),
}
_MODULE_OF = {name: module for module, names in _MODULES.items() for name in names}


def __getattr__(name: str) -> Any:  # PEP 562: the store modules are imported on first access
    if name not in _MODULE_OF:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(_MODULE_OF[name], __name__), name)


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
