"""The memory pack's settings: ``[plugins.memory.settings]`` in the profile."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")
# Settings that only one backend reads: setting one for the other backend is a mistake worth naming.
SQLITE_ONLY = ("path", "busy_timeout_s")
POSTGRES_ONLY = ("dsn_env", "connect_timeout_s", "statement_timeout_s", "pool_max_size")
# How long a store may make one operation wait, in seconds: more than none, at most ten minutes.
_Wait = Annotated[float, Field(gt=0, le=600)]


class MemorySettings(BaseModel):
    """Which store, where it lives, and how big entries may get. Unknown keys are errors."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    backend: Literal["sqlite", "postgres"] = Field(
        default="sqlite",
        description="'sqlite' (an embedded file, the default) or 'postgres' "
        "(one server shared by many hosts)",
    )
    path: str = Field(
        default=".reyn/memory.db",
        description="sqlite: the store's file; a relative path resolves against the workspace",
    )
    busy_timeout_s: _Wait = Field(
        default=30.0, description="sqlite: how long a write waits for another writer before it fails"
    )
    dsn_env: str = Field(
        default="REYN_MEMORY_DSN",
        description="postgres: the NAME of the environment variable holding the connection string "
        "(the DSN, with its password, never goes in the profile)",
    )
    connect_timeout_s: int = Field(
        default=5, ge=2, le=600, description="postgres: how long connecting may take (libpq's minimum is 2)"
    )
    statement_timeout_s: _Wait = Field(
        default=30.0,
        description="postgres: how long one statement, lock waits included, may run before it is cancelled",
    )
    pool_max_size: int = Field(
        default=4, ge=1, le=100, description="postgres: most connections one process keeps open"
    )
    max_body_bytes: int = Field(
        default=64 * 1024, ge=1, le=16 * 1024 * 1024, description="largest entry body, in UTF-8 bytes"
    )
    max_entries_per_layer: int = Field(
        default=10_000, ge=1, description="entries one layer (shared, or one agent) may hold"
    )
    list_limit: int = Field(
        default=500, ge=1, le=10_000, description="most entries list_memory returns per layer"
    )

    @field_validator("dsn_env")
    @classmethod
    def _env_name(cls, value: str) -> str:
        # Never echo the value: a DSN pasted here by mistake carries a password.
        if not _ENV_NAME.match(value):
            looks = " (it looks like a connection string)" if "=" in value or "://" in value else ""
            raise ValueError(
                "must be the name of an environment variable: letters, digits and '_', not starting "
                f"with a digit{looks}; put the DSN in that variable, never in the profile"
            )
        return value

    @model_validator(mode="after")
    def _one_backend(self) -> MemorySettings:
        other = POSTGRES_ONLY if self.backend == "sqlite" else SQLITE_ONLY
        stray = [k for k in other if k in self.model_fields_set]
        if stray:
            raise ValueError(
                f"{', '.join(stray)} {'is' if len(stray) == 1 else 'are'} not used by backend "
                f"{self.backend!r}; remove {'it' if len(stray) == 1 else 'them'} or set the backend "
                f"they belong to ({'postgres' if self.backend == 'sqlite' else 'sqlite'})"
            )
        return self

    def db_path(self, workspace: Path) -> Path:
        """The SQLite file: ``path`` with ``~`` expanded, relative to ``workspace`` unless absolute."""
        p = Path(self.path).expanduser()
        return p if p.is_absolute() else workspace / p

    def dsn(self) -> str:
        """The PostgreSQL connection string from ``$dsn_env``; ``MemoryStoreError`` when unset."""
        value = os.environ.get(self.dsn_env, "")
        if not value.strip():
            from .backend import MemoryStoreError

            raise MemoryStoreError(
                f"the postgres memory backend reads its connection string from the environment variable "
                f"${self.dsn_env}, which is not set; set it (e.g. postgresql://user@host:5432/dbname, "
                "with the password there or in ~/.pgpass), or change plugins.memory.settings.dsn_env"
            )
        return value
