"""Approvals bound to the exact call: the profile's policy, the call's key, the durable store and the
gate the dispatcher runs (docs/approvals.md). Exports lazily: a registry without approvals imports
none of it. The core ships no store: each is a distribution found by name (``reyn.approval_stores``;
the default ``sqlite`` is reyn-approvals-sqlite)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..lazy_exports import lazy_exports
from ..moved import MOVED, moved_attributes

if TYPE_CHECKING:
    from .gate import ApprovalGate
    from .policy import ApprovalPolicy, ApprovalRule, PathCondition
    from .statements import ApprovalStatements
    from .store import ApprovalRecord, ApprovalStore, ApprovalStoreFactory

_exported, __dir__ = lazy_exports(
    __name__,
    {
        ".gate": ("ApprovalGate",),
        ".policy": ("ApprovalPolicy", "ApprovalRule", "PathCondition"),
        ".statements": ("ApprovalStatements",),
        ".store": ("ApprovalRecord", "ApprovalStore", "ApprovalStoreFactory"),
    },
    globals(),
)
_moved = moved_attributes(__name__)


def __getattr__(name: str) -> Any:
    """An exported name, imported on first use; a name that left the core (``reyn_core.moved``: the
    SQLite store is the reyn-approvals-sqlite distribution) is an error saying where
    (``moved_attributes``)."""
    return _moved(name) if f"{__name__}.{name}" in MOVED else _exported(name)


__all__ = [
    "ApprovalGate",
    "ApprovalPolicy",
    "ApprovalRecord",
    "ApprovalRule",
    "ApprovalStatements",
    "ApprovalStore",
    "ApprovalStoreFactory",
    "PathCondition",
]
