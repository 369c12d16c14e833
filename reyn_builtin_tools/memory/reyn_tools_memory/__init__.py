"""Reyn memory pack: durable shared and per-agent memory entries in an embedded SQLite store.

Tools (router and phase surfaces, cluster ``memory``): ``list_memory``, ``read_memory_body``,
``remember_shared``, ``remember_agent``, ``forget_memory``. CLI: ``reyn memory export|import``.
"""

from __future__ import annotations

from .settings import MemorySettings
from .slugs import slug_problem
from .store import MEMORY_TYPES, SCHEMA_VERSION, MemoryEntry, MemoryStore, MemoryStoreError

__all__ = [
    "MEMORY_TYPES",
    "SCHEMA_VERSION",
    "MemoryEntry",
    "MemorySettings",
    "MemoryStore",
    "MemoryStoreError",
    "slug_problem",
]
