"""``[approvals.settings]`` of the sqlite backend, and the factory the entry point names."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from reyn_core import ToolRuntimeMissing, settings_as

from .store import SqliteApprovalStore


class SqliteSettings(BaseModel):
    """Where the requests are kept. Unknown keys are errors."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    file: str = Field(
        default="reyn-approvals.sqlite",
        min_length=1,
        description="the SQLite file of requests (created 0600), relative to the profile's folder; "
        "~ is expanded",
    )


class SqliteStores:
    """The ``reyn.approval_stores`` factory (an ``ApprovalStoreFactory``): a ``SqliteApprovalStore``
    on the file the settings name (it opens the file on first use). ``host_files`` tells the load
    which files its rows are trusted from, so no isolated plugin may be granted to write them."""

    @staticmethod
    def path(settings: Mapping[str, Any], base: Path) -> Path:
        """The store's file: ``settings``' ``file`` resolved against ``base`` (``ValueError`` when
        ``settings`` are not valid, naming each bad key)."""
        try:
            config = settings_as(settings, SqliteSettings)
        except ToolRuntimeMissing as exc:
            raise ValueError(f"[approvals.settings] is not valid for the sqlite store: {exc}") from None
        file = Path(config.file).expanduser()
        return file if file.is_absolute() else base / file

    def __call__(self, settings: Mapping[str, Any], base: Path) -> SqliteApprovalStore:
        return SqliteApprovalStore(self.path(settings, base))

    def host_files(self, settings: Mapping[str, Any], base: Path) -> tuple[Path, ...]:
        """The file and SQLite's own files beside it (its write-ahead log and shared memory)."""
        path = self.path(settings, base)
        return (path, Path(f"{path}-wal"), Path(f"{path}-shm"))


open_store = SqliteStores()
"""The object the entry point ``sqlite`` names."""
