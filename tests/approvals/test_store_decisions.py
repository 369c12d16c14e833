"""What a store writes as a decision (review of issue 24): ``ApprovalStore.decide(decided)`` takes the
decided record, and both stores write it through ``ApprovalRecord.decision_row``, so a record that is
not a decision — left pending, consumed, without a time, unusable (``uses`` 0) or scoped while denied
or from no session — is refused with ``ValueError`` and the request stays pending and decidable (the
positive control decides it afterwards). The SQLite store on a real file, the PostgreSQL store on the
real server of tests/conftest.py."""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any

import pytest
from approval_records import pending_record

NOT_DECISIONS = [
    pytest.param({"status": "pending"}, "approved or denied, not 'pending'", id="left-pending"),
    pytest.param({"status": "consumed"}, "approved or denied, not 'consumed'", id="consumed"),
    pytest.param({"status": "approved", "decided_at": None}, "the time it was made", id="no-time"),
    pytest.param({"status": "approved", "uses": 0}, r"uses 1 or -1\), not 0", id="unusable"),
    pytest.param({"status": "approved", "uses": 7}, r"uses 1 or -1\), not 7", id="seven-uses"),
    pytest.param({"status": "denied", "scoped": True}, "scoped only when approved", id="scoped-denied"),
]


@pytest.mark.parametrize(("change", "words"), NOT_DECISIONS)
def test_a_record_that_is_not_a_decision_is_refused_and_the_request_stays_pending(
    store: Any, change: dict[str, Any], words: str
) -> None:
    pending = store.open_request(pending_record("decide", session="s1"))
    decision = {"decided_by": "ops", "decided_at": time.time(), "reason": None, **change}
    with pytest.raises(ValueError, match=words):
        store.decide(replace(pending, **decision))
    assert store.get(pending.id).status == "pending"
    # control: the same request is then decided by a real decision
    decided = store.decide(replace(pending, status="approved", decided_by="ops", decided_at=time.time()))
    assert decided is not None and decided.status == "approved" and decided.uses == 1


def test_scoped_from_no_session_is_refused_and_scoped_from_its_session_is_written(store: Any) -> None:
    orphan = store.open_request(pending_record("orphan"))
    scoped = {
        "status": "approved",
        "decided_by": "ops",
        "decided_at": time.time(),
        "uses": -1,
        "scoped": True,
    }
    with pytest.raises(ValueError, match="from a session"):
        store.decide(replace(orphan, **scoped))
    assert store.get(orphan.id).status == "pending"
    other = store.open_request(pending_record("scoped", session="s1"))
    decided = store.decide(replace(other, **scoped))
    assert decided is not None and decided.scope == "session"
