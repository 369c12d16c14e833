"""Approvals bound to the exact call: the profile's policy, the call's key, the durable store and the
gate the dispatcher runs (docs/approvals.md). Exports lazily: a registry without approvals never
imports the store (or ``sqlite3``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..lazy_exports import lazy_exports

if TYPE_CHECKING:
    from .gate import Admission, ApprovalGate, AuditSink
    from .key import CallArguments, CallKey, Hasher, handler_arguments
    from .policy import APPROVERS, ApprovalPolicy, ApprovalRule, PathCondition
    from .sqlite_store import SqliteApprovalStore
    from .store import OPEN, ApprovalRecord, ApprovalStore, ApprovalStoreFactory, Status

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        ".gate": ("Admission", "ApprovalGate", "AuditSink"),
        ".key": ("CallArguments", "CallKey", "Hasher", "handler_arguments"),
        ".policy": ("APPROVERS", "ApprovalPolicy", "ApprovalRule", "PathCondition"),
        ".sqlite_store": ("SqliteApprovalStore",),
        ".store": ("OPEN", "ApprovalRecord", "ApprovalStore", "ApprovalStoreFactory", "Status"),
    },
    globals(),
)

__all__ = [
    "APPROVERS",
    "OPEN",
    "Admission",
    "ApprovalGate",
    "ApprovalPolicy",
    "ApprovalRecord",
    "ApprovalRule",
    "ApprovalStore",
    "ApprovalStoreFactory",
    "AuditSink",
    "CallArguments",
    "CallKey",
    "Hasher",
    "PathCondition",
    "SqliteApprovalStore",
    "Status",
    "handler_arguments",
]
