"""The durable store of approval requests: ``ApprovalRecord`` and the ``ApprovalStore`` interface.

A request is written when a call needing approval first arrives (``pending``), decided once
(``approved`` / ``denied``), and then ends ``consumed`` (ran), ``expired`` or ``voided`` (its key
drifted). The one operation that lets a call run is ``consume``: one transaction that moves exactly
one ``approved`` row whose key equals the call's and which has not expired to ``consumed`` (or takes
one use of a standing approval), so two processes racing on one approval run the call once.
SQLite (``SqliteApprovalStore``, the standard library) is the default; an implementation for
several hosts (PostgreSQL, in its own distribution) implements the same methods.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

Status = Literal["pending", "approved", "denied", "consumed", "expired", "voided"]
OPEN: tuple[Status, ...] = ("pending", "approved")
"""The statuses a request can still leave."""


@dataclass(frozen=True, slots=True)
class ApprovalRecord:
    """One request. ``components`` are the key's digests (``CallKey.components``); ``request`` is what
    an approver is shown (tool, plugin and version, redacted arguments, workspace); ``uses`` is how
    many more times an approved request may run (-1: a standing approval, until it expires)."""

    id: str
    key: str
    components: Mapping[str, Any]
    status: Status
    created_at: float
    expires_at: float
    approvers: tuple[str, ...]
    request: Mapping[str, Any] = field(default_factory=dict)
    uses: int = 1
    decided_by: str | None = None
    decided_at: float | None = None
    reason: str | None = None
    closed_at: float | None = None

    def as_json(self) -> dict[str, Any]:
        """The record as JSON data (``reyn approvals show --json``)."""
        return {
            "id": self.id,
            "status": self.status,
            "key": self.key,
            "created_at": self.created_at,
            "expires_at": self.expires_at,
            "approvers": list(self.approvers),
            "uses": self.uses,
            "decided_by": self.decided_by,
            "decided_at": self.decided_at,
            "reason": self.reason,
            "closed_at": self.closed_at,
            "request": dict(self.request),
            "components": dict(self.components),
        }


class ApprovalStore(Protocol):
    """Where requests live. Every method is synchronous (the gate runs it in a worker thread) and
    each is one transaction."""

    def open_request(self, record: ApprovalRecord) -> ApprovalRecord:
        """The open request (pending or approved, not expired at ``record.created_at``) with
        ``record.key``, or ``record`` inserted when there is none."""
        ...

    def get(self, approval_id: str) -> ApprovalRecord | None: ...

    def decide(
        self, approval_id: str, *, approve: bool, by: str, reason: str | None, now: float, uses: int = 1
    ) -> ApprovalRecord | None:
        """Move a pending, unexpired request to approved / denied; None when it is not pending."""
        ...

    def consume(self, approval_id: str, key: str, now: float) -> bool:
        """Take one use of an approved, unexpired request with exactly ``key``; True for the one
        caller that did."""
        ...

    def close(self, approval_id: str, status: Status, reason: str, now: float) -> bool:
        """Move an open request to ``expired`` or ``voided``; True when it was open."""
        ...

    def expire(self, now: float) -> Sequence[ApprovalRecord]:
        """Move every open request whose time is up to ``expired``; the records moved."""
        ...

    def list(self, statuses: Sequence[Status] | None = None) -> Sequence[ApprovalRecord]:
        """Requests, newest first (only ``statuses`` when given)."""
        ...


__all__ = ["OPEN", "ApprovalRecord", "ApprovalStore", "Status"]
