"""The memory pack's settings: ``[plugins.memory.settings]`` in the profile."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field


class MemorySettings(BaseModel):
    """Where the store lives and how big entries may get. Unknown keys are errors."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    path: str = Field(
        default=".reyn/memory.db",
        description="SQLite file of the store; a relative path resolves against the workspace",
    )
    max_body_bytes: int = Field(
        default=64 * 1024, ge=1, le=16 * 1024 * 1024, description="largest entry body, in UTF-8 bytes"
    )
    max_entries_per_layer: int = Field(
        default=10_000, ge=1, description="entries one layer (shared, or one agent) may hold"
    )
    busy_timeout_s: float = Field(
        default=30.0, gt=0, le=600, description="how long a write waits for another writer before it fails"
    )
    list_limit: int = Field(
        default=500, ge=1, le=10_000, description="most entries list_memory returns per layer"
    )

    def db_path(self, workspace: Path) -> Path:
        """The store's file: ``path`` with ``~`` expanded, relative to ``workspace`` unless absolute."""
        p = Path(self.path).expanduser()
        return p if p.is_absolute() else workspace / p
