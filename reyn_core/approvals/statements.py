"""``ApprovalStatements``: the store rules as SQL, written once for every SQL store.

The SQLite and PostgreSQL stores differ in dialect, not in rules: which open request a call shares,
what a decision writes, single use, closing, and whom an approval covers (``ApprovalRecord.covers``
in SQL). Each store builds one ``ApprovalStatements`` for its table and dialect and runs these; what
is its own (transactions, connections, the schema, expiring in bulk) stays in the store.
"""

from __future__ import annotations

from dataclasses import dataclass

from .store import ApprovalRecord


@dataclass(frozen=True, slots=True)
class ApprovalStatements:
    """The statements of ``table`` for a dialect whose parameter placeholder is ``mark`` (``?``,
    ``%s``) and whose null-safe equality is ``same`` (``IS``, ``IS NOT DISTINCT FROM``). Each says
    its parameters, in order."""

    table: str
    mark: str
    same: str

    @property
    def columns(self) -> str:
        """``ApprovalRecord.columns``, in the order ``ApprovalRecord.from_row`` reads them."""
        return ", ".join(ApprovalRecord.columns)

    @property
    def covers(self) -> str:
        """A condition (parameter: the call's session): the request's approval may let a call of that
        session run — the session that asked, or any session for a standing approval that is not
        scoped (``ApprovalRecord.covers``)."""
        return f"(session {self.same} {self.mark} OR (status = 'approved' AND uses < 0 AND NOT scoped))"

    @property
    def open_request(self) -> str:
        """The newest open request of a call that covers its session (key, now, session): a call
        shares it instead of asking again."""
        m = self.mark
        return (
            f"SELECT {self.columns} FROM {self.table} WHERE key = {m} AND status IN ('pending', 'approved') "
            f"AND expires_at > {m} AND {self.covers} ORDER BY created_at DESC LIMIT 1"
        )

    @property
    def insert(self) -> str:
        """A new request (``ApprovalRecord.request_row``)."""
        places = ", ".join([self.mark] * len(ApprovalRecord.columns))
        return f"INSERT INTO {self.table} ({self.columns}) VALUES ({places})"

    @property
    def get(self) -> str:
        """One request (id)."""
        return f"SELECT {self.columns} FROM {self.table} WHERE id = {self.mark}"

    @property
    def decide(self) -> str:
        """A decision on a pending request that has not expired (``ApprovalRecord.decision_row``, id,
        the decision's time); its row count is 1 when it was recorded."""
        m = self.mark
        return (
            f"UPDATE {self.table} SET status = {m}, decided_by = {m}, decided_at = {m}, reason = {m}, "
            f"uses = {m}, scoped = {m} WHERE id = {m} AND status = 'pending' AND expires_at > {m}"
        )

    @property
    def consume(self) -> str:
        """Single use, one statement (now, id, key, now, session): a standing approval (uses -1)
        stays approved; a counted one loses a use and is consumed at zero. Its row count is 1 for
        exactly one caller of an approved request of that key that has not expired and covers the
        session."""
        m = self.mark
        return (
            f"UPDATE {self.table} SET "
            "uses = CASE WHEN uses < 0 THEN uses ELSE uses - 1 END, "
            "status = CASE WHEN uses = 1 THEN 'consumed' ELSE status END, "
            f"closed_at = CASE WHEN uses = 1 THEN {m} ELSE closed_at END "
            f"WHERE id = {m} AND key = {m} AND status = 'approved' AND expires_at > {m} AND uses != 0 "
            f"AND {self.covers}"
        )

    @property
    def close(self) -> str:
        """An open request moved to ``expired`` or ``voided`` (status, reason, now, id); row count 1
        when it was open."""
        m = self.mark
        return (
            f"UPDATE {self.table} SET status = {m}, reason = {m}, closed_at = {m} "
            f"WHERE id = {m} AND status IN ('pending', 'approved')"
        )


__all__ = ["ApprovalStatements"]
