"""A pending approval request as the stores' direct tests open it (id ``apr-<key>``, ten minutes to
live, decided by the operator)."""

from __future__ import annotations

import time

from reyn_core.host import ApprovalRecord


def pending_record(key: str = "k1", session: str | None = None) -> ApprovalRecord:
    now = time.time()
    return ApprovalRecord(
        id=f"apr-{key}",
        key=key,
        components={"tool": "t"},
        status="pending",
        created_at=now,
        expires_at=now + 600,
        approvers=("operator",),
        session=session,
    )
