"""``open_store``: the store the settings configure, importing only that backend's driver."""

from __future__ import annotations

from pathlib import Path

from .backend import MemoryBackend
from .settings import MemorySettings


def open_store(settings: MemorySettings, workspace: Path) -> MemoryBackend:
    """The store ``settings`` configure, resolved against ``workspace``; imports only its driver."""
    if settings.backend == "postgres":
        from .postgres import postgres_store

        return postgres_store(settings)
    from .store import MemoryStore

    return MemoryStore(
        settings.db_path(workspace),
        busy_timeout_s=settings.busy_timeout_s,
        max_entries_per_layer=settings.max_entries_per_layer,
    )


__all__ = ["open_store"]
