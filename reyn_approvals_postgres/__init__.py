"""reyn-approvals-postgres: the approval store on PostgreSQL (docs/approvals.md).

Selected by a profile with ``[approvals] backend = "postgres"`` (the entry point ``postgres`` of the
group ``reyn.approval_stores``); its options go in ``[approvals.settings]`` (``PostgresSettings``).
The connection string is read from the environment variable the settings name, never from the
profile, and is shown only as ``postgresql://host:port/db``.
"""

from __future__ import annotations

from .settings import PostgresSettings, open_store
from .store import ApprovalStoreUnavailable, PostgresApprovalStore

__all__ = ["ApprovalStoreUnavailable", "PostgresApprovalStore", "PostgresSettings", "open_store"]
