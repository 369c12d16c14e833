"""``[approvals.settings]`` of the postgres backend, and the factory the entry point names."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")


class PostgresSettings(BaseModel):
    """Where the store is and how long it may make a call wait. Unknown keys are errors."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    dsn_env: str = Field(
        default="REYN_APPROVALS_DSN",
        description="the NAME of the environment variable holding the connection string (the DSN, "
        "with its password, never goes in the profile)",
    )
    connect_timeout_s: int = Field(default=5, ge=2, le=600, description="how long connecting may take")
    statement_timeout_s: float = Field(
        default=10.0, gt=0, le=600, description="how long one statement, lock waits included, may run"
    )

    @field_validator("dsn_env")
    @classmethod
    def _env_name(cls, value: str) -> str:
        if not _ENV_NAME.match(value):  # never echoed: a DSN pasted here carries a password
            looks = " (it looks like a connection string)" if "=" in value or "://" in value else ""
            raise ValueError(
                "must be the name of an environment variable: letters, digits and '_', not starting "
                f"with a digit{looks}; put the DSN in that variable, never in the profile"
            )
        return value

    def dsn(self) -> str:
        """The connection string from ``$dsn_env`` (``ValueError`` when it is unset)."""
        value = os.environ.get(self.dsn_env, "")
        if not value.strip():
            raise ValueError(
                f"the postgres approval store reads its connection string from ${self.dsn_env}, which "
                "is not set; set it (e.g. postgresql://user@host:5432/dbname, with the password there "
                "or in ~/.pgpass), or change [approvals.settings] dsn_env"
            )
        return value


def settings_of(raw: Mapping[str, Any]) -> PostgresSettings:
    """``raw`` validated; a ``ValueError`` names each bad key and why, never the value given."""
    try:
        return PostgresSettings.model_validate(dict(raw))
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or 'settings'}: {err['msg']}" for err in exc.errors()
        )
        raise ValueError(f"[approvals.settings] is not valid for the postgres store: {problems}") from None


def open_store(settings: Mapping[str, Any], base: Path) -> Any:
    """The ``reyn.approval_stores`` factory: a ``PostgresApprovalStore`` (it connects on first use)."""
    from .store import PostgresApprovalStore

    config = settings_of(settings)
    return PostgresApprovalStore(
        config.dsn(),
        connect_timeout_s=config.connect_timeout_s,
        statement_timeout_s=config.statement_timeout_s,
    )
