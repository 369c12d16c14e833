"""The durable store of approval requests: ``ApprovalRecord`` and the ``ApprovalStore`` interface.

A request is written when a call needing approval first arrives (``pending``), decided once
(``approved`` / ``denied``), and then ends ``consumed`` (ran), ``expired`` or ``voided`` (its key
drifted). The one operation that lets a call run is ``consume``: one transaction that moves exactly
one ``approved`` row whose key equals the call's and which has not expired to ``consumed`` (or takes
one use of a standing approval), so two processes racing on one approval run the call once.
The core ships no store: each lives in its own distribution and is selected by the profile's
``[approvals] backend`` (default ``sqlite``, the reyn-approvals-sqlite distribution): the name of an
entry point in the group ``reyn.approval_stores`` whose object is an ``ApprovalStoreFactory``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Literal, Protocol, runtime_checkable

from reyn_core.jsondata import fields_json, parse_own_json

Status = Literal["pending", "approved", "denied", "consumed", "expired", "voided"]


@dataclass(frozen=True, slots=True)
class ApprovalRecord:
    """One request. ``components`` are the key's digests (``CallKey.components``); ``request`` is what
    an approver is shown (tool, plugin and version, redacted arguments, workspace); ``uses`` is how
    many more times an approved request may run (-1: a standing approval, until it expires);
    ``session`` is the keyed digest of the session that asked (None: no session), and ``scoped``
    says the approval holds only for calls of that session ("allow this exact call for this
    session"), ending with the session at the latest."""

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
    session: str | None = None
    scoped: bool = False

    def covers(self, session: str | None) -> bool:
        """Whether this request's approval may let a call of ``session`` (a keyed digest) run: only
        the session that asked, except a standing approval (any session, until it expires)."""
        return self.session == session or (self.status == "approved" and self.uses < 0 and not self.scoped)

    @property
    def scope(self) -> str:
        """How far an approval reaches: ``session`` (scoped), ``standing`` (until it expires) or
        ``once``."""
        return "session" if self.scoped else ("standing" if self.uses < 0 else "once")

    def decision_row(self) -> tuple[Any, ...]:
        """The decision this record carries, as a store writes it (``status``, ``decided_by``,
        ``decided_at``, ``reason``, ``uses``, ``scoped``), or ``ValueError`` when it is not one: only
        approved or denied, at a time, an approval usable once or standing (``uses`` 1 or -1), scoped
        only when approved and from a session. Every store writes through this, so no store can
        leave a decided request pending, consumed or unusable."""
        if self.status not in ("approved", "denied"):
            raise ValueError(f"a decision is approved or denied, not {self.status!r}")
        if not isinstance(self.decided_at, (int, float)) or isinstance(self.decided_at, bool):
            raise ValueError("a decision needs the time it was made (decided_at)")
        if self.uses not in (1, -1):
            raise ValueError(f"a decision is usable once or standing (uses 1 or -1), not {self.uses!r}")
        if self.scoped and (self.status != "approved" or self.session is None):
            raise ValueError(
                "a decision is scoped only when approved, for the session that asked (from a session)"
            )
        return (self.status, self.decided_by, self.decided_at, self.reason, self.uses, self.scoped)

    columns: ClassVar[tuple[str, ...]] = (
        "id", "key", "components", "status", "created_at", "expires_at", "approvers", "request",
        "uses", "decided_by", "decided_at", "reason", "closed_at", "session", "scoped",
    )  # fmt: skip
    """A store's columns, in the order ``from_row`` reads them."""

    def request_row(self, as_json: Callable[[Any], Any]) -> tuple[Any, ...]:
        """This record as a new request's row, in ``columns`` order: the JSON columns (``components``,
        ``approvers``, ``request``) through ``as_json`` (the store's own encoding), nothing decided."""
        return (
            self.id, self.key, as_json(dict(self.components)), self.status, self.created_at,
            self.expires_at, as_json(list(self.approvers)), as_json(dict(self.request)), self.uses,
            None, None, None, None, self.session, False,
        )  # fmt: skip

    @classmethod
    def from_row(cls, row: Sequence[Any]) -> ApprovalRecord:
        """A record from a store's row in ``columns`` order; the JSON columns (``components``,
        ``approvers``, ``request``) as text or already decoded."""
        values = dict(zip(cls.columns, row, strict=True))
        for name in ("components", "approvers", "request"):
            if isinstance(values[name], str):
                values[name] = parse_own_json(values[name])  # the store's own column
        values["approvers"] = tuple(values["approvers"])
        values["scoped"] = bool(values["scoped"])
        return cls(**values)

    def as_json(self) -> dict[str, Any]:
        """The record as JSON data (``reyn approvals show --json``): its fields, ``scope`` for ``scoped``."""
        return {**fields_json(self, omit=("scoped",)), "scope": self.scope}


@runtime_checkable
class ApprovalStore(Protocol):
    """Where requests live. Every method is synchronous (the gate runs it in a worker thread) and
    each is one transaction. ``location`` says where the store is, with no secret in it (a DSN is
    shown as ``postgresql://host:port/db``). A method that cannot reach the store raises: the gate
    then refuses the call (fail closed)."""

    @property
    def location(self) -> str: ...

    def open_request(self, record: ApprovalRecord) -> ApprovalRecord:
        """The open request (pending or approved, not expired at ``record.created_at``) with
        ``record.key`` that covers ``record.session`` (``ApprovalRecord.covers``: the session that
        asked, or any for a standing approval), or ``record`` inserted when there is none."""
        ...

    def get(self, approval_id: str) -> ApprovalRecord | None: ...

    def decide(self, decided: ApprovalRecord) -> ApprovalRecord | None:
        """Write the decision ``decided`` carries (``status`` approved / denied, ``decided_by``,
        ``decided_at``, ``reason``, ``uses``, ``scoped``: for its session only) over the request
        ``decided.id`` if that is pending and unexpired at ``decided_at``: the record stored, or None
        when it is not pending."""
        ...

    def consume(self, approval_id: str, key: str, now: float, session: str | None = None) -> bool:
        """Take one use of an approved, unexpired request with exactly ``key`` that covers
        ``session`` (``ApprovalRecord.covers``); True for the one caller that did."""
        ...

    def end_session(self, session: str, now: float) -> Sequence[ApprovalRecord]:
        """Move the approved requests scoped to ``session`` to ``expired`` (reason
        ``session_ended``); the records moved."""
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


class ApprovalStoreFactory(Protocol):
    """What a ``reyn.approval_stores`` entry point names: called with the profile's
    ``[approvals.settings]`` (the backend validates them; bad ones raise ``ValueError`` saying which
    key, without echoing a secret) and the profile's folder, it returns the store. It must not
    connect: the first operation does, so a load never waits for a server.

    A store kept in local files also gives the factory ``host_files(settings, base)``: those files
    (``Path`` s), whose rows are trusted as decisions, so that no isolated plugin may be granted to
    write them."""

    def __call__(self, settings: Mapping[str, Any], base: Path) -> ApprovalStore: ...


__all__ = ["ApprovalRecord", "ApprovalStore", "ApprovalStoreFactory", "Status"]
