"""Approvals bound to the exact call: the profile's policy, the call's key, the durable store and the
gate the dispatcher runs (docs/approvals.md). Exports lazily: a registry without approvals never
imports the store (or ``sqlite3``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..lazy_exports import lazy_exports

if TYPE_CHECKING:
    from .gate import ApprovalGate
    from .policy import ApprovalPolicy, ApprovalRule, PathCondition
    from .sqlite_store import SqliteApprovalStore
    from .store import ApprovalRecord, ApprovalStore, ApprovalStoreFactory

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        ".gate": ("ApprovalGate",),
        ".policy": ("ApprovalPolicy", "ApprovalRule", "PathCondition"),
        ".sqlite_store": ("SqliteApprovalStore",),
        ".store": ("ApprovalRecord", "ApprovalStore", "ApprovalStoreFactory"),
    },
    globals(),
)

__all__ = [
    "ApprovalGate",
    "ApprovalPolicy",
    "ApprovalRecord",
    "ApprovalRule",
    "ApprovalStore",
    "ApprovalStoreFactory",
    "PathCondition",
    "SqliteApprovalStore",
]
