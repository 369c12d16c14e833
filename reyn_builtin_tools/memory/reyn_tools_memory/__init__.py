"""Reyn memory pack: durable shared and per-agent memory entries in an embedded SQLite store.

Tools (router and phase surfaces, cluster ``memory``): ``list_memory``, ``read_memory_body``,
``remember_shared``, ``remember_agent``, ``forget_memory``. CLI: ``reyn memory export|import``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .settings import MemorySettings
from .slugs import slug_problem

if TYPE_CHECKING:
    from .store import MEMORY_TYPES, SCHEMA_VERSION, MemoryEntry, MemoryStore, MemoryStoreError

# The store (sqlite3) is imported on first use: loading the plugin imports this package first, and
# listing or rendering the tools never opens a store.
_STORE_NAMES = frozenset({"MEMORY_TYPES", "SCHEMA_VERSION", "MemoryEntry", "MemoryStore", "MemoryStoreError"})


def __getattr__(name: str) -> Any:
    if name not in _STORE_NAMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from . import store

    value = getattr(store, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


__all__ = [
    "MEMORY_TYPES",
    "SCHEMA_VERSION",
    "MemoryEntry",
    "MemorySettings",
    "MemoryStore",
    "MemoryStoreError",
    "slug_problem",
]
